"""`sim conform restate`: the worked example on a real Restate server (docs/conform.md,
"Restate"). The tests marked `servers` need the SDK and the server installed by the second
documented command (`pip install -e '.[restate]'` and `npm install --prefix servers`) and run
only with `pytest -m servers`; the whole run happens once per module (`run` fixture: five
faults, two at a time, each with its own server).

What is asserted is behaviour, not figures copied from a run: every row either matches sim's
prediction under the `restate` profile or names a behaviour the model is known not to
capture; the key stops the duplicate post that its absence lets through; every process the
harness started, each fault's restate-server included, is gone afterwards (by pid, in
/proc), a SIGSTOPped one included.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.conform import app, harness, server_restate
from sim.conform.engines import ENGINES
from sim.conform.harness import FAULTS, conform
from conftest import children_of, failed_zombie_run, live

RESTATE = ENGINES["restate"]


def require_installed() -> None:
    if not harness.installed(RESTATE):
        pytest.skip(f"the Restate SDK is not installed: {RESTATE.install}")
    if server_restate.missing():
        pytest.skip(f"restate-server is not installed: {server_restate.INSTALL}")


@pytest.fixture(scope="module")
def run() -> Iterator[tuple[dict[str, Any], list[int]]]:
    """(the `sim conform restate` document, the pid of every process the harness started)."""
    require_installed()
    before = children_of(os.getpid())
    pids: list[int] = []
    doc = conform("restate", jobs=2, on_start=lambda started: pids.extend(p for p in started if p not in pids))
    left = children_of(os.getpid()) - before
    assert not left, f"processes left running after the conformance run: {sorted(left)}"
    yield doc, pids


@pytest.mark.servers
def test_every_figure_matches_the_model_or_names_what_it_does_not_capture(run: tuple[dict[str, Any], list[int]]) -> None:
    doc, _ = run
    assert [f["fault"] for f in doc["faults"]] == [f.name for f in FAULTS]
    assert doc["switches"]["fencing_scope"] == "step"
    bad = [(f["fault"], r) for f in doc["faults"] for r in f["rows"] if r["verdict"] == "MISMATCH"]
    assert not bad, f"restate: rows that differ from sim's prediction: {bad}"
    for fault in doc["faults"]:
        for row in fault["rows"]:
            if row["verdict"] in ("explained", "varying"):
                assert row["observed"] != row["predicted"]
                assert all(name in doc["behaviours"] for name in row["behaviour"].split(", "))
    assert doc["ok"]
    assert doc["versions"]["restate-server"] not in ("not installed", "unknown")


@pytest.mark.servers
def test_the_key_is_what_stops_the_second_post(run: tuple[dict[str, Any], list[int]]) -> None:
    """Both lost-answer runs resend after the kill; only the keyed one is recognised by the feed."""
    doc, _ = run
    posts = {f["fault"]: next(r["observed"] for r in f["rows"] if r["figure"] == "posts applied") for f in doc["faults"]}
    assert int(posts["lost-answer-keyless"]) == int(posts["lost-answer"]) + 1


@pytest.mark.servers
def test_every_process_the_harness_started_is_gone(run: tuple[dict[str, Any], list[int]]) -> None:
    _, pids = run
    # per fault: restate-server, the feed and two workers
    assert len(pids) == 4 * len(FAULTS)
    assert live(pids) == []


@pytest.mark.servers
def test_a_failed_run_kills_its_processes_a_stopped_one_and_the_server_included(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The zombie fault stops w1; if the run then fails, w1 (stopped), w2, the feed and the
    server are killed by their pids all the same."""
    require_installed()
    pids = failed_zombie_run(monkeypatch, tmp_path, RESTATE)
    assert len(pids) == 4 and live(pids) == []


@pytest.mark.servers
def test_a_takeover_after_the_servers_retries_shows_retries_inside_one_attempt(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The experiment of docs/conform.md: the zombie fault with the deployment pointed at w2
    only once the server has retried the invocation twice at the stopped w1's address. The
    retries queue at w1; continued, w1 runs each one, making s3's model call again, and each
    run is cut (the server had closed its stream): nothing of it is journaled, one post. Only
    the model-call rows differ from the prediction (retries inside one attempt)."""
    require_installed()
    real_takeover, real_kill = server_restate.takeover, os.kill
    held: dict[str, Any] = {}
    monkeypatch.setattr(server_restate, "takeover",
                        lambda workdir, procs, to="w2": held.update(workdir=workdir, procs=procs, to=to))  # fmt: skip

    def retries(workdir: Path) -> int:
        rows = server_restate.query(workdir, "SELECT retry_count AS n FROM sys_invocation "
                                             "WHERE target_service_name = 'digest'")  # fmt: skip
        return int(rows[0]["n"] or 0) if rows else 0

    def kill(pid: int, sig: int) -> None:
        real_kill(pid, sig)
        if sig == signal.SIGSTOP:  # the takeover comes late: after two retries at w1's address
            deadline = time.monotonic() + harness.DEADLINE
            while retries(held["workdir"]) < 2:
                assert time.monotonic() < deadline, "the server did not retry the stopped w1's invocation"
                time.sleep(0.1)
            real_takeover(held["workdir"], held["procs"], held["to"])

    monkeypatch.setattr(os, "kill", kill)
    zombie = next(f for f in FAULTS if f.name == "zombie")
    observed = harness.observe(RESTATE, zombie, tmp_path)
    calls = [step for (step,) in app.rows(tmp_path, "SELECT step FROM calls WHERE execution = 'w1' ORDER BY seq")]
    cut = app.rows(tmp_path, "SELECT step, COUNT(*) FROM cut WHERE execution = 'w1' GROUP BY step")
    assert calls[:3] == ["s1", "s2", "s3"] and len(calls) >= 4 and set(calls[3:]) == {"s3"}
    assert cut == [("s3", len(calls) - 2)]  # the first run and each queued retry
    assert observed.calls_by_execution[1] == 2 and observed.zombie_write == "none" and observed.posts == 1
    rows = harness.compare(RESTATE, zombie, observed, harness.predict(RESTATE, zombie))
    assert {r["figure"]: r["verdict"] for r in rows if r["verdict"] != "match"} == {
        "model calls by execution": "MISMATCH", "zombie's end": "explained"}


def test_a_missing_server_is_bad_input_naming_the_npm_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Runs without a server: the SDK is taken as installed, the binary as missing."""
    monkeypatch.setattr(harness, "installed", lambda engine: True)
    monkeypatch.setattr(server_restate, "binary", lambda: None)
    assert main(["conform", "restate"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "npm install --prefix servers" in err


def test_a_missing_sdk_is_bad_input_naming_the_pip_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(harness, "installed", lambda engine: engine.name != "restate")
    assert main(["conform", "restate"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install -e '.[restate]'" in err


def test_the_server_config_puts_every_listener_on_the_loopback() -> None:
    text = server_restate.CONFIG.format(base="/tmp/x", node=1, admin=2, ingress=3)
    binds = [line for line in text.splitlines() if "bind-address" in line or "advertised-address" in line]
    assert len(binds) == 6 and all("127.0.0.1:" in line for line in binds)
    assert 'listen-mode = "tcp"' in text and "disable-telemetry = true" in text
