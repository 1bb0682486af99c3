"""Which profile claims the runs on an engine exercise (sim/conform/claims.py), on made-up rows:
no engine runs. A claim is exercised only where a schedule that tells it from every other value
agreed there; a MISMATCH on such a figure contradicts it; a claim no schedule tells apart is
documentation-only."""

from __future__ import annotations

from typing import Any

from sim.conform import claims, harness
from sim.conform.engines import ENGINES

FAULT = {f.name: f for f in harness.FAULTS}


def rows_of(engine: str, fault: str, verdict: str = "match", only: str = "") -> list[dict[str, Any]]:
    """The fault's rows as if run: every figure `sim` predicts, each with `verdict` (or only
    the figure `only`, the others a match)."""
    predicted = harness.figures(harness.predict(ENGINES[engine], FAULT[fault]))
    return [{"figure": f, "observed": v, "predicted": v, "verdict": verdict if not only or f == only else "match"}
            for f, v in predicted.items()]  # fmt: skip


def status(engine: str, runs: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, str]:
    judged = claims.judge(ENGINES[engine], [(FAULT[name], rows) for name, rows in runs])
    return {c["claim"]: c["status"] for c in judged}


def test_a_claim_is_exercised_only_by_a_schedule_that_tells_it_apart() -> None:
    # the zombie fault tells fenced_end=adopts from stops (the zombie's end), the crash does not
    assert status("dbos", [("zombie", rows_of("dbos", "zombie"))])["fenced_end=adopts"] == "exercised"
    assert status("dbos", [("crash", rows_of("dbos", "crash"))])["fenced_end=adopts"] == "documentation-only"
    # fencing_by=owner: no conformance fault reuses an owner epoch, so none tells it from token
    every = [(name, rows_of("dbos", name)) for name in FAULT]
    assert status("dbos", every)["fencing_by=owner"] == "documentation-only"


def test_a_mismatch_where_another_value_predicts_otherwise_contradicts_the_claim() -> None:
    got = status("dbos", [("zombie", rows_of("dbos", "zombie", "MISMATCH", only="zombie's end"))])
    assert got["fenced_end=adopts"] == "contradicted"
    # a mismatch in a figure no other value changes contradicts nothing
    got = status("dbos", [("zombie", rows_of("dbos", "zombie", "MISMATCH", only="newsletter quotes"))])
    assert got["fenced_end=adopts"] == "exercised"


def test_a_figure_that_varied_tells_nothing() -> None:
    got = status("dbos", [("zombie", rows_of("dbos", "zombie", "varying", only="zombie's end"))])
    assert got["fenced_end=adopts"] == "documentation-only"


def test_every_claim_of_each_runnable_engine_is_judged() -> None:
    for engine in ENGINES:
        judged = claims.judge(ENGINES[engine], [(f, rows_of(engine, f.name)) for f in harness.FAULTS])
        assert {c["claim"].split("=")[0] for c in judged} == set(ENGINES[engine].switches)
        assert all(c["status"] in ("exercised", "documentation-only") for c in judged)


def test_a_value_explained_that_is_the_other_values_prediction_tells_nothing() -> None:
    """A row explained by a behaviour agrees with the claim only when its value is not what the
    other value of the setting predicts: the engine behaving exactly as `fenced_end=stops` would,
    excused by a behaviour, does not exercise `fenced_end=adopts`; another explained value does."""
    engine, fault = ENGINES["dbos"], FAULT["zombie"]
    others = [v for v in claims.values("fenced_end") if v != "adopts"]
    mine = harness.figures(harness.predict(engine, fault))
    for other in others:
        theirs = harness.figures(harness.predict(engine, fault, {**engine.switches, "fenced_end": other}))
        differs = [f for f, v in mine.items() if theirs.get(f) != v]
        assert differs, other
        as_other = [dict(r, verdict="explained", observed=theirs[r["figure"]]) if r["figure"] in differs else r
                    for r in rows_of("dbos", "zombie")]  # fmt: skip
        assert status("dbos", [("zombie", as_other)])["fenced_end=adopts"] == "documentation-only"
        neither = [dict(r, verdict="explained", observed="a third value") if r["figure"] in differs else r
                   for r in rows_of("dbos", "zombie")]  # fmt: skip
        assert status("dbos", [("zombie", neither)])["fenced_end=adopts"] == "exercised"
