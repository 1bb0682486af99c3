"""The Restate server for `sim conform restate`: found, started per fault in the run folder,
checked for readiness by polling, and asked about the workflow's journal; and the takeover,
which points the deployment at the restarted worker (docs/conform.md, "Restate").

The server is the `restate-server` binary of the npm package `@restatedev/restate-server`
(its platform package ships the binary), installed into `servers/` by
`npm install --prefix servers` (servers/package.json pins the version). Nothing is
downloaded at run time.

Each fault runs its own server: a config file in the run folder puts its data there
(`base-dir`), its three listeners (ingress, admin, node-to-node) on free loopback ports, TCP
only, telemetry off, one partition, and the short timeouts the faults need (`CONFIG`). The
server is started through the harness's `Processes`, so it is killed by its pid with every
other process of the run, whatever happens.

The workers (sim/conform/app.py) read `restate.json` in the run folder: the server's ingress
and admin addresses (each worker picks its own port and writes it to `port-EXECUTION`). w1 registers its endpoint as the deployment
(`POST /deployments`) and submits the workflow; the harness's takeover, at w1's barrier and
before the signal, points that deployment at w2's port (`PATCH /deployments/{id}`, the Admin
API's update of a deployment's address; there is no PUT), so every later attempt of the
invocation goes to w2, and none to the killed or stopped w1.

This module imports no engine (the SDK is the workers'), and the harness only inside its
functions (the harness imports this module by name: `Engine.server`). It offers the harness
`missing`, `versions`, `start`, `takeover` and `recorded`; its ports come from
`sim.conform.ports`.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.conform.ports import free_port

if TYPE_CHECKING:
    from sim.conform.harness import Processes

#: the repository's `servers/` folder (servers/package.json), where npm installs the server
SERVERS = Path(__file__).resolve().parents[2] / "servers"
INSTALL = "npm install --prefix servers"
#: the server's own name for a machine's platform package (@restatedev/restate-server-OS-ARCH)
ARCHES = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
#: an environment variable naming the binary, for a server installed elsewhere
BINARY_VARIABLE = "SIM_RESTATE_SERVER"
#: the longest the server may take to start, in seconds (a guard, never a timing relied on)
START_DEADLINE = 120.0
POLL = 0.05
#: an HTTP client that never goes through a proxy (every address here is on the loopback)
LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))

#: the service and key of the workflow `digest/q3-report` (sim/conform/app.py WORKFLOW_ID)
SERVICE, KEY = "digest", "q3-report"

#: the server's settings beyond addresses and paths, and why
#: - inactivity-timeout 2 s, abort-timeout 2 s: a worker that sends nothing for 2 s is asked
#:   to suspend, and 2 s later its attempt is aborted and the invocation retried: a SIGSTOPped
#:   worker is taken over within about 4 s (the defaults, 1 min and 10 min, would make the
#:   zombie fault take minutes). No step of the application runs longer than a barrier, which
#:   the harness releases or signals within milliseconds.
#: - default-retry-policy: retries 100 ms apart, growing to 500 ms, without a limit: while the
#:   deployment's address has no listener yet (w2 starting), the invocation is retried often
#:   enough that w2 gets it soon after it listens (the default, 500 ms growing to 1 min and a
#:   pause after 70 attempts, could leave it waiting for a minute).
CONFIG = """\
cluster-name = "sim-conform"
node-name = "n1"
base-dir = "{base}"
listen-mode = "tcp"
bind-address = "127.0.0.1:{node}"
advertised-address = "http://127.0.0.1:{node}/"
disable-telemetry = true
default-num-partitions = 1
rocksdb-total-memory-size = "256 MiB"
log-filter = "warn,restate=info"
log-disable-ansi-codes = true

[default-retry-policy]
initial-interval = "100ms"
exponentiation-factor = 1.5
max-interval = "500ms"
on-max-attempts = "pause"

[admin]
bind-address = "127.0.0.1:{admin}"
advertised-address = "http://127.0.0.1:{admin}/"
disable-web-ui = true

[admin.query-engine]
memory-size = "64 MiB"

[ingress]
bind-address = "127.0.0.1:{ingress}"
advertised-address = "http://127.0.0.1:{ingress}/"

[worker.invoker]
inactivity-timeout = "2s"
abort-timeout = "2s"
"""


def request(url: str, method: str = "GET", body: Any = None, timeout: float = 30) -> Any:
    """One JSON request to the server; its JSON answer (None for an empty one)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json", "Accept": "application/json"})  # fmt: skip
    try:
        with LOOPBACK.open(req, timeout=timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as error:
        from sim.conform.harness import ConformError

        detail = error.read().decode(errors="replace")[:300]
        raise ConformError(f"restate: {method} {url}: HTTP {error.code}: {detail}") from None
    return json.loads(raw) if raw else None


# -- the binary ----------------------------------------------------------------------------------
def binary() -> Path | None:
    """The restate-server binary: $SIM_RESTATE_SERVER, else the one npm installed into
    servers/node_modules, else `restate-server` on the PATH."""
    named = os.environ.get(BINARY_VARIABLE)
    if named:
        return Path(named) if Path(named).is_file() else None
    arch = ARCHES.get(platform.machine().lower(), platform.machine().lower())
    system = platform.system().lower()
    package = SERVERS / "node_modules" / "@restatedev" / f"restate-server-{system}-{arch}" / "bin" / "restate-server"
    if package.is_file():
        return package
    found = shutil.which("restate-server")
    return Path(found) if found else None


def missing() -> str | None:
    """Why the server cannot be started (one line naming the install command), or None."""
    if binary() is None:
        return f"conform restate: the restate-server binary is not installed: {INSTALL}"
    return None


def versions() -> dict[str, str]:
    """The server's version, for the report beside the SDK's."""
    return {"restate-server": version()}


def version() -> str:
    """The server's version (`restate-server --version`), or "not installed"."""
    import subprocess

    found = binary()
    if found is None:
        return "not installed"
    try:
        out = subprocess.run([str(found), "--version"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip().removeprefix("restate-server").strip() or "unknown"


# -- one server per fault -------------------------------------------------------------------
def info(workdir: Path) -> dict[str, Any]:
    """The run's `restate.json`: the server's ingress and admin addresses."""
    loaded: dict[str, Any] = json.loads((workdir / "restate.json").read_text())
    return loaded


def start(workdir: Path, procs: Processes) -> None:
    """Start a server for this run with its data in the run folder, wait until its admin API
    and ingress answer, and write `restate.json` for the workers."""
    from sim.conform.harness import ConformError, worker_env

    found = binary()
    if found is None:
        raise ConformError(missing() or "")
    ports = {name: free_port() for name in ("node", "admin", "ingress")}
    home = workdir / "restate"
    home.mkdir()
    config = home / "restate.toml"
    config.write_text(CONFIG.format(base=home / "data", **ports))
    # the server reads RESTATE_* variables as settings: none of this environment's reaches it
    env = {k: v for k, v in worker_env().items() if not k.startswith("RESTATE")}
    procs.start("restate", ["--config-file", str(config), "--no-logo"], program=str(found), env=env)
    admin = f"http://127.0.0.1:{ports['admin']}"
    ingress = f"http://127.0.0.1:{ports['ingress']}"
    deadline = time.monotonic() + START_DEADLINE
    while not (answers(f"{admin}/health") and answers(f"{ingress}/restate/health")):
        server = procs.started["restate"]
        if server.poll() is not None:
            raise ConformError(f"restate-server ended (exit {server.returncode}) before it was ready: "
                               f"{procs.log_tail('restate')}")  # fmt: skip
        if time.monotonic() > deadline:
            raise ConformError(f"restate-server was not ready within {START_DEADLINE:.0f} s")
        time.sleep(POLL)
    document = {"admin": admin, "ingress": ingress}
    tmp = workdir / "restate.json.tmp"
    tmp.write_text(json.dumps(document))
    tmp.rename(workdir / "restate.json")


def answers(url: str) -> bool:
    try:
        request(url, timeout=2)
        return True
    except (OSError, ValueError):
        return False


def takeover(workdir: Path, procs: Processes, to: str = "w2") -> None:
    """Point the deployment at the restarted worker `to` (`PATCH /deployments/{id}` with its
    address; the server runs discovery against it, so it must listen first). Called while the
    worker it replaces is held at its barrier, before the signal: every later attempt of the
    invocation goes to `to`, none to the worker it replaces."""
    from sim.conform.harness import ConformError, wait_until

    where = info(workdir)
    announced = workdir / f"port-{to}"  # written by the worker once it listens (sim/conform/app.py)
    wait_until(f"{to}'s endpoint", announced.exists, procs, (to, "restate"))
    port = int(announced.read_text())
    deployments = request(f"{where['admin']}/deployments")["deployments"]
    if len(deployments) != 1:
        raise ConformError(f"restate: expected the one deployment w1 registered, found {len(deployments)}")
    request(f"{where['admin']}/deployments/{deployments[0]['id']}", method="PATCH",
            body={"uri": f"http://127.0.0.1:{port}/"})  # fmt: skip


def query(workdir: Path, sql: str) -> list[dict[str, Any]]:
    """Rows of the server's introspection SQL (the Admin API's `/query`)."""
    rows: list[dict[str, Any]] = request(f"{info(workdir)['admin']}/query", method="POST", body={"query": sql})["rows"]
    return rows


#: the completed `ctx.run` entries of the workflow's journal (each one a step's recorded result)
RECORDED = (
    "SELECT COUNT(*) AS n FROM sys_journal j JOIN sys_invocation i ON j.id = i.id "
    f"WHERE i.target_service_name = '{SERVICE}' AND i.target_service_key = '{KEY}' "
    "AND i.target_handler_name = 'run' AND j.entry_type = 'Notification: Run'"
)


def recorded(workdir: Path) -> int:
    """How many step results the server's journal of the workflow holds."""
    if not (workdir / "restate.json").exists():
        return 0
    rows = query(workdir, RECORDED)
    return int(rows[0]["n"]) if rows else 0


#: the step results of the workflow's journal (`Notification: Run` entries), in journal order
RESULTS = RECORDED.replace("SELECT COUNT(*) AS n", "SELECT j.index AS n, j.entry_json AS entry") + " ORDER BY j.index"


def results(workdir: Path) -> list[dict[str, Any]]:
    """The value of each step result the server journaled for the workflow, in journal order
    (each entry's `Success` bytes: the SDK's JSON of the step's return value)."""
    out = []
    for row in sorted(query(workdir, RESULTS), key=lambda r: int(r["n"])):
        run = json.loads(row["entry"])["Notification"]["Completion"]["Run"]["result"]
        if "Success" in run:
            out.append(json.loads(bytes(run["Success"])))
    return out
