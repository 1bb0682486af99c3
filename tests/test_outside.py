"""The failures outside the article's model (docs/outside.md): each kind beyond the article
round-trips through a scenario file, fires, is drawn by `sim explore` and offered by
`sim check` with `--faults all` only, and its scenarios show what breaks and what protects.
"""

from __future__ import annotations

import random

import pytest

from sim import enumerator
from sim.check import CheckBound, Config, check, configurations
from sim.explore import ExploreBounds, SeededChoices, draw_schedule
from sim.faults import KINDS, PosterDeath, PosterPause, PostPoint, selected
from sim.run import run_scenario
from sim.scenario import dump, load, parse
from sim.schedule import Schedule, worked_example
from sim.switches import Checkpoints, Switches
from sim.trace import Kind

BEYOND = [kind for kind in KINDS if not kind.article]


def test_the_article_fault_set_is_the_four_kinds_of_the_article() -> None:
    assert [k.key for k in selected("article")] == ["silences", "changes", "poster_deaths", "duplicate_deliveries"]
    assert set(selected("all")) == set(KINDS) and BEYOND


@pytest.mark.parametrize("kind", BEYOND, ids=lambda k: k.key)
def test_each_kind_beyond_the_article_round_trips_through_a_scenario_file(kind: type) -> None:
    bounds = ExploreBounds(faults="all")
    fault = next(iter(kind.singles(bounds, 4)))
    switches = Switches().with_values({"change": "never", "post_death": "no"})
    schedule = worked_example(switches).with_faults((fault,))
    text = dump("round trip", switches, schedule)
    assert f"{kind.key} = [" in text
    assert parse(text, "x.toml", "x").schedule == schedule
    # an article-only schedule's file does not name the kinds beyond the article
    assert kind.key not in dump("plain", switches, worked_example(switches))


def test_explore_draws_the_kinds_beyond_the_article_only_with_faults_all() -> None:
    article = [draw_schedule(SeededChoices(random.Random(i))) for i in range(400)]
    assert not any(f for s in article for f in s.faults if not type(f).article)
    every = [draw_schedule(SeededChoices(random.Random(i)), ExploreBounds(faults="all")) for i in range(400)]
    drawn = {type(f) for s in every for f in s.faults}
    assert set(BEYOND) <= drawn


def test_check_offers_the_kinds_beyond_the_article_only_with_faults_all() -> None:
    config = Config("key=per-attempt", Switches().with_values({"key": "per-attempt"}))
    (article,) = check([config], CheckBound(1, 12))
    (every,) = check([config], CheckBound(1, 12, faults="all"))
    assert every.schedules > article.schedules
    assert "poster_pause" in CheckBound(1, 12, faults="all").to_json()["faults"]
    assert "poster_pause" not in CheckBound(1, 12).to_json()["faults"]


def test_check_with_every_kind_agrees_with_the_enumerator() -> None:
    rows = configurations(Switches(), "each", [Checkpoints.PER_STEP])
    bound = CheckBound(1, 10, faults="all")
    for searched, walked in zip(check(rows, bound), enumerator.enumerate_all(rows, bound)):
        assert (searched.schedules, searched.violations) == (walked.schedules, walked.violations)
        assert searched.counterexamples == walked.counterexamples


# -- case 1: a worker paused inside the effect -----------------------------------------------
def test_a_poster_paused_inside_the_effect_posts_twice_unless_the_key_names_the_operation() -> None:
    trace, outcome = run_scenario(load("paused-inside-effect"))
    silent = [e for e in trace.events if e.kind is Kind.SILENT]
    assert [(e.tick, e.detail["during"], e.detail["wake"]) for e in silent] == [(7, "send", 12)]
    feed = [(e.tick, e.detail["key"], e.detail["answer"]) for e in trace.events if e.kind is Kind.FEED]
    assert feed == [(10, "attempt/2", "applied"), (12, "attempt/1", "applied")]
    assert outcome.violations == (("duplicate-effect", 12),)
    trace, outcome = run_scenario(load("paused-inside-effect-keyed"))
    feed = [(e.tick, e.detail["key"], e.detail["answer"]) for e in trace.events if e.kind is Kind.FEED]
    assert feed == [(10, "announce/d1", "applied"), (12, "announce/d1", "repeat")]
    assert outcome.violations == ()


def test_fencing_does_not_stop_a_late_send() -> None:
    """The feed checks keys, never tokens: with fencing on or off the late send is a second
    post; fencing only decides whether the stale confirmation lands afterwards."""
    from sim.run import simulate

    scenario = load("paused-inside-effect")
    broken = {}
    for fencing in ("on", "off"):
        _, outcome = simulate(scenario.switches.with_values({"fencing": fencing}), scenario.schedule)
        broken[fencing] = outcome.broken
    assert broken == {"on": ("duplicate-effect",), "off": ("duplicate-effect", "stale-write")}


def test_a_pause_and_a_death_of_one_post_cannot_both_be_scheduled() -> None:
    from sim.errors import ScheduleError

    with pytest.raises(ScheduleError, match="same moment"):
        Schedule(faults=(PosterDeath(PostPoint.AFTER_SEND, 1), PosterPause(1, 3)))


# -- case 7: journal and effect are never one transaction ---------------------------------------
def test_check_enumerates_a_death_at_each_of_the_three_points_of_a_post() -> None:
    """The journal (the intent and confirmation records) and the effect (the feed's post) are
    written in separate steps; `sim check` puts a poster death between each pair."""
    config = Config("all-on", Switches())
    job = enumerator.Job(config.switches, CheckBound(1, 12), ((),))
    kids = enumerator.run_job(job).children
    deaths = {code[0].point for code in kids if isinstance(code[0], PosterDeath) and code[0].nth == 1}
    assert deaths == set(PostPoint)


# -- case 10: losing the journal (or the acceptances) --------------------------------------------
def test_losing_the_journal_costs_model_calls_and_nothing_else() -> None:
    trace, outcome = run_scenario(load("journal-lost"))
    _, example = run_scenario(load("main"))
    lost = [(e.tick, e.detail["store"], e.detail["records"]) for e in trace.events if e.kind is Kind.LOST]
    assert lost == [(5, "journal", 2)]
    assert (outcome.model_calls, example.model_calls) == (7, 6)
    assert outcome.violations == () and outcome.finished


def test_losing_the_acceptances_breaks_two_acceptances_with_every_protection_on() -> None:
    scenario = load("acceptances-lost")
    assert scenario.switches.protections_on() == ("fencing", "pins", "key", "rule")
    trace, outcome = run_scenario(scenario)
    assert outcome.violations == (("two-acceptances", 10),)
    assert outcome.posts_applied == 2


def test_explore_finds_the_unprotected_storage_loss_with_every_protection_on(tmp_path: object) -> None:
    from pathlib import Path

    from sim.explore import explore as run_search

    out = Path(str(tmp_path))
    result = run_search(Switches(), seed=1, examples=3000, bounds=ExploreBounds(faults="all"), out=out)
    found = {f.invariant for f in result.findings}
    assert "two-acceptances" in found
    for path in out.glob("*.toml"):
        replay, _ = run_scenario(load(str(path)))
        assert any(e.kind is Kind.LOST for e in replay.events)


# -- case 4: clocks outside their bound (a live owner suspected) --------------------------------
def test_a_falsely_suspected_owner_wastes_calls_with_fencing_and_writes_stale_without() -> None:
    trace, outcome = run_scenario(load("false-suspicion"))
    unheard = [(e.tick, e.attempt, e.detail["until"]) for e in trace.events if e.kind is Kind.UNHEARD]
    assert unheard == [(2, 1, 6)]
    unknown = [(e.tick, e.attempt) for e in trace.events if e.kind is Kind.UNKNOWN]
    assert unknown == [(4, 1)]
    assert outcome.model_calls_by_attempt == (4, 4) and outcome.violations == ()
    _, unfenced = run_scenario(load("false-suspicion-unfenced"))
    assert unfenced.broken == ("stale-write",)
    assert unfenced.model_calls == 4


# -- case 9: the controller itself restarting ----------------------------------------------------
def _restart_events(trace: object) -> list[tuple[int, str, dict[str, object]]]:
    return [
        (e.tick, e.kind.value, e.detail)
        for e in trace.events  # type: ignore[attr-defined]
        if e.kind in (Kind.CONTROLLER_DOWN, Kind.CONTROLLER_UP)
    ]


def test_a_restart_with_durable_state_costs_time_and_nothing_else() -> None:
    trace, outcome = run_scenario(load("controller-restart"))
    _, example = run_scenario(load("main"))
    assert _restart_events(trace) == [
        (12, "controller-down", {"until": 15}),
        (15, "controller-up", {"state": "durable", "epoch": 42, "intents_lost": 0}),
    ]
    # nothing is assessed, suspected or admitted while it is down; the rebuilt timers count
    # #2 (crashed at t11) as heard at the restart, so it is suspected 2 ticks after it
    assert not [e for e in trace.events if 12 <= e.tick < 15 and e.attempt is None and e.kind is not Kind.CONTROLLER_DOWN]
    assert [(e.tick, e.attempt) for e in trace.events if e.kind is Kind.UNKNOWN] == [(5, 1), (17, 2)]
    assert (outcome.confirmed_tick, example.confirmed_tick) == (18, 14)
    assert (outcome.newsletter.start_tick, example.newsletter.start_tick) == (15, 12)
    assert outcome.model_calls == example.model_calls and outcome.violations == ()


def test_a_token_counter_that_restarts_lets_a_stale_write_through_fencing() -> None:
    from sim.run import simulate

    scenario = load("controller-restart-no-epoch")
    assert scenario.switches.fencing.value == "on"
    trace, outcome = run_scenario(scenario)
    tokens = [(e.attempt, e.detail["token"]) for e in trace.events if e.kind is Kind.ADMITTED]
    assert tokens == [(1, 41), (2, 42), (3, 41)]  # 41 issued twice
    write = next(e for e in trace.events if e.kind is Kind.WRITE and e.tick == 11 and e.attempt == 1)
    assert (write.detail["token"], write.detail["epoch"], write.detail["applied"]) == (41, 41, True)
    assert outcome.violations == (("stale-write", 11),) and outcome.stale_writes_applied == 2
    # the same schedule with the epoch durable: #3 gets 43 and #1 is fenced
    durable_trace, durable = simulate(scenario.switches.with_values({"controller_state": "durable"}), scenario.schedule)
    assert [e.detail["token"] for e in durable_trace.events if e.kind is Kind.ADMITTED] == [41, 42, 43]
    assert durable.violations == () and durable.stale_writes_rejected == 1
    assert [(e.tick, e.attempt) for e in durable_trace.events if e.kind is Kind.FENCED] == [(11, 1)]


def test_losing_the_unconfirmed_intents_changes_only_the_successors_intent_write() -> None:
    """The successor inherits the announcement from the durable acceptance, finds no intent,
    records its own and resends; the key decides what the feed does, as with durable intents."""
    trace, outcome = run_scenario(load("controller-restart-no-intents"))
    durable_trace, durable = run_scenario(load("controller-restart"))
    assert _restart_events(trace)[1][2] == {"state": "no-intents", "epoch": 42, "intents_lost": 1}
    intents = [(e.tick, e.attempt) for e in trace.events if e.kind is Kind.WRITE and e.detail["record"] == "intent"]
    durable_intents = [
        (e.tick, e.attempt) for e in durable_trace.events if e.kind is Kind.WRITE and e.detail["record"] == "intent"
    ]
    assert (intents, durable_intents) == ([(11, 2), (18, 3)], [(11, 2)])
    assert outcome == durable


def test_old_suspicion_timers_suspect_a_live_owner_at_once() -> None:
    from sim.run import simulate

    scenario = load("controller-restart-old-timers")
    trace, outcome = run_scenario(scenario)
    unknown = [(e.tick, e.attempt, e.detail["missed"]) for e in trace.events if e.kind is Kind.UNKNOWN]
    assert unknown == [(4, 1, 3)]  # last heard at t1, the last tick before the crash at t2
    assert outcome.model_calls_by_attempt == (4, 4) and outcome.violations == ()
    durable_trace, durable = simulate(scenario.switches.with_values({"controller_state": "durable"}), scenario.schedule)
    assert not [e for e in durable_trace.events if e.kind is Kind.UNKNOWN]
    assert durable.model_calls == 4 and durable.violations == ()
    # on the worked example, old timers suspect the crashed poster at the restart itself
    main = load("controller-restart")
    old, _ = simulate(main.switches.with_values({"controller_state": "old-timers"}), main.schedule)
    assert [(e.tick, e.attempt) for e in old.events if e.kind is Kind.UNKNOWN] == [(5, 1), (15, 2)]


def test_a_schedule_has_at_most_one_controller_restart_and_it_comes_by_the_horizon() -> None:
    from sim.errors import ScheduleError
    from sim.faults import ControllerRestart

    with pytest.raises(ScheduleError, match="at most one"):
        Schedule(faults=(ControllerRestart(3, 1), ControllerRestart(9, 1)))
    with pytest.raises(ScheduleError, match="by the horizon"):
        Schedule(faults=(ControllerRestart(5, 10),), horizon=10)
    config = Config("all-on", Switches())
    job = enumerator.Job(config.switches, CheckBound(1, 6, faults="all"), ((ControllerRestart(1, 2),),))
    assert not [c for c in enumerator.run_job(job).children if isinstance(c[-1], ControllerRestart)]


def test_the_controller_state_knob_rejects_an_unknown_value(capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main

    code = main(["trace", "controller-restart", "--set", "controller_state=amnesia"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "controller_state" in err and "durable" in err and "Traceback" not in err


@pytest.mark.parametrize("state", ["no-epoch", "no-intents", "old-timers"])
def test_check_under_a_weakened_controller_state_agrees_with_the_enumerator(state: str) -> None:
    rows = [Config(state, Switches().with_values({"controller_state": state}))]
    bound = CheckBound(1, 10, faults="all")
    for searched, walked in zip(check(rows, bound), enumerator.enumerate_all(rows, bound)):
        assert (searched.schedules, searched.violations) == (walked.schedules, walked.violations)
        assert searched.counterexamples == walked.counterexamples


def test_explore_finds_the_stale_write_of_a_restarted_token_counter_and_none_with_durable_state(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from pathlib import Path

    from sim.cli import main
    from sim.explore import explore as run_search

    out = Path(str(tmp_path))
    bounds = ExploreBounds(faults="all")
    durable = run_search(Switches(), seed=1, examples=300, bounds=bounds, out=out / "durable")
    assert "stale-write" not in {f.invariant for f in durable.findings}
    weak = Switches().with_values({"controller_state": "no-epoch"})
    found = run_search(weak, seed=1, examples=300, bounds=bounds, out=out / "no-epoch")
    assert "stale-write" in {f.invariant for f in found.findings}
    (path,) = (out / "no-epoch").glob("stale-write--*.toml")
    replay, _ = run_scenario(load(str(path)))
    assert any(e.kind is Kind.CONTROLLER_UP for e in replay.events)
    assert main(["trace", str(path), "--check"]) == 0
    capsys.readouterr()


def test_check_finds_the_stale_write_of_a_restarted_token_counter_only_without_a_durable_epoch() -> None:
    bound = CheckBound(2, 5, faults="all")
    rows = [Config(state, Switches().with_values({"controller_state": state})) for state in ("durable", "no-epoch")]
    durable, no_epoch = check(rows, bound)
    assert durable.violations["stale-write"] == 0
    assert no_epoch.violations["stale-write"] > 0
    assert any(type(f).key == "controller_restarts" for f in no_epoch.counterexamples["stale-write"].code)
