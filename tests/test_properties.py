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
from sim import properties as props
from sim.analysis.check.search import Search, Space
from sim.engine.trace import Event, Kind, Trace
from sim.model.faults import DuplicateDelivery, PosterDeath, PosterPause, ReportChange, Silence, StorageLoss
from sim.properties import at_risk, guarded
from sim.properties import effects_confirmed
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


# -- effects-confirmed: which intent, and which tick, its counterexample names ---------------------

#: all protections on: post action 1 (#1's) pauses 4 ticks after its intent (t7); the effect
#: records are lost at t8, so #2, admitted at t9 to finish the announcement, finds no intent and
#: records its own (t10), and its post action pauses 3 ticks; #1 wakes at t11, sends, and its
#: confirmation is rejected (stale token); #3 confirms at t13, meeting both intents
TWO_INTENTS = (PosterPause(nth=1, ticks=4), PosterPause(nth=2, ticks=3), StorageLoss(at=8, store="effects"))


def searched(trace: Trace) -> tuple[int, dict[str, int], int]:
    """What `sim check`'s search makes of this run: the tick its counterexample for
    effects-confirmed names (the monitor followed tick by tick, positions being ticks, as the
    search does), the violations it counts, and the runs it counts at the horizon."""
    name = props.EFFECTS_CONFIRMED.name
    search = Search(Space(trace.switches, len(trace.schedule.faults), 1, trace.schedule, (name,), ()))
    memos, broken = (effects_confirmed.MONITOR.start,), 0
    faults = tuple(trace.fired)
    for tick in range(trace.last_tick + 1):
        events = [e for e in trace.events if e.tick == tick]
        memos, broken = search.follow(memos, broken, events, trace.content_at(tick), len(faults), faults)
    search.end(trace.state_at(trace.last_tick), memos, broken, 1, len(faults), faults)
    found = search.found
    return found.shortest[name][0][1] if name in found.shortest else -1, found.violations, found.horizon_reached


def test_effects_confirmed_names_the_first_of_two_open_intents_of_a_run() -> None:
    """A run stopped by its horizon at t12 with two intents of d1 open (#1's at t7, #2's at
    t10): both break it, in order, and the tick it broke is the first's, t7, in the trace's
    verdict and in the search's counterexample alike. At horizon 13 #3 confirms both."""
    trace, result = simulate(Switches(), Schedule(faults=TWO_INTENTS, horizon=12))
    assert (trace.last_tick, trace.horizon_reached, trace.unfired) == (12, True, ())
    prop = props.EFFECTS_CONFIRMED
    intents = [trace.events[i] for i in prop.breaks(trace)]
    assert [(e.tick, e.attempt, e.detail["record"], e.detail["digest"]) for e in intents] == [
        (7, 1, "intent", "d1"), (10, 2, "intent", "d1")]
    index = prop.first_break(trace)
    assert index is not None and trace.events[index] is intents[0]
    assert prop.first_tick(trace) == 7
    assert props.violations(trace, (prop,)) == [("effects-confirmed", 7)]
    assert prop.why(trace, index) == "the intent for d1 recorded at t7 was never confirmed (the run ended at t12)"
    assert result.violations == ()  # no invariant broke: the run was only cut short
    assert searched(trace) == (7, {"effects-confirmed": 1}, 1)
    whole, _ = simulate(Switches(), Schedule(faults=TWO_INTENTS, horizon=13))
    assert (whole.last_tick, whole.horizon_reached, prop.first_tick(whole)) == (13, False, None)
    assert searched(whole) == (-1, {}, 0)


def effect(tick: int, record: str, digest: str, attempt: int, applied: bool = True) -> Event:
    return Event(tick, Kind.WRITE, attempt, {"store": "effect", "token": 40 + attempt, "epoch": 40 + attempt,
                                             "applied": applied, "record": record, "digest": digest})  # fmt: skip


#: made-up effect writes (at most one a tick) -> the ticks of the intents left open, in order
OPEN_INTENTS: dict[str, tuple[list[Event], tuple[int, ...]]] = {
    "neither confirmed, the later digest first": (
        [effect(3, "intent", "d2", 2), effect(5, "intent", "d1", 1)], (3, 5)),
    "the first confirmed": (
        [effect(3, "intent", "d2", 2), effect(5, "intent", "d1", 1), effect(6, "confirmed", "d2", 2)], (5,)),
    "the second confirmed": (
        [effect(3, "intent", "d2", 2), effect(5, "intent", "d1", 1), effect(6, "confirmed", "d1", 1)], (3,)),
    "one digest twice, neither confirmed": (
        [effect(3, "intent", "d1", 1), effect(5, "intent", "d1", 2)], (3, 5)),
    "one digest twice, its confirmation meets both": (
        [effect(3, "intent", "d1", 1), effect(5, "intent", "d1", 2), effect(6, "confirmed", "d1", 2)], ()),
    "a confirmation before the intent, and one rejected after": (
        [effect(2, "confirmed", "d1", 1), effect(3, "intent", "d1", 1), effect(4, "intent", "d2", 2),
         effect(6, "confirmed", "d1", 1, applied=False)], (3, 4)),
}  # fmt: skip


@pytest.mark.parametrize("case", OPEN_INTENTS)
def test_effects_confirmed_breaks_at_each_open_intent_in_the_order_recorded(case: str) -> None:
    """The monitor's end gives the open intents in the order they were recorded, whatever
    their digests; the search's counterexample names the first one's tick."""
    writes, open_ticks = OPEN_INTENTS[case]
    monitor = effects_confirmed.MONITOR
    memo = monitor.start
    for e in writes:  # positions are ticks, as in the search
        memo, now = monitor.step(memo, e, (0, 0, 0, 0), e.tick)
        assert not now  # a progress property: nothing breaks before the end
    assert monitor.end is not None and monitor.end(memo) == open_ticks
    # the search's end of a run with this memo (the worked example's last state: no horizon)
    name = props.EFFECTS_CONFIRMED.name
    search = Search(Space(Switches(), 0, 1, Schedule(), (name,), ()))
    search.end(simulate(Switches(), Schedule())[0].states[-1], (memo,), 0, 1, 0, ())
    found = search.found
    if open_ticks:
        assert (found.shortest[name][0][1], found.violations) == (open_ticks[0], {name: 1})
    else:
        assert (found.shortest, found.violations) == ({}, {})
    assert (found.schedules, found.horizon_reached) == (1, 0)
