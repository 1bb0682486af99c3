"""`sim conform`'s verdicts on made-up results (no engine runs): a row is a match, explained by
a behaviour only where that behaviour's predicate holds for the value, or a MISMATCH; a row
the fault cannot exercise is not shown; a figure that varies between runs is never a match.

Each test feeds `compare()` (or `merge()`) an `Observed` the test makes up against `sim`'s
real prediction for the engine and fault.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from sim.conform.engines import ENGINES
from sim.conform.harness import FAULTS, compare, figures, merge, predict
from sim.conform.observed import Observed

FAULT = {f.name: f for f in FAULTS}


def verdicts(engine: str, fault: str, observed: Observed) -> dict[str, str]:
    rows = compare(ENGINES[engine], FAULT[fault], observed, predict(ENGINES[engine], FAULT[fault]))
    return {r["figure"]: r["verdict"] + (f": {r['behaviour']}" if "behaviour" in r else "") for r in rows}


#: a wrong value for each figure (given the prediction)
def wrong(figure: str, p: Observed) -> Observed:
    calls = p.calls_by_execution
    changes: dict[str, dict[str, Any]] = {
        "steps recorded at w1's barrier": {"recorded_at_barrier": (p.recorded_at_barrier or 0) - 1},
        "model calls by execution": {"calls_by_execution": (calls[0], calls[1] + 1)},
        "steps restored": {"restored": p.restored + 1 if p.restored == 0 else p.restored - 1},
        "zombie write": {"zombie_write": "landed" if p.zombie_write != "landed" else "rejected"},
        "zombie's end": {"zombie_end": "runs on to its own result" if p.zombie_end != "runs on to its own result" else "stops"},
        "acceptances": {"acceptances": (*p.acceptances, ("w1", "4.7"))},
        "posts applied": {"posts": p.posts + 1},
        "newsletter quotes": {"newsletter": "4.7"},
        "engine's history": {"history": tuple((step, (*bys, "w3")) for step, bys in p.history or ())},
    }  # fmt: skip
    return replace(p, **changes[figure])


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
    seen = replace(p, calls_by_execution=(w1 + 2, w2), restored=p.restored + 2, zombie_end="returns the owner's result")
    got = verdicts("temporal", "zombie", seen)
    assert got["model calls by execution"] == "explained: tasks handed to a stopped worker"
    assert got["steps restored"] == "explained: tasks handed to a stopped worker"
    assert got["zombie's end"] == "explained: the workflow's one result"
    assert got["zombie write"] == "match"
    # fewer calls than predicted, more restores than the other worker computed, or the
    # other worker's calls changed: outside the predicate
    assert verdicts("temporal", "zombie", replace(seen, calls_by_execution=(w1 - 1, w2)))["model calls by execution"] == "MISMATCH"
    assert verdicts("temporal", "zombie", replace(seen, calls_by_execution=(w1 + 2, w2 + 1)))["model calls by execution"] == "MISMATCH"
    assert verdicts("temporal", "zombie", replace(seen, restored=p.restored + w2 + 1))["steps restored"] == "MISMATCH"
    # the same behaviours explain nothing on a fault they are not listed for
    crash = predict(ENGINES["temporal"], FAULT["crash"])
    assert verdicts("temporal", "crash", replace(crash, calls_by_execution=(w1 + 2, w2)))["model calls by execution"] == "MISMATCH"


def test_replay_on_resume_explains_only_the_replayed_count() -> None:
    for engine in ENGINES:
        p = predict(ENGINES[engine], FAULT["lost-answer"])
        assert verdicts(engine, "lost-answer", replace(p, restored=4))["steps restored"] == "explained: replay on resume"
        for other in (1, 2, 3, 5):
            assert verdicts(engine, "lost-answer", replace(p, restored=other))["steps restored"] == "MISMATCH"


def test_rows_a_fault_cannot_exercise_are_not_shown() -> None:
    for fault in FAULTS:
        shown = verdicts("dbos", fault.name, predict(ENGINES["dbos"], fault))
        assert ("zombie write" in shown) == (fault.action == "stop")
        assert ("zombie's end" in shown) == (fault.action == "stop")
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
