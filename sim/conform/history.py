"""Each engine's own history of a run, read back and mapped onto `sim`'s event kinds, and
checked against the model's trace for the same schedule.

One declared mapping per engine (`MAPPINGS`, stated in docs/conform.md): which record of the
engine's store is which `sim` event. What is compared is the history of **writes the engine
kept**: for each step of the workflow (s1..s4, assemble, accept, post), the executions whose
result the engine's record holds, in the order the engine recorded them; in `sim`'s trace,
the `write` events that were applied (journal: a section step; candidate: assemble; effect
confirmation: post) and the `accepted` events (accept), by the attempt that made them
(attempt #n is execution wn). The order is compared per step, not across steps: two workers
that run at once may interleave their steps in any order the model allows.

A run whose history differs from the trace is reported with the first differing event (the
row "engine's history", a MISMATCH), unless a behaviour the engine lists explains it.
"""

from __future__ import annotations

import base64
import pickle
import sqlite3
from pathlib import Path
from typing import Any

from sim.model.events import Accepted, payload, write
from sim.engine.trace import Kind, Trace

#: the steps in workflow order
STEPS = ("s1", "s2", "s3", "s4", "assemble", "accept", "post")

#: engine -> how its record maps onto sim's events (docs/conform.md, "Trace validation")
MAPPINGS = {
    "langgraph": "each `__return__` write of the thread in the checkpointer's `writes` table (in insertion "
    "order) is a `write` applied: its value's `step` (s1..s4) with its `by`, a digest (`id` d@wN) for "
    "assemble, `accepted` with its `by` for accept, the feed's answer with its `by` for post",
    "dbos": "each row of `operation_outputs` for the workflow (in `function_id` order) is a `write` applied: "
    "the function's name (summarise, assemble, accept, post) and its pickled output's `by` (or its digest id)",
    "temporal": "each `ActivityTaskCompleted` event of the workflow's event history (in event order, read "
    "through the SDK's fetch_history while the server runs) is a `write` applied: its result's `step` and "
    "`by`, a digest's id, `accepted` and `by`, or the feed's answer and `by`; a completion the server "
    "refused is in no event",
    "restate": "each `Notification: Run` entry of the invocation's journal (sys_journal through the admin "
    "API's /query, in journal order) with a `Success` result is a `write` applied: its value's `step` and "
    "`by`, a digest's id, `accepted` and `by`, or the feed's answer and `by`; a result proposed on a "
    "stream the server had closed is in no entry",
}

#: a history: step -> the executions whose result the engine recorded, in order
History = dict[str, tuple[str, ...]]


def by_of(step_name: str, value: dict[str, Any]) -> tuple[str, str]:
    """(step, execution) of one recorded result of the application (sim/conform/app.py)."""
    if "step" in value:
        return value["step"], value["by"]
    if "parts" in value:  # a digest: d@wN
        return "assemble", value["id"].split("@")[1]
    if "accepted" in value:
        return "accept", value["by"]
    return "post", value.get("by", "?")


def read(engine: str, workdir: Path, server: Any = None) -> History | None:
    """The engine's history of the run in `workdir`, or None where it is not read; an engine
    with a server reads it through the server's module (`results(workdir)`: the value of each
    step result the server recorded, in its order), while the server runs."""
    if engine == "langgraph":
        import ormsgpack

        rows = _rows(workdir / "langgraph.sqlite", "SELECT value FROM writes WHERE channel = '__return__' ORDER BY rowid")
        records = [by_of("", ormsgpack.unpackb(value)) for (value,) in rows]
    elif engine == "dbos":
        rows = _rows(workdir / "dbos.sqlite", "SELECT function_name, output FROM operation_outputs "
                     "WHERE output IS NOT NULL ORDER BY function_id")  # fmt: skip
        records = [by_of(name, pickle.loads(base64.b64decode(output))) for name, output in rows]  # the run's own data
    elif hasattr(server, "results"):  # Temporal's event history, Restate's journal
        records = [by_of("", value) for value in server.results(workdir)]
    else:
        return None
    return collect(records)


def _rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    if not path.exists():
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return list(db.execute(sql, ()))
    except sqlite3.OperationalError:
        return []
    finally:
        db.close()


def collect(records: list[tuple[str, str]]) -> History:
    out: dict[str, list[str]] = {step: [] for step in STEPS}
    for step, by in records:
        out.setdefault(step, []).append(by)
    return {step: tuple(bys) for step, bys in out.items()}


def from_trace(trace: Trace) -> History:
    """The model's history of the same kind: the writes it applied, by attempt."""
    records: list[tuple[str, str]] = []
    for e in trace.events:
        if e.kind is Kind.WRITE and write(e)["applied"]:
            who = f"w{e.attempt}"
            w = write(e)
            if w["record"] == "steps":
                records += [(f"s{step}", who) for step, *_ in w["steps"]]
            elif w["record"] == "candidate":
                records.append(("assemble", who))
            elif w["record"] == "confirmed":
                records.append(("post", who))
        elif e.kind is Kind.ACCEPTED:
            records.append(("accept", f"w{payload(e, Accepted)['producer']}"))
    return collect(records)


def render(history: History) -> str:
    return "; ".join(f"{step} {' '.join(bys) or '-'}" for step, bys in history.items())


def first_difference(engine: History, model: History) -> str | None:
    """The first event (by step, then by order) where the engine's history and the model's differ."""
    for step in STEPS:
        seen, want = engine.get(step, ()), model.get(step, ())
        for n in range(max(len(seen), len(want))):
            a = seen[n] if n < len(seen) else None
            b = want[n] if n < len(want) else None
            if a != b:
                return (f"{step}, record {n + 1}: the engine's by {a or 'nobody'}, "
                        f"sim's by {b or 'nobody'}")  # fmt: skip
    return None
