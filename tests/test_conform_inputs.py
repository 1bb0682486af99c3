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


# -- 4. a schedule's name: ASCII digits, sim's own spelling ---------------------------------------------
@pytest.mark.parametrize("name", ["kill-w²-s1", "kill-w١-s3", "kill-w1-s²", "kill-w01-s3", "kill-w1-in:assemble",
                                  "change-w1-s2-changed", "kill", "kill--s3", "kill-w-s3"])  # fmt: skip
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
