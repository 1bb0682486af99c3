"""`sim conform`'s verdicts on made-up results (no engine runs): a row is a match, explained by
a behaviour only where that behaviour's predicate holds for the value, or a MISMATCH; a row
the fault cannot exercise is not shown; a figure that varies between runs is never a match.

Each test feeds `compare()` (or `merge()`) an `Observed` the test makes up against `sim`'s
real prediction for the engine and fault.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sim.conform import explore, invariants, schedule
from sim.conform.engines import ENGINES
from sim.conform.harness import FAULTS, compare, figures, merge, predict
from sim.conform.observed import Observed
from sim.engine.trace import Event, Kind
from sim.properties import BY_NAME, HOLDS

FAULT = {f.name: f for f in FAULTS}


def verdicts(engine: str, fault: str, observed: Observed) -> dict[str, str]:
    rows = compare(ENGINES[engine], FAULT[fault], observed, predict(ENGINES[engine], FAULT[fault]))
    return {r["figure"]: r["verdict"] + (f": {r['behaviour']}" if "behaviour" in r else "") for r in rows}


#: a wrong value for each figure (given the prediction)
def wrong(figure: str, p: Observed) -> Observed:
    calls = p.calls_by_execution
    changes: dict[str, dict[str, Any]] = {
        "steps recorded at w1's barrier": {"recorded_at_barrier": (p.recorded_at_barrier or 0) - 1},
        # one model call fewer for w1 (every run's w1 calls): fewer calls than sim predicts is
        # in no behaviour's predicate
        "model calls by execution": {"calls_by_execution": (calls[0] - 1, *calls[1:])},
        "steps restored": restored_wrong(p),
        "zombie write": {"zombie_write": "landed" if p.zombie_write != "landed" else "rejected"},
        "zombie's end": {"zombie_end": "runs on to its own result" if p.zombie_end != "runs on to its own result" else "stops"},
        "acceptances": {"acceptances": (*p.acceptances, ("w1", "4.7"))},
        "posts applied": {"posts": p.posts + 1},
        "newsletter quotes": {"newsletter": "4.7"},
        "engine's history": {"history": tuple((step, (*bys, "w3")) for step, bys in p.history or ())},
        "invariants on the run": {"invariants": tuple((name, "broken" if v == "holds" else "holds")
                                                      for name, v in p.invariants or ())},
    }  # fmt: skip
    return replace(p, **changes[figure])


def restoring(p: Observed, execution: int, count: int) -> dict[str, Any]:
    """`count` steps restored by execution w<execution + 1> where `p` has its own count: the figure and its breakdown."""
    by = list(p.restored_by_execution)
    by[execution] = count
    return {"restored": sum(by), "restored_by_execution": tuple(by)}


def restored_wrong(p: Observed) -> dict[str, Any]:
    """The last execution restoring 5 steps, more than the workflow's 4 sections (the figure and
    its breakdown): a count no behaviour's predicate allows."""
    return restoring(p, len(p.restored_by_execution) - 1, 5)


CASES = [(e, f.name, figure) for e in ENGINES for f in FAULTS for figure in figures(predict(ENGINES[e], f))]


@pytest.mark.parametrize(("engine", "fault", "figure"), CASES, ids=[f"{e}-{f}-{g}" for e, f, g in CASES])
def test_each_wrong_figure_is_a_mismatch(engine: str, fault: str, figure: str) -> None:
    """The prediction itself matches on every row; one figure made wrong is a MISMATCH on that
    row, and only that row (a behaviour never excuses a value its predicate does not allow)."""
    predicted = predict(ENGINES[engine], FAULT[fault])
    assert set(verdicts(engine, fault, predicted).values()) == {"match"}
    got = verdicts(engine, fault, wrong(figure, predicted))
    assert got[figure] == "MISMATCH"
    assert all(v == "match" for k, v in got.items() if k != figure), got


#: schedules drawn at random (seeded) for each engine: up to three faults each
DRAWN = [(e, seed) for e in ENGINES for seed in range(6)]


@pytest.mark.parametrize(("engine", "seed"), DRAWN, ids=[f"{e}-{seed}" for e, seed in DRAWN])
def test_each_wrong_figure_of_a_drawn_schedule_is_a_mismatch(engine: str, seed: int, tmp_path: Path) -> None:
    """As above, for schedules drawn at random: sim's prediction matches itself on every row,
    and each figure made wrong is a MISMATCH on that row and only there."""
    drawn = schedule.draw(random.Random(seed), ENGINES[engine].switches)
    fault = explore.fault_of(drawn, ENGINES[engine], tmp_path)
    predicted = predict(ENGINES[engine], fault)
    assert {r["verdict"] for r in compare(ENGINES[engine], fault, predicted, predicted)} == {"match"}
    for figure in figures(predicted):
        rows = {r["figure"]: r["verdict"] for r in compare(ENGINES[engine], fault, wrong(figure, predicted), predicted)}
        assert rows[figure] == "MISMATCH", (drawn.name, figure)
        assert all(v == "match" for k, v in rows.items() if k != figure), (drawn.name, rows)


def test_a_barrier_a_worker_never_reached_is_a_mismatch() -> None:
    """A worker that ended before the barrier its fault waits at (the engine ran that step
    elsewhere, or not at all) is a finding: the row "faults injected", a MISMATCH."""
    p = predict(ENGINES["dbos"], FAULT["crash"])
    got = verdicts("dbos", "crash", replace(p, unreached="w1 ended before after-call:s3"))
    assert got["faults injected"] == "MISMATCH"
    assert "faults injected" not in verdicts("dbos", "crash", p)


def test_the_made_up_temporal_zombie_of_issue_24_is_a_mismatch_on_every_wrong_row() -> None:
    """The write landed, worker 1 ran on to its own result, worker 2 called 4 times, nothing
    restored: five rows, each a MISMATCH (they were all "not captured" before)."""
    p = predict(ENGINES["temporal"], FAULT["zombie"])
    made_up = replace(p, zombie_write="landed", zombie_end="runs on to its own result",
                      calls_by_execution=(p.calls_by_execution[0], 4), restored=0)  # fmt: skip
    got = verdicts("temporal", "zombie", made_up)
    for figure in ("model calls by execution", "steps restored", "zombie write", "zombie's end"):
        assert got[figure] == "MISMATCH", (figure, got)
    assert "model calls" not in got  # the sum repeated the calls by execution


def test_a_stopped_temporal_worker_is_explained_only_within_its_predicate() -> None:
    p = predict(ENGINES["temporal"], FAULT["zombie"])
    w1, w2 = p.calls_by_execution
    seen = replace(p, calls_by_execution=(w1 + 2, w2), zombie_end="returns the owner's result",
                   **restoring(p, 0, p.restored_by_execution[0] + 2))  # fmt: skip
    got = verdicts("temporal", "zombie", seen)
    assert got["model calls by execution"] == "explained: tasks handed to a stopped worker"
    assert got["steps restored"] == "explained: tasks handed to a stopped worker"
    assert got["zombie's end"] == "explained: the workflow's one result"
    assert got["zombie write"] == "match"
    # fewer calls than predicted, more restores than the other worker computed, or the
    # other worker's calls changed: outside the predicate
    assert verdicts("temporal", "zombie", replace(seen, calls_by_execution=(w1 - 1, w2)))["model calls by execution"] == "MISMATCH"
    assert verdicts("temporal", "zombie", replace(seen, calls_by_execution=(w1 + 2, w2 + 1)))["model calls by execution"] == "MISMATCH"
    assert verdicts("temporal", "zombie", replace(seen, **restoring(p, 0, p.restored_by_execution[0] + w2 + 1)))["steps restored"] == "MISMATCH"
    # the other worker's restores changed, or a total that its breakdown does not add up to
    assert verdicts("temporal", "zombie", replace(seen, **restoring(seen, 1, seen.restored_by_execution[1] + 1)))["steps restored"] == "MISMATCH"
    assert verdicts("temporal", "zombie", replace(seen, restored=seen.restored + 1))["steps restored"] == "MISMATCH"
    # the same behaviours explain nothing on a fault they are not listed for
    crash = predict(ENGINES["temporal"], FAULT["crash"])
    assert verdicts("temporal", "crash", replace(crash, calls_by_execution=(w1 + 2, w2)))["model calls by execution"] == "MISMATCH"


def test_replay_on_resume_explains_only_the_replayed_count() -> None:
    for engine in ENGINES:
        p = predict(ENGINES[engine], FAULT["lost-answer"])
        assert verdicts(engine, "lost-answer", replace(p, **restoring(p, 1, 4)))["steps restored"] == "explained: replay on resume"
        for other in (1, 2, 3, 5):
            assert verdicts(engine, "lost-answer", replace(p, **restoring(p, 1, other)))["steps restored"] == "MISMATCH"
        # the replay is the successor's: the same count restored by worker 1 is not it
        assert verdicts(engine, "lost-answer", replace(p, **restoring(p, 0, 4)))["steps restored"] == "MISMATCH"


def test_rows_a_fault_cannot_exercise_are_not_shown() -> None:
    for fault in FAULTS:
        shown = verdicts("dbos", fault.name, predict(ENGINES["dbos"], fault))
        assert ("zombie write" in shown) == (fault.stopped is not None)
        assert ("zombie's end" in shown) == (fault.stopped is not None)
        assert "model calls" not in shown
    # Temporal's record at the barrier is not read (its server records before it hands out the next step)
    assert "steps recorded at w1's barrier" not in verdicts("temporal", "crash", predict(ENGINES["temporal"], FAULT["crash"]))


def test_a_figure_that_varies_between_runs_is_never_a_match() -> None:
    engine, fault = ENGINES["temporal"], FAULT["zombie"]
    p = predict(engine, fault)
    w1, w2 = p.calls_by_execution
    runs = [replace(p, zombie_end="returns the owner's result", calls_by_execution=(w1 + n, w2)) for n in (1, 1, 0, 2)]
    rows = {r["figure"]: r for r in merge(engine, fault, runs, p)}
    calls = rows["model calls by execution"]
    assert calls["verdict"] == "varying" and calls["behaviour"] == "tasks handed to a stopped worker"
    assert calls["values"] == [f"{w1 + n} {w2}" for n in (1, 1, 0, 2)]
    assert rows["zombie's end"]["verdict"] == "explained"
    assert rows["posts applied"]["verdict"] == "match"
    # a varying figure with one value no behaviour explains is a MISMATCH
    runs.append(replace(runs[0], calls_by_execution=(w1, w2 + 1)))
    assert {r["figure"]: r for r in merge(engine, fault, runs, p)}["model calls by execution"]["verdict"] == "MISMATCH"


#: a schedule where two Temporal behaviours meet: w1 stopped at s3 (continued once the last worker
#: is done) and w2 killed after its send: the stopped worker replays workflow tasks, the last
#: worker replays the whole history after the acceptance
MET = "stop-w1-s3+change-w2-s3+kill-w2-after-send-keyless"


def met(tmp_path: Path, **observed: Any) -> tuple[dict[str, str], Observed]:
    engine = ENGINES["temporal"]
    fault = explore.fault_of(schedule.Schedule.from_name(MET), engine, tmp_path)
    p = predict(engine, fault)
    rows = compare(engine, fault, replace(p, **observed), p)
    return {r["figure"]: r["verdict"] + (f": {r['behaviour']}" if "behaviour" in r else "") for r in rows}, p


def test_two_behaviours_explain_one_row_execution_by_execution(tmp_path: Path) -> None:
    """Observed on Temporal (three runs in four): the stopped w1 restored 1 (a workflow task it
    replayed when continued), w2 as predicted, w3 all 4 (its replay after the acceptance). Each
    execution's count is explained by one of the fault's behaviours, so the row is explained by
    both; a count neither allows, on any execution, is a MISMATCH."""
    _, p = met(tmp_path)
    assert p.restored_by_execution == (0, 2, 0) and p.calls_by_execution == (3, 2, 0)
    seen, _ = met(tmp_path, restored=7, restored_by_execution=(1, 2, 4))
    assert seen["steps restored"] == "explained: tasks handed to a stopped worker, replay on resume"
    for wrong_count in [(1, 3, 4), (1, 2, 3), (3, 2, 4), (1, 1, 4), (1, 2, 5)]:
        seen, _ = met(tmp_path, restored=sum(wrong_count), restored_by_execution=wrong_count)
        assert seen["steps restored"] == "MISMATCH", wrong_count
    seen, _ = met(tmp_path, restored=8, restored_by_execution=(1, 2, 4))  # a total its breakdown does not make
    assert seen["steps restored"] == "MISMATCH"


def test_a_post_the_stopped_worker_was_handed_is_sent_when_it_is_continued(tmp_path: Path) -> None:
    """Observed on Temporal: w1, continued, ran an attempt of the post's activity the server
    handed it while it was stopped: a third post, sent by w1. The same count sent by another
    worker is a MISMATCH."""
    _, p = met(tmp_path)
    assert (p.posts, p.zombie_sends) == (2, 0)
    seen, _ = met(tmp_path, posts=3, zombie_sends=1)
    assert seen["posts applied"] == "explained: tasks handed to a stopped worker"
    seen, _ = met(tmp_path, posts=3, zombie_sends=0)
    assert seen["posts applied"] == "MISMATCH"
    seen, _ = met(tmp_path, posts=1, zombie_sends=0)
    assert seen["posts applied"] == "MISMATCH"


def test_a_successor_killed_in_its_activity_attempt_may_have_replayed_nothing(tmp_path: Path) -> None:
    """Observed on Temporal (kill-w1-s4+kill-w2-s4-keyless, --explore 20 --seed 20): w2 ran the
    retry of s4's activity and was killed in it before any workflow task reached it, so it
    restored 0 where sim predicts 3; w3 replayed. The same 0 for the last worker, or any other
    count for w2, is a MISMATCH."""
    engine = ENGINES["temporal"]
    fault = explore.fault_of(schedule.Schedule.from_name("kill-w1-s4+kill-w2-s4-keyless"), engine, tmp_path)
    p = predict(engine, fault)
    assert p.restored_by_execution == (0, 3, 3)

    def row(by: tuple[int, ...]) -> str:
        rows = compare(engine, fault, replace(p, restored=sum(by), restored_by_execution=by), p)
        (r,) = [r for r in rows if r["figure"] == "steps restored"]
        return r["verdict"] + (f": {r['behaviour']}" if "behaviour" in r else "")

    assert row((0, 0, 3)) == "explained: the replay is the workflow task's"
    assert row((0, 3, 0)) == "MISMATCH"
    assert row((0, 2, 3)) == "MISMATCH"
    assert row((0, 0, 0)) == "MISMATCH"


def test_the_workflow_task_behaviour_needs_a_successor_that_was_itself_killed(tmp_path: Path) -> None:
    """The same 0 restored by w2 is no finding of Temporal's when w2 was not killed (here w2 is
    stopped, then w3 resumes): a MISMATCH unless another behaviour allows it."""
    engine = ENGINES["temporal"]
    fault = explore.fault_of(schedule.Schedule.from_name("kill-w1-s4+kill-w2-s4-keyless"), engine, tmp_path)
    p = predict(engine, fault)
    assert p.context.killed == (0, 1)
    other = replace(p, context=replace(p.context, killed=(0,)))
    rows = compare(engine, fault, replace(other, restored=3, restored_by_execution=(0, 0, 3)), other)
    assert [r["verdict"] for r in rows if r["figure"] == "steps restored"] == ["MISMATCH"]


@pytest.mark.parametrize("missed", [0, 1], ids=["first-run-missed", "second-run-missed"])
def test_runs_with_different_rows_are_lined_up_by_figure(missed: int) -> None:
    """One of two runs ended before its barrier (its "faults injected" row, which the other run
    does not have): every other figure, the same in both, stays the prediction's match, and
    "faults injected" varies and is a MISMATCH, whichever run missed (paired by position, the
    rows after it were compared with another figure's, or the merge failed)."""
    engine, fault = ENGINES["dbos"], FAULT["crash"]
    p = predict(engine, fault)
    runs = [p, p]
    runs[missed] = replace(p, unreached="w1 ended before after-call:s3")
    rows = {r["figure"]: r for r in merge(engine, fault, runs, p)}
    assert set(rows) == set(figures(p)) | {"faults injected"}
    injected = rows.pop("faults injected")
    assert injected["verdict"] == "MISMATCH"
    assert sorted(injected["values"]) == ["all", "all but one: w1 ended before after-call:s3"]
    assert {figure: r["verdict"] for figure, r in rows.items()} == dict.fromkeys(rows, "match")
    # and a figure wrong in one run only is still found, on its own row
    runs[1 - missed] = replace(runs[1 - missed], posts=p.posts + 1)
    rows = {r["figure"]: r for r in merge(engine, fault, runs, p)}
    assert rows["posts applied"]["verdict"] == "MISMATCH"
    assert rows["acceptances"]["verdict"] == "match"


# -- the invariants judged on an engine's run (`sim.conform.invariants.judge`), on event lists made
# up as `invariants.events` maps a run's log: an acceptance and the newsletter's read carry what
# their revenue figure says they were built from, each with the report content current then; the
# feed's applied posts come after the log's events

#: the report content before and after the harness's correction (section 2's revision 1)
BEFORE, AFTER = (0, 0, 0, 0), (0, 1, 0, 0)

Mapped = list[tuple[Event, tuple[int, ...]]]


def accepted(seq: int, digest: str, producer: int, revenue: str, content: tuple[int, ...]) -> tuple[Event, tuple[int, ...]]:
    built = list(invariants.built_from(revenue))
    return Event(seq, Kind.ACCEPTED, None, {"digest": digest, "producer": producer, "built_from": built}), content


def newsletter(seq: int, digest: str, revenue: str, content: tuple[int, ...], *,
               was_accepted: bool = True) -> tuple[Event, tuple[int, ...]]:  # fmt: skip
    detail = {"digest": digest, "accepted": was_accepted, "built_from": list(invariants.built_from(revenue))}
    return Event(seq, Kind.NEWSLETTER, None, detail), content


def posted(seq: int, digest: str, attempt: int, content: tuple[int, ...]) -> tuple[Event, tuple[int, ...]]:
    return Event(seq, Kind.FEED, attempt, {"digest": digest, "answer": "applied"}), content


def broken(*names: str) -> tuple[tuple[str, str], ...]:
    """judge's output with these properties broken and the others holding, in JUDGED's order."""
    assert set(names) <= set(invariants.JUDGED)
    return tuple((name, "broken" if name in names else "holds") for name in invariants.JUDGED)


#: (events, the properties they break); each judged property broken at the list's last event,
#: and broken by an event followed by one of the same kind that would not break it
JUDGE_CASES: dict[str, tuple[Mapped, tuple[str, ...]]] = {
    "one acceptance, its post, the newsletter on it": (
        [accepted(1, "d1", 1, "4.1", BEFORE), newsletter(2, "d1", "4.1", BEFORE), posted(3, "d1", 1, BEFORE)], ()),
    "an acceptance of each report, a post of each digest": (
        [accepted(1, "d1", 1, "4.1", BEFORE), accepted(2, "d2", 2, "4.7", AFTER), newsletter(3, "d2", "4.7", AFTER),
         posted(4, "d1", 1, AFTER), posted(5, "d2", 2, AFTER)], ()),
    # broken at the last event
    "a second acceptance of the same report, last": (
        [accepted(1, "d1", 1, "4.1", BEFORE), accepted(2, "d2", 2, "4.1", BEFORE)], ("two-acceptances",)),
    "an acceptance of the old report after the correction, last": (
        [accepted(1, "d1", 1, "4.1", AFTER)], ("wrong-acceptance",)),
    "a second post of one digest, last": (
        [accepted(1, "d1", 1, "4.1", BEFORE), posted(2, "d1", 1, BEFORE), posted(3, "d1", 2, BEFORE)],
        ("duplicate-effect",)),
    "the newsletter on a digest never accepted, last": (
        [accepted(1, "d1", 1, "4.1", BEFORE), newsletter(2, "d2", "4.1", BEFORE, was_accepted=False)],
        ("misused-dependant",)),
    "the newsletter on the old report's digest after the correction, last": (
        [accepted(1, "d1", 1, "4.1", BEFORE), newsletter(2, "d1", "4.1", AFTER)], ("misused-dependant",)),
    # broken, then an event of the same kind that breaks nothing
    "two acceptances of the first report, then one of the second": (
        [accepted(1, "d1", 1, "4.1", BEFORE), accepted(2, "d2", 2, "4.1", BEFORE), accepted(3, "d3", 3, "4.7", AFTER)],
        ("two-acceptances",)),
    "the old report's digest accepted after the correction, then the new one's": (
        [accepted(1, "d1", 1, "4.1", AFTER), accepted(2, "d2", 2, "4.7", AFTER)],
        ("two-acceptances", "wrong-acceptance")),
    "a second post of one digest, then the first of another": (
        [accepted(1, "d1", 1, "4.1", BEFORE), posted(2, "d1", 1, BEFORE), posted(3, "d1", 2, BEFORE),
         posted(4, "d2", 2, BEFORE)], ("duplicate-effect",)),
    "a read of a digest never accepted, then of the accepted one": (
        [accepted(1, "d1", 1, "4.1", BEFORE), newsletter(2, "d2", "4.1", BEFORE, was_accepted=False),
         newsletter(3, "d1", "4.1", BEFORE)], ("misused-dependant",)),
}  # fmt: skip


def test_judge_says_holds_and_broken_in_judged_order() -> None:
    """The exact output: each judged property by name, in JUDGED's order, with its verdict word."""
    clean, _ = JUDGE_CASES["one acceptance, its post, the newsletter on it"]
    assert invariants.judge(clean) == (
        ("two-acceptances", "holds"), ("wrong-acceptance", "holds"),
        ("duplicate-effect", "holds"), ("misused-dependant", "holds"),
    )  # fmt: skip
    assert invariants.render(invariants.judge(clean)) == "all 4 hold"
    every: Mapped = [accepted(1, "d1", 1, "4.1", AFTER), accepted(2, "d2", 2, "4.7", AFTER),
                     newsletter(3, "d3", "4.7", AFTER, was_accepted=False), posted(4, "d2", 2, AFTER),
                     posted(5, "d2", 3, AFTER)]  # fmt: skip
    assert invariants.judge(every) == (
        ("two-acceptances", "broken"), ("wrong-acceptance", "broken"),
        ("duplicate-effect", "broken"), ("misused-dependant", "broken"),
    )  # fmt: skip
    assert invariants.render(invariants.judge(every)) == (
        "two-acceptances, wrong-acceptance, duplicate-effect, misused-dependant broken")
    assert invariants.judge([]) == broken()


@pytest.mark.parametrize("case", JUDGE_CASES)
def test_judge_on_made_up_events(case: str) -> None:
    events, names = JUDGE_CASES[case]
    assert invariants.judge(events) == broken(*names)


def test_each_judged_property_is_broken_and_holds_in_the_made_up_cases() -> None:
    """The cases above cover every judged property both ways, and each broken one in a list
    whose last event breaks it (it holds without that event) and in one whose last event is of
    a kind its monitor reads but comes after the break."""
    def verdict(events: Mapped, name: str) -> str:
        return dict(invariants.judge(events))[name]

    for name in invariants.JUDGED:
        kinds = BY_NAME[name].monitor.kinds  # type: ignore[union-attr]
        cases = [(events, names) for events, names in JUDGE_CASES.values()]
        assert any(name not in names for _, names in cases), name
        assert any(name in names and verdict(events[:-1], name) == HOLDS for events, names in cases), name
        assert any(name in names and verdict(events[:-1], name) == "broken" and events[-1][0].kind in kinds
                   for events, names in cases), name  # fmt: skip


def test_judge_reads_each_monitor_only_its_own_kinds() -> None:
    """Events of kinds a property does not read change nothing: the feed's posts and the
    newsletter's reads under one report content are no second acceptance of it, whatever order
    they come in."""
    for events in ([posted(1, "d1", 1, BEFORE), accepted(2, "d1", 1, "4.1", BEFORE)],
                   [newsletter(1, "d1", "4.1", BEFORE), accepted(2, "d1", 1, "4.1", BEFORE), posted(3, "d1", 1, BEFORE)]):
        assert invariants.judge(events) == broken()
