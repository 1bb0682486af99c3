"""The engine against docs/model.md §5's rules, one rule per test, on the worked example."""

from __future__ import annotations

import dataclasses
import json

import pytest

from sim.model.faults import DuplicateDelivery, PosterDeath, PostPoint, ReportChange, Silence
from sim.properties.outcome import outcome
from sim.run import simulate
from sim.model.schedule import Schedule, worked_example
from sim.model.switches import Switches
from sim.engine.trace import Kind, Trace


def run(**values: str) -> Trace:
    switches = Switches().with_values(values)
    trace, _ = simulate(switches, worked_example(switches))
    return trace


def events(trace: Trace, kind: Kind, attempt: int | None = None) -> list[tuple[int, dict]]:
    return [
        (e.tick, e.detail)
        for e in trace.events
        if e.kind is kind and (attempt is None or e.attempt == attempt)
    ]


def ticks(trace: Trace, kind: Kind, attempt: int | None = None) -> list[int]:
    return [t for t, _ in events(trace, kind, attempt)]


# -- the main trace, figure by figure -------------------------------------------------------
def test_main_outcome_matches_the_published_figures() -> None:
    result = outcome(run()).to_json()
    assert result["model_calls"] == 6
    assert result["model_calls_by_attempt"] == [3, 3, 0]
    assert result["steps_restored"] == 1
    assert (result["stale_writes_rejected"], result["stale_writes_applied"]) == (1, 0)
    assert result["posts_applied"] == 1
    assert result["first_accepted_tick"] == 10
    assert result["confirmed_tick"] == 14
    assert result["newsletter"] == {"start_tick": 12, "digest": "d2", "quoted_revenue": "4.7"}
    assert result["violations"] == []
    assert result["finished"] is True


def test_owner_tokens_start_at_41_and_increase_with_each_admission() -> None:
    admitted = events(run(), Kind.ADMITTED)
    assert [(t, d["token"]) for t, d in admitted] == [(0, 41), (5, 42), (13, 43)]


def test_an_attempt_does_not_act_in_the_tick_it_was_admitted() -> None:
    trace = run(change="after")
    admissions = [e for e in trace.events if e.kind is Kind.ADMITTED]
    assert len(admissions) == 4
    for admitted in admissions:
        acted = [e.tick for e in trace.events if e.attempt == admitted.attempt and e.kind is not Kind.ADMITTED]
        assert min(acted) == admitted.tick + 1


def test_silent_attempt_makes_its_call_then_is_unknown_after_two_missed_heartbeats() -> None:
    trace = run()
    assert ticks(trace, Kind.COMPUTED, 1) == [1, 2, 3]  # the s3 call at t3 counts
    assert ticks(trace, Kind.SILENT, 1) == [3]
    assert ticks(trace, Kind.UNKNOWN, 1) == [5]
    # the successor is admitted in the same tick, pinned to the report current then (v2)
    assert [(t, d["pin"], d["reason"]) for t, d in events(trace, Kind.ADMITTED, 2)] == [(5, 2, "suspicion")]


def test_heartbeat_limit_is_data() -> None:
    switches = Switches()
    schedule = dataclasses.replace(worked_example(switches), heartbeat_limit=3)
    trace, _ = simulate(switches, schedule)
    assert ticks(trace, Kind.UNKNOWN, 1) == [6]


def test_restore_is_free_and_happens_in_the_same_tick_as_the_next_computed_step() -> None:
    trace = run()
    assert ticks(trace, Kind.RESTORED, 2) == [6]
    assert ticks(trace, Kind.COMPUTED, 2) == [6, 7, 8]
    restored = events(trace, Kind.RESTORED, 2)[0][1]
    assert (restored["step"], restored["result"], restored["by"]) == (1, "s1@1", 1)


def test_woken_attempt_write_is_rejected_and_it_is_fenced() -> None:
    trace = run()
    writes = [d for t, d in events(trace, Kind.WRITE, 1) if t == 8]
    assert writes == [{
        "store": "journal", "token": 41, "epoch": 42, "applied": False,
        "record": "steps", "steps": [[3, "s3@1", 0]],
    }]  # fmt: skip
    assert ticks(trace, Kind.FENCED, 1) == [8]
    assert ticks(trace, Kind.COMPUTED, 1) == [1, 2, 3]  # it makes no further call


def test_workers_act_in_attempt_order_within_a_tick() -> None:
    trace = run()
    at8 = [(e.attempt, e.kind) for e in trace.events if e.tick == 8]
    assert at8[0] == (1, Kind.WOKE)
    assert [a for a, _ in at8] == sorted(a for a, _ in at8)


def test_a_candidate_is_assessed_in_the_tick_after_it_was_written() -> None:
    trace = run()
    written = [t for t, d in events(trace, Kind.WRITE, 2) if d["record"] == "candidate"]
    assert written == [9]
    assert [(t, d["digest"], d["version"]) for t, d in events(trace, Kind.ACCEPTED)] == [(10, "d2", 2)]


def test_producer_posts_from_the_tick_after_acceptance_and_dies_after_the_send() -> None:
    trace = run()
    assert ticks(trace, Kind.SENT, 2) == [11]
    assert [(t, d["answer"], d["post"]) for t, d in events(trace, Kind.FEED, 2)] == [(11, "applied", "P1")]
    assert [(t, d["point"]) for t, d in events(trace, Kind.DIED)] == [(11, "after-send")]
    assert ticks(trace, Kind.UNKNOWN, 2) == [13]


def test_successor_reconciles_the_announcement_and_the_feed_answers_with_the_original_post() -> None:
    trace = run()
    admitted = events(trace, Kind.ADMITTED, 3)[0][1]
    assert (admitted["reconcile"], admitted["pin"]) == ("d2", 2)
    assert ticks(trace, Kind.COMPUTED, 3) == []
    assert [(t, d["answer"], d["post"]) for t, d in events(trace, Kind.FEED, 3)] == [(14, "repeat", "P1")]
    assert ticks(trace, Kind.DONE, 3) == [14]


def test_newsletter_depends_on_acceptance_not_on_the_announcement() -> None:
    trace = run()
    assert ticks(trace, Kind.NEWSLETTER) == [12]
    assert ticks(trace, Kind.DONE) == [14]


# -- end-only checkpoints ---------------------------------------------------------------------
def test_end_only_successor_redoes_everything_and_the_woken_attempt_spends_one_more_call() -> None:
    trace = run(checkpoints="end-only")
    result = outcome(trace)
    assert result.model_calls_by_attempt[:2] == (4, 4)
    assert ticks(trace, Kind.COMPUTED, 1) == [1, 2, 3, 9]
    first_write = [(t, d["record"], d["applied"]) for t, d in events(trace, Kind.WRITE, 1)]
    assert first_write == [(10, "candidate", False)]  # its first write is at assembly
    assert result.first_accepted_tick == 11


def test_end_only_writes_the_step_records_together_with_the_candidate() -> None:
    trace = run(checkpoints="end-only")
    writes = [d for _, d in events(trace, Kind.WRITE, 2) if d["store"] != "effect"]
    assert len(writes) == 1 and writes[0]["record"] == "candidate"
    assert [s[0] for s in writes[0]["steps"]] == [1, 2, 3, 4]


# -- the second trace ------------------------------------------------------------------------
def test_superseded_rebuild_restores_unchanged_sections_and_the_newsletter_waits() -> None:
    trace = run(change="after")
    result = outcome(trace)
    assert result.model_calls_by_attempt == (3, 2, 0, 1)
    rebuild = events(trace, Kind.ADMITTED, 4)
    assert [(t, d["reason"], d["pin"]) for t, d in rebuild] == [(14, "rebuild", 2)]
    assert [d["step"] for _, d in events(trace, Kind.RESTORED, 4)] == [1, 3, 4]
    assert [d["step"] for _, d in events(trace, Kind.COMPUTED, 4)] == [2]
    assert [(t, d["digest"]) for t, d in events(trace, Kind.FEED) if d["answer"] == "applied"] == [
        (10, "d2"),
        (18, "d4"),
    ]
    assert result.newsletter.start_tick == 17 and result.newsletter.quoted_revenue == "4.7"


@pytest.mark.parametrize("rule", ["any-accepted", "latest-finished"])
def test_relaxed_rule_takes_the_v1_digest_at_t12(rule: str) -> None:
    result = outcome(run(change="after", rule=rule))
    assert (result.newsletter.start_tick, result.newsletter.quoted_revenue) == (12, "4.1")
    assert result.violations == (("misused-dependant", 12),)


# -- versions off and the ninth knob ---------------------------------------------------------
def test_versions_off_restores_by_name_and_accepts_a_superseded_digest() -> None:
    trace = run(pins="off")
    restored = events(trace, Kind.RESTORED, 2)
    assert [(d["step"], d["content"]) for _, d in restored] == [(1, 0), (2, 0)]  # s2 from v1
    accepted = events(trace, Kind.ACCEPTED)
    assert [(t, d["version"], d["built_from"]) for t, d in accepted] == [(9, None, [0, 0, 0, 0])]
    result = outcome(trace)
    assert result.model_calls == 5
    assert result.violations == (("misused-dependant", 12), ("wrong-acceptance", 9))


def test_fail_closed_gate_never_admits_the_newsletter_without_versions() -> None:
    result = outcome(run(pins="off", gate="fail-closed"))
    assert result.newsletter.start_tick is None
    assert result.violations == (("wrong-acceptance", 9),)


def test_fail_closed_changes_nothing_when_pins_are_on() -> None:
    assert outcome(run(gate="fail-closed")) == outcome(run())


# -- weakening one protection -----------------------------------------------------------------
def test_fencing_off_lets_the_stale_attempt_write_but_pins_refuse_its_candidate() -> None:
    trace = run(fencing="off")
    stale = [(t, d["record"]) for t, d in events(trace, Kind.WRITE, 1) if t >= 8]
    assert stale == [(8, "steps"), (9, "candidate")]
    refused = events(trace, Kind.REFUSED)
    assert [(t, d["digest"]) for t, d in refused] == [(10, "d1")]
    assert outcome(trace).violations == (("stale-write", 8),)


@pytest.mark.parametrize("key", ["per-attempt", "none"])
def test_a_key_that_is_not_per_operation_duplicates_the_post(key: str) -> None:
    result = outcome(run(key=key))
    assert result.posts_applied == 2
    assert result.violations == (("duplicate-effect", 14),)


def test_crashed_worker_never_wakes_and_no_stale_write_happens() -> None:
    trace = run(silent="crashed")
    assert ticks(trace, Kind.WOKE) == []
    assert outcome(trace).stale_writes_rejected == 0


# -- schedules that are not the worked example's -------------------------------------------
def test_other_schedule_crash_of_attempt_2_and_two_report_changes() -> None:
    schedule = Schedule(
        faults=(Silence(attempt=1, at=3, wake=8), Silence(attempt=2, at=7), ReportChange(at=4, sections=(2,)), ReportChange(at=6, sections=(1, 3)), PosterDeath()),
    )
    trace, result = simulate(Switches(), schedule)
    assert trace.unfired == ()
    assert not trace.horizon_reached
    # #2 crashes at t7, is suspected at t9 and replaced by #3, pinned to v3
    assert ticks(trace, Kind.UNKNOWN, 2) == [9]
    assert [(t, d["pin"]) for t, d in events(trace, Kind.ADMITTED, 3)] == [(9, 3)]
    accepted = events(trace, Kind.ACCEPTED)
    assert [d["built_from"] for _, d in accepted] == [[1, 1, 1, 0]]
    assert trace.final_content == (1, 1, 1, 0)
    assert result.finished and result.violations == ()
    assert result.model_calls == sum(result.model_calls_by_attempt)


@pytest.mark.parametrize(
    ("point", "posts", "answers"),
    [
        (PostPoint.BEFORE_INTENT, 1, ["applied"]),
        (PostPoint.AFTER_INTENT, 1, ["applied"]),
        (PostPoint.AFTER_SEND, 1, ["applied", "repeat"]),
    ],
)
def test_poster_death_points(point: PostPoint, posts: int, answers: list[str]) -> None:
    schedule = worked_example(Switches()).with_kind(PosterDeath, [PosterDeath(point)])
    trace, result = simulate(Switches(), schedule)
    assert [d["answer"] for _, d in events(trace, Kind.FEED)] == answers
    assert result.posts_applied == posts and result.finished and result.violations == ()
    intents = [d for _, d in events(trace, Kind.WRITE) if d.get("record") == "intent"]
    # the successor records the intent itself only when the dying poster had not
    assert len(intents) == 1


def test_concurrent_duplicate_delivery_is_deduplicated_by_key_and_duplicated_without() -> None:
    schedule = worked_example(Switches()).with_kind(DuplicateDelivery, [DuplicateDelivery(1)])
    trace, result = simulate(Switches(), schedule)
    assert [d["answer"] for _, d in events(trace, Kind.FEED)][:2] == ["applied", "repeat"]
    assert result.violations == ()
    no_key = Switches().with_values({"key": "none"})
    _, result = simulate(no_key, schedule)
    assert ("duplicate-effect", 11) in result.violations


def test_unfired_faults_are_reported() -> None:
    schedule = Schedule(faults=(Silence(attempt=7, at=9),))
    trace, _ = simulate(Switches(), schedule)
    assert trace.unfired == ("silence of attempt #7 at t9: attempt #7 was never admitted (only 1)",)


def test_same_scenario_twice_gives_identical_traces_and_outcomes() -> None:
    first, second = run(), run()
    assert json.dumps(first.to_json()) == json.dumps(second.to_json())
    assert outcome(first) == outcome(second)


# -- corners found in review ----------------------------------------------------------------
def test_a_replaced_poster_is_fenced_by_its_intent_write_before_it_reaches_the_feed() -> None:
    switches = Switches().with_values({"change": "never"})
    schedule = Schedule(faults=(Silence(attempt=1, at=6, wake=11), PosterDeath(PostPoint.AFTER_INTENT),))
    trace, result = simulate(switches, schedule)
    # #1 (token 41) wakes at t11 after #2 (epoch 42) recorded the intent and died
    assert [(t, d["record"], d["applied"]) for t, d in events(trace, Kind.WRITE, 1) if t == 11] == [
        (11, "intent", False)
    ]
    assert ticks(trace, Kind.FENCED, 1) == [11]
    assert ticks(trace, Kind.SENT, 1) == []
    assert result.violations == () and result.finished


def test_finished_when_a_second_digest_for_the_final_report_is_confirmed() -> None:
    trace = run(fencing="off", pins="off", checkpoints="end-only", change="never")
    result = outcome(trace)
    accepted = [d["digest"] for _, d in events(trace, Kind.ACCEPTED)]
    assert accepted == ["d1", "d2"]
    confirmed = [d["digest"] for _, d in events(trace, Kind.WRITE) if d.get("record") == "confirmed"]
    assert confirmed == ["d2"]
    assert result.finished and result.first_accepted_tick == 11 and result.confirmed_tick is None


def test_a_crashed_unknown_attempt_stays_unknown_when_its_candidate_is_refused() -> None:
    switches = Switches().with_values({"fencing": "off"})
    schedule = Schedule(
        faults=(Silence(1, 3, 8), Silence(1, 10, None), ReportChange(4, (2,)), PosterDeath()),
    )
    trace, _ = simulate(switches, schedule)
    assert [d["digest"] for _, d in events(trace, Kind.REFUSED)] == ["d1"]
    assert ticks(trace, Kind.STOPPED, 1) == []
    assert ticks(trace, Kind.UNKNOWN, 1) == [5]


def test_a_wake_after_the_horizon_is_a_bad_schedule() -> None:
    from sim.base.errors import ScheduleError

    with pytest.raises(ScheduleError, match="wakes at t250, after the horizon t200"):
        Schedule(faults=(Silence(1, 6, 250),))


def test_a_successor_does_not_resend_an_announcement_already_confirmed() -> None:
    """Reconcile finishes an intent only while it is unconfirmed. With fencing off, the stale
    #1 wakes at t10 and confirms its own post before its successor #2 acts in that tick:
    #2 finds the record confirmed and is done without sending (before this correction it
    resent, and with no key the feed applied the announcement twice)."""
    from sim.model.faults import Silence
    from sim.run import simulate
    from sim.model.schedule import worked_example
    from sim.model.switches import Switches
    from sim.engine.trace import Kind

    switches = Switches().with_values({"change": "never", "post_death": "no", "fencing": "off", "key": "none"})
    trace, outcome = simulate(switches, worked_example(switches).with_faults((Silence(1, 7, 10),)))
    sends = [(e.tick, e.attempt) for e in trace.events if e.kind is Kind.SENT]
    assert sends == [(10, 1)]
    assert [(e.tick, e.attempt) for e in trace.events if e.kind is Kind.DONE] == [(10, 1), (10, 2)]
    assert outcome.posts_applied == 1 and outcome.broken == ("stale-write",)


@pytest.mark.parametrize("point", list(PostPoint), ids=lambda p: p.value)
def test_a_poster_death_counts_only_a_poster_that_reaches_its_post(point: PostPoint) -> None:
    """A stale poster whose intent the fence refuses is not one of the run's post actions:
    #1 (paused while waiting to post, replaced at t9) wakes at t10 before its successor
    acts and is fenced at its intent; the death of post action 1 then cuts off #2's post
    (before this correction #1 used it up and #2 posted unharmed)."""
    switches = Switches().with_values({"change": "never", "post_death": "no"})
    schedule = worked_example(switches).with_faults((Silence(1, 7, 10), PosterDeath(point, 1)))
    trace, result = simulate(switches, schedule)
    fenced = [(e.tick, e.attempt) for e in trace.events if e.kind is Kind.FENCED]
    assert fenced == [(10, 1)]
    assert [(e.tick, e.attempt, e.detail["point"]) for e in trace.events if e.kind is Kind.DIED] == [
        (10, 2, point.value)
    ]
    assert result.posts_applied == 1 and result.broken == () and result.finished


# -- the horizon guard (docs/model.md §5.8: it only guards against a bug in the model) ---------
def test_the_horizon_guard_stops_a_run_at_its_horizon_and_only_there() -> None:
    """The worked example ends by itself at t14. With the horizon at t14 it still ends there,
    quiescent (the guard is not what stopped it); with the horizon at t13 the guard stops it at
    t13, unfinished, having done exactly what the whole run did by t13."""
    switches = Switches()
    example = worked_example(switches)
    whole, whole_outcome = simulate(switches, example)
    assert (example.horizon, whole.last_tick, whole.horizon_reached, whole_outcome.finished) == (200, 14, False, True)

    at_end, at_end_outcome = simulate(switches, dataclasses.replace(example, horizon=14))
    assert (at_end.last_tick, at_end.horizon_reached) == (14, False)
    assert at_end.events == whole.events and at_end_outcome == whole_outcome

    cut, result = simulate(switches, dataclasses.replace(example, horizon=13))
    assert (cut.last_tick, cut.horizon_reached, len(cut.states)) == (13, True, 14)
    assert cut.events == tuple(e for e in whole.events if e.tick <= 13)
    assert [x._replace(setup=None) for x in cut.states[:13]] == [x._replace(setup=None) for x in whole.states[:13]]
    last = cut.state_at(13)
    assert (last.finished, last.last_tick, last.horizon_reached, last.content) == (True, 13, True, whole.content_at(13))
    fields = result.to_json()
    assert (fields["horizon_reached"], fields["last_tick"], fields["finished"], fields["violations"]) == (True, 13, False, [])
