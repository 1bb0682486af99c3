"""sim: a deterministic, tick-based simulator and model checker for durable agent work.

One direction of data: a scenario (switches + fault schedule) -> the engine -> a trace ->
the outcome and the invariant verdicts -> reports. The names below are the library's
public surface; the command line (`sim.cli`) is built on them.
"""

from sim import lean_import  # noqa: F401  (first: it imports SimPy without importlib.metadata)
from sim import faults
from sim.outcome import Outcome, outcome
from sim.run import run_scenario, simulate
from sim.scenario import Scenario, load
from sim.schedule import Schedule, worked_example
from sim.switches import COMBINATIONS, Switches
from sim.trace import Event, Kind, Trace

__all__ = [
    "COMBINATIONS",
    "Event",
    "Kind",
    "Outcome",
    "Scenario",
    "faults",
    "Schedule",
    "Switches",
    "Trace",
    "load",
    "outcome",
    "run_scenario",
    "simulate",
    "worked_example",
]
