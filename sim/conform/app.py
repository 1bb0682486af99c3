"""The worked example's application, shared by every engine's worker: the report read by
reference, the "model" (a counter store), the observation log, the feed client and the
barriers the harness signals at.

This file is also the worker process: `python PATH/TO/app.py ENGINE WORKDIR EXECUTION MODE
KEYED` runs (or resumes) the workflow on a real engine (`main`, below). It imports nothing of
`sim` (a worker starts without the simulator's imports) and imports an engine only inside the
function that runs it. ENGINE is langgraph, dbos, temporal or restate; EXECUTION labels the process in the
harness's records (w1, w2, ...); MODE is `start` (begin the workflow) or `resume` (recover it
from the engine's store, as a restarted worker does); KEYED is 1 when the post carries the key
workflow id + step id. The workflow: s1..s4 (one model call each), assemble the digest, accept
it, post it, each one step of the engine; the process records its return value (`ended`).

The work folder holds:
- `report/section-N.txt`: the input, read by the steps when they run (by reference, never
  passed by content), so a change during an outage is seen by whoever computes next;
- `store.sqlite`: the harness's own records, outside the engine: `calls` (one row per model
  call: which execution, which step, the section text it read), `got` (one row per section
  result a workflow body obtained: which execution, which step, who computed it),
  `accepted` (one row per acceptance), `ended` (each execution's return value), `cut` (an
  execution whose run the engine closed while it awaited a step: Restate's server closing
  the attempt's stream: the SDK's own exception types), `failed` (an exception of the
  application's code instead);
- `feed.port`: the loopback port of the feed process (sim/conform/feed.py);
- `plan.json`: the barriers: {execution: [point, ...]}; at each of its points the worker
  writes `held-EXECUTION@POINT` and waits for `go-EXECUTION@POINT` (the points: `after-call:sN`,
  right after step sN's model call; `in:assemble`, inside the assemble step before it returns;
  `before-intent`, `after-intent` and `after-send`, the post step's three points: before the
  application records its intent to post, after it, and after the feed answered the send);
- `temporal.address` (Temporal only): host:port of the run's Temporal dev server
  (sim/conform/server_temporal.py).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

WORKFLOW_ID = "digest/q3-report"
SECTIONS = 4
#: the report's versions: section 2 is corrected from v1 to v2, the others stay byte-identical
REPORT = {
    1: "Section 1: the quarter in brief; orders grew in every region.",
    2: "Section 2: revenue was 4.1 million.",
    3: "Section 3: costs fell after the move to the new warehouse.",
    4: "Section 4: outlook; hiring continues in the second half.",
}
CORRECTED_SECTION_2 = "Section 2: revenue was 4.7 million."
#: how often a barrier is polled, in seconds (a poll, not a timed wait: it only decides how
#: soon a barrier that has been reached is seen)
POLL = 0.005

#: the environment variable that perturbs the application (`App.perturb`)
PERTURB = "SIM_CONFORM_PERTURB"

#: an HTTP client that never goes through a proxy (the feed is on the loopback interface)
LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))

SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (seq INTEGER PRIMARY KEY AUTOINCREMENT, execution TEXT, pid INTEGER, step TEXT, content TEXT);
CREATE TABLE IF NOT EXISTS got (seq INTEGER PRIMARY KEY AUTOINCREMENT, execution TEXT, step TEXT, computed_by TEXT);
CREATE TABLE IF NOT EXISTS accepted (seq INTEGER PRIMARY KEY AUTOINCREMENT, execution TEXT, digest TEXT, revenue TEXT);
CREATE TABLE IF NOT EXISTS ended (seq INTEGER PRIMARY KEY AUTOINCREMENT, execution TEXT, result TEXT);
CREATE TABLE IF NOT EXISTS cut (seq INTEGER PRIMARY KEY AUTOINCREMENT, execution TEXT, step TEXT, why TEXT);
CREATE TABLE IF NOT EXISTS failed (seq INTEGER PRIMARY KEY AUTOINCREMENT, execution TEXT, step TEXT, why TEXT);
CREATE TABLE IF NOT EXISTS intents (seq INTEGER PRIMARY KEY AUTOINCREMENT, execution TEXT, digest TEXT);
CREATE TABLE IF NOT EXISTS log (seq INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT, execution TEXT, digest TEXT, detail TEXT);
"""


def prepare(workdir: Path) -> None:
    """A fresh work folder: the report at v1 and an empty store."""
    (workdir / "report").mkdir(parents=True, exist_ok=True)
    for n, text in REPORT.items():
        (workdir / "report" / f"section-{n}.txt").write_text(text + "\n", encoding="utf-8")
    with connect(workdir) as db:
        db.executescript(SCHEMA)


def change_report(workdir: Path) -> None:
    """The correction: section 2 gets new content (v1 -> v2), logged (`log`)."""
    (workdir / "report" / "section-2.txt").write_text(CORRECTED_SECTION_2 + "\n", encoding="utf-8")
    log(workdir, "changed")


def log(workdir: Path, what: str, execution: str | None = None, digest: str | None = None, detail: str | None = None) -> None:
    """One entry of the run's log, in one sequence with every other (sim/conform/invariants.py
    runs `sim`'s invariant monitors over it): `accepted` (the digest, the figure it quotes),
    `posted` (the digest, the feed's answer), `changed` (the report corrected), `newsletter`
    (the digest it read, the figure it quotes)."""
    record(workdir, "INSERT INTO log (what, execution, digest, detail) VALUES (?, ?, ?, ?)", what, execution, digest, detail)


def connect(workdir: Path) -> sqlite3.Connection:
    db = sqlite3.connect(workdir / "store.sqlite", timeout=30, isolation_level=None)
    db.execute("PRAGMA busy_timeout = 30000")
    return db


def record(workdir: Path, sql: str, *args: Any) -> None:
    """One row, committed before this returns (autocommit)."""
    db = connect(workdir)
    try:
        db.execute(sql, args)
    finally:
        db.close()


def rows(workdir: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    db = connect(workdir)
    try:
        return list(db.execute(sql, args))
    finally:
        db.close()


def barrier_file(what: str, execution: str, point: str) -> str:
    """The name of a barrier's file: `held-w1@after-call:s3` (the worker is there) or
    `go-w1@after-call:s3` (the harness lets it go on)."""
    return f"{what}-{execution}@{point}"


def revenue(text: str) -> str | None:
    found = re.search(r"revenue was (\d+\.\d+) million", text)
    return found.group(1) if found else None


class App:
    """The application as one execution (one worker process) sees it."""

    def __init__(self, workdir: Path, execution: str, keyed: bool) -> None:
        self.workdir = workdir
        self.execution = execution
        #: a perturbation of the application, for testing the harness (never set by `sim
        #: conform`): `SIM_CONFORM_PERTURB` holds comma-separated words, `no-key` (the post
        #: carries no key) and `inline:sN` (step sN runs in the workflow body itself, not as a
        #: step of the engine, so the engine never records it)
        self.perturb = set(filter(None, os.environ.get(PERTURB, "").split(",")))
        self.keyed = keyed and "no-key" not in self.perturb
        plan = workdir / "plan.json"
        self.plan: dict[str, list[str]] = json.loads(plan.read_text()) if plan.exists() else {}
        #: called on each poll while the execution is held at a barrier (Temporal: the held
        #: activity heartbeats, so that the server knows its worker is alive while it waits)
        self.waiting: Any = None

    def inline(self, n: int) -> bool:
        """Step s<n> is perturbed to run inline, in the workflow body, never journaled."""
        return f"inline:s{n}" in self.perturb

    # -- barriers -----------------------------------------------------------------------
    def point(self, name: str) -> None:
        """If the plan holds this execution at `name`: say so, and wait for the harness's go
        (a harness that kills the process instead never sends it)."""
        if name not in self.plan.get(self.execution, ()):
            return
        held = self.workdir / barrier_file("held", self.execution, name)
        tmp = held.with_name(held.name + ".tmp")
        tmp.write_text(f"{os.getpid()} {name}\n")
        tmp.rename(held)
        go = self.workdir / barrier_file("go", self.execution, name)
        while not go.exists():
            if self.waiting is not None:
                self.waiting()
            time.sleep(POLL)

    # -- the steps' bodies --------------------------------------------------------------
    def summarise(self, n: int) -> dict[str, Any]:
        """Step s<n>: read section n of the report now, make one model call, hold if planned."""
        step = f"s{n}"
        content = (self.workdir / "report" / f"section-{n}.txt").read_text(encoding="utf-8").strip()
        record(self.workdir, "INSERT INTO calls (execution, pid, step, content) VALUES (?, ?, ?, ?)",
               self.execution, os.getpid(), step, content)  # fmt: skip
        self.point(f"after-call:{step}")
        return {"step": step, "id": f"{step}@{self.execution}", "by": self.execution, "summary": f"summary of: {content}"}

    def got(self, result: dict[str, Any]) -> None:
        """The workflow body obtained a section result (computed now or restored by the engine)."""
        record(self.workdir, "INSERT INTO got (execution, step, computed_by) VALUES (?, ?, ?)",
               self.execution, result["step"], result["by"])  # fmt: skip

    def got_step(self, step: str, result: dict[str, Any]) -> None:
        """The workflow body obtained the result of assemble (a digest, `d@wN`) or of the post
        (the feed's answer, with the execution that made it), computed now or restored."""
        by = result["id"].split("@")[1] if step == "assemble" else result["by"]
        record(self.workdir, "INSERT INTO got (execution, step, computed_by) VALUES (?, ?, ?)", self.execution, step, by)

    def assemble(self, parts: list[dict[str, Any]]) -> dict[str, Any]:
        digest = {"id": f"d@{self.execution}", "parts": [p["id"] for p in parts],
                  "revenue": revenue(parts[1]["summary"])}  # fmt: skip
        self.point("in:assemble")
        return digest

    def accept(self, digest: dict[str, Any]) -> dict[str, Any]:
        """The acceptance: every complete candidate is accepted (the application checks no
        version: the report is passed by reference), and the acceptance is recorded."""
        record(self.workdir, "INSERT INTO accepted (execution, digest, revenue) VALUES (?, ?, ?)",
               self.execution, digest["id"], digest["revenue"])  # fmt: skip
        log(self.workdir, "accepted", self.execution, digest["id"], digest["revenue"])
        return {"accepted": digest["id"], "by": self.execution}

    def post(self, digest: dict[str, Any]) -> dict[str, Any]:
        """Announce the digest on the feed; the key, if any, is the workflow id + the step id + the
        digest's id (the model's per-operation key: built from the digest and the announce operation).
        Before it sends, the application records its intent to post in its own store (`intents`;
        not an engine record: the engine's record of the post is the step's result)."""
        self.point("before-intent")
        record(self.workdir, "INSERT INTO intents (execution, digest) VALUES (?, ?)", self.execution, digest["id"])
        self.point("after-intent")
        port = int((self.workdir / "feed.port").read_text())
        body = {"text": f"digest {digest['id']}: revenue {digest['revenue']} million",
                "key": f"{WORKFLOW_ID}/post/{digest['id']}" if self.keyed else None,
                "by": self.execution}  # fmt: skip
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/post", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        with LOOPBACK.open(request, timeout=30) as response:
            answer: dict[str, Any] = json.loads(response.read())
        log(self.workdir, "posted", self.execution, digest["id"], answer.get("answer"))
        self.point("after-send")
        return {**answer, "by": self.execution}

    def cut(self, step: str, why: str) -> None:
        """The engine closed this execution's run of the workflow while it awaited `step`: the
        step's result, if this execution computed it, was never written to the engine's store."""
        record(self.workdir, "INSERT INTO cut (execution, step, why) VALUES (?, ?, ?)", self.execution, step, why)

    def failed(self, step: str, why: str) -> None:
        """The application's own code raised while this execution ran or awaited `step` (an
        error of the application, not the engine closing the run: never read as a cut)."""
        record(self.workdir, "INSERT INTO failed (execution, step, why) VALUES (?, ?, ?)", self.execution, step, why)

    def ended(self, result: Any) -> None:
        record(self.workdir, "INSERT INTO ended (execution, result) VALUES (?, ?)",
               self.execution, json.dumps(result, sort_keys=True))  # fmt: skip


# -- the worker process ------------------------------------------------------------------
def run_langgraph(app: App, resume: bool) -> Any:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.func import entrypoint, task

    @task
    def summarise(n: int) -> dict[str, Any]:
        return app.summarise(n)

    @task
    def assemble(parts: list[dict[str, Any]]) -> dict[str, Any]:
        return app.assemble(parts)

    @task
    def accept(digest: dict[str, Any]) -> dict[str, Any]:
        return app.accept(digest)

    @task
    def post(digest: dict[str, Any]) -> dict[str, Any]:
        return app.post(digest)

    conn = sqlite3.connect(app.workdir / "langgraph.sqlite", check_same_thread=False, timeout=30)
    saver = SqliteSaver(conn)

    @entrypoint(checkpointer=saver)
    def digest_workflow(report: str) -> dict[str, Any]:
        parts = []
        for n in range(1, SECTIONS + 1):
            part = app.summarise(n) if app.inline(n) else summarise(n).result()
            app.got(part)
            parts.append(part)
        digest = assemble(parts).result()
        app.got_step("assemble", digest)
        verdict = accept(digest).result()
        answer = post(digest).result()
        app.got_step("post", answer)
        return {"digest": digest["id"], "accepted_by": verdict["by"], "post": answer}

    config: RunnableConfig = {"configurable": {"thread_id": WORKFLOW_ID}}
    # durability "sync": each task's result is written before the next step starts
    return digest_workflow.invoke(None if resume else str(app.workdir / "report"), config, durability="sync")


def run_dbos(app: App, resume: bool) -> Any:
    from dbos import DBOS, SetWorkflowID

    DBOS(config={"name": "conform", "system_database_url": f"sqlite:///{app.workdir / 'dbos.sqlite'}",
                 "log_level": "WARNING"})  # fmt: skip

    @DBOS.step()
    def summarise(n: int) -> dict[str, Any]:
        return app.summarise(n)

    @DBOS.step()
    def assemble(parts: list[dict[str, Any]]) -> dict[str, Any]:
        return app.assemble(parts)

    @DBOS.step()
    def accept(digest: dict[str, Any]) -> dict[str, Any]:
        return app.accept(digest)

    @DBOS.step()
    def post(digest: dict[str, Any]) -> dict[str, Any]:
        return app.post(digest)

    @DBOS.workflow()
    def digest_workflow(report: str) -> dict[str, Any]:
        parts = []
        for n in range(1, SECTIONS + 1):
            part = app.summarise(n) if app.inline(n) else summarise(n)
            app.got(part)
            parts.append(part)
        digest = assemble(parts)
        app.got_step("assemble", digest)
        verdict = accept(digest)
        answer = post(digest)
        app.got_step("post", answer)
        return {"digest": digest["id"], "accepted_by": verdict["by"], "post": answer}

    DBOS.launch()  # a restarted worker recovers the pending workflow here
    try:
        if resume:
            return DBOS.retrieve_workflow(WORKFLOW_ID).get_result()
        with SetWorkflowID(WORKFLOW_ID):
            return digest_workflow(str(app.workdir / "report"))
    finally:
        DBOS.destroy()


#: Temporal: the task queue both workers poll, and each activity's options. The heartbeat
#: timeout decides how soon the server gives up on an activity attempt whose worker was killed
#: or stopped (it sends no heartbeat) and schedules the next attempt, which the other worker
#: polls; an activity held at a barrier heartbeats (`App.waiting`), so only a worker that is
#: gone or stopped misses it. The activities themselves take milliseconds: the margin is for a
#: loaded machine. start-to-close is only a guard.
TEMPORAL_QUEUE = "conform"
TEMPORAL_HEARTBEAT = 5.0
TEMPORAL_START_TO_CLOSE = 120.0
#: a retry 0.5 s after an attempt failed or timed out, with no limit on attempts (Temporal's
#: default has none either): a stopped worker's open polls can be handed several attempts of
#: one activity, each of which times out (the harness's deadline is the guard)
TEMPORAL_RETRY = {"initial": 0.5, "backoff": 1.0, "attempts": 0}
#: the workflow task timeout: how long the server waits for a worker that took a workflow task
#: (Temporal's default is 10 s); a stopped worker's open poll can be handed one
TEMPORAL_TASK = 5.0
#: the sticky queue's schedule-to-start timeout: how soon a workflow task meant for a worker
#: that is gone moves to the task queue, where the other worker takes it (Temporal's default is 10 s)
TEMPORAL_STICKY = 1.0


class TemporalDigest:
    """The workflow on Temporal (`run_temporal` makes it one, with the SDK's decorators, in the
    worker process: the SDK wants a class it can name at module level). Its body runs in
    workflow tasks, replayed from the workflow's history on whichever worker takes the task."""

    app: App
    options: dict[str, Any]
    #: the steps whose result this process's workflow body has recorded in `got` (a workflow
    #: task may replay the body from the history more than once in one process)
    recorded: set[str] = set()

    def once(self, step: str, result: dict[str, Any]) -> None:
        """`got_step`, once per step in this process (a replayed body obtains it again)."""
        if step not in self.recorded:
            self.recorded.add(step)
            self.app.got_step(step, result)

    async def run(self, report: str) -> dict[str, Any]:
        from temporalio import workflow

        app, options = self.app, self.options
        parts = []
        for n in range(1, SECTIONS + 1):
            if app.inline(n):
                part = app.summarise(n)
            else:
                part = await workflow.execute_activity("summarise", n, **options)
            if part["step"] not in self.recorded:
                self.recorded.add(part["step"])
                app.got(part)
            parts.append(part)
        digest = await workflow.execute_activity("assemble", parts, **options)
        self.once("assemble", digest)
        verdict = await workflow.execute_activity("accept", digest, **options)
        answer = await workflow.execute_activity("post", digest, **options)
        self.once("post", answer)
        return {"digest": digest["id"], "accepted_by": verdict["by"], "post": answer}


def temporal_activities(app: App) -> list[Any]:
    """The four activity types, each a step body of `App`; an activity held at a barrier
    heartbeats every 0.5 s while it waits (`App.waiting`)."""
    from temporalio import activity

    last_beat = [0.0]

    def heartbeat() -> None:
        now = time.monotonic()
        if now - last_beat[0] >= 0.5:
            last_beat[0] = now
            activity.heartbeat()

    app.waiting = heartbeat

    @activity.defn(name="summarise")
    def summarise(n: int) -> dict[str, Any]:
        return app.summarise(n)

    @activity.defn(name="assemble")
    def assemble(parts: list[dict[str, Any]]) -> dict[str, Any]:
        return app.assemble(parts)

    @activity.defn(name="accept")
    def accept(digest: dict[str, Any]) -> dict[str, Any]:
        return app.accept(digest)

    @activity.defn(name="post")
    def post(digest: dict[str, Any]) -> dict[str, Any]:
        return app.post(digest)

    return [summarise, assemble, accept, post]


def run_temporal(app: App, resume: bool) -> Any:
    """A Temporal worker process: one worker on the task queue hosting the workflow and its
    activities; w1 also starts the workflow, and each execution waits for the workflow's
    result (the client's `result()`, which the server holds)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor
    from datetime import timedelta

    from temporalio import workflow
    from temporalio.client import Client
    from temporalio.common import RetryPolicy
    from temporalio.worker import UnsandboxedWorkflowRunner, Worker

    TemporalDigest.app = app
    TemporalDigest.options = {
        "start_to_close_timeout": timedelta(seconds=TEMPORAL_START_TO_CLOSE),
        "heartbeat_timeout": timedelta(seconds=TEMPORAL_HEARTBEAT),
        "retry_policy": RetryPolicy(initial_interval=timedelta(seconds=TEMPORAL_RETRY["initial"]),
                                    backoff_coefficient=TEMPORAL_RETRY["backoff"],
                                    maximum_attempts=int(TEMPORAL_RETRY["attempts"])),
    }  # fmt: skip
    workflow.run(TemporalDigest.run)
    workflow.defn(name="digest")(TemporalDigest)

    async def serve() -> Any:
        address = (app.workdir / "temporal.address").read_text().strip()
        client = await Client.connect(address, identity=f"{app.execution}@{os.getpid()}")
        with ThreadPoolExecutor(max_workers=4) as executor:
            worker = Worker(
                client, task_queue=TEMPORAL_QUEUE, workflows=[TemporalDigest],
                activities=temporal_activities(app), activity_executor=executor,
                workflow_runner=UnsandboxedWorkflowRunner(),  # the body records `got` rows
                sticky_queue_schedule_to_start_timeout=timedelta(seconds=TEMPORAL_STICKY),
            )  # fmt: skip
            async with worker:
                if resume:
                    handle = client.get_workflow_handle(WORKFLOW_ID)
                else:
                    handle = await client.start_workflow("digest", str(app.workdir / "report"),
                                                         id=WORKFLOW_ID, task_queue=TEMPORAL_QUEUE,
                                                         task_timeout=timedelta(seconds=TEMPORAL_TASK))  # fmt: skip
                return await handle.result()

    return asyncio.run(serve())




def run_restate(app: App, resume: bool) -> Any:
    """A Restate worker: this process serves the workflow `digest` (key `q3-report`) as a
    service endpoint (hypercorn, HTTP/2) on a free loopback port the OS picks for it, which it
    writes to `port-EXECUTION` once it listens; the server (sim/conform/server_restate.py)
    sends it the invocation's attempts and journals each ctx.run result. w1 registers the
    endpoint as the deployment and submits the workflow; w2 (the restarted worker: the harness
    points the deployment at it) only serves. Either one then waits for the workflow's result
    at the ingress and stops serving; that result is what the process returns (`ended`), as a
    Temporal worker's process returns the workflow's result."""
    import asyncio
    import socket

    # the endpoint's socket, bound here to a port the OS picks (no window in which another
    # process could take a port chosen in advance), handed to hypercorn by its descriptor
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    return asyncio.run(serve_restate(app, restate_workflow(app), listener, resume))


def restate_workflow(app: App) -> Any:
    """The workflow `digest` on Restate: each step one `ctx.run`, whose result the server
    journals before the body goes on."""
    import restate

    digest_workflow = restate.Workflow(WORKFLOW_ID.split("/")[0])

    async def run(ctx: restate.WorkflowContext, report: str) -> dict[str, Any]:
        step = ""
        try:
            parts = []
            for n in range(1, SECTIONS + 1):
                step = f"s{n}"
                if app.inline(n):
                    part = app.summarise(n)
                else:
                    part = await ctx.run_typed(step, app.summarise, restate.RunOptions(), n)
                app.got(part)
                parts.append(part)
            step = "assemble"
            digest = await ctx.run_typed(step, app.assemble, restate.RunOptions(), parts)
            app.got_step("assemble", digest)
            step = "accept"
            verdict = await ctx.run_typed(step, app.accept, restate.RunOptions(), digest)
            step = "post"
            answer = await ctx.run_typed(step, app.post, restate.RunOptions(), digest)
            app.got_step("post", answer)
        except BaseException as error:
            # the SDK ends the body when the server has closed this attempt's stream
            # (DisconnectedException, or its own SuspendedException): the step being awaited was
            # never journaled from here; any other exception is the application's, not a cut
            if restate_closed(error):
                app.cut(step, type(error).__name__)
            else:
                app.failed(step, type(error).__name__)
            raise
        return {"digest": digest["id"], "accepted_by": verdict["by"], "post": answer}

    # the SDK reads the handler's types from its annotations: give it objects, not this module's
    # postponed strings (`restate` is imported in this function only)
    run.__annotations__ = {"ctx": restate.WorkflowContext, "report": str, "return": dict}
    digest_workflow.main()(run)
    return digest_workflow


def restate_closed(error: BaseException) -> bool:
    """The exception is the SDK's word that the server closed this attempt (its stream gone, or
    the attempt suspended): the engine ended the body, not the application."""
    from restate.exceptions import SdkInternalBaseException
    from restate.server_context import DisconnectedException

    return isinstance(error, (SdkInternalBaseException, DisconnectedException))


async def serve_restate(app: App, workflow: Any, listener: Any, resume: bool) -> Any:
    """Serve `workflow` on `listener` until the workflow has a result (w1 first registers the
    endpoint and submits the workflow; a standby waits until it is submitted); its result."""
    import asyncio

    import restate
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    where = json.loads((app.workdir / "restate.json").read_text())
    port = int(listener.getsockname()[1])
    service, key = WORKFLOW_ID.split("/")
    config = Config()
    config.bind = [f"fd://{listener.fileno()}"]
    config.graceful_timeout = 0.5
    stop = asyncio.Event()
    server = asyncio.ensure_future(serve(restate.app([workflow]), config, shutdown_trigger=stop.wait))
    while not listening(port):
        if server.done():
            server.result()  # the endpoint failed to start: raise its error
        await asyncio.sleep(POLL)
    tmp = app.workdir / f"port-{app.execution}.tmp"
    tmp.write_text(str(port))
    tmp.rename(app.workdir / f"port-{app.execution}")
    submitted = app.workdir / "submitted"
    if not resume:
        await asyncio.to_thread(call, f"{where['admin']}/deployments", {"uri": f"http://127.0.0.1:{port}/"}, "POST")
        await asyncio.to_thread(call, f"{where['ingress']}/{service}/{key}/run/send", str(app.workdir / "report"), "POST")
        submitted.touch()
    while not submitted.exists():  # a standby worker waits until the workflow exists
        await asyncio.sleep(POLL)
    # the workflow's result, whoever computes it
    result = await asyncio.to_thread(call, f"{where['ingress']}/restate/workflow/{service}/{key}/attach")
    stop.set()
    await server
    return result


def call(url: str, body: Any = None, method: str = "GET") -> Any:
    """One JSON request on the loopback interface; its JSON answer (None for an empty one)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})  # fmt: skip
    with LOOPBACK.open(request, timeout=600) as response:
        raw = response.read()
    return json.loads(raw) if raw else None


def listening(port: int) -> bool:
    """Something accepts TCP connections on 127.0.0.1:port."""
    import socket

    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


RUNNERS = {"langgraph": run_langgraph, "dbos": run_dbos, "temporal": run_temporal, "restate": run_restate}


def main(argv: list[str]) -> int:
    engine, workdir, execution, mode, keyed = argv
    logging.basicConfig(level=logging.WARNING)
    app = App(Path(workdir), execution, keyed == "1")
    result = RUNNERS[engine](app, mode == "resume")
    # every engine's end is read the same way: what the worker process's run returned
    app.ended(result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
