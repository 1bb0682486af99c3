"""Property tests over random fault schedules (Hypothesis; profiles in conftest.py).

Each property draws schedules from `sim.analysis.explore.schedules()`, the same definition of the
space `sim explore` searches, and reads verdicts only from the engine's trace and outcome.
"""

from __future__ import annotations

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from sim.analysis.explore import (
    ExploreBounds,
    fired_only,
    schedules,
    settle_bound,
    switches,
)
from sim.model.faults import DuplicateDelivery, PosterDeath, ReportChange, Silence
from sim.properties import at_risk, guarded
from sim.run import run_scenario, simulate
from sim.scenario import dump, parse
from sim.model.schedule import Schedule
from sim.model.switches import WEAKENINGS, Switches

ALL_ON = {
    "per-step": Switches(),
    "end-only": Switches().with_values({"checkpoints": "end-only"}),
}

#: the invariant each single weakening must let break (docs/model.md §4 and §7)
BREAKS = {"fencing": "stale-write", "pins": "wrong-acceptance", "key": "duplicate-effect", "rule": "misused-dependant"}

#: examples `find` may spend looking for a counterexample (before it shrinks one)
FIND_BUDGET = 2000


def scaled(factor: int) -> settings:
    """The loaded profile with `factor` times its examples (cheap properties run more)."""
    loaded = settings.default  # the profile conftest.py loaded
    assert loaded is not None
    return settings(loaded, max_examples=loaded.max_examples * factor)


# -- all four protections on --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ALL_ON)
@scaled(3)
@given(schedule=schedules())
def test_all_on_no_safety_invariant_breaks(mode: str, schedule: Schedule) -> None:
    _, result = simulate(ALL_ON[mode], schedule)
    assert result.violations == ()


@pytest.mark.parametrize("mode", ALL_ON)
@scaled(3)
@given(schedule=schedules())
def test_all_on_finishes_soon_after_the_faults_stop(mode: str, schedule: Schedule) -> None:
    trace, result = simulate(ALL_ON[mode], schedule)
    assert not result.horizon_reached
    assert result.finished
    assert result.last_tick <= settle_bound(trace)


@scaled(3)
@given(switched=switches(rule="current-accepted", gate="fail-closed"), schedule=schedules())
def test_fail_closed_gate_never_lets_the_newsletter_use_a_wrong_digest(
    switched: Switches, schedule: Schedule
) -> None:
    trace, result = simulate(switched, schedule)
    assert "misused-dependant" not in result.broken
    if switched.pins.value == "off":
        # without versions a fail-closed strict rule has nothing to compare: it waits for good
        assert result.newsletter.start_tick is None
    for letter in trace.events:
        if letter.kind.value == "newsletter":
            assert letter.detail["accepted"]
            assert tuple(letter.detail["built_from"]) == trace.content_at(letter.tick)


# -- each single protection off ------------------------------------------------------------------


@pytest.mark.parametrize(("name", "value"), WEAKENINGS, ids=[f"{n}={v}" for n, v in WEAKENINGS])
def test_each_single_weakening_breaks_its_invariant_in_at_most_three_faults(name: str, value: str) -> None:
    weakened = Switches().with_values({name: value})
    invariant = BREAKS[name]

    def breaks(schedule: Schedule) -> bool:
        return invariant in simulate(weakened, schedule)[1].broken

    found = find(schedules(), breaks, settings=settings(scaled(1), max_examples=FIND_BUDGET))
    assert found.fault_count <= 3, found
    # the shrunk schedule replays, strictly, from a scenario file to the same violation
    trace, result = simulate(weakened, found)
    replayable = fired_only(trace)
    scenario = parse(dump("found by Hypothesis", weakened, replayable), "<found>", "found")
    _, replayed = run_scenario(scenario, strict=True)
    assert dict(replayed.violations)[invariant] == dict(result.violations)[invariant]


# -- the strategy ----------------------------------------------------------------------------------


def test_the_simplest_schedule_is_the_worked_example_setting_without_faults() -> None:
    simplest = find(schedules(), lambda s: True)
    assert simplest == Schedule()


def test_a_silence_shrinks_to_the_first_attempt_at_its_first_tick_paused() -> None:
    simplest = find(schedules(), lambda s: len(s.of(Silence)) > 0)
    assert simplest.of(Silence) == (Silence(attempt=1, at=1, wake=2),)
    assert simplest.fault_count == 1


def test_the_constants_shrink_toward_the_worked_example() -> None:
    found = find(schedules(), lambda s: s.sections != 4 and s.newsletter_ready > 12)
    assert (found.sections, found.newsletter_ready, found.heartbeat_limit) == (3, 13, 2)


@given(schedule=schedules(ExploreBounds(max_faults=2, last_tick=10, attempts=2, max_pause=3, max_nth=2)))
def test_drawn_schedules_stay_within_their_bounds(schedule: Schedule) -> None:
    assert schedule.fault_count <= 2
    assert all(s.attempt <= 2 and s.at <= 10 for s in schedule.of(Silence))
    assert all(s.wake is None or s.wake - s.at <= 3 for s in schedule.of(Silence))
    assert all(c.at <= 10 for c in schedule.of(ReportChange))
    assert all(d.nth <= 2 for d in schedule.of(PosterDeath))
    assert all(d.nth <= 2 for d in schedule.of(DuplicateDelivery))


# -- what a run tells -------------------------------------------------------------------------------


@given(switched=switches(), schedule=schedules())
def test_a_broken_invariant_was_at_risk(switched: Switches, schedule: Schedule) -> None:
    trace, result = simulate(switched, schedule)
    assert set(result.broken) <= at_risk(trace)


@given(switched=switches(), schedule=schedules())
def test_dropping_the_faults_that_never_fired_changes_nothing(switched: Switches, schedule: Schedule) -> None:
    trace, _ = simulate(switched, schedule)
    trimmed = fired_only(trace)
    again, _ = simulate(switched, trimmed)
    assert again.unfired == ()
    assert again.events == trace.events


@given(switched=switches(), schedule=schedules())
def test_an_invariant_breaks_only_with_a_protection_it_relies_on_off(switched: Switches, schedule: Schedule) -> None:
    _, result = simulate(switched, schedule)
    assert [name for name in result.broken if guarded(switched, name)] == []


@given(data=st.data())
def test_switches_strategy_fixes_what_it_is_told(data: st.DataObject) -> None:
    drawn = data.draw(switches(fencing="off"))
    assert drawn.fencing.value == "off"
    assert (drawn.silent, drawn.change, drawn.post_death) == (Switches().silent, Switches().change, Switches().post_death)
