"""The sweep (sim/analysis/sweep.py) and `sim sweep` (sim/commands/sweep.py)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sim.analysis import sweep as sweep_mod
from sim.cli import main
from sim.properties import ARTICLE_NAMES as NAMES  # the article's invariants (beyond it: docs/outside.md)
from sim.analysis.sweep import Run, Sweep, gate_subset_ids, run_id, simulate_all
from sim.model.switches import (
    COMBINATIONS,
    FAULT_SWITCHES,
    PROTECTIONS,
    SWITCHES,
    Gate,
    Switches,
)


@pytest.fixture(scope="module")
def result() -> Sweep:
    return sweep_mod.sweep()


@pytest.fixture(scope="module")
def runs(result: Sweep) -> tuple[Run, ...]:
    return result.runs


def _where(runs: tuple[Run, ...], **values: str) -> list[Run]:
    return [r for r in runs if all(getattr(r.switches, k).value == v for k, v in values.items())]


def _all_on(switches: Switches) -> bool:
    return all(getattr(switches, name) is on for name, on in PROTECTIONS.items())


# -- run ids -----------------------------------------------------------------------------
def test_run_ids_follow_the_combination_order() -> None:
    assert [run_id(s) for s in COMBINATIONS] == list(range(1, 865))
    assert COMBINATIONS[0] == Switches()  # run 1 is the worked example, all protections on
    assert COMBINATIONS[1].label() == "key=per-attempt"  # the last switch varies fastest
    assert COMBINATIONS[-1].label() == (
        "silent=crashed fencing=off checkpoints=end-only change=after pins=off "
        "rule=latest-finished post_death=no key=none"
    )


def test_run_id_ignores_the_gate() -> None:
    assert run_id(Switches(gate=Gate.FAIL_CLOSED)) == 1


def test_every_run_is_present_once_in_order(runs: tuple[Run, ...]) -> None:
    assert [r.id for r in runs] == list(range(1, 865))
    assert [r.switches for r in runs] == list(COMBINATIONS)


# -- docs/model.md §7 ---------------------------------------------------------------------
def test_run_1_is_the_main_trace(runs: tuple[Run, ...]) -> None:
    o = runs[0].outcome
    assert (o.model_calls, o.model_calls_by_attempt, o.steps_restored) == (6, (3, 3, 0), 1)
    assert (o.stale_writes_rejected, o.stale_writes_applied, o.posts_applied) == (1, 0, 1)
    assert (o.first_accepted_tick, o.confirmed_tick, o.violations, o.finished) == (10, 14, (), True)
    assert (o.newsletter.start_tick, o.newsletter.quoted_revenue) == (12, "4.7")


def test_fencing_off_with_pins_on_lands_stale_writes_but_accepts_no_wrong_digest(runs: tuple[Run, ...]) -> None:
    cell = _where(runs, fencing="off", pins="on")
    assert len(cell) == 216
    assert any(r.outcome.stale_writes_applied > 0 for r in cell)
    assert any("stale-write" in r.broken for r in cell)
    assert not any("wrong-acceptance" in r.broken for r in cell)


def test_pins_off_with_fencing_on_accepts_a_wrong_digest_but_lands_no_stale_write(runs: tuple[Run, ...]) -> None:
    cell = _where(runs, fencing="on", pins="off")
    assert len(cell) == 216
    assert any("wrong-acceptance" in r.broken for r in cell)
    assert all(r.outcome.stale_writes_applied == 0 for r in cell)
    assert not any("stale-write" in r.broken for r in cell)


def test_all_protections_on_break_nothing_and_finish(runs: tuple[Run, ...]) -> None:
    cell = [r for r in runs if _all_on(r.switches)]
    assert len(cell) == 24
    for r in cell:
        assert r.outcome.violations == (), r.switches.label()
        assert r.outcome.finished, r.switches.label()


def test_no_run_reaches_the_horizon(runs: tuple[Run, ...]) -> None:
    assert not any(r.outcome.horizon_reached for r in runs)


def test_totals_count_the_runs_the_horizon_guard_stopped() -> None:
    """Run 1 (the worked example, ending by itself at t14) with the horizon at t13, t14 and
    t200: the totals count the one the guard stopped."""
    from sim.model.schedule import worked_example
    from sim.run import simulate

    switches = COMBINATIONS[0]
    runs = [Run(1, switches, simulate(switches, dataclasses.replace(worked_example(switches), horizon=h))[1])
            for h in (13, 14, 200)]  # fmt: skip
    totals = sweep_mod.totals(runs, [])
    assert (totals["runs"], totals["horizon_reached"], totals["finished"]) == (3, 1, 2)


# -- needed --------------------------------------------------------------------------------
def _only_differs_in(a: Switches, b: Switches, name: str) -> bool:
    return [n for n in SWITCHES if getattr(a, n) is not getattr(b, n)] == [name]


def test_needed_is_consistent_with_the_runs_it_names(result: Sweep) -> None:
    runs = result.runs
    for run, need in zip(runs, result.needs):
        on = run.switches.protections_on()
        assert [n.protection for n in need.protections] == list(on)
        for n in need.protections:
            weaker = [m.value for m in SWITCHES[n.protection] if m is not PROTECTIONS[n.protection]]
            assert [w.value for w in n.weakened] == weaker
            for w in n.weakened:
                other = runs[w.run - 1]
                assert _only_differs_in(run.switches, other.switches, n.protection)
                assert getattr(other.switches, n.protection).value == w.value
                # exactly the invariants the weakened run breaks and this one does not
                assert set(w.breaks) == set(other.broken) - set(run.broken)
            assert n.needed == any(w.breaks for w in n.weakened)
        assert [p.invariant for p in need.prevented_by] == list(run.broken)
        for p in need.prevented_by:
            listed = dict(p.by)
            for name, value in PROTECTIONS.items():
                if name in on:
                    assert name not in listed
                    continue
                other = runs[run_id(run.switches.with_values({name: value.value})) - 1]
                assert (name in listed) == (p.invariant not in other.broken)
                if name in listed:
                    assert listed[name] == other.id


def test_needed_of_the_main_trace(result: Sweep) -> None:
    need = result.needs[0]
    assert need.names == ("fencing", "pins", "key")  # the strict rule matters only after acceptance
    doc = need.to_json()
    assert doc["protections"]["fencing"]["weakened"] == [{"value": "off", "run": 217, "breaks": ["stale-write"]}]
    assert doc["prevented_by"] == {}


def test_a_broken_run_names_what_would_have_prevented_it(result: Sweep) -> None:
    rid = run_id(Switches().with_values({"fencing": "off"}))
    run = result.runs[rid - 1]
    assert run.broken == ("stale-write",)
    assert result.needs[rid - 1].to_json()["prevented_by"] == {
        "stale-write": [{"protection": "fencing", "run": 1}]
    }


# -- aggregates ----------------------------------------------------------------------------
def test_all_on_summary(result: Sweep) -> None:
    rows = result.summary["all_on"]
    assert [r["checkpoints"] for r in rows] == ["per-step", "end-only"]
    for row in rows:
        cell = [
            r for r in result.runs
            if _all_on(r.switches) and r.switches.checkpoints.value == row["checkpoints"]
        ]  # fmt: skip
        calls = [r.outcome.model_calls for r in cell]
        assert row["runs"] == 12 and row["broken"] == 0 and row["finished"] == 12
        assert row["model_calls"]["min"] == min(calls) >= 4
        assert row["model_calls"]["max"] == max(calls)
        assert row["model_calls"]["mean"] == round(sum(calls) / 12, 2)


def test_weakening_rows_each_cover_the_twelve_event_combinations(result: Sweep) -> None:
    rows = result.summary["weakened"]["per-step"]
    assert [r["weakened"] for r in rows] == ["none", "fencing=off", "pins=off", "key=per-attempt",
                                              "key=none", "rule=any-accepted", "rule=latest-finished"]  # fmt: skip
    assert all(r["runs"] == 12 for r in rows)
    assert rows[0]["broken"] == 0 and rows[0]["extra_model_calls"]["total"] == 0
    by = {r["weakened"]: r for r in rows}
    # each weakening breaks what its protection guards, and nothing else
    assert {n for n, c in by["fencing=off"]["invariants"].items() if c} == {"stale-write"}
    assert {n for n, c in by["key=none"]["invariants"].items() if c} == {"duplicate-effect"}
    assert {n for n, c in by["rule=any-accepted"]["invariants"].items() if c} == {"misused-dependant"}
    assert by["pins=off"]["invariants"]["wrong-acceptance"] > 0
    # versions off: fewer calls, and wrong
    assert by["pins=off"]["extra_model_calls"]["total"] < 0


@pytest.mark.parametrize("checkpoints", ["per-step", "end-only"])
def test_weakening_rows_recomputed_from_the_runs(result: Sweep, checkpoints: str) -> None:
    """Every figure of every weakening row, recomputed here from the runs themselves."""
    base = {name: on.value for name, on in PROTECTIONS.items()}
    all_on = {tuple(getattr(r.switches, e).value for e in FAULT_SWITCHES): r
              for r in _where(result.runs, checkpoints=checkpoints, **base)}  # fmt: skip
    for row in result.summary["weakened"][checkpoints]:
        name, _, value = row["weakened"].partition("=")
        values = dict(base, **({name: value} if value else {}))
        cell = _where(result.runs, checkpoints=checkpoints, **values)
        assert len(cell) == row["runs"] == 12
        assert row["broken"] == sum(1 for r in cell if r.broken)
        assert row["invariants"] == {n: sum(1 for r in cell if n in r.broken) for n in NAMES}
        assert row["unfinished"] == sum(1 for r in cell if not r.outcome.finished)
        extra = [r.outcome.model_calls - all_on[tuple(getattr(r.switches, e).value for e in FAULT_SWITCHES)].outcome.model_calls
                 for r in cell]  # fmt: skip
        assert row["extra_model_calls"] == {"total": sum(extra), "min": min(extra), "max": max(extra)}


def _sufficient(runs: tuple[Run, ...], cell: dict[str, str], subset: tuple[str, ...]) -> bool:
    return all(
        not r.broken
        for r in _where(runs, **cell)
        if all(getattr(r.switches, p) is PROTECTIONS[p] for p in subset)
    )


def test_minimal_sets_are_sufficient_and_minimal(result: Sweep) -> None:
    rows = result.summary["minimal_sets"]
    assert len(rows) == 24
    names = tuple(PROTECTIONS)
    every = [s for k in range(5) for s in itertools.combinations(names, k)]
    for row in rows:
        cell = {name: row[name] for name in (*FAULT_SWITCHES, "checkpoints")}
        assert row["runs"] == 36
        minimal = [tuple(s) for s in row["minimal_sets"]]
        assert minimal, cell  # all four on is always sufficient
        for subset in every:
            sufficient = _sufficient(result.runs, cell, subset)
            covers = any(set(m) <= set(subset) for m in minimal)
            assert sufficient == covers, (cell, subset)
        for m in minimal:
            for smaller in (itertools.combinations(m, len(m) - 1) if m else ()):
                assert not _sufficient(result.runs, cell, smaller), (cell, m)


def test_gate_comparison(result: Sweep) -> None:
    gate = result.summary["gate"]
    ids = gate_subset_ids()
    assert len(ids) == 144
    assert [r.id for r in result.closed] == list(ids)
    for r in result.closed:
        assert r.switches.gate is Gate.FAIL_CLOSED
        assert r.switches.pins.value == "off" and r.switches.rule.value == "current-accepted"
        assert dataclasses.replace(r.switches, gate=Gate.FAIL_OPEN) == COMBINATIONS[r.id - 1]
    opened, closed = gate["fail-open"], gate["fail-closed"]
    assert opened["runs"] == closed["runs"] == 144
    # failing closed never lets the newsletter use a wrong digest; it waits instead
    assert closed["misused_dependant"] == 0 and closed["never_admitted"] == 144
    assert opened["misused_dependant"] > 0
    # the gate is downstream: what was accepted upstream does not change
    assert opened["wrong_acceptance"] == closed["wrong_acceptance"] > 0
    for key in ("misused_dependant", "never_admitted", "wrong_acceptance"):
        assert len(opened["ids"][key]) == opened[key]
        assert len(closed["ids"][key]) == closed[key]


def test_gate_comparison_recomputed_by_rerunning_the_subset(result: Sweep) -> None:
    """The fail-open and fail-closed counts, from fresh runs of the 144 switch combinations."""
    from sim.run import simulate
    from sim.model.schedule import worked_example

    gate = result.summary["gate"]
    for value in ("fail-open", "fail-closed"):
        counts = {"misused_dependant": [], "never_admitted": [], "wrong_acceptance": []}
        for switches in COMBINATIONS:
            if switches.pins.value != "off" or switches.rule.value != "current-accepted":
                continue
            switches = switches.with_values({"gate": value})
            _, out = simulate(switches, worked_example(switches))
            rid = run_id(switches)
            if "misused-dependant" in out.broken:
                counts["misused_dependant"].append(rid)
            if out.newsletter.start_tick is None:
                counts["never_admitted"].append(rid)
            if "wrong-acceptance" in out.broken:
                counts["wrong_acceptance"].append(rid)
        for key, ids in counts.items():
            assert gate[value][key] == len(ids), (value, key)
            assert gate[value]["ids"][key] == ids, (value, key)


def test_totals_per_invariant(result: Sweep) -> None:
    totals = result.summary["totals"]
    assert list(totals["invariants"]) == list(NAMES)
    for name in NAMES:
        broken = [r.id for r in result.runs if name in r.broken]
        assert totals["invariants"][name] == {"runs": len(broken), "first": broken[0]}
    assert totals["broken"] == sum(1 for r in result.runs if r.broken)
    assert totals["finished"] == sum(1 for r in result.runs if r.outcome.finished)


def test_pinned_figures(result: Sweep) -> None:
    """The aggregates as the engine computes them today; a change here needs a reason."""
    s = result.summary
    assert [(r["model_calls"]["min"], r["model_calls"]["max"], r["model_calls"]["mean"]) for r in s["all_on"]] == [
        (5, 6, 5.67),
        (7, 9, 7.83),
    ]
    assert {n: v["runs"] for n, v in s["totals"]["invariants"].items()} == {
        "duplicate-effect": 258,
        "misused-dependant": 324,
        "stale-write": 216,
        "two-acceptances": 108,
        "wrong-acceptance": 234,
    }
    assert (s["totals"]["broken"], s["totals"]["finished"]) == (588, 639)
    assert [(s["gate"][g]["misused_dependant"], s["gate"][g]["never_admitted"], s["gate"][g]["wrong_acceptance"])
            for g in ("fail-open", "fail-closed")] == [(72, 0, 78), (0, 144, 78)]  # fmt: skip


# -- workers and determinism ---------------------------------------------------------------
def test_two_workers_give_the_same_runs() -> None:
    one = simulate_all(workers=1)
    two = simulate_all(workers=2)
    assert one == two


def test_workers_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        simulate_all(workers=0)


def test_progress_is_reported_up_to_the_total() -> None:
    seen: list[tuple[int, int]] = []
    simulate_all(workers=1, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (864 + 144, 864 + 144)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def _sim(args: list[str], cwd: Path, seed: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    return subprocess.run(
        [sys.executable, "-m", "sim", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def test_cli_output_is_identical_across_workers_and_hash_seeds(tmp_path: Path) -> None:
    a = _sim(["sweep", "--json", "--workers", "1", "--out", "a"], tmp_path, "0")
    b = _sim(["sweep", "--json", "--workers", "2", "--out", "b"], tmp_path, "4242")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert a.stdout == b.stdout
    assert a.stderr == "" and b.stderr == ""  # stderr is not a terminal: no progress bar
    doc = json.loads(a.stdout)
    assert set(doc) == {"runs", "summary"}
    assert [r["id"] for r in doc["runs"]] == list(range(1, 865))
    for name in ("sweep.json", "sweep.csv", "sweep.md"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    # --json prints exactly the document written to sweep.json
    assert (tmp_path / "a" / "sweep.json").read_text(encoding="utf-8") == a.stdout


def test_cli_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    for title in ("All protections on", "One protection weakened", "Newsletter gate", "All 864 runs"):
        assert title in out
    assert "wrote:\n" in out and f"  {tmp_path / 'r' / 'sweep.json'}\n" in out
    assert max(len(line) for line in out.splitlines() if str(tmp_path) not in line) <= 80
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["explainer.html", "sweep-map.svg", "sweep.csv", "sweep.json", "sweep.md"]


def test_cli_json_prints_only_the_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "--json", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert len(doc["runs"]) == 864
    assert doc["runs"][0]["switches"] == Switches().as_dict()
    assert set(doc["runs"][0]) == {"id", "switches", "outcome", "needed"}


@pytest.mark.parametrize("make", ["file", "under-file"])
def test_cli_bad_out_is_a_one_line_error(tmp_path: Path, make: str, capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    out = afile if make == "file" else afile / "reports"
    assert main(["sweep", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sim: error: --out ")
    assert afile.read_text() == "x"


def test_cli_bad_workers_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "--workers", "0"]) == 2


def test_shared_swimlanes_equal_the_ones_built_from_each_trace() -> None:
    """The sweep builds each distinct swimlane once; every run's grid is still exactly its own."""
    from sim.render.grid import build, shared
    from sim.run import simulate
    from sim.model.schedule import worked_example

    runs, _ = simulate_all(view=shared)
    for run in runs:
        trace, _ = simulate(run.switches, worked_example(run.switches))
        assert run.view == build(trace), run.id
