"""sim: a deterministic, tick-based simulator and model checker for durable agent work.

One direction of data: a scenario (switches + fault schedule) -> the engine -> a trace ->
the outcome and the invariant verdicts -> reports. The names below are the library's
public surface; the command line (`sim.cli`) is built on them.

Importing `sim` (which every `import sim.x` does first) imports none of them: each is
imported from its module when it is first asked for (`sim.Outcome`, `from sim import
simulate`), so `sim --version` or `import sim.model.events` does not pay for the engine, and no
module of `sim` needs this package half imported (no import circle). The outcome function is
`sim.properties.outcome.outcome`: `sim.properties.outcome` is its module.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from sim.base import compiled as _compiled

_compiled.install()  # the compiled modules only while they are the sources' (docs/compiled.md)

if TYPE_CHECKING:  # what the names below are, for the type checker
    from sim.model import faults
    from sim.properties.outcome import Outcome
    from sim.run import run_scenario, simulate
    from sim.scenario import Scenario, load
    from sim.model.schedule import Schedule, worked_example
    from sim.model.switches import COMBINATIONS, Switches
    from sim.engine.trace import Event, Kind, Trace
    from sim.model.workflow import Workflow, workflow_switches
    from sim.workflow import load_workflow
    from sim.analysis.sweep import Sweep, sweep
    from sim.analysis.check.check import CheckBound, Config, check, configurations
    from sim.model.schedule import workflow_setting

#: each public name -> the module that defines it
_WHERE = {
    "COMBINATIONS": "sim.model.switches",
    "Event": "sim.engine.trace",
    "Kind": "sim.engine.trace",
    "Outcome": "sim.properties.outcome",
    "Scenario": "sim.scenario",
    "Schedule": "sim.model.schedule",
    "Switches": "sim.model.switches",
    "Trace": "sim.engine.trace",
    "Workflow": "sim.model.workflow",
    "workflow_switches": "sim.model.workflow",
    "Sweep": "sim.analysis.sweep",
    "sweep": "sim.analysis.sweep",
    "load_workflow": "sim.workflow",
    "CheckBound": "sim.analysis.check.check",
    "Config": "sim.analysis.check.check",
    "check": "sim.analysis.check.check",
    "configurations": "sim.analysis.check.check",
    "workflow_setting": "sim.model.schedule",
    "load": "sim.scenario",
    "run_scenario": "sim.run",
    "simulate": "sim.run",
    "worked_example": "sim.model.schedule",
}

__all__ = [
    "COMBINATIONS",
    "CheckBound",
    "Config",
    "check",
    "configurations",
    "workflow_setting",
    "workflow_switches",
    "Event",
    "Kind",
    "Outcome",
    "Scenario",
    "faults",
    "Schedule",
    "Switches",
    "Trace",
    "Sweep",
    "Workflow",
    "load",
    "load_workflow",
    "run_scenario",
    "simulate",
    "sweep",
    "worked_example",
]


def __getattr__(name: str) -> object:
    """A public name, imported from its module now (PEP 562)."""
    if name == "faults":
        return importlib.import_module("sim.model.faults")
    if name not in _WHERE:
        raise AttributeError(f"module 'sim' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
