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
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.conform import explore, harness, schedule
from sim.conform.engines import ENGINES, SERVERLESS
from sim.conform.harness import FAULTS
from sim.conform.schedule import Schedule
from sim.model.events import Computed, Silent, payload
from sim.run import run_scenario
from sim.engine.trace import Kind
from conftest import children_of, live

FIXED = {
    "crash": "kill-w1-s3",
    "zombie": "stop-w1-s3-keyless",
    "lost-answer": "kill-w1-after-send",
    "lost-answer-keyless": "kill-w1-after-send-keyless",
    "crash-changed": "kill-w1-s3-changed",
}
SCENARIOS = harness.HERE.parent.parent / "scenarios"


@pytest.mark.parametrize("engine", list(ENGINES))
def test_the_five_faults_are_schedules_the_draw_can_make(engine: str, tmp_path: Path) -> None:
    """Each fixed fault written as a drawn schedule's scenario file gives sim's prediction for
    the fault's own scenario file, and reads back as the same schedule."""
    for fault in FAULTS:
        s = Schedule.from_name(FIXED[fault.name])
        assert fault.schedule == s
        drawn = explore.fault_of(s, ENGINES[engine], tmp_path)
        assert harness.predict(ENGINES[engine], drawn) == harness.predict(ENGINES[engine], fault)
        assert explore.from_file(Path(drawn.scenario), ENGINES[engine]) == s
        assert explore.from_file(SCENARIOS / f"{fault.scenario}.toml", ENGINES[engine]) == s
        assert harness.kinds(drawn) == harness.kinds(fault)


def test_the_draw_is_seeded_and_covers_every_kind() -> None:
    switches = ENGINES["dbos"].switches
    assert schedule.draw(random.Random(7), switches) == schedule.draw(random.Random(7), switches)
    many = {schedule.draw(random.Random(seed), switches) for seed in range(300)}
    hits = [h for s in many for h in s.hits]
    assert {h.action for h in hits} == {"kill", "stop", "change", "wake"}
    assert {h.point for h in hits} == set(schedule.points_in_order())
    assert {s.keyed for s in many} == {True, False} and {h.change for h in hits} == {True, False}
    assert {sum(h.action != "wake" for h in s.hits) for s in many} == {1, 2, 3}
    assert {h.worker for h in hits} >= {1, 2, 3}
    # the article's case 1: a poster paused between its intent and its send
    assert any(h.action == "stop" and h.point == "after-intent" for h in hits)
    for s in many:
        assert s.invalid() is None and Schedule.from_name(s.name) == s


@pytest.mark.parametrize("seed", range(40))
def test_a_drawn_schedule_places_every_fault_in_sims_run(seed: int) -> None:
    """Each hit becomes a fault of sim's run at the barrier's action: a kill or stop at a section
    step or inside assemble a silence of that worker's attempt in the tick it computes that
    step or writes its candidate; a kill in the post a poster death; a stop after the intent a
    poster pause; the newsletter ready when the last worker is done."""
    switches = ENGINES["langgraph" if seed % 2 else "dbos"].switches
    s = schedule.draw(random.Random(seed), switches)
    trace, _ = run_scenario(schedule.scenario_of(s, switches).with_switches(switches))
    silent = {e.attempt: (e.tick, payload(e, Silent)["during"]) for e in trace.events if e.kind is Kind.SILENT}
    computed = {(e.attempt, e.tick): payload(e, Computed)["step"] for e in trace.events if e.kind is Kind.COMPUTED}
    died = {e.attempt for e in trace.events if e.kind is Kind.DIED}
    for h in s.hits:
        if not h.ends_worker:
            continue
        if h.at_post and h.action == "kill":
            assert h.worker in died, s.name
            continue
        tick, during = silent[h.worker]
        if h.point.startswith("after-call:s"):
            assert during == "compute" and computed[(h.worker, tick)] == int(h.point[12:]), s.name
        else:
            assert during == {"in:assemble": "assemble", "after-intent": "send"}[h.point], s.name
    finished = [e.attempt for e in trace.events if e.kind is Kind.DONE]
    assert s.workers in finished, s.name


def test_schedule_names_that_spell_no_schedule_are_refused() -> None:
    for bad in ("kill-w1-s9", "kill-w2-s3", "stop-w1-s2+stop-w2-s3", "kill-w1-after-send-changed",
                "stop-w1-before-intent", "wake-w2-s3", "change-w1-s3+change-w1-s4", "nonsense"):  # fmt: skip
        with pytest.raises(schedule.ScheduleTextError):
            Schedule.from_name(bad)


def test_a_disagreement_is_shrunk_and_saved(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An engine made up to disagree whenever w1 is killed in s2 or later: a drawn schedule of
    three faults shrinks to w1 killed in s2 alone, saved as a scenario file the harness reads
    back, beside the records of its runs."""
    ran: list[str] = []
    order = schedule.points_in_order()

    def made_up(engine: Any, fault: harness.Fault, on_start: Any, runs: int = 1, keep: Path | None = None) -> dict[str, Any]:
        ran.append(fault.name)
        if keep is not None:
            keep.mkdir(parents=True)
        first = fault.schedule.hits[0]
        bad = first.action == "kill" and order.index(first.point) >= 1
        return {"rows": [{"figure": "posts applied", "observed": "2", "predicted": "1",
                          "verdict": "MISMATCH" if bad else "match"}]}  # fmt: skip

    def observe(engine: Any, fault: harness.Fault, workdir: Path, on_start: Any = None) -> Any:
        from dataclasses import replace

        ran.append(fault.name)  # a smaller schedule's run while shrinking
        first = fault.schedule.hits[0]
        predicted = harness.predict(engine, fault)
        bad = first.action == "kill" and order.index(first.point) >= 1
        return replace(predicted, posts=predicted.posts + 1) if bad else predicted

    drawn = Schedule.from_name("kill-w1-s4-changed+kill-w2-assemble+kill-w3-after-send")
    monkeypatch.setattr(harness, "run_fault", made_up)
    monkeypatch.setattr(harness, "observe", observe)
    monkeypatch.setattr(harness, "require", lambda engine: None)
    monkeypatch.setattr(schedule, "draw", lambda rng, switches: drawn)
    doc = explore.explore("dbos", 1, 0, tmp_path, runs=3)
    (found,) = doc["disagreements"]
    assert (found["drawn"], found["shrunk"]) == (drawn.name, "kill-w1-s2")
    assert explore.from_file(tmp_path / found["file"], ENGINES["dbos"]) == Schedule.from_name("kill-w1-s2")
    assert (tmp_path / found["record"]).is_dir()
    assert not doc["ok"] and doc["kinds"]["kill"]["mismatch"] == 1 and doc["kinds"]["two or more faults"]["mismatch"] == 1
    assert ran[0] == drawn.name and ran[-1] == "kill-w1-s2"


def test_a_schedule_the_harness_cannot_inject_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    crash = (SCENARIOS / "conform-crash.toml").read_text()
    edited = tmp_path / "edited.toml"  # the faults no longer those its first line names
    edited.write_text(crash.replace("silences = [{attempt = 1, at = 3}]", "silences = [{attempt = 1, at = 2}]"))
    unnamed = tmp_path / "unnamed.toml"  # a scenario file with no schedule name
    unnamed.write_text(crash.split("\n", 1)[1])
    misnamed = tmp_path / "misnamed.toml"
    misnamed.write_text(crash.replace("schedule: kill-w1-s3", "schedule: kill-w1-s9"))
    for path, words in ((edited, "its faults are not those of the schedule"), (unnamed, "not a schedule the harness can inject"),
                        (misnamed, "not a schedule")):  # fmt: skip
        assert main(["conform", "dbos", "--schedule", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err, err


def test_a_worker_that_ends_before_its_barrier_is_a_finding(tmp_path: Path) -> None:
    """A schedule whose second fault waits for w2 at s1, which w2 restores rather than computes:
    w2 ends without reaching it; the run goes on and the row "faults injected" is a MISMATCH."""
    engine = ENGINES["dbos"]
    if not harness.installed(engine):
        pytest.skip(f"dbos is not installed: {engine.install}")
    crash = FAULTS[0]
    unreachable = harness.Fault("unreachable", 0, crash.scenario, "w2 held at s1, which it restores",
                                Schedule((*crash.schedule.hits, schedule.Hit(2, "after-call:s1", "kill")), True))  # fmt: skip
    result = harness.run_fault(engine, unreachable, None)
    rows = {r["figure"]: r for r in result["rows"]}
    assert rows["faults injected"]["verdict"] == "MISMATCH"
    assert rows["faults injected"]["observed"] == "all but one: w2 ended before after-call:s1"


def explored(engine: str, count: int, seed: int, runs: int, out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    if not harness.installed(ENGINES[engine]) or (ENGINES[engine].server and harness.server_of(ENGINES[engine]).missing()):
        pytest.skip(f"{engine} is not installed: {ENGINES[engine].install}")
    before = children_of(os.getpid())
    code = main(["conform", engine, "--explore", str(count), "--seed", str(seed), "--runs", str(runs),
                 "-j", "2", "--json", "--out", str(out)])  # fmt: skip
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert children_of(os.getpid()) - before == set(), "processes left running after the exploration"
    assert doc["kinds"]["all"]["schedules"] == count
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
    assert doc["ok"], doc["disagreements"]


@pytest.mark.servers
@pytest.mark.parametrize("engine", [name for name in ENGINES if name not in SERVERLESS])
def test_twenty_drawn_schedules_on_a_server(engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = explored(engine, 20, 20, 3, tmp_path, capsys)
    assert doc["ok"], doc["disagreements"]


def _engine_disagreeing_with(culprit: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Stand in for the engine's run: a run of a schedule that has the hit `culprit` observes
    one more post than sim predicts, any other run observes the prediction. Returns the names
    of the schedules run, in order."""
    ran: list[str] = []

    def observe(engine: Any, fault: harness.Fault, workdir: Path, on_start: Any = None) -> Any:
        from dataclasses import replace

        ran.append(fault.schedule.name)
        predicted = harness.predict(engine, fault)
        hit = culprit in fault.schedule.name.split("+")
        return replace(predicted, posts=predicted.posts + 1) if hit else predicted

    monkeypatch.setattr(harness, "observe", observe)
    return ran


def test_shrinking_keeps_only_the_hit_that_disagrees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran = _engine_disagreeing_with("kill-w1-s3", monkeypatch)
    monkeypatch.setattr(explore, "SHRINK_RUNS", 100)
    drawn = Schedule.from_name("kill-w1-s3+kill-w2-after-send")
    found = explore.shrink_and_save(ENGINES["dbos"], drawn, tmp_path, 3, None, tmp_path)
    assert found["shrunk"] == "kill-w1-s3"
    assert found["shrink_complete"] and found["shrink_runs"] == len(ran) - 3
    assert [r["figure"] for r in found["rows"]] == ["posts applied"]
    assert (tmp_path / found["file"]).read_text(encoding="utf-8").startswith(schedule.HEADER + found["shrunk"])
    # a smaller schedule that agrees is run `runs` times before it is given up; one that
    # disagrees is kept at its first disagreeing run
    assert all(ran.count(name) in (1, 3, 4) for name in set(ran))


def test_shrinking_stops_at_its_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran = _engine_disagreeing_with("never", monkeypatch)
    monkeypatch.setattr(explore, "SHRINK_RUNS", 4)
    drawn = Schedule.from_name("kill-w1-s3+kill-w2-after-send")
    found = explore.shrink_and_save(ENGINES["dbos"], drawn, tmp_path, 3, None, tmp_path)
    assert found["shrunk"] == drawn.name and not found["shrink_complete"]
    assert len(ran) == 4 + 3 and found["shrink_runs"] == 4  # the budget, then the saved schedule's three runs
    assert found["rows"] == []
    text = "\n".join(report_lines(found))
    assert "shrinking stopped at its budget of 4 runs" in text


def report_lines(found: dict[str, Any]) -> list[str]:
    from sim.conform import report

    doc = {"engine": "dbos", "explore": {"kinds": {}, "seed": 0, "runs": 3, "disagreements": [found]}}
    return report.explore_lines(doc, markdown=False)


def test_the_tally_counts_a_schedule_with_a_mismatch_as_mismatched_whatever_else_it_has() -> None:
    """A schedule's rows: one MISMATCH and one varying count it as a mismatch (the worst verdict
    wins: mismatch, then varying, then explained); one varying and one explained as varying."""
    engine = ENGINES["langgraph"]
    drawn = [schedule.draw(random.Random(seed), engine.switches) for seed in (1, 2, 3)]
    results = [{"rows": [{"verdict": "MISMATCH"}, {"verdict": "varying"}]},
               {"rows": [{"verdict": "varying"}, {"verdict": "explained"}]},
               {"rows": [{"verdict": "explained"}, {"verdict": "match"}]}]  # fmt: skip
    tally = explore.summary(engine, 1, 1, drawn, results, [])["kinds"]["all"]
    assert tally == {"schedules": 3, "agree": 0, "explained": 1, "varying": 1, "mismatch": 1}
