"""`sim conform`'s inputs and outputs: what it reads (a schedule's name), what it writes into
its output folders (only over files it wrote itself, never through a symlink, nothing trusted
as an earlier run left it), how long it says it will take before it starts, and the folders it
does not leave empty.

No real engine runs here: the engine's run is stood in for by `harness.observe` made up from
`sim`'s own prediction (`truthful`), so each test takes a second or less.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import sim.commands.conform as conform_cmd
from sim.cli import main
from sim.conform import explore, harness, schedule
from sim.conform.engines import ENGINES
from sim.conform.schedule import Schedule, ScheduleTextError

ROOT = Path(__file__).resolve().parent.parent
DBOS = ENGINES["dbos"]


def truthful(culprit: str = "") -> Any:
    """A stand-in for the engine's run: what `sim` predicts for the schedule itself (never read
    from the scenario file the harness was handed), one post more when the schedule has the hit
    `culprit`; it leaves a log and the run's plan in the run folder, as a real run does."""

    def observe(engine: Any, fault: harness.Fault, workdir: Path, on_start: Any = None) -> Any:
        (workdir / "feed.log").write_text("the feed's log\n")
        (workdir / "plan.json").write_text(json.dumps({"w1": [fault.hold]}))
        truth = workdir / "truth.toml"
        truth.write_text(schedule.scenario_text(fault.schedule, engine.switches))
        observed = harness.predict(engine, replace(fault, scenario=str(truth)))
        bad = culprit in fault.schedule.name.split("+")
        return replace(observed, posts=observed.posts + 1) if bad else observed

    return observe


def engine_stand_in(monkeypatch: pytest.MonkeyPatch, drawn: str, culprit: str = "") -> None:
    """Every draw is `drawn`; the engine is `truthful`, needs nothing installed."""
    monkeypatch.setattr(harness, "observe", truthful(culprit))
    monkeypatch.setattr(harness, "require", lambda engine: None)
    monkeypatch.setattr(conform_cmd, "require", lambda engine: None)
    monkeypatch.setattr(schedule, "draw", lambda rng, switches: Schedule.from_name(drawn))


def no_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any engine run fails the test: a refusal must come before it."""

    def started(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an engine run started before the refusal")

    monkeypatch.setattr(harness, "observe", started)
    monkeypatch.setattr(harness, "run_fault", started)
    monkeypatch.setattr(conform_cmd, "run_conform", started)


def refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("sim: error: "), err
    return err


def explore_args(out: Path, count: int = 1) -> list[str]:
    return ["conform", "dbos", "--explore", str(count), "--runs", "1", "--json", "--out", str(out)]


# -- 1. the drawn schedules' scenario files are written afresh, never trusted -------------------------
def test_an_edited_schedule_file_is_written_again(tmp_path: Path) -> None:
    s = Schedule.from_name("change-w1-assemble")
    path = Path(explore.fault_of(s, DBOS, tmp_path).scenario)
    edited = path.read_text().replace("changes = [{at = 6, sections = [2]}]", "changes = []")
    assert edited != path.read_text()
    path.write_text(edited)
    explore.fault_of(s, DBOS, tmp_path)
    assert path.read_text() == schedule.scenario_text(s, DBOS.switches)


def test_a_stale_schedule_file_gives_no_false_mismatch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """The reviewer's case: the schedule file of an earlier run edited (its change removed);
    the next run predicts from the schedule, not from the file, and the engine agrees."""
    engine_stand_in(monkeypatch, "change-w1-assemble")
    out = tmp_path / "ce"
    assert main(explore_args(out)) == 0
    capsys.readouterr()
    path = out / "schedules" / "change-w1-assemble.toml"
    path.write_text(path.read_text().replace("changes = [{at = 6, sections = [2]}]", "changes = []"))
    code = main(explore_args(out))
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["ok"] and doc["disagreements"] == [], doc
    assert not any(name.startswith("disagreement-") for name in os.listdir(out))
    assert path.read_text() == schedule.scenario_text(Schedule.from_name("change-w1-assemble"), DBOS.switches)


@pytest.mark.parametrize("where", ["schedules/kill-w1-s3.toml", "disagreement-dbos-kill-w1-s3.toml"])
def test_a_scenario_file_sim_did_not_write_is_refused_before_any_run(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    engine_stand_in(monkeypatch, "kill-w1-s3")
    no_runs(monkeypatch)
    mine = tmp_path / "ce" / where
    mine.parent.mkdir(parents=True)
    mine.write_text("mine\n")
    err = refused(explore_args(tmp_path / "ce"), capsys)
    assert str(mine) in err and "sim conform writes only over a file it wrote" in err, err
    assert mine.read_text() == "mine\n"


# -- 2. the engine's records: never through a symlink, never over a special file ----------------------
def test_keep_record_never_writes_through_a_symlink(tmp_path: Path) -> None:
    workdir, keep = tmp_path / "run", tmp_path / "keep"
    workdir.mkdir()
    keep.mkdir()
    (workdir / "feed.log").write_text("the feed's log\n")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (keep / "feed.log").symlink_to(victim)
    harness.keep_record(workdir, keep)
    assert victim.read_text() == "precious\n"
    assert not (keep / "feed.log").is_symlink() and (keep / "feed.log").read_text() == "the feed's log\n"


@pytest.mark.parametrize("kind", ["symlink", "fifo", "symlinked folder"])
def test_a_record_folder_sim_did_not_write_is_refused_before_any_run(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """The reviewer's case: the feed's log in the saved records of a disagreement made a
    symlink to a file of the user's (which the next save truncated) or a FIFO (an internal
    error after the runs); a run folder made a symlink to a folder of the user's."""
    engine_stand_in(monkeypatch, "kill-w1-s2", culprit="kill-w1-s2")
    out = tmp_path / "ce"
    run = out / "disagreement-dbos-kill-w1-s2" / "run-1"
    victim = tmp_path / "victim"
    if kind == "symlinked folder":
        victim.mkdir()
        run.parent.mkdir(parents=True)
        run.symlink_to(victim, target_is_directory=True)
    else:
        run.mkdir(parents=True)
        (run / "plan.json").write_text('{"w1": ["after-call:s2"]}')
        victim.write_text("precious\n")
        if kind == "symlink":
            (run / "feed.log").symlink_to(victim)
        else:
            os.mkfifo(run / "feed.log")
    before = sorted(os.listdir(victim)) if victim.is_dir() else victim.read_text()
    err = refused(explore_args(out), capsys)
    assert "not a record folder sim conform wrote" in err, err
    assert (sorted(os.listdir(victim)) if victim.is_dir() else victim.read_text()) == before
    assert not (out / "schedules").exists()  # refused before anything was written


def test_a_record_folder_sim_wrote_is_replaced_as_a_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """An earlier save's records (three runs) give way to this one's (one run): no run of the
    earlier save is left beside it; no temporary folder is left either."""
    engine_stand_in(monkeypatch, "kill-w1-s2", culprit="kill-w1-s2")
    out = tmp_path / "ce"
    record = out / "disagreement-dbos-kill-w1-s2"
    for n in (1, 2, 3):
        (record / f"run-{n}").mkdir(parents=True)
        (record / f"run-{n}" / "plan.json").write_text('{"w1": ["after-call:s2"]}')
        (record / f"run-{n}" / "w1.log").write_text("an earlier run\n")
    assert main(explore_args(out)) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [d["record"] for d in doc["disagreements"]] == [record.name]
    assert sorted(os.listdir(record)) == ["run-1"]
    assert sorted(os.listdir(record / "run-1")) == ["feed.log", "plan.json"]
    assert not [name for name in os.listdir(out) if name.startswith(".")]


# -- 3. the work's time, said before it starts; past an hour only with --yes --------------------------
def test_an_exploration_past_an_hour_is_refused_without_yes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    engine_stand_in(monkeypatch, "kill-w1-s3")
    no_runs(monkeypatch)
    monkeypatch.setattr(explore, "explore", lambda *a, **k: pytest.fail("the exploration started"))
    monkeypatch.chdir(tmp_path)
    err = refused(["conform", "dbos", "--explore", "1000", "--runs", "10"], capsys)
    assert "10,000 engine runs" in err and "estimated to take about 17 h" in err and "--yes" in err, err
    assert os.listdir(tmp_path) == []  # and no folder made for it


def test_the_estimate_is_said_first_and_yes_runs_long_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    started: list[tuple[int, int]] = []

    def stub(engine: str, count: int, seed: int, out: Path, runs: int = 3, **kwargs: Any) -> dict[str, Any]:
        started.append((count, runs))
        return {"engine": engine, "seed": seed, "runs": runs, "kinds": {}, "schedules": [], "disagreements": [],
                "ok": True}  # fmt: skip

    monkeypatch.setattr(explore, "explore", stub)
    monkeypatch.setattr(conform_cmd, "require", lambda engine: None)
    assert main(["conform", "dbos", "--explore", "1000", "--runs", "10", "--yes", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert started == [(1000, 10)]
    assert "sim conform: 10,000 engine runs, estimated about 17 h (dbos 6 s a run" in err, err
    assert explore.estimate(["dbos"], 0, 1000, 10, 1).seconds == 1000 * 10 * DBOS.run_seconds
    # the committed report's command stays under the hour, as README and docs/conform.md say
    assert explore.estimate(list(ENGINES), 5, 20, 3, 1).seconds < 3600


# -- 4. a schedule's name: ASCII digits, sim's own spelling ---------------------------------------------
@pytest.mark.parametrize("name", ["kill-w²-s1", "kill-w" + "1" * 5000 + "-s1", "kill-w١-s3", "kill-w1-s²", "kill-w01-s3",
                                  "kill-w1-in:assemble", "change-w1-s2-changed", "kill", "kill--s3", "kill-w-s3"])  # fmt: skip
def test_a_name_that_is_not_sims_spelling_of_a_schedule_is_refused(name: str) -> None:
    with pytest.raises(ScheduleTextError):
        Schedule.from_name(name)


def test_a_schedule_file_naming_no_schedule_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    crash = (ROOT / "scenarios" / "conform-crash.toml").read_text()
    path = tmp_path / "h.toml"
    path.write_text(crash.replace("schedule: kill-w1-s3", "schedule: kill-w²-s1"))
    err = refused(["conform", "dbos", "--schedule", str(path)], capsys)
    assert "not a schedule name: 'kill-w²-s1'" in err and str(path) in err, err


def test_a_run_folder_whose_pid_is_no_process_id_is_left_alone(tmp_path: Path) -> None:
    """A folder in the temporary folder (anyone's) named like a run's, with `²` or a number no
    process id reaches where the pid goes, once made every `sim conform` an internal error."""
    from sim.base.files import pid_alive

    odd = [f"{harness.RUN_FOLDER_PREFIX}{pid}-abc" for pid in ("²", "١", str(2**31), "9" * 30)]
    dead = next(pid for pid in range(harness.PID_LIMIT - 1, 0, -1) if not pid_alive(pid))
    for name in [*odd, f"{harness.RUN_FOLDER_PREFIX}{dead}-abc"]:  # the last: a killed run's, removed
        (tmp_path / name).mkdir()
    assert harness.clean_run_folders(tmp_path) == [f"{harness.RUN_FOLDER_PREFIX}{dead}-abc"]
    assert all((tmp_path / name).is_dir() for name in odd)


# -- 5. the reports: replaced only if sim wrote them ----------------------------------------------------
@pytest.mark.parametrize("name", ["conformance.md", "conformance.json"])
@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_a_report_path_holding_someone_elses_file_is_refused_before_the_engine_runs(
    name: str, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    no_runs(monkeypatch)
    monkeypatch.setattr(conform_cmd, "require", lambda engine: None)
    out = tmp_path / "co1"
    out.mkdir()
    mine = tmp_path / "mine.txt"
    mine.write_text("mine\n")
    if kind == "file":
        (out / name).write_text("mine\n")
    else:
        (out / name).symlink_to(mine)
    err = refused(["conform", "dbos", "--fault", "crash", "--out", str(out)], capsys)
    assert str(out / name) in err, err
    assert (out / name).read_text() == "mine\n" and (out / name).is_symlink() == (kind == "symlink")


def test_the_reports_sim_writes_are_recognised_as_its_own(tmp_path: Path) -> None:
    """The committed reports (written by `sim conform --all ... --out reports`) and what the
    writer makes of their documents begin with the marks `--out` looks for."""
    from sim.conform import outputs
    from sim.conform.report import JSON_HEAD, TITLE, markdown, report_json

    docs = json.loads((ROOT / "reports" / "conformance.json").read_text())["engines"]
    assert markdown(docs).startswith(TITLE) and report_json(docs).startswith(JSON_HEAD)
    for name, mark in conform_cmd.REPORTS.items():
        outputs.refuse_foreign(ROOT / "reports" / name, mark)  # no error: sim's own
        (tmp_path / name).write_bytes(mark + b"...")
    conform_cmd._prepare(tmp_path)


# -- 6. no folder made that nothing is written into ------------------------------------------------------
def test_a_replayed_schedule_makes_no_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    engine_stand_in(monkeypatch, "kill-w1-s3")
    saved = tmp_path / "saved.toml"
    saved.write_text(schedule.scenario_text(Schedule.from_name("kill-w1-s3"), DBOS.switches))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["conform", "dbos", "--schedule", str(saved)]) == 0, capsys.readouterr()
    assert os.listdir(work) == []
    err = refused(["conform", "dbos", "--schedule", str(saved), "--out", "somewhere"], capsys)
    assert "--schedule writes no file" in err and os.listdir(work) == []


def test_all_explore_with_no_disagreement_leaves_no_empty_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    from sim.conform import claims

    def one_engine(name: str, **kwargs: Any) -> dict[str, Any]:
        return {"engine": name, "ok": True}

    def drawn(engine: str, count: int, seed: int, out: Path, **kwargs: Any) -> dict[str, Any]:
        assert out.is_dir()  # made before any engine ran
        return {"ok": True, "schedules": []}

    monkeypatch.setattr(conform_cmd, "require", lambda engine: None)
    monkeypatch.setattr(conform_cmd, "run_conform", one_engine)
    monkeypatch.setattr(explore, "explore", drawn)
    monkeypatch.setattr(claims, "for_document", lambda engine, doc: [])
    monkeypatch.chdir(tmp_path)
    assert main(["conform", "--all", "--explore", "1", "--runs", "1", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["engines"]) == len(ENGINES)
    assert os.listdir(tmp_path) == []
