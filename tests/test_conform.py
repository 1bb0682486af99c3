"""`sim conform`: the worked example on real engines that need no server (LangGraph, DBOS),
real processes, real signals (engines with a server: tests/test_conform_temporal.py, marked
`servers`). Each engine's whole run happens once per test session (the `runs` fixture: five
faults, two at a time: about 20-30 s an engine on the project's 2-core machine); the tests then read its document.

What is asserted is behaviour, not figures copied from a run: every row either matches sim's
prediction or names a behaviour the model is known not to capture; the key stops the
duplicate post that its absence lets through; every process the harness started is gone
afterwards (by pid, in /proc), a SIGSTOPped one included; and the committed
reports/conformance.* hold what a fresh run measures (versions aside).
"""

from __future__ import annotations

import json
import re
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.conform import app, claims, harness
from sim.conform.engines import ENGINES, SERVERLESS
from sim.conform.harness import FAULTS, conform
from sim.conform.report import markdown, report_json, runs_option
from conftest import children_of, failed_zombie_run, live, until

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "reports"


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, tuple[dict[str, Any], list[int]]]]:
    """engine -> (its `sim conform` document, the pid of every process the harness started)."""
    for engine in (ENGINES[name] for name in SERVERLESS):
        if not harness.installed(engine):
            pytest.skip(f"{engine.name} is not installed: {engine.install}")
    before = children_of(os.getpid())
    out = {}
    for name in SERVERLESS:
        pids: list[int] = []
        doc = conform(name, jobs=2, on_start=lambda started: pids.extend(p for p in started if p not in pids))
        out[name] = (doc, pids)
    left = children_of(os.getpid()) - before
    assert not left, f"processes left running after the conformance runs: {sorted(left)}"
    yield out


@pytest.mark.parametrize("engine", SERVERLESS)
def test_every_figure_matches_the_model_or_names_what_it_does_not_capture(
    runs: dict[str, tuple[dict[str, Any], list[int]]], engine: str
) -> None:
    doc, _ = runs[engine]
    assert [f["fault"] for f in doc["faults"]] == [f.name for f in FAULTS]
    bad = [(f["fault"], r) for f in doc["faults"] for r in f["rows"] if r["verdict"] == "MISMATCH"]
    assert not bad, f"{engine}: rows that differ from sim's prediction: {bad}"
    for fault in doc["faults"]:
        for row in fault["rows"]:
            if row["verdict"] in ("explained", "varying"):
                assert row["observed"] != row["predicted"]
                assert all(name in doc["behaviours"] for name in row["behaviour"].split(", "))
    assert doc["ok"]


@pytest.mark.parametrize("engine", SERVERLESS)
def test_the_key_is_what_stops_the_second_post(runs: dict[str, tuple[dict[str, Any], list[int]]], engine: str) -> None:
    """Both lost-answer runs resend after the kill; only the keyed one is recognised by the feed."""
    doc, _ = runs[engine]
    posts = {f["fault"]: next(r["observed"] for r in f["rows"] if r["figure"] == "posts applied") for f in doc["faults"]}
    assert int(posts["lost-answer-keyless"]) == int(posts["lost-answer"]) + 1


@pytest.mark.parametrize("engine", SERVERLESS)
def test_every_process_the_harness_started_is_gone(runs: dict[str, tuple[dict[str, Any], list[int]]], engine: str) -> None:
    _, pids = runs[engine]
    # per fault: the feed and two workers
    assert len(pids) == 3 * len(FAULTS)
    assert live(pids) == []


def test_a_failed_run_kills_its_processes_a_stopped_one_included(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The zombie fault stops w1; if the run then fails, w1 (stopped), w2 and the feed are
    killed by their pids all the same."""
    pids = failed_zombie_run(monkeypatch, tmp_path, ENGINES["langgraph"])
    assert pids and live(pids) == []


def test_committed_reports_hold_what_a_fresh_run_measures(runs: dict[str, tuple[dict[str, Any], list[int]]]) -> None:
    """reports/conformance.{md,json} (`sim conform --all --runs 3 --out reports`) against this session's
    runs: every figure, verdict, switch and behaviour. The engines' versions are left out of
    the comparison (a patch release installed by the test extra would otherwise fail it
    without any behaviour changing); the reports name the versions they were written with."""
    committed = json.loads((COMMITTED / "conformance.json").read_text(encoding="utf-8"))
    docs = {doc["engine"]: doc for doc in committed["engines"]}
    regenerate = f"run `sim conform --all{runs_option(committed['engines'])} --out reports` to regenerate it"
    # the engines with a server are not run here (pytest -m servers): only their rendering is checked
    assert markdown(committed["engines"]) == (COMMITTED / "conformance.md").read_text(encoding="utf-8"), f"reports/conformance.md is stale; {regenerate}"
    for name in SERVERLESS:
        # the committed report runs each fault `runs` times (a figure that varies is reported as
        # varying); a figure of these engines that varied would fail this comparison too
        times = docs.get(name, {}).get("runs", 1)
        fresh = {**runs[name][0], "versions": docs.get(name, {}).get("versions", {}), "runs": times,
                 "faults": [{**fault, "runs": times} for fault in runs[name][0]["faults"]]}  # fmt: skip
        # the drawn schedules (--explore) are not run again here, nor the claims judged over
        # them; the claims are checked against the committed rows below
        ran = {k: v for k, v in json.loads(report_json([fresh]))["engines"][0].items() if k not in ("claims", "ok")}
        committed_five = {k: v for k, v in docs.get(name, {}).items() if k not in ("claims", "ok", "explore")}
        assert ran == committed_five, f"reports/conformance.json is stale ({name}); {regenerate}"
    for name, doc in docs.items():  # the claims the report states are those its own rows give
        assert claims.for_document(ENGINES[name], doc) == doc["claims"], f"reports/conformance.json's claims ({name}); {regenerate}"


def test_the_command_writes_its_reports_and_one_json_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "langgraph", "--fault", "crash", "--json", "--out", str(tmp_path)]) == 0
    said = capsys.readouterr()
    doc = json.loads(said.out)
    # one progress line for its one engine run, then where the reports went
    first, second = said.err.splitlines()
    assert re.fullmatch(r"sim conform: run 1 of 1: langgraph, crash, \d+ s \(\d+ s so far\)", first), first
    assert second.startswith("wrote ")
    assert doc["engine"] == "langgraph" and [f["fault"] for f in doc["faults"]] == ["crash"]
    assert isinstance(doc["faults"][0]["seconds"], float)
    written = json.loads((tmp_path / "conformance.json").read_text())
    assert "seconds" not in json.dumps(written)
    assert "| 1. crash |" in (tmp_path / "conformance.md").read_text()


def test_a_missing_engine_is_bad_input_naming_the_install_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(harness, "installed", lambda engine: engine.name != "dbos")
    assert main(["conform", "dbos"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install -e '.[dbos]'" in err


@pytest.mark.parametrize("args", [["conform"], ["conform", "langgraph", "--all"], ["conform", "airflow"]])
def test_bad_engine_arguments_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    assert capsys.readouterr().err.count("\n") == 1


def perturbed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], perturb: str,
              args: list[str]) -> tuple[int, dict[str, dict[str, str]]]:  # fmt: skip
    """`sim conform ARGS --json` with the application perturbed (`SIM_CONFORM_PERTURB`): the exit
    code, and figure -> row of its one fault."""
    monkeypatch.setenv(app.PERTURB, perturb)
    code = main(["conform", *args, "--json"])
    (fault,) = json.loads(capsys.readouterr().out)["faults"]
    return code, {r["figure"]: r for r in fault["rows"]}


@pytest.mark.parametrize("engine", SERVERLESS)
def test_dropping_the_key_is_a_mismatch(engine: str, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """The application's post without its key: the feed applies the resent post again, 2 posts
    where sim predicts 1 (with the key): MISMATCH, exit 1."""
    if not harness.installed(ENGINES[engine]):
        pytest.skip(f"{engine} is not installed")
    code, rows = perturbed(monkeypatch, capsys, "no-key", [engine, "--fault", "lost-answer"])
    assert code == 1
    assert (rows["posts applied"]["observed"], rows["posts applied"]["predicted"]) == ("2", "1")
    assert rows["posts applied"]["verdict"] == "MISMATCH"


def test_a_langgraph_step_run_inline_is_a_finding_not_a_failed_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """s1 run in the entrypoint's body instead of as a task: LangGraph never records it, so the
    harness's wait for the engine's record at w1's barrier ends at its grace (`RECORD_GRACE`, a
    wait that is not required, shorter than `DEADLINE`), and the restarted worker runs s1 again:
    MISMATCH, exit 1. Which wait ended it is read from the harness itself (the wait, its bound,
    and that it ended unmet), not from a clock: a bound on the seconds the run took, as here
    before, fails on a machine loaded enough, not on a wrong run. Before the grace, this wait was
    a required one, which ends a run as one that could not be made (exit 2, after `DEADLINE`)."""
    if not harness.installed(ENGINES["langgraph"]):
        pytest.skip("langgraph is not installed")
    waits: list[tuple[str, float, bool, bool]] = []
    wait_until = harness.wait_until

    def noted(what: str, done: Any, procs: Any, watch: Any, within: float = harness.DEADLINE,
              required: bool = True, ends_ok: str = "") -> bool:  # fmt: skip
        met = wait_until(what, done, procs, watch, within, required, ends_ok)
        waits.append((what, within, required, met))
        return met

    monkeypatch.setattr(harness, "wait_until", noted)
    code, rows = perturbed(monkeypatch, capsys, "inline:s1", ["langgraph", "--fault", "crash"])
    assert code == 1
    at_barrier = [w for w in waits if w[0].startswith("the engine's record") and w[0].endswith("before w1's barrier")]
    assert at_barrier == [(at_barrier[0][0], harness.RECORD_GRACE, False, False)], waits
    assert harness.RECORD_GRACE < harness.DEADLINE
    assert rows["steps recorded at w1's barrier"]["verdict"] == "MISMATCH"
    assert rows["model calls by execution"] == {**rows["model calls by execution"], "observed": "3 3", "verdict": "MISMATCH"}


def descendants(pid: int) -> set[int]:
    return children_of(pid)


def test_sigkill_of_sim_conform_takes_every_process_it_started(tmp_path: Path, procs: list[Any]) -> None:
    """SIGKILL `sim conform langgraph --fault zombie` once its workers run: no process it
    started stays alive (each dies with the thread that started it), and the next run
    removes the temporary folder the killed one could not."""
    import signal
    import subprocess
    import sys

    if not harness.installed(ENGINES["langgraph"]):
        pytest.skip(f"langgraph is not installed: {ENGINES['langgraph'].install}")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([str(Path(sys.executable).with_name("sim")), "conform", "langgraph", "--fault", "zombie"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    procs.append(proc)
    # the program's own signal: worker 1's log in the run folder (the feed and w1 have started)
    until(lambda: bool(list(tmp_path.glob("sim-conform-*/w1.log"))) or proc.poll() is not None)
    (folder,) = [p.parent for p in tmp_path.glob("sim-conform-*/w1.log")]
    # the log is opened before worker 1's process starts: wait for the processes themselves
    until(lambda: len(descendants(proc.pid)) >= 2 or proc.poll() is not None)
    started = descendants(proc.pid)
    assert len(started) >= 2, "the feed and worker 1 are running"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    until(lambda: not live(sorted(started)))
    left = live(sorted(started))
    for pid in left:  # never leave one behind, even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert left == [], "processes outlived the killed sim conform"
    assert folder.exists()  # a SIGKILL gives no chance to remove it: the next run does
    assert harness.clean_run_folders(tmp_path) == [folder.name]
    assert not folder.exists()
    live_folder = tmp_path / f"{harness.RUN_FOLDER_PREFIX}{os.getpid()}-abc"
    live_folder.mkdir()  # a live run's folder is left alone
    assert harness.clean_run_folders(tmp_path) == [] and live_folder.exists()


def test_progress_lines_count_the_runs_planned_and_say_when_shrinking_runs_more(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from sim.commands.conform import RunLines

    lines = RunLines(2)
    with harness.watched(lines):
        for fault in ("crash", "zombie", "crash"):
            for callback in harness._watchers:
                callback("dbos", fault, 6.4)
    assert harness._watchers == []  # let go at the end of `watched`
    said = [re.sub(r" \(\d+ s so far\)$", "", line) for line in capsys.readouterr().err.splitlines()]
    assert said == ["sim conform: run 1 of 2: dbos, crash, 6 s", "sim conform: run 2 of 2: dbos, zombie, 6 s",
                    "sim conform: run 3 (2 planned, the rest shrinking a disagreement): dbos, crash, 6 s"]  # fmt: skip
