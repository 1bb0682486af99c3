"""`sim check --scheduler`: the check's units on a real Dask cluster (`dask.distributed`'s
LocalCluster, worker processes on loopback) give the local result byte for byte, also when a
worker process is killed in the middle of the check.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sim.analysis.check.check import CheckBound, check, configurations
from sim.cli import main
from sim.model.switches import Checkpoints, Switches
from conftest import children_of

distributed = pytest.importorskip("distributed")

ARGS = ["check", "-k", "2", "-t", "4", "-p", "all-on,fencing=off,key=none", "--split", "4", "--json"]


@pytest.fixture
def no_leftovers() -> Iterator[None]:
    """Every process the test started (cluster workers, nannies) is gone afterwards; any left
    is killed by its id and fails the test."""
    before = children_of(os.getpid())
    yield
    # multiprocessing's resource tracker, which Dask's spawned workers start, is stopped
    # through its own call (it would otherwise stay until this interpreter exits)
    from multiprocessing import resource_tracker

    resource_tracker._resource_tracker._stop()  # type: ignore[attr-defined]
    left = children_of(os.getpid()) - before
    names = {pid: open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()[:200] for pid in left}
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, f"processes left running: {names}"


def files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text().replace(str(folder), "OUT") for p in sorted(folder.iterdir())}


def test_a_local_dask_cluster_gives_the_local_output_byte_for_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_leftovers: None
) -> None:
    assert main([*ARGS, "-j", "2", "--out", str(tmp_path / "pool")]) == 0
    pool = capsys.readouterr().out.replace(str(tmp_path / "pool"), "OUT")
    assert main([*ARGS, "--scheduler", "local:2", "--out", str(tmp_path / "dask")]) == 0
    dask = capsys.readouterr().out.replace(str(tmp_path / "dask"), "OUT")
    assert dask == pool
    assert files(tmp_path / "dask") == files(tmp_path / "pool")
    assert json.loads(dask)["results"][1]["violations"]["stale-write"] > 0


def test_killing_a_dask_worker_mid_check_changes_nothing(no_leftovers: None) -> None:
    from distributed import Client, LocalCluster

    configs = configurations(Switches(), "each", [Checkpoints.PER_STEP])
    bound = CheckBound(2, 4)
    expected = check(configs, bound, split=6)
    killed: list[int] = []
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, worker_dashboard_address=None, scheduler_port=0)  # fmt: skip
    client = Client(cluster)
    try:
        pids: dict[str, Any] = client.run(os.getpid)
        victim = sorted(pids.values())[0]

        def progress(done: int, total: int, nodes: int) -> None:
            if done >= 10 and not killed:
                os.kill(victim, signal.SIGKILL)
                killed.append(victim)

        got = check(configs, bound, executor=client.get_executor(pure=False), workers=2, split=6, progress=progress)
    finally:
        client.close()
        cluster.close()
    assert killed, "the check ended before a worker could be killed"
    assert got == expected
