"""Run a scenario: scenario -> engine -> trace -> outcome (the one way every command runs one)."""

from __future__ import annotations

from sim.engine.run import run as run_engine
from sim.base.errors import ScheduleError
from sim.properties.outcome import Outcome, outcome
from sim.scenario import Scenario, dump
from sim.model.schedule import Schedule
from sim.model.switches import Switches
from sim.engine.trace import Trace


def simulate(switches: Switches, schedule: Schedule) -> tuple[Trace, Outcome]:
    trace = run_engine(switches, schedule)
    return trace, outcome(trace)


def counterexample(description: str, switches: Switches, schedule: Schedule, workflow: str | None = None) -> str:
    """A scenario file that replays `schedule` and expects its whole outcome (`sim trace FILE
    --check` then confirms it still breaks what it broke, at the same tick); on a workflow
    (its name, or its file's absolute path), the file names it."""
    _, result = simulate(switches, schedule)
    expect = result.to_json()
    del expect["horizon_reached"]
    return dump(description, switches, schedule, expect, workflow)


def run_scenario(scenario: Scenario, strict: bool = True) -> tuple[Trace, Outcome]:
    """Run a scenario. With `strict`, a fault that never took effect is a ScheduleError."""
    trace, result = simulate(scenario.switches, scenario.schedule)
    if strict and trace.unfired:
        raise ScheduleError(f"{scenario.source}: schedule: {'; '.join(trace.unfired)}")
    return trace, result
