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
