"""The engine's state value and step functions: a run resumed from a snapshot of its state.

A run is taken to the end of tick k, its state is taken, a new world (a new SimPy
environment at `initial_time=k + 1`) is built from that state alone and run to the end: the
two halves' events, and the states they publish at the end of each tick, are exactly the
uninterrupted run's, for every run of the sweep and a few hundred schedules `sim explore` draws.
"""

from __future__ import annotations

import pickle
import random

import pytest

from sim.engine.rules import Faults
from sim.engine.run import run, run_through, run_world
from sim.engine.state import State, initial_state
from sim.engine.world import World
from sim.analysis.explore import SeededChoices, draw_schedule
from sim.model.schedule import Schedule, worked_example
from sim.analysis.sweep import COMBINATIONS
from sim.model.switches import Switches


def resumed(switches: Switches, schedule: Schedule, k: int) -> None:
    """Run to the end of tick k, resume a fresh world from the state, compare with one run."""
    whole = run(switches, schedule)
    first = World(switches, schedule)
    snapshot = run_through(first, k)
    assert hash(snapshot) == hash(pickle.loads(pickle.dumps(snapshot)))
    assert tuple(first.states) == whole.states[: len(first.states)]  # the state at the end of each tick
    if snapshot.finished:
        assert tuple(first.events) == whole.events and tuple(first.states) == whole.states
        return
    assert snapshot.tick == k + 1
    second = World(switches, schedule, state=snapshot)
    assert second.env.now == k + 1
    rest = run_world(second)
    assert tuple(first.events) + rest.events == whole.events
    assert tuple(first.states) + rest.states == whole.states and first.states[-1] == snapshot
    assert (rest.last_tick, rest.horizon_reached, rest.versions) == (
        whole.last_tick, whole.horizon_reached, whole.versions,
    )  # fmt: skip
    assert set(first.fired) | set(second.fired) == set(whole.fired)


def cuts(last_tick: int, seed: int) -> list[int]:
    """A few ticks to cut the run at: the first, the middle and one picked by the seed."""
    return sorted({0, last_tick // 2, seed % max(1, last_tick)})


@pytest.mark.parametrize("part", range(4))
def test_every_sweep_run_resumes_from_a_snapshot(part: int) -> None:
    for i, switches in enumerate(COMBINATIONS):
        if i % 4 != part:
            continue
        schedule = worked_example(switches)
        for k in cuts(run(switches, schedule).last_tick, i):
            resumed(switches, schedule, k)


def test_drawn_schedules_resume_from_a_snapshot() -> None:
    for seed in range(300):
        rng = random.Random(seed)
        schedule = draw_schedule(SeededChoices(rng))
        switches = COMBINATIONS[rng.randrange(len(COMBINATIONS))]
        for k in cuts(run(switches, schedule).last_tick, seed):
            resumed(switches, schedule, k)


def test_the_state_is_a_value() -> None:
    switches = Switches()
    schedule = worked_example(switches)
    state = run_through(World(switches, schedule), 6)
    again = run_through(World(switches, schedule), 6)
    assert isinstance(state, State)
    assert state == again and hash(state) == hash(again) and state is not again
    assert state.attempts and all(isinstance(a.candidate, (str, type(None))) for a in state.attempts)
    assert initial_state(switches, schedule) == initial_state(switches, schedule)


class Quiet(Faults):
    """A schedule with no faults, as the step functions consult it; every event logged."""

    def consult(self, tick: int, moment: object, where: tuple[int, ...]) -> None:
        return None


def test_the_step_functions_alone_give_the_run() -> None:
    """Without SimPy: each tick, every attempt whose state says it acts then, in attempt order,
    then the controller. The same events as the run SimPy drives: the state holds everything
    the actors need, and no rule lives in the processes."""
    from sim.engine import rules

    for switches in COMBINATIONS[::37]:
        schedule = Schedule()  # no faults: nothing to consult
        state, events = initial_state(switches, schedule), []
        while not state.finished:
            t = state.tick
            for a in state.attempts:
                if a.next_tick == t:
                    state, logged = rules.act(state, a.n, t, Quiet())
                    events += logged
            state, logged = rules.controller(state, t, Quiet())
            events += logged
        assert tuple(events) == run(switches, schedule).events
