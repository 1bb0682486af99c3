"""`sim check`: the bounded space (walked by the enumerator, the search's oracle), the search's
pinned counts, its units on any executor, counterexamples and the CLI."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from sim.analysis.check import check as checker
from sim.analysis.check import enumerator
from sim.analysis.check.check import (
    CheckBound,
    Config,
    InlineExecutor,
    check,
    configurations,
    schedule_of,
)
from sim.analysis.check.enumerator import Job, run_job
from sim.cli import main
from sim.run import simulate
from sim.engine.run import run_world
from sim.engine.world import World
from sim.base.errors import ScheduleError
from sim.model.faults import (
    DuplicateDelivery,
    Fault,
    Moment,
    PosterDeath,
    PostPoint,
    ReportChange,
    Silence,
)
from sim.model.faults import change as change_kind
from sim.model.switches import Checkpoints, Switches

ALL_ON = Config("all-on", Switches())
#: the search's own figures at 2 faults, horizon 8, all protections on (per-step)
PINNED_NODES = 14667
PINNED_TRANSITIONS = 22069


def walk(config: Config, bound: CheckBound) -> list[enumerator.Code]:
    """Every schedule the enumerator runs, in the fixed (one-worker) order."""
    order: list[enumerator.Code] = []
    stack: list[enumerator.Code] = [()]
    while stack:
        code = stack.pop()
        order.append(code)
        result = run_job(Job(config.switches, bound, (code,)))
        stack.extend(reversed(result.children))
    return order


def brute_force(config: Config, bound: CheckBound, attempts: int = 4, nth: int = 3) -> set[frozenset[Fault]]:
    """Every schedule of a static fault alphabet that is valid, whose faults all fire and
    whose deaths and duplicates happen by the horizon: what the walk must visit."""
    t_max = bound.horizon
    alphabet: list[Fault] = []
    for k in range(1, attempts + 1):
        for at in range(k, t_max + 1):
            alphabet += [Silence(k, at, wake) for wake in (None, *range(at + 1, t_max + 1))]
    alphabet += [ReportChange(t, s) for t in range(t_max + 1) for s in change_kind.section_sets(4)]
    alphabet += [PosterDeath(p, n) for n in range(1, nth + 1) for p in PostPoint]
    alphabet += [DuplicateDelivery(n) for n in range(1, nth + 1)]
    found = set()
    for size in range(bound.max_faults + 1):
        for combo in itertools.combinations(alphabet, size):
            try:
                schedule = schedule_of(combo)
            except ScheduleError:
                continue
            world = World(config.switches, schedule, record=True)
            trace = run_world(world)
            if trace.unfired:
                continue
            assert world.consults is not None
            ticks = {(moment, where): tick for tick, _, moment, where in world.consults}
            late = any(ticks[(f.moment, f.where())] > t_max for f in combo if f.moment in (Moment.POST, Moment.SEND))
            if not late:
                found.add(frozenset(combo))
    return found


@pytest.mark.parametrize(
    "switches",
    [Switches(), Switches().with_values({"fencing": "off", "checkpoints": "end-only", "key": "none"})],
    ids=["all-on", "fencing-off-end-only"],
)
def test_walk_visits_exactly_the_schedules_whose_faults_all_fire(
    switches: Switches, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a smaller change alphabet keeps the brute force quick; the walk reads the same one
    monkeypatch.setattr(change_kind, "section_sets", lambda sections: ((2,), (1, 3)))
    config, bound = Config("x", switches), CheckBound(max_faults=2, horizon=8)
    order = walk(config, bound)
    assert len(order) == len(set(order)), "a schedule was visited twice"
    assert {frozenset(code) for code in order} == brute_force(config, bound)


def test_pinned_counts_for_one_fault() -> None:
    configs = configurations(Switches(), "each", [Checkpoints.PER_STEP])
    results = check(configs, CheckBound(max_faults=1, horizon=12))
    assert [(r.protections, r.schedules, r.verdict) for r in results] == [
        ("all-on", 263, "holds"),
        ("fencing=off", 263, "broken"),
        ("pins=off", 263, "broken"),
        ("key=per-attempt", 263, "broken"),
        ("key=none", 263, "broken"),
        ("rule=any-accepted", 263, "broken"),
        ("rule=latest-finished", 263, "broken"),
    ]


def test_pinned_counts_for_two_faults() -> None:
    # the schedules in the bound (the enumerator ran 13,388 of them), and the search's own
    # figures, pinned like stateright's state counts
    (result,) = check([ALL_ON], CheckBound(max_faults=2, horizon=8))
    assert (result.schedules, result.verdict) == (13388, "holds")
    assert (result.nodes, result.transitions, result.depth) == (PINNED_NODES, PINNED_TRANSITIONS, 21)


def test_runs_the_engine_horizon_stops_are_counted() -> None:
    """With the engine's horizon guard lowered to t12 (the run without faults ends by itself
    exactly there, so the guard does not stop it), 20 of the 86 schedules of one fault by t4
    are stopped by the guard: a report change at t1..t4 in 3 or 4 of the sections, whose runs
    end by themselves at t13 or t14 under the usual t200 guard. The check counts exactly those,
    split or not, and so does each schedule run on its own (the SimPy engine, not the search's
    steps). With the guard at t11 the one schedule of no fault is stopped too."""
    setting = dataclasses.replace(checker.SETTING, horizon=12)
    bound = CheckBound(max_faults=1, horizon=4, setting=setting)
    (result,) = check([ALL_ON], bound)
    assert (result.schedules, result.horizon_reached, result.verdict) == (86, 20, "holds")
    (split,) = check([ALL_ON], bound, split=4, executor=InlineExecutor(), workers=2)
    assert (split.schedules, split.horizon_reached) == (86, 20)
    codes = walk(ALL_ON, bound)
    stopped = [code for code in codes if simulate(ALL_ON.switches, schedule_of(code, setting))[0].horizon_reached]
    assert (len(codes), len(stopped)) == (86, 20)
    assert stopped == [code for code in codes if simulate(ALL_ON.switches, schedule_of(code))[0].last_tick > 12]
    assert all(isinstance(f, ReportChange) and f.at >= 1 and len(f.sections) >= 3 for (f,) in stopped)
    (none,) = check([ALL_ON], CheckBound(max_faults=0, horizon=3, setting=dataclasses.replace(setting, horizon=11)))
    assert (none.schedules, none.horizon_reached) == (1, 1)
    # the worked example's setting: the guard at t200, which no schedule in the bound reaches
    (usual,) = check([ALL_ON], CheckBound(max_faults=1, horizon=4))
    assert (usual.schedules, usual.horizon_reached) == (86, 0)


def test_identical_results_for_any_executor_and_worker_count() -> None:
    bound = CheckBound(max_faults=2, horizon=4)
    configs = [ALL_ON, Config("fencing=off", Switches().with_values({"fencing": "off"}))]
    one = check(configs, bound, executor=InlineExecutor(), workers=1)
    assert [(r.schedules, r.verdict) for r in one] == [(3093, "holds"), (3093, "broken")]
    assert one[1].counterexamples["stale-write"].describe() == "#1 falls silent at t1 and pauses until t4"
    with ProcessPoolExecutor(max_workers=2) as pool:
        assert check(configs, bound, executor=pool, workers=2) == one
        split = check(configs, bound, executor=pool, workers=2, split=7)
    # a split changes the search's own figures (subtrees no longer merge), nothing else
    assert split == check(configs, bound, split=7)
    for a, b in zip(one, split):
        assert (a.schedules, a.violations, a.counterexamples) == (b.schedules, b.violations, b.counterexamples)
        assert a.nodes <= b.nodes


def test_walk_order_is_fixed() -> None:
    order = walk(ALL_ON, CheckBound(max_faults=1, horizon=3))
    assert order[:3] == [(), (ReportChange(0, (1,)),), (ReportChange(0, (2,)),)]
    # changes at t0..t3 (15 section sets each); #1 silent at t1 (crash, wake t2, t3), t2 (crash,
    # wake t3), t3 (crash)
    assert len(order) == 1 + 4 * 15 + 3 + 2 + 1


def test_fingerprints_and_split_do_not_depend_on_the_hash_seed() -> None:
    code = (
        "from sim.analysis.check.check import check, CheckBound, Config; from sim.model.switches import Switches;"
        "r = check([Config('a', Switches())], CheckBound(2, 5), split=9); print(r);"
        "from sim.analysis.check.enumerator import fingerprint; from sim.engine.run import run; from sim.model.schedule import worked_example;"
        "print(fingerprint(run(Switches(), worked_example(Switches())).events))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1


def test_cli_each_protection_json_and_replayable_counterexamples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "check"
    args = ["check", "-k", "1", "-t", "10", "--protections", "each", "--set", "checkpoints=per-step"]
    code = main([*args, "--workers", "1", "--json", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0
    doc = json.loads(captured.out)
    assert set(doc) == {"bound", "results", "notes"} and doc["notes"] == []
    assert doc["bound"]["fault_kinds"] == ["silence", "change", "poster_death", "duplicate_delivery"]
    assert doc["bound"]["max_faults"] == 1 and doc["bound"]["horizon"] == 10
    rows = {r["protections"]: r for r in doc["results"]}
    assert list(rows) == ["all-on", "fencing=off", "pins=off", "key=per-attempt", "key=none",
                          "rule=any-accepted", "rule=latest-finished"]  # fmt: skip
    for row in doc["results"]:
        assert set(row) == {"protections", "checkpoints", "schedules", "nodes", "transitions", "depth",
                            "judged", "not_judged", "violations", "verdict", "counterexamples"}  # fmt: skip
        assert row["judged"] == list(row["violations"]) and row["not_judged"] == ["faithful-digest"]
        assert row["checkpoints"] == "per-step" and row["schedules"] == 219
    assert rows["all-on"]["verdict"] == "holds" and rows["all-on"]["counterexamples"] == {}
    expected = {
        "fencing=off": {"stale-write"},
        "pins=off": {"wrong-acceptance", "misused-dependant"},
        "key=per-attempt": {"duplicate-effect"},
        "key=none": {"duplicate-effect"},
        "rule=any-accepted": {"misused-dependant"},
        "rule=latest-finished": {"misused-dependant"},
    }
    for label, broken in expected.items():
        assert rows[label]["verdict"] == "broken"
        assert set(rows[label]["counterexamples"]) == broken
        for path in rows[label]["counterexamples"].values():
            assert main(["trace", path, "--check"]) == 0, path
    capsys.readouterr()
    assert json.loads((out / "check.json").read_text()) == doc
    # the same with two workers
    assert main([*args, "--workers", "2", "--json", "--out", str(tmp_path / "two")]) == 0
    assert json.loads(capsys.readouterr().out)["results"] == [
        {**row, "counterexamples": {k: v.replace(str(out), str(tmp_path / "two")) for k, v in row["counterexamples"].items()}}
        for row in doc["results"]
    ]


def test_cli_human_output_ends_with_the_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "-k", "1", "-t", "4", "-j", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.strip()
    lines = out.splitlines()
    assert "holds within the bound" in lines[2]
    assert max(len(line) for line in lines) <= 80, "the result fits 80 columns"
    last = out.split("\n\n")[-1].replace("\n", " ")
    assert last.startswith("bound checked: every schedule of up to 1 fault(s)")
    assert "by t4" in last


def test_every_line_fits_80_columns_with_a_long_out_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """A folder given by a long path outside the current one: the counterexamples' folder is
    named once (cut after a `/` where it must be), each file by its name; stdout and stderr
    are not terminals, so every line fits 80 columns."""
    out = tmp_path / "a-rather-long-folder-name" / "for-the-counterexamples-of-this-check" / "and-one-more"
    monkeypatch.chdir(Path(__file__).resolve().parent)  # not above tmp_path: the folder is shown absolute
    args = ["check", "-k", "1", "-t", "6", "-j", "1", "--set", "fencing=off", "--set", "journal_code=yes",
            "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    printed, err = capsys.readouterr()
    assert [line for line in (printed + err).splitlines() if len(line) > 80] == []
    assert "sim: note: journal_code=yes has no effect" in err  # a note too (inert: no code change)
    section = printed.split("shortest counterexamples")[1].split("\n\n")[0].splitlines()
    first = next(i for i, line in enumerate(section) if line.startswith("  fencing=off"))
    folder = "".join(line.strip().removeprefix("in ") for line in section[2:first])
    assert folder == str(out) + os.sep and first > 3  # cut: it does not fit one line
    names = [line.strip() for line in section if line.strip().endswith(".toml")]
    assert names == ["fencing=off.per-step.stale-write.toml", "fencing=off.end-only.stale-write.toml"]
    assert all((out / name).is_file() for name in names)


def test_the_folder_is_shown_relative_to_the_current_one_when_that_is_shorter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    assert main(["check", "-k", "1", "-t", "6", "-j", "1", "--set", "fencing=off", "--out", str(tmp_path / "cx")]) == 0
    assert "\n  in cx/\n" in capsys.readouterr().out


def test_lines_fit_the_terminal_when_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from sim.commands.common import columns, path_lines

    class Terminal:
        def isatty(self) -> bool:
            return True

        def fileno(self) -> int:
            raise OSError("no size")

    monkeypatch.setenv("COLUMNS", "120")
    assert columns(Terminal()) == 120  # type: ignore[arg-type]
    monkeypatch.delenv("COLUMNS")
    assert columns(Terminal()) == 80  # type: ignore[arg-type]  # no size: as when not a terminal
    lines = path_lines("/a/long/folder/name.toml", 12, "  in ", "    ")
    assert lines == ["  in /a/", "    long/", "    folder/", "    name.", "    toml"]
    assert max(map(len, lines)) <= 12


def test_cli_exits_1_when_all_on_breaks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    real = checker.check

    def broken(*args: object, **kwargs: object) -> list[checker.Result]:
        results = real(*args, **kwargs)  # type: ignore[arg-type]
        fake = checker.Counterexample("stale-write", (ReportChange(2, (2,)),), 2)
        return [
            checker.Result(r.config, r.schedules, {**r.violations, "stale-write": 1}, {"stale-write": fake}, 0)
            for r in results
        ]

    monkeypatch.setattr(checker, "check", broken)
    assert main(["check", "-k", "0", "-j", "1", "--out", str(tmp_path)]) == 1
    assert "broken" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args",
    [
        ["--set", "change=never"],
        ["--set", "fencing=maybe"],
        ["--protections", "fencing=maybe"],
        ["--protections", "checkpoints=end-only"],
        ["--horizon", "0"],
        ["--max-faults", "-1"],
    ],
)
def test_cli_bad_input_exits_2(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "-k", "0", "-j", "1", "--out", str(tmp_path), *args]) == 2


def test_ctrl_c_prints_what_was_checked_marked_not_exhaustive_and_exits_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The third unit of work is interrupted: the first two configurations were searched
    whole and keep their verdicts, the rest are "not exhaustive"; no file is written."""
    real = checker.run_unit
    calls = []

    def interrupting(unit: checker.Unit) -> checker.Found:
        calls.append(unit.index)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(unit)

    monkeypatch.setattr(checker, "run_unit", interrupting)
    code = main(["check", "-k", "1", "-t", "4", "-p", "each", "-j", "1", "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 130
    assert "interrupted: not exhaustive: 2 of 14 units of work searched" in err
    rows = [line for line in out.splitlines() if line.startswith(("all-on", "fencing=off", "pins=off"))]
    assert rows[0].endswith("holds within the bound;") and rows[1].endswith("broken;")
    assert rows[2].endswith("not exhaustive;")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_row_stopped_before_its_end_is_broken_if_it_found_a_break_else_not_exhaustive(
        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """A check stopped before every unit of a row was searched (Ctrl-C, the memory bound): a
    row that already found a break is broken (what is found stands), one that found nothing
    yet is "not exhaustive", never "holds", in the JSON document and in the table."""
    import dataclasses

    from sim.commands import check as command

    bound = CheckBound(max_faults=1, horizon=8)
    (found,) = check(configurations(Switches(), "fencing=off", [Checkpoints.PER_STEP]), bound)
    assert found.broken
    nothing_yet = dataclasses.replace(found, violations=dict.fromkeys(found.violations, 0), counterexamples={})
    results = [dataclasses.replace(r, complete=False) for r in (found, nothing_yet)]
    assert [row["verdict"] for row in command._document(bound, results, {}, [])["results"]] == ["broken", "not exhaustive"]
    capsys.readouterr()
    command._render_rows(bound, results, 200)
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("fencing=off")]
    assert len(rows) == 2
    assert "broken" in rows[0] and "not exhaustive" not in rows[0]
    assert "not exhaustive" in rows[1] and "broken" not in rows[1]
