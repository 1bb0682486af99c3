"""`sim conform ENGINE --explore N --seed S` and `--schedule FILE` (sim/conform/explore.py):
fault schedules drawn at random, each run on the real engine beside sim's prediction for the
same schedule; disagreements shrunk and saved as scenario files with the engine's records.

The default run draws 3 schedules per engine that needs no server (each run once, to keep it
fast); `-m slow` runs LangGraph and DBOS with --explore 50 (3 runs a schedule), `-m servers`
Temporal and Restate with --explore 20.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.conform import explore, harness
from sim.conform.engines import ENGINES, SERVERLESS
from sim.conform.explore import Schedule
from sim.conform.harness import FAULTS
from conftest import children_of, live

FIXED = {
    "crash": Schedule("kill", "after-call:s3", True, False),
    "zombie": Schedule("stop", "after-call:s3", False, False),
    "lost-answer": Schedule("kill", "after-post", True, False),
    "lost-answer-keyless": Schedule("kill", "after-post", False, False),
    "crash-changed": Schedule("kill", "after-call:s3", True, True),
}


@pytest.mark.parametrize("engine", list(ENGINES))
def test_the_five_faults_are_schedules_the_draw_can_make(engine: str, tmp_path: Path) -> None:
    """Each fixed fault written as a drawn schedule's scenario file gives sim's prediction for
    the fault's own scenario file, and reads back as the same schedule."""
    for fault in FAULTS:
        schedule = FIXED[fault.name]
        drawn = explore.fault_of(schedule, tmp_path)
        assert harness.predict(ENGINES[engine], drawn) == harness.predict(ENGINES[engine], fault)
        assert explore.from_file(Path(drawn.scenario)) == schedule
        assert explore.from_file(harness.HERE.parent.parent / "scenarios" / f"{fault.scenario}.toml") == schedule
        assert harness.kind(drawn) == harness.kind(fault)


def test_the_draw_is_seeded_and_covers_every_kind() -> None:
    one = [explore.draw(random.Random(7)) for _ in range(1)]
    assert one == [explore.draw(random.Random(7))]
    many = {explore.draw(random.Random(seed)) for seed in range(200)}
    assert {s.action for s in many} == {"kill", "stop"}
    assert {s.hold for s in many} == {"after-call:s1", "after-call:s2", "after-call:s3", "after-call:s4", "after-post"}
    assert {s.keyed for s in many} == {True, False} and {s.change for s in many} == {True, False}


def test_a_disagreement_is_shrunk_and_saved(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An engine made up to disagree whenever w1 is held in s2 or later: a drawn kill in s4 with
    the change shrinks to a kill in s2 without it, saved as a scenario file the harness reads
    back, beside the records of its runs."""
    ran: list[str] = []

    def made_up(engine: Any, fault: harness.Fault, on_start: Any, runs: int = 1, keep: Path | None = None) -> dict[str, Any]:
        ran.append(fault.name)
        if keep is not None:
            keep.mkdir(parents=True)
        bad = fault.hold >= "after-call:s2" and fault.hold != "after-post"
        return {"rows": [{"figure": "posts applied", "observed": "2", "predicted": "1",
                          "verdict": "MISMATCH" if bad else "match"}]}  # fmt: skip

    monkeypatch.setattr(harness, "run_fault", made_up)
    monkeypatch.setattr(harness, "require", lambda engine: None)
    monkeypatch.setattr(explore, "draw", lambda rng: Schedule("kill", "after-call:s4", True, True))
    doc = explore.explore("dbos", 1, 0, tmp_path, runs=3)
    (found,) = doc["disagreements"]
    assert (found["drawn"], found["shrunk"]) == ("kill-after-s4-changed", "kill-after-s2")
    assert explore.from_file(tmp_path / found["file"]) == Schedule("kill", "after-call:s2", True, False)
    assert (tmp_path / found["record"]).is_dir()
    assert not doc["ok"] and doc["kinds"]["kill"]["mismatch"] == 1
    assert ran[:4] == ["kill-after-s4-changed", "kill-after-s4", "kill-after-s3", "kill-after-s2"]


def test_a_schedule_the_harness_cannot_inject_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "two.toml"
    path.write_text((harness.HERE.parent.parent / "scenarios" / "conform-crash.toml").read_text()
                    .replace("silences = [{attempt = 1, at = 3}]", "silences = [{attempt = 1, at = 3}, {attempt = 2, at = 7}]"))  # fmt: skip
    assert main(["conform", "dbos", "--schedule", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a schedule the harness can inject" in err


def explored(engine: str, count: int, seed: int, runs: int, out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    if not harness.installed(ENGINES[engine]) or (ENGINES[engine].server and harness.server_of(ENGINES[engine]).missing()):
        pytest.skip(f"{engine} is not installed: {ENGINES[engine].install}")
    before = children_of(os.getpid())
    began = time.monotonic()
    code = main(["conform", engine, "--explore", str(count), "--seed", str(seed), "--runs", str(runs),
                 "-j", "2", "--json", "--out", str(out)])  # fmt: skip
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    doc["seconds"] = time.monotonic() - began
    assert children_of(os.getpid()) - before == set(), "processes left running after the exploration"
    assert sum(k["schedules"] for k in doc["kinds"].values()) == count
    assert code == (0 if doc["ok"] else 1)
    return doc


@pytest.mark.parametrize("engine", SERVERLESS)
def test_three_drawn_schedules_agree_with_the_model(engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = explored(engine, 3, 24, 1, tmp_path, capsys)
    assert doc["ok"], doc["disagreements"] or doc["schedules"]


@pytest.mark.slow
@pytest.mark.parametrize("engine", SERVERLESS)
def test_fifty_drawn_schedules(engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = explored(engine, 50, 50, 3, tmp_path, capsys)
    assert doc["seconds"] < 15 * 60
    assert doc["ok"], doc["disagreements"]


@pytest.mark.servers
@pytest.mark.parametrize("engine", [name for name in ENGINES if name not in SERVERLESS])
def test_twenty_drawn_schedules_on_a_server(engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = explored(engine, 20, 20, 3, tmp_path, capsys)
    assert doc["seconds"] < 15 * 60
    assert doc["ok"], doc["disagreements"]
