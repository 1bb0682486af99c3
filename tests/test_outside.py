"""The failures outside the article's model (docs/outside.md): each kind beyond the article
round-trips through a scenario file, fires, is drawn by `sim explore` and offered by
`sim check` with `--faults all` only, and its scenarios show what breaks and what protects.
"""

from __future__ import annotations

import random

import pytest

from sim.analysis.check import enumerator
from sim.analysis.check.check import CheckBound, Config, check, configurations
from sim.analysis.explore import ExploreBounds, SeededChoices, draw_schedule
from sim.model.faults import KINDS, PosterDeath, PosterPause, PostPoint, selected
from sim.run import run_scenario
from sim.scenario import dump, load, parse
from sim.model.schedule import Schedule, worked_example
from sim.model.switches import Checkpoints, Switches
from sim.engine.trace import Kind

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


def test_a_step_fence_does_not_stop_a_late_send_either() -> None:
    """fencing_scope=step (the temporal and restate profiles) keeps a replaced worker's
    results out of the engine's stores, not its send out of the feed: the paused poster's
    send, handed out before it was replaced, lands when it wakes; its answer is discarded
    with no write (issue 22, defect 3)."""
    trace, outcome = run_scenario(load("paused-inside-effect-step"))
    feed = [(e.tick, e.attempt, e.detail["key"], e.detail["answer"]) for e in trace.events if e.kind is Kind.FEED]
    assert feed == [(10, 2, None, "applied"), (12, 1, None, "applied")]
    assert [e.tick for e in trace.events if e.kind is Kind.FENCED] == [12]
    assert [e for e in trace.events if e.kind is Kind.WRITE and e.attempt == 1 and e.tick >= 12] == []
    assert outcome.violations == (("duplicate-effect", 12),)
    # the same bound finds the late send whatever the fence's scope
    temporal = Switches().with_values({"key": "per-attempt", "pins": "off", "rule": "latest-finished"})
    rows = [Config(scope, temporal.with_values({"fencing_scope": scope})) for scope in ("attempt", "step")]
    attempt, step = check(rows, CheckBound(1, 12, faults="all"))
    assert step.violations["duplicate-effect"] == attempt.violations["duplicate-effect"] == 4


def test_a_pause_and_a_death_of_one_post_cannot_both_be_scheduled() -> None:
    from sim.base.errors import ScheduleError

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

    from sim.analysis.explore import explore as run_search

    out = Path(str(tmp_path))
    result = run_search(Switches(), seed=1, examples=3000, bounds=ExploreBounds(faults="all"), out=out)
    found = {f.invariant for f in result.findings}
    assert "two-acceptances" in found
    for path in out.glob("two-acceptances*.toml"):  # (faithful-digest's file: cases 5, 6 and 8 below)
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


# -- cases 2 and 3: the feed (a receiver with no idempotency; key expiry) -------------------------
def feed_answers(trace: object) -> list[tuple[int, str, str | None]]:
    events = trace.events  # type: ignore[attr-defined]
    return [(e.tick, e.detail["answer"], e.detail["post"]) for e in events if e.kind is Kind.FEED]


def test_heartbeat_delays_compose_and_a_crash_inside_one_does_not_restart_the_count() -> None:
    """A heartbeat is unheard if any delay covers it, and the controller counts from the last
    one it heard (issue 22, defect 4)."""
    import dataclasses

    from sim.model.faults import HeartbeatDelay
    from sim.run import simulate

    def unknown(trace):  # type: ignore[no-untyped-def]
        return [(e.tick, e.attempt, e.detail["missed"]) for e in trace.events if e.kind is Kind.UNKNOWN]

    alone_trace, alone = run_scenario(load("false-suspicion"))
    # a 1-tick delay inside the 4-tick one does not get #1 heard sooner
    trace, outcome = run_scenario(load("false-suspicion-overlap"))
    assert unknown(trace) == unknown(alone_trace) == [(4, 1, 2)]
    assert outcome == alone
    # a longer delay starting inside a shorter one extends it, from the shorter one's start
    scenario = load("false-suspicion")
    schedule = dataclasses.replace(scenario.schedule, faults=tuple(
        f for f in scenario.schedule.faults if not isinstance(f, HeartbeatDelay)) + (HeartbeatDelay(1, 2, 2), HeartbeatDelay(1, 3, 4)))
    trace, _ = simulate(scenario.switches, schedule)
    assert unknown(trace) == [(4, 1, 2)]
    assert [(e.tick, e.detail["until"]) for e in trace.events if e.kind is Kind.UNHEARD] == [(2, 4), (3, 7)]
    # a crash at t3, whose heartbeat the delay covers: counted from t2, not from the crash
    trace, outcome = run_scenario(load("false-suspicion-crashed"))
    assert unknown(trace) == [(4, 1, 2)]
    assert outcome.model_calls_by_attempt == (3, 4) and outcome.first_accepted_tick == 10


@pytest.mark.parametrize("values", [{}, {"replay": "strict"}, {"fencing": "off", "checkpoints": "end-only"}],
                         ids=["all-on", "strict", "unfenced-end-only"])
def test_check_with_overlapping_delays_and_silences_agrees_with_the_enumerator(
    values: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two faults among silences, heartbeat delays and code changes: overlapping delays and
    crashes inside a delay, where the canonical state must keep what the count runs from."""
    from sim.model.faults import CodeUpdate, HeartbeatDelay, Silence

    monkeypatch.setattr(CheckBound, "kinds", property(lambda self: (Silence, HeartbeatDelay, CodeUpdate)))
    rows = [Config("x", Switches().with_values(values))]
    bound = CheckBound(2, 6, faults="all")
    for searched, walked in zip(check(rows, bound), enumerator.enumerate_all(rows, bound)):
        assert (searched.schedules, searched.violations) == (walked.schedules, walked.violations)
        assert searched.counterexamples == walked.counterexamples


def test_the_feed_knobs_are_inert_at_their_defaults() -> None:
    """Set to their defaults, the knobs leave a run exactly as it was (no knob is carried,
    the events and the outcome are the article's)."""
    from sim.run import simulate

    switches = Switches()
    schedule = worked_example(switches)
    at_defaults = switches.with_values({"receiver": "idempotent", "compensate": "no", "retention": "forever"})
    assert at_defaults == switches and not at_defaults.knobs
    assert simulate(at_defaults, schedule)[0].events == simulate(switches, schedule)[0].events


def test_a_key_forgotten_before_the_late_resend_lets_the_feed_post_twice() -> None:
    """Case 3: the feed forgets announce/d1 at the start of t7 + 4 = t11; the resend at t14
    is a new request. With a retention of 8 the same resend is recognised."""
    trace, outcome = run_scenario(load("key-expired"))
    expired = [(e.tick, e.detail["key"], e.detail["post"], e.detail["remembered"]) for e in trace.events if e.kind is Kind.EXPIRED]
    assert expired == [(14, "announce/d1", "P1", 7)]
    assert feed_answers(trace) == [(7, "applied", "P1"), (14, "applied", "P2")]
    assert outcome.violations == (("duplicate-effect", 14), ("uncorrected-duplicate", 14))
    assert load("key-expired").switches.protections_on() == ("fencing", "pins", "key", "rule")
    trace, outcome = run_scenario(load("key-retained"))
    assert feed_answers(trace) == [(7, "applied", "P1"), (14, "repeat", "P1")]
    assert outcome.violations == ()


@pytest.mark.parametrize(("retention", "answer"), [(6, "applied"), (7, "applied"), (8, "repeat"), (None, "repeat")])
def test_a_key_is_known_while_the_tick_minus_its_remembered_tick_is_below_the_retention(
    retention: int | None, answer: str
) -> None:  # fmt: skip
    """The rule, at its edge: remembered at t7, a receive at t14 finds the key iff 14 - 7 < N."""
    from sim.run import simulate

    scenario = load("key-expired")
    value = "forever" if retention is None else str(retention)
    trace, _ = simulate(scenario.switches.with_values({"retention": value}), scenario.schedule)
    assert feed_answers(trace)[-1][:2] == (14, answer)


def test_a_receiver_with_no_idempotency_posts_a_resend_again_even_with_a_per_operation_key() -> None:
    """Case 2: the main trace at a receiver that ignores keys: #3's resend is a second post;
    with key=none at the article's feed the same happens, for a different reason."""
    scenario = load("receiver-none")
    assert scenario.switches.key.value == "per-operation"
    trace, outcome = run_scenario(scenario)
    sent = [(e.tick, e.detail["key"]) for e in trace.events if e.kind is Kind.SENT]
    assert sent == [(11, "announce/d2"), (14, "announce/d2")]
    assert feed_answers(trace) == [(11, "applied", "P1"), (14, "applied", "P2")]
    assert outcome.violations == (("duplicate-effect", 14), ("uncorrected-duplicate", 14))
    _, article = run_scenario(load("main"))
    assert article.violations == () and article.posts_applied == 1


def test_compensation_corrects_the_duplicate_it_cannot_prevent() -> None:
    """Case 2 with compensate=yes: #3's resend is a correction; the feed retracts P1 as it
    applies P2. Applied twice (duplicate-effect), but never shown twice."""
    trace, outcome = run_scenario(load("receiver-none-compensated"))
    retracted = [(e.tick, e.detail["post"], e.detail["correction"]) for e in trace.events if e.kind is Kind.RETRACTED]
    assert retracted == [(14, "P1", "P2")]
    kinds = [e.kind for e in trace.events if e.tick == 14 and e.kind in (Kind.RETRACTED, Kind.FEED)]
    assert kinds == [Kind.RETRACTED, Kind.FEED]  # one transaction: the copy is down before P2 is up
    assert outcome.violations == (("duplicate-effect", 14),)
    assert outcome.posts_applied == 2


def test_compensation_does_not_correct_a_copy_sent_by_anyone_but_a_successor() -> None:
    """A request delivered twice is not a successor's resend: nothing retracts the copy."""
    from sim.model.faults import DuplicateDelivery
    from sim.run import simulate

    switches = Switches().with_values({"change": "never", "post_death": "no", "receiver": "none", "compensate": "yes"})
    schedule = worked_example(switches).with_faults((DuplicateDelivery(1),))
    trace, outcome = simulate(switches, schedule)
    assert not any(e.kind is Kind.RETRACTED for e in trace.events)
    assert {name for name, _ in outcome.violations} == {"duplicate-effect", "uncorrected-duplicate"}


def test_uncorrected_duplicate_is_judged_only_where_the_feed_is_not_the_articles() -> None:
    """At the article's feed a double post is duplicate-effect alone (every sweep run and
    earlier scenario stays as it was); with a feed knob set it is judged too."""
    from sim.properties import BY_NAME

    prop = BY_NAME["uncorrected-duplicate"]
    assert not prop.article
    trace, outcome = run_scenario(load("duplicate-effect"))
    assert outcome.broken == ("duplicate-effect",) and prop.holds(trace)
    from sim.run import simulate

    scenario = load("duplicate-effect")  # key=none: #3's resend is a second post
    _, judged = simulate(scenario.switches.with_values({"retention": "100"}), scenario.schedule)
    assert judged.broken == ("duplicate-effect", "uncorrected-duplicate")
    _, compensated = simulate(scenario.switches.with_values({"compensate": "yes"}), scenario.schedule)
    assert compensated.broken == ("duplicate-effect",)


def test_explore_with_a_short_retention_finds_a_duplicate_effect_that_replays(tmp_path: object) -> None:
    from pathlib import Path

    from sim.analysis.explore import explore as run_search

    out = Path(str(tmp_path))
    switches = Switches().with_values({"retention": "2"})
    result = run_search(switches, seed=1, examples=300, bounds=ExploreBounds(faults="all"), out=out)
    found = {f.invariant: f for f in result.findings}
    assert "duplicate-effect" in found and found["duplicate-effect"].expected
    path = found["duplicate-effect"].path
    assert path is not None
    replay, outcome = run_scenario(load(str(path)))
    assert any(e.kind is Kind.EXPIRED for e in replay.events)
    assert "duplicate-effect" in outcome.broken
    # the file carries the knob and replays with --check
    from sim.cli import main

    assert "retention" in path.read_text()
    assert main(["trace", str(path), "--check"]) == 0
    # with the feed's default retention, the same search finds no duplicate effect
    plain = run_search(Switches(), seed=1, examples=300, bounds=ExploreBounds(faults="all"), out=None)
    assert "duplicate-effect" not in {f.invariant for f in plain.findings}


@pytest.mark.parametrize(
    "values", [{"retention": "3"}, {"receiver": "none", "compensate": "yes"}], ids=["retention-3", "receiver-none-compensated"]
)
def test_check_with_the_feed_knobs_agrees_with_the_enumerator(values: dict[str, str]) -> None:
    """`sim check --faults all --set retention=3 -k 1 -t 10` (and the compensating receiver
    with no idempotency) agrees with the enumerator: the feed's canonical form is sound."""
    rows = configurations(Switches().with_values(values), "each", [Checkpoints.PER_STEP])
    bound = CheckBound(1, 10, faults="all")
    for searched, walked in zip(check(rows, bound), enumerator.enumerate_all(rows, bound)):
        assert (searched.schedules, searched.violations) == (walked.schedules, walked.violations)
        assert searched.counterexamples == walked.counterexamples
    assert check(rows[:1], bound)[0].violations["duplicate-effect"] > 0  # all-on: the feed breaks it


# -- cases 5, 6 and 8: undeclared or mutable inputs, a fallible assessor, code that changes ----
# under running work; the property they break, faithful-digest (beyond the article's model)
def _events(trace: object, kind: Kind) -> list:  # type: ignore[type-arg]
    return [e for e in trace.events if e.kind is kind]  # type: ignore[attr-defined]


def test_faithful_digest_never_breaks_in_the_sweep_nor_in_the_article_scenarios() -> None:
    from sim import properties
    from sim.engine.run import run
    from sim.scenario import names
    from sim.model.switches import COMBINATIONS

    prop = properties.BY_NAME["faithful-digest"]
    assert not prop.article and prop.guard is None
    for switches in COMBINATIONS:
        trace = run(switches, worked_example(switches))
        assert prop.holds(trace), switches
        # the ground truth is written only beyond the article's model
        assert not any("truth" in e.detail or "code" in e.detail for e in _events(trace, Kind.ACCEPTED))
    ours = {"undeclared-read", "snapshot-mutated", "wrong-summary", "code-changed-mixed"}
    for name in names():
        if name not in ours:
            trace, _ = run_scenario(load(name))
            assert prop.holds(trace), name


def test_a_mixed_digest_of_correct_parts_is_wrong_acceptance_not_faithful_digest() -> None:
    _, outcome = run_scenario(load("versions-off"))
    assert "wrong-acceptance" in outcome.broken and "faithful-digest" not in outcome.broken


def test_an_undeclared_read_restored_by_its_key_breaks_faithful_digest_unless_declared() -> None:
    scenario = load("undeclared-read")
    assert scenario.switches.protections_on() == ("fencing", "pins", "key", "rule")
    assert scenario.switches.knob("reads") == "next-section"
    trace, outcome = run_scenario(scenario)
    computed = {(e.attempt, e.detail["step"]): e.detail.get("also") for e in _events(trace, Kind.COMPUTED)}
    assert computed[(1, 1)] == [[2, 0, False]] and computed[(1, 3)] == [[4, 0, False]]
    restored = [(e.tick, e.attempt, e.detail["step"]) for e in _events(trace, Kind.RESTORED)]
    assert restored == [(6, 2, 1)]
    (accepted,) = _events(trace, Kind.ACCEPTED)
    assert accepted.detail["truth"][0] == [1, False, [[2, 0, False]], False, 1]
    assert outcome.violations == (("faithful-digest", 10),)
    trace, keyed = run_scenario(load("undeclared-read-keyed"))
    assert (keyed.model_calls, keyed.steps_restored, keyed.violations) == (7, 0, ())


def test_bytes_changed_under_their_hash_break_faithful_digest_with_every_protection_on() -> None:
    scenario = load("snapshot-mutated")
    assert scenario.switches.protections_on() == ("fencing", "pins", "key", "rule")
    trace, outcome = run_scenario(scenario)
    assert [(e.tick, e.detail["section"], e.detail["version"]) for e in _events(trace, Kind.MUTATED)] == [(4, 3, 1)]
    changed = [(e.tick, e.attempt, e.detail["step"]) for e in _events(trace, Kind.COMPUTED) if e.detail.get("changed")]
    assert changed == [(6, 2, 3)]
    # the hash still names v1: the assessor's checks pass, the version is right
    assert outcome.violations == (("faithful-digest", 9),)
    assert outcome.model_calls_by_attempt == (3, 2)


def test_a_wrong_summary_is_accepted_by_form_and_refused_by_figures() -> None:
    scenario = load("wrong-summary")
    assert scenario.switches.protections_on() == ("fencing", "pins", "key", "rule")
    trace, outcome = run_scenario(scenario)
    assert [(e.attempt, e.detail["step"]) for e in _events(trace, Kind.COMPUTED) if e.detail.get("wrong")] == [(1, 2)]
    assert outcome.violations == (("faithful-digest", 6),)
    assert outcome.newsletter.quoted_revenue == "1.4"  # 4.1, transposed
    trace, figures = run_scenario(load("wrong-summary-figures"))
    (refused,) = _events(trace, Kind.REFUSED)
    assert refused.tick == 6 and "figures of s2" in refused.detail["reason"]
    # the refusal struck s2's record: the rebuild restores the other three and recomputes s2
    assert [(e.attempt, e.detail["step"]) for e in _events(trace, Kind.RESTORED)] == [(2, 1), (2, 3), (2, 4)]
    assert figures.model_calls_by_attempt == (4, 1) and figures.violations == ()
    assert figures.newsletter.quoted_revenue == "4.1" and figures.finished


def test_code_that_changes_under_running_work_mixes_sticks_or_redoes() -> None:
    trace, mixed = run_scenario(load("code-changed-mixed"))
    assert [(e.tick, e.detail["code"]) for e in _events(trace, Kind.CODE_CHANGED)] == [(4, 2)]
    (accepted,) = _events(trace, Kind.ACCEPTED)
    assert [part[4] for part in accepted.detail["truth"]] == [1, 1, 2, 2] and accepted.detail["code"] == 2
    assert mixed.violations == (("faithful-digest", 9),)
    trace, strict = run_scenario(load("code-changed-strict"))
    failed = [(e.tick, e.attempt, e.detail["step"], e.detail["recorded"], e.detail["code"])
              for e in _events(trace, Kind.REPLAY_FAILED)]  # fmt: skip
    assert failed == [(6, 2, 1, 1, 2)]
    assert not strict.finished and strict.first_accepted_tick is None and strict.violations == ()
    _, keyed = run_scenario(load("code-changed-keyed"))
    assert (keyed.model_calls_by_attempt, keyed.steps_restored, keyed.violations) == ((3, 4), 0, ())
    assert keyed.finished and (mixed.model_calls, keyed.model_calls) == (5, 7)


def test_a_stuck_attempt_stays_the_owner_whatever_its_heartbeats() -> None:
    """replay=strict: the attempt whose replay failed is never suspected, so no successor is
    admitted, with its heartbeats delayed or a restarted controller's old timers (issue 22,
    defect 5; docs/model.md §9)."""
    import dataclasses

    from sim.model.faults import ControllerRestart
    from sim.run import simulate

    _, strict = run_scenario(load("code-changed-strict"))
    trace, unheard = run_scenario(load("code-changed-strict-unheard"))
    assert [(e.tick, e.attempt) for e in _events(trace, Kind.UNHEARD)] == [(6, 2)]
    assert [(e.tick, e.attempt) for e in _events(trace, Kind.REPLAY_FAILED)] == [(6, 2)]
    assert [e.attempt for e in _events(trace, Kind.UNKNOWN)] == [1]
    assert [e.attempt for e in _events(trace, Kind.ADMITTED)] == [1, 2]
    assert unheard == strict
    scenario = load("code-changed-strict")
    schedule = dataclasses.replace(scenario.schedule, faults=scenario.schedule.faults + (ControllerRestart(7, 3),))
    trace, _ = simulate(scenario.switches.with_values({"controller_state": "old-timers"}), schedule)
    assert [e.attempt for e in _events(trace, Kind.UNKNOWN)] == [1]
    assert [e.attempt for e in _events(trace, Kind.ADMITTED)] == [1, 2]


@pytest.mark.parametrize("knobs", [
    {"reads": "next-section", "assessor": "figures", "replay": "strict"},
    {"reads": "next-section-keyed", "journal_code": "yes"},
], ids=lambda k: "+".join(f"{n}={v}" for n, v in k.items()))  # fmt: skip
def test_check_with_the_knobs_set_agrees_with_the_enumerator(knobs: dict[str, str]) -> None:
    """The canonical state keeps what the knobs make matter (each part's ground truth, the
    code versions, the changed bytes): the search still counts what the walk counts."""
    rows = [Config("all-on", Switches().with_values(knobs))]
    bound = CheckBound(1, 10, faults="all")
    for searched, walked in zip(check(rows, bound), enumerator.enumerate_all(rows, bound)):
        assert (searched.schedules, searched.violations) == (walked.schedules, walked.violations)
        assert searched.counterexamples == walked.counterexamples
        assert searched.violations["faithful-digest"] > 0  # the mutated snapshot, whatever the knobs


def test_the_feed_knobs_reject_bad_values_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main

    for bad in ("retention=0", "retention=soon", "receiver=maybe", "compensate=1"):
        assert main(["trace", "main", "--set", bad]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and bad.split("=")[0] in err, err


def test_the_knobs_reject_a_value_they_do_not_have(capsys: pytest.CaptureFixture[str]) -> None:
    from sim.cli import main

    for knob in ("reads", "assessor", "journal_code", "replay"):
        assert main(["trace", "main", "--set", f"{knob}=bogus"]) == 2, knob
        err = capsys.readouterr().err
        assert f"knob '{knob}' has no value 'bogus'" in err and len(err.strip().splitlines()) == 1


def test_explore_finds_each_case_nothing_protects_against_with_every_protection_on(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sim explore --faults all --seed 1`, every protection on and every knob at its default,
    keeps one counterexample per invariant and case beyond the article: faithful-digest from a
    snapshot mutation (case 5), a wrong summary (6) and a code change (8), two-acceptances from
    lost acceptance records (10); each shrunk to its one fault and replayed with `--check`.
    Nothing from a paused poster (1), delayed heartbeats (4) or a controller restart (9),
    whose protections are on, and the exit status is 0 (beyond the article's model)."""
    from pathlib import Path

    from sim.cli import main
    from sim.model.faults import CodeUpdate, SnapshotMutation, StorageLoss, WrongSummary

    out = Path(str(tmp_path))
    assert main(["explore", "--faults", "all", "--seed", "1", "--examples", "300", "--out", str(out)]) == 0
    capsys.readouterr()
    found = {p.name: load(str(p)).schedule.faults for p in out.glob("*.toml")}
    assert {name: [type(f) for f in faults] for name, faults in found.items()} == {
        "faithful-digest--case-5--all-on--seed1.toml": [SnapshotMutation],
        "faithful-digest--case-6--all-on--seed1.toml": [WrongSummary],
        "faithful-digest--case-8--all-on--seed1.toml": [CodeUpdate],
        "two-acceptances--case-10--all-on--seed1.toml": [StorageLoss],
    }
    for name in found:
        assert main(["trace", str(out / name), "--check"]) == 0, capsys.readouterr().out


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
    from sim.base.errors import ScheduleError
    from sim.model.faults import ControllerRestart

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
    from sim.analysis.explore import explore as run_search

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


# -- the README's report: all four protections on, every fault kind ----------------------------
def test_with_every_protection_on_and_every_fault_kind_exactly_two_properties_break() -> None:
    """`sim check --faults all -k 1 -t 12`, all-on, both checkpoint modes: faithful-digest,
    shortest from bytes changed under their hash at t0 (case 5), and two-acceptances, shortest
    from the acceptance records lost at t7 (case 10); nothing else. The README reports it."""
    from sim.model.faults import SnapshotMutation, StorageLoss

    rows = configurations(Switches(), "all", list(Checkpoints))
    for result in check(rows, CheckBound(1, 12, faults="all")):
        assert result.schedules == 510
        assert {k: v for k, v in result.violations.items() if v} == {"faithful-digest": 24, "two-acceptances": 6}
        digest, twice = result.counterexamples["faithful-digest"], result.counterexamples["two-acceptances"]
        assert (digest.code, digest.tick) == ((SnapshotMutation(0, 1),), 6)
        assert (twice.code, twice.tick) == ((StorageLoss(7, "acceptances"),), 10)
