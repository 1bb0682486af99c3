"""`sim conform ENGINE`: the worked example on a real engine, real processes, real signals.

Each fault (FAULTS) is one run in a fresh temporary folder: the feed process
(sim/conform/feed.py, an HTTP server on a free loopback port), the engine's server if it has
one (Temporal: sim/conform/server_temporal.py), then worker processes
(sim/conform/app.py, run as a script) that run or resume the workflow on the engine. The harness learns
where a worker is from barriers, never from a timed sleep: a worker that reaches the point
the plan names writes `held-wN` and waits for `go-wN` (sim/conform/app.py), so the signal
lands exactly there:

- crash: SIGKILL worker w1 right after s3's model call (before the step's result is
  recorded); then a restarted worker w2 resumes the workflow from the engine's store;
- zombie: SIGSTOP w1 at the same point (the barrier is released while it is stopped, so it
  resumes at once when continued); w2 resumes the workflow and finishes it; then SIGCONT
  w1 and let it run to its end;
- lost answer: SIGKILL w1 right after the feed answered its post (the feed has committed the
  post; the post step's result is not yet recorded); w2 resumes; with the key workflow id +
  step id, and without a key;
- crash with the report changed: as crash, and section 2 of the report is corrected while no
  worker runs, before w2 resumes.

Every process the harness starts is killed by its pid when the run ends (`Processes`):
SIGKILL ends a stopped process too. The observed figures are read from the harness's own
store, the feed and the engine's own record (the steps it holds at w1's barrier; its history
of the run, sim/conform/history.py); the prediction is `sim`'s run of the fault's scenario
file under the engine's switches (sim/conform/engines.py). A row is a match, explained by a
behaviour whose predicate holds for its value, or a MISMATCH (`verdict`); a fault run several
times reports a figure that differed as varying (`merge`). Drawn schedules:
sim/conform/explore.py.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from sim.conform import app, history, invariants, outputs
from sim.conform.engines import ENGINES, PER_EXECUTION, Behaviour, Engine, explained_each
from sim.conform.observed import Context, Observed
from sim.conform.schedule import Hit, Schedule
from sim.base.errors import SimError
from sim.model.events import Accepted, payload
from sim.base.files import PID_LIMIT, pid_alive, write_out
from sim.base.limits import ascii_number
from sim.properties.outcome import Outcome
from sim.run import run_scenario
from sim.scenario import load
from sim.engine.trace import Kind, Trace, revenue
from sim.analysis.workers import die_with_parent

#: the folder of app.py (the worker) and feed.py (the feed), which run as scripts
HERE = Path(__file__).resolve().parent
#: the longest a run may wait for one barrier or one process, in seconds (a guard against a
#: hung engine, never a timing the run relies on)
DEADLINE = 180.0
#: how often a barrier is polled, in seconds
POLL = 0.01
#: how long after w1 reached its barrier the engine's record of the steps before it may take
#: to appear, in seconds (LangGraph writes a task's result from a background thread). A guard,
#: not a timing the run relies on: a step still unrecorded past it is one the engine never
#: recorded (a step run inline, outside the engine), which is a finding (the row "steps
#: recorded at w1's barrier", a mismatch), not a run that could not be made
RECORD_GRACE = 20.0


class ConformError(SimError):
    """The harness could not run a fault (an engine that is missing or failed): one line, exit 2."""


@dataclass(frozen=True, slots=True)
class Fault:
    name: str
    #: the fault's number in issue 14 (0 for a drawn schedule)
    number: int
    scenario: str
    #: what the harness does, with which signals
    how: str
    #: the barriers and what the harness does at each (sim/conform/schedule.py)
    schedule: Schedule

    @property
    def keyed(self) -> bool:
        """The post carries the key workflow id + step id + digest id."""
        return self.schedule.keyed

    @property
    def hold(self) -> str:
        """The barrier w1 is first held at (sim/conform/app.py `App.point`)."""
        return self.schedule.hits[0].point

    @property
    def stopped(self) -> Hit | None:
        return self.schedule.stopped


def fixed(name: str, number: int, how: str, schedule: str) -> Fault:
    return Fault(name, number, f"conform-{name}", how, Schedule.from_name(schedule))


FAULTS: tuple[Fault, ...] = (
    fixed("crash", 1, "SIGKILL w1 after s3's model call; w2 resumes", "kill-w1-s3"),
    fixed("zombie", 2, "SIGSTOP w1 after s3's model call; w2 resumes and finishes; SIGCONT w1, which runs to its end",
          "stop-w1-s3-keyless"),
    fixed("lost-answer", 3, "SIGKILL w1 after the feed applied its post, before the step's result is recorded; "
          "w2 resumes; key: workflow id + step id + digest id", "kill-w1-after-send"),
    fixed("lost-answer-keyless", 3, "as lost-answer, with no key", "kill-w1-after-send-keyless"),
    fixed("crash-changed", 4, "SIGKILL w1 after s3's model call; section 2 of the report corrected; w2 resumes",
          "kill-w1-s3-changed"),
)  # fmt: skip

#: the figures each fault reports, in order
#: the zombie's end in the model (attempt #1's last ending event) as the report words it
ZOMBIE_END = {
    Kind.FENCED: "stops",
    Kind.STOPPED: "stops",
    Kind.DONE: "runs on to its own result",
    Kind.ADOPTED: "returns the owner's result",  # fenced_end=adopts
}
ENDS = tuple(ZOMBIE_END)

FIGURES = (
    "steps recorded at w1's barrier",
    "faults injected",
    "model calls by execution",
    "steps restored",
    "zombie write",
    "zombie's end",
    "acceptances",
    "posts applied",
    "newsletter quotes",
    "engine's history",
    "invariants on the run",
)


# -- the engine's presence and versions --------------------------------------------------------
def installed(engine: Engine) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(engine.module) is not None
    except ModuleNotFoundError:
        return False


def require(engine: Engine) -> None:
    if not installed(engine):
        raise ConformError(f"conform {engine.name}: the engine is not installed: {engine.install}")
    server = server_of(engine)
    why = server.missing() if server is not None else None
    if why:
        raise ConformError(why)


def server_of(engine: Engine) -> Any:
    """The module that runs the engine's server for each fault (`Engine.server`: its
    `missing`, `versions`, `start`, `takeover` and `recorded`), or None for an engine that
    needs no server."""
    import importlib

    return importlib.import_module(engine.server) if engine.server else None


def versions(engine: Engine) -> dict[str, str]:
    out = {}
    for dist in engine.distributions:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    server = server_of(engine)
    if hasattr(server, "versions"):  # a server that is not a Python distribution (Restate's)
        out.update(server.versions())
    return out


def worker_env() -> dict[str, str]:
    """The environment of the harness's processes: this one's, without DBOS's cloud settings
    (a conductor key would connect a worker to DBOS Conductor over the network)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DBOS")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


# -- processes -------------------------------------------------------------------------------
class Processes:
    """The processes of one run; `close` kills each one still alive by its pid and reaps it."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.started: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, label: str, args: list[str], program: str = sys.executable,
              env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:  # fmt: skip
        """Start `program` (this Python by default) with `args` in the run folder, its output in LABEL.log."""
        out = open(self.workdir / f"{label}.log", "wb")
        try:
            # killed by the kernel when the thread that started it ends, so a `sim conform`
            # killed by any signal (SIGKILL too) takes every process it started with it
            proc = subprocess.Popen([program, *args], cwd=self.workdir, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=worker_env() if env is None else env,
                                    preexec_fn=functools.partial(die_with_parent, os.getpid()))  # fmt: skip
        finally:
            out.close()
        self.started[label] = proc
        return proc

    def pids(self) -> list[int]:
        return [p.pid for p in self.started.values()]

    def close(self) -> None:
        for proc in self.started.values():
            if proc.poll() is None:
                proc.kill()  # SIGKILL: ends a stopped process as well
            proc.wait()

    def log_tail(self, label: str) -> str:
        try:
            lines = (self.workdir / f"{label}.log").read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(lines[-3:])[-400:]


def wait_until(what: str, done: Callable[[], bool], procs: Processes, watch: tuple[str, ...],
               within: float = DEADLINE, required: bool = True, ends_ok: str = "") -> bool:  # fmt: skip
    """Poll `done` until it holds; a watched process that ends first fails the run (but the one
    labelled `ends_ok`, whose end with exit 0 makes this return False), and so does the deadline
    (`within` seconds) unless the wait is not `required` (then: False)."""
    deadline = time.monotonic() + within
    while not done():
        for label in watch:
            proc = procs.started[label]
            if proc.poll() is not None:
                if label == ends_ok and proc.returncode == 0 and not done():
                    return False
                raise ConformError(f"{label} ended (exit {proc.returncode}) before {what}: {procs.log_tail(label)}")
        if time.monotonic() > deadline:
            if not required:
                return False
            raise ConformError(f"no {what} within {within:.0f} s")
        time.sleep(POLL)
    return True


def finish(procs: Processes, label: str) -> None:
    proc = procs.started[label]
    try:
        code = proc.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        raise ConformError(f"{label} did not end within {DEADLINE:.0f} s") from None
    if code != 0:
        raise ConformError(f"{label} failed (exit {code}): {procs.log_tail(label)}")


def steps_before(point: str) -> int:
    """How many steps of the workflow come before a barrier: s1..s(n-1) before `after-call:sn`;
    s1..s4 before `in:assemble`; s1..s4, assemble and accept before the post's points."""
    if point.startswith("after-call:s"):
        return int(point.removeprefix("after-call:s")) - 1
    return app.SECTIONS if point == "in:assemble" else app.SECTIONS + 2


def reads_record(engine: Engine) -> bool:
    """The harness reads the engine's record of the steps at w1's barrier (an engine with a
    store in the run folder, or a server that answers `recorded`)."""
    return bool(engine.store) or hasattr(server_of(engine), "recorded")


def recorded(engine: Engine, workdir: Path) -> int:
    """The step results the engine's store holds for the workflow (0 before it exists)."""
    server = server_of(engine)
    if hasattr(server, "recorded"):
        return int(server.recorded(workdir))
    path = workdir / engine.store
    if not path.exists():
        return 0
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        count: int = db.execute(engine.recorded, (app.WORKFLOW_ID,)).fetchone()[0]
        return count
    except sqlite3.OperationalError:  # its tables are not created yet
        return 0
    finally:
        db.close()


def steps_recorded(engine: Engine, workdir: Path) -> int:
    """How many of the workflow's steps the engine's record holds a result for (by anyone)."""
    server = server_of(engine)
    if hasattr(server, "recorded"):
        return int(server.recorded(workdir))
    found = history.read(engine.name, workdir, server)
    return sum(1 for bys in (found or {}).values() if bys)


def await_record(engine: Engine, point: str, label: str, workdir: Path, procs: Processes) -> None:
    """Before a later worker is killed or stopped at `point`, the engine's record of every step
    before it (as at w1's barrier: a step that has returned may still be on its way to the
    store; waited for up to RECORD_GRACE, then the run goes on)."""
    if reads_record(engine):
        before = steps_before(point)
        wait_until(f"the engine's record of the {before} steps before {label}'s barrier",
                   lambda: steps_recorded(engine, workdir) >= before, procs, (label, "feed"), RECORD_GRACE,
                   required=False)  # fmt: skip


def record_at_barrier(engine: Engine, fault: Fault, workdir: Path, procs: Processes) -> int | None:
    """The steps the engine has recorded once w1 is held at its barrier: all those before it,
    waited for (the steps have returned; LangGraph writes a task's result from a background
    thread, and a kill right after a task returned could otherwise lose it, which is not the
    fault this run injects), or, past RECORD_GRACE, the count it holds then (a step the engine
    never recorded: a finding the report shows as a mismatch). None for an engine whose record
    is not read here (Temporal's server records an activity's result before it schedules the
    next)."""
    if not reads_record(engine):
        return None
    before = steps_before(fault.hold)
    wait_until(f"the engine's record of the {before} steps before w1's barrier",
               lambda: recorded(engine, workdir) >= before, procs, ("w1", "feed"), RECORD_GRACE, required=False)  # fmt: skip
    return min(recorded(engine, workdir), before)


def stopped(pid: int) -> bool:
    """The process is in the stopped state (`T` in /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().rsplit(")", 1)[1].split()[0] in ("T", "t")


# -- one fault on one engine ------------------------------------------------------------------
def latest_acceptance(workdir: Path) -> str | None:
    """The newsletter's read: the figure the latest acceptance quotes (logged, with its digest)."""
    found = app.rows(workdir, "SELECT digest, revenue FROM accepted ORDER BY seq DESC LIMIT 1")
    app.log(workdir, "newsletter", None, found[0][0] if found else None, found[0][1] if found else None)
    return found[0][1] if found else None


def feed_posts(workdir: Path) -> int:
    port = int((workdir / "feed.port").read_text())
    with app.LOOPBACK.open(f"http://127.0.0.1:{port}/posts", timeout=30) as response:
        return len(json.loads(response.read())["posts"])


#: a run's temporary folder: `sim-conform-<pid>-<random>` in the system's temporary folder
RUN_FOLDER_PREFIX = "sim-conform-"


@contextmanager
def run_folder() -> Iterator[Path]:
    """A fresh temporary folder for one run, removed when the run ends; the folders that
    killed runs left behind are removed first (`clean_run_folders`)."""
    clean_run_folders()
    with tempfile.TemporaryDirectory(prefix=f"{RUN_FOLDER_PREFIX}{os.getpid()}-") as folder:
        yield Path(folder)


def run_folder_pid(word: str) -> bool:
    """Whether `word` (from a folder's name) is a process id a run's folder carries: ASCII
    digits (`isdigit` also takes `²`, which `int` refuses) below PID_LIMIT."""
    number = ascii_number(word, len(str(PID_LIMIT)))
    return number is not None and number < PID_LIMIT


def clean_run_folders(root: Path | None = None) -> list[str]:
    """Remove the run folders of `sim conform` processes that are no longer alive (killed
    before they could remove their own); returns their names. The folders of a live run,
    this one's included, are left alone."""
    root = Path(tempfile.gettempdir()) if root is None else root
    removed: list[str] = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return removed
    for name in names:
        pid = name.removeprefix(RUN_FOLDER_PREFIX).split("-", 1)[0]
        if not name.startswith(RUN_FOLDER_PREFIX) or not run_folder_pid(pid) or pid_alive(int(pid)):
            continue
        path = root / name
        if path.is_dir() and not path.is_symlink() and path.stat().st_uid == os.getuid():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(name)
    return removed


#: called after every engine run (`observe`) with the engine's name, the fault's and the run's
#: seconds, while `watched` holds them: `sim conform`'s progress lines
_watchers: list[Callable[[str, str, float], None]] = []


@contextmanager
def watched(callback: Callable[[str, str, float], None]) -> Iterator[None]:
    """Within it, `callback(engine, fault, seconds)` after each engine run, from whichever
    thread ran it."""
    _watchers.append(callback)
    try:
        yield
    finally:
        _watchers.remove(callback)


def observe(engine: Engine, fault: Fault, workdir: Path, on_start: Callable[[list[int]], None] | None = None) -> Observed:
    """Run `fault` on `engine` in `workdir` (empty) and read the figures."""
    began = time.monotonic()
    observed = _observe(engine, fault, workdir, on_start)
    for callback in list(_watchers):
        callback(engine.name, fault.name, time.monotonic() - began)
    return observed


def _observe(engine: Engine, fault: Fault, workdir: Path, on_start: Callable[[list[int]], None] | None) -> Observed:
    app.prepare(workdir)
    plan: dict[str, list[str]] = {}
    for hit in fault.schedule.hits:
        plan.setdefault(f"w{hit.worker}", []).append(hit.point)
    (workdir / "plan.json").write_text(json.dumps(plan))
    procs = Processes(workdir)
    try:
        server = server_of(engine)
        if server is not None:  # started through `procs`: killed by its pid like every other process
            server.start(workdir, procs)
            if on_start is not None:
                on_start(procs.pids())
        driven = Driven(engine, fault, workdir, procs, on_start)
        driven.run()
        found = history.read(engine.name, workdir, server_of(engine))  # while the engine's server runs
    finally:
        procs.close()
    return replace(read_figures(fault, workdir, driven.newsletter, driven.posts), recorded_at_barrier=driven.at_barrier,
                   unreached=driven.unreached, history=None if found is None else tuple(found.items()),
                   invariants=invariants.observed(workdir))  # fmt: skip


class Unreached(Exception):
    """A worker ended before the barrier the schedule holds it at (a finding: the engine did not
    run that step there), not a run that could not be made."""


class Driven:
    """One run of a schedule: the feed and the workers started, each hit done at its barrier
    (sim/conform/schedule.py), the last worker waited for; then the newsletter's quote, the
    feed's post count, the steps the engine had recorded at w1's first barrier and the first
    barrier a worker ended before reaching (None when every fault was injected)."""

    def __init__(self, engine: Engine, fault: Fault, workdir: Path, procs: Processes,
                 on_start: Callable[[list[int]], None] | None) -> None:  # fmt: skip
        self.engine, self.fault, self.workdir, self.procs, self.on_start = engine, fault, workdir, procs, on_start
        self.server = server_of(engine)
        #: a server that sends every attempt to one deployment address (Restate): the restarted
        #: worker stands by, idle, before the signal, and the server is pointed at it (`takeover`)
        self.standby = hasattr(self.server, "takeover")
        self.newsletter: str | None = None
        self.posts = 0
        self.at_barrier: int | None = None
        self.unreached: str | None = None
        self.stopped: subprocess.Popen[bytes] | None = None
        self.continued = False

    def worker(self, label: str, mode: str) -> None:
        self.procs.start(label, [str(HERE / "app.py"), self.engine.name, str(self.workdir), label, mode,
                                 "1" if self.fault.keyed else "0"])  # fmt: skip
        if self.on_start is not None:
            self.on_start(self.procs.pids())

    def run(self) -> None:
        self.procs.start("feed", [str(HERE / "feed.py"), str(self.workdir / "feed.sqlite"), str(self.workdir / "feed.port")])
        wait_until("the feed's port", (self.workdir / "feed.port").exists, self.procs, ("feed",))
        self.worker("w1", "start")
        try:
            for n, hit in enumerate(self.fault.schedule.hits):
                self.hit(hit, first=n == 0)
        except Unreached as missed:
            self.unreached = str(missed)
        last = f"w{self.fault.schedule.workers}"
        if last in self.procs.started:
            self.finish(last)
        self.newsletter = latest_acceptance(self.workdir)  # the dependant reads as soon as the workflow has a result
        if self.stopped is not None:
            if not self.continued:
                os.kill(self.stopped.pid, signal.SIGCONT)
            self.finish(next(k for k, p in self.procs.started.items() if p is self.stopped))
        self.posts = feed_posts(self.workdir)

    def finish(self, label: str) -> None:
        """Wait for a worker's end; one that failed (the engine raised in it) is a finding, kept
        with the first fault not injected, not a run that could not be made."""
        try:
            finish(self.procs, label)
        except ConformError as failed:
            if self.procs.started[label].returncode in (None, 0):
                raise
            self.unreached = self.unreached or str(failed)

    def hit(self, hit: Hit, first: bool) -> None:
        """Wait for the hit's worker at its barrier, then do its action."""
        label = f"w{hit.worker}"
        held = self.workdir / app.barrier_file("held", label, hit.point)
        watch = tuple(x for x in (label, "feed") if x in self.procs.started)
        try:
            reached = wait_until(f"{label} at {hit.point}", held.exists, self.procs, watch, ends_ok=label)
        except ConformError as failed:  # the worker failed before its barrier: the engine raised in it
            if self.procs.started[label].poll() in (None, 0):
                raise
            raise Unreached(str(failed)) from None
        if not reached:
            raise Unreached(f"{label} ended before {hit.point}")
        if first:
            # the steps before the barrier have returned; wait until the engine has recorded
            # them too (LangGraph writes a task's result from a background thread)
            self.at_barrier = record_at_barrier(self.engine, self.fault, self.workdir, self.procs)
        elif hit.ends_worker:
            await_record(self.engine, hit.point, label, self.workdir, self.procs)
        go = self.workdir / app.barrier_file("go", label, hit.point)
        successor = f"w{hit.worker + 1}"
        if hit.ends_worker and self.standby:
            # the held worker is the only one that computes: the successor stands by, the
            # report's correction, the takeover, and only then the signal
            self.worker(successor, "resume")
        if hit.change:
            app.change_report(self.workdir)
        if hit.ends_worker and self.standby:
            self.server.takeover(self.workdir, self.procs, successor)
        proc = self.procs.started[label]
        if hit.action == "kill":
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        elif hit.action == "stop":
            os.kill(proc.pid, signal.SIGSTOP)
            wait_until(f"{label} stopped", lambda: stopped(proc.pid), self.procs, (label,))
            self.stopped = proc
            go.touch()  # seen only once the worker is continued
        elif hit.action == "wake":
            assert self.stopped is not None
            os.kill(self.stopped.pid, signal.SIGCONT)
            self.continued = True
            go.touch()
        else:
            go.touch()
        if hit.ends_worker and not self.standby:
            self.worker(successor, "resume")


def read_figures(fault: Fault, workdir: Path, newsletter: str | None, posts: int) -> Observed:
    """The figures of a finished run, from the harness's store (sim/conform/app.py)."""
    executions = tuple(f"w{n}" for n in range(1, fault.schedule.workers + 1))
    calls = dict(app.rows(workdir, "SELECT execution, COUNT(*) FROM calls GROUP BY execution"))
    restored = dict(app.rows(workdir, "SELECT execution, COUNT(*) FROM got WHERE execution != computed_by "
                                      "AND step LIKE 's%' GROUP BY execution"))  # fmt: skip
    zombie_write = zombie_end = None
    stop = fault.stopped
    zombie_sends = None
    if stop is not None:
        zombie_write = read_zombie_write(workdir, f"w{stop.worker}", held_step(stop.point))
        zombie_end = read_end(workdir, f"w{stop.worker}")
        zombie_sends = sum(1 for by, _ in invariants.feed_posts(workdir) if by == f"w{stop.worker}")
    acceptances = tuple(app.rows(workdir, "SELECT execution, revenue FROM accepted ORDER BY seq"))
    return Observed(
        calls_by_execution=tuple(calls.get(e, 0) for e in executions),
        restored=sum(restored.values()),
        zombie_write=zombie_write,
        zombie_end=zombie_end,
        acceptances=acceptances,
        posts=posts,
        newsletter=newsletter,
        restored_by_execution=tuple(restored.get(e, 0) for e in executions),
        zombie_sends=zombie_sends,
        context=context(fault),
    )


def held_step(point: str) -> str:
    """The step a barrier is inside: sN, assemble, or post."""
    if point.startswith("after-call:"):
        return point.removeprefix("after-call:")
    return "assemble" if point == "in:assemble" else "post"


def context(fault: Fault) -> Context:
    """The schedule's facts a behaviour's predicate reads (the same on both sides)."""
    stop = fault.stopped
    after = tuple(h.worker for h in fault.schedule.hits if h.ends_worker and h.at_post)
    killed = tuple(h.worker - 1 for h in fault.schedule.hits if h.action == "kill" and not h.at_post)
    return Context(stopped=None if stop is None else stop.worker - 1, after_acceptance=after, killed=killed)


def read_zombie_write(workdir: Path, execution: str, held: str) -> str:
    """The zombie's held step's write: `landed` if the engine took its result (its own: a body
    that obtains the step as another execution computed it was not its write) and its workflow
    went on; `none` if the engine had closed the zombie's run under it before it was continued
    (a `cut`: the SDK's own exception, Restate's server closing the attempt's stream, the only
    way a step's result reaches the journal), so its result reached no store; `error: TYPE` if
    the application's own code raised there (never read as a cut, never a match); else
    `rejected` (the engine's store refused it). The body records what it obtained of each step
    (`got`: a section's result, the digest, the feed's answer) with who computed it."""
    landed = app.rows(workdir, "SELECT COUNT(*) FROM got WHERE execution = ? AND step = ? AND computed_by = ?",
                      execution, held, execution)[0][0]  # fmt: skip
    if landed:
        return "landed"
    failed = app.rows(workdir, "SELECT why FROM failed WHERE execution = ? ORDER BY seq", execution)
    if failed:
        return f"error: {failed[0][0]}"
    cut = app.rows(workdir, "SELECT COUNT(*) FROM cut WHERE execution = ? AND step = ?", execution, held)[0][0]
    return "none" if cut else "rejected"


def read_end(workdir: Path, execution: str) -> str:
    """An execution's end, read the same way on every engine: what its process's run returned
    (`ended`): a result whose last step, the post, it made itself (its own run to the end), one
    another execution's post ended (the owner's), or nothing. (The digest's id cannot tell: a
    successor that restores the assembled digest returns the zombie's digest id.)"""
    ended = {e: json.loads(r) for e, r in app.rows(workdir, "SELECT execution, result FROM ended")}
    if execution not in ended:
        return "stops"
    post = ended[execution].get("post") if isinstance(ended[execution], dict) else None
    by = post.get("by") if isinstance(post, dict) else None
    return "runs on to its own result" if by == execution else "returns the owner's result"


# -- the prediction ------------------------------------------------------------------------
def predict(engine: Engine, fault: Fault, switches: dict[str, str] | None = None) -> Observed:
    """`sim`'s run of the fault's scenario under the engine's switches, in the observed figures'
    terms; the steps recorded at w1's barrier are every step before it (each step's result is
    recorded as it returns: checkpoints=per-step), where the engine's record is read. With
    `switches`, under those settings instead of the engine's (sim/conform/claims.py)."""
    scenario = load(fault.scenario).with_switches(engine.switches if switches is None else switches)
    trace, result = run_scenario(scenario)
    recorded_before = steps_before(fault.hold) if reads_record(engine) else None
    mapped = tuple(history.from_trace(trace).items()) if engine.name in history.MAPPINGS else None
    return replace(from_model(trace, result, context(fault)), recorded_at_barrier=recorded_before,
                   history=mapped, invariants=invariants.model(trace))  # fmt: skip


def from_model(trace: Trace, result: Outcome, ctx: Context) -> Observed:
    """`sim`'s run in the observed figures' terms; the stopped worker (`ctx.stopped`) is attempt
    #(stopped + 1)."""
    acceptances = tuple(
        (f"w{a['producer']}", revenue(a["built_from"][1]))
        for a in (payload(e, Accepted) for e in trace.events if e.kind is Kind.ACCEPTED)
    )
    zombie_write = zombie_end = None
    if ctx.stopped is not None:
        zombie_write = "landed" if result.stale_writes_applied else "rejected" if result.stale_writes_rejected else "none"
        ends = [e.kind for e in trace.events if e.attempt == ctx.stopped + 1 and e.kind in ENDS]
        zombie_end = ZOMBIE_END[ends[-1]] if ends else "stops"
    attempts = len(result.model_calls_by_attempt)
    restores = [e.attempt for e in trace.events if e.kind is Kind.RESTORED]
    zombie_sends = None if ctx.stopped is None else sum(
        1 for e in trace.events if e.kind is Kind.SENT and e.attempt == ctx.stopped + 1)
    return Observed(
        restored_by_execution=tuple(restores.count(n) for n in range(1, attempts + 1)),
        zombie_sends=zombie_sends,
        context=ctx,
        calls_by_execution=result.model_calls_by_attempt,
        restored=result.steps_restored,
        zombie_write=zombie_write,
        zombie_end=zombie_end,
        acceptances=acceptances,
        posts=result.posts_applied,
        newsletter=result.newsletter.quoted_revenue,
    )


def figures(o: Observed) -> dict[str, str]:
    """The figures as the report shows them (and compares them); a figure the fault cannot
    exercise (the zombie's, where no worker is stopped; the record at the barrier, where it is
    not read) is left out."""
    out = {
        "steps recorded at w1's barrier": None if o.recorded_at_barrier is None else str(o.recorded_at_barrier),
        "faults injected": None if o.unreached is None else f"all but one: {o.unreached}",
        "model calls by execution": " ".join(map(str, o.calls_by_execution)),
        "steps restored": str(o.restored),
        "zombie write": o.zombie_write,
        "zombie's end": o.zombie_end,
        "acceptances": ", ".join(f"{who} quoting {figure}" for who, figure in o.acceptances) or "none",
        "posts applied": str(o.posts),
        "newsletter quotes": o.newsletter or "nothing",
        "engine's history": None if o.history is None else history.render(dict(o.history)),
        "invariants on the run": None if o.invariants is None else invariants.render(o.invariants),
    }
    return {k: v for k, v in out.items() if v is not None}


def kinds(fault: Fault) -> tuple[str, ...]:
    """The kinds of the schedule's faults, as engines list the behaviours that may explain its
    rows: a worker killed in a step before the post ("kill"), stopped ("stop"), or killed in the
    post ("kill in the post": its successor resumes after the acceptance); a worker stopped in
    the post is "stop", "stop in the post" and "kill in the post" (its successor resumes after
    the acceptance);
    a stopped worker continued while its successor is at work (a wake hit) is also "woken while
    its successor runs"; a change alone is none."""
    out: list[str] = []
    for hit in fault.schedule.hits:
        if hit.action == "stop":
            out += ["stop", "stop in the post"] if hit.at_post else ["stop"]
        if hit.action == "wake":
            out.append("woken while its successor runs")
        if hit.ends_worker:
            out.append("kill in the post" if hit.at_post else "kill" if hit.action == "kill" else "stop")
    return tuple(dict.fromkeys(out))


def behaviours(engine: Engine, fault: Fault) -> list[Behaviour]:
    """The behaviours the engine lists for the schedule's kinds of fault, each once."""
    found: dict[str, Behaviour] = {}
    for k in kinds(fault):
        for behaviour in engine.explains.get(k, ()):
            found.setdefault(behaviour.name, behaviour)
    return list(found.values())


def verdict(engine: Engine, fault: Fault, figure: str, observed: Observed, predicted: Observed) -> dict[str, str]:
    """One row: a match, explained by a behaviour the engine lists for the fault whose
    predicate holds for this value, or a MISMATCH."""
    absent = "all" if figure == "faults injected" else ""
    seen, want = figures(observed).get(figure, absent), figures(predicted).get(figure, absent)
    row = {"figure": figure, "observed": seen, "predicted": want}
    if seen == want:
        row["verdict"] = "match"
        return row
    listed = behaviours(engine, fault)
    for behaviour in listed:
        if behaviour.explains(figure, observed, predicted):
            row["verdict"] = "explained"
            row["behaviour"] = behaviour.name
            return row
    together = explained_each(figure, listed, observed, predicted) if figure in PER_EXECUTION else []
    if together:
        row["verdict"] = "explained"
        row["behaviour"] = ", ".join(b.name for b in together)
        return row
    row["verdict"] = "MISMATCH"
    if figure == "engine's history" and observed.history is not None and predicted.history is not None:
        row["difference"] = history.first_difference(dict(observed.history), dict(predicted.history)) or ""
    return row


def compare(engine: Engine, fault: Fault, observed: Observed, predicted: Observed) -> list[dict[str, str]]:
    shown = figures(observed).keys() | figures(predicted).keys()
    return [verdict(engine, fault, figure, observed, predicted) for figure in FIGURES if figure in shown]


def merge(engine: Engine, fault: Fault, observations: list[Observed], predicted: Observed) -> list[dict[str, Any]]:
    """The rows of a fault run several times: a figure that was the same in every run is that
    run's row; one that varied is `varying`, with each run's value (never counted as a match):
    a MISMATCH if any value is one, else explained by the behaviours that explain its values.
    Rows are lined up by figure, not by position: a run may show a row the others do not (the
    "faults injected" row of a run whose worker ended before its barrier), and a figure a run
    does not show is judged on its absent value there."""
    shown = set(figures(predicted))
    for observed in observations:
        shown |= figures(observed).keys()
    rows: list[dict[str, Any]] = []
    for figure in [f for f in FIGURES if f in shown]:
        same = [verdict(engine, fault, figure, observed, predicted) for observed in observations]
        row = same[0]
        values = [r["observed"] for r in same]
        if len(set(values)) == 1:
            rows.append(row)
            continue
        verdicts = {r["verdict"] for r in same}
        behaviours = sorted({r["behaviour"] for r in same if "behaviour" in r})
        varied: dict[str, Any] = {"figure": row["figure"], "observed": "varying: " + "; ".join(values),
                                  "predicted": row["predicted"], "values": values,
                                  "verdict": "MISMATCH" if "MISMATCH" in verdicts else "varying"}  # fmt: skip
        if behaviours:
            varied["behaviour"] = ", ".join(behaviours)
        rows.append(varied)
    return rows


def keep_record(workdir: Path, keep: Path) -> None:
    """Copy a run's records into `keep` (a folder of this run's own: `outputs.staged_record`):
    the engine's store and the harness's (SQLite files, Temporal's database) and each
    process's log, each through the atomic writer (never through a symlink)."""
    keep.mkdir(parents=True, exist_ok=True)
    for path in sorted(workdir.iterdir()):
        if path.suffix in outputs.KEPT and path.is_file() and not path.is_symlink():
            write_out(keep / path.name, path.read_bytes())


def run_fault(engine: Engine, fault: Fault, on_start: Callable[[list[int]], None] | None,
              runs: int = 1, keep: Path | None = None) -> dict[str, Any]:  # fmt: skip
    """Run `fault` on `engine` `runs` times (each in a fresh folder) and compare the figures;
    with `keep`, each run's records are copied into `keep/run-N`."""
    predicted = predict(engine, fault)
    began = time.monotonic()
    observations = []
    for n in range(runs):
        with run_folder() as workdir:
            observations.append(observe(engine, fault, workdir, on_start))
            if keep is not None:
                keep_record(workdir, keep / f"run-{n + 1}")
    return {
        "fault": fault.name,
        "number": fault.number,
        "scenario": fault.scenario,
        "how": fault.how,
        "runs": runs,
        "rows": merge(engine, fault, observations, predicted),
        "seconds": round(time.monotonic() - began, 1),
    }


#: the verdicts a row can have, as the summary counts them
VERDICTS = ("match", "explained", "varying", "MISMATCH")


def conform(engine_name: str, only: tuple[str, ...] = (), jobs: int = 1,
            on_start: Callable[[list[int]], None] | None = None, runs: int = 1) -> dict[str, Any]:  # fmt: skip
    """Run every fault (or those named in `only`) on the engine `runs` times, `jobs` faults at a
    time (each in its own folder, with its own feed and workers); the document `sim conform
    --json` prints."""
    engine = ENGINES[engine_name]
    require(engine)
    chosen = [fault for fault in FAULTS if not only or fault.name in only]
    results: list[dict[str, Any]]
    if jobs <= 1:  # in this thread, so that an interrupt reaches the run and its teardown at once
        results = [run_fault(engine, f, on_start, runs) for f in chosen]
    else:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(lambda f: run_fault(engine, f, on_start, runs), chosen))
    rows = [row for result in results for row in result["rows"]]
    used = {name for row in rows for name in row.get("behaviour", "").split(", ") if name}
    behaviours = {b.name: b for bs in engine.explains.values() for b in bs if b.name in used}
    counts = {v: sum(1 for r in rows if r["verdict"] == v) for v in VERDICTS}
    return {
        "engine": engine.name,
        "title": engine.title,
        "versions": versions(engine),
        "switches": engine.switches,
        "reasons": list(engine.reasons),
        "runs": runs,
        "faults": results,
        "behaviours": {name: b.text for name, b in behaviours.items()},
        "predicates": {name: b.predicates() for name, b in behaviours.items()},
        "summary": {"rows": len(rows), "match": counts["match"], "explained": counts["explained"],
                    "varying": counts["varying"], "mismatch": counts["MISMATCH"]},  # fmt: skip
        "ok": counts["MISMATCH"] == 0,
    }


def without_timings(document: dict[str, Any]) -> dict[str, Any]:
    """The document with every `seconds` key removed (what a script may compare)."""
    if isinstance(document, dict):
        return {k: without_timings(v) for k, v in document.items() if k != "seconds"}
    if isinstance(document, list):
        return [without_timings(v) for v in document]
    return document
