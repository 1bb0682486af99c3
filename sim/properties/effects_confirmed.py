"""effects-confirmed (eventually): every intent recorded is confirmed by the end of the run.

An intent is an applied write of the record "intent" to the effect store; its confirmation
is a later applied write of the record "confirmed" for the same digest (docs/model.md, "The
announcement": the post is intent, send, confirmation). Each intent is an obligation of its
own: a confirmation written before it does not meet it.

Judged at the end of the run. The breaking events are the intents never confirmed, so the
tick it broke is the tick of the first unconfirmed intent: where the obligation arose that
the run left unmet. In `lost-announcement` that is t12, the intent of the stale #1, which
then dies after sending; nothing confirms its post.

Guarded by fencing tokens: the owner's successor finishes an inherited announcement (it
resends and confirms), so only an attempt that is no longer the owner can leave an intent
behind, and with fencing on its intent write is rejected.
"""

from __future__ import annotations

from collections.abc import Iterator

from sim.properties.base import EVENTUALLY, GUARDS, Property, register
from sim.trace import Kind, ReportHistory, Trace


def breaks(trace: Trace, report: ReportHistory) -> Iterator[int]:
    """Every applied intent write with no applied confirmation of its digest after it."""
    open_intents: dict[str, list[int]] = {}  # digest -> its intents not confirmed yet
    for i, e in enumerate(trace.events):
        d = e.detail
        if e.kind is Kind.WRITE and d["store"] == "effect" and d["applied"]:
            if d["record"] == "intent":
                open_intents.setdefault(d["digest"], []).append(i)
            elif d["record"] == "confirmed":
                open_intents.pop(d["digest"], None)
    yield from sorted(i for intents in open_intents.values() for i in intents)


def why(trace: Trace, report: ReportHistory, index: int) -> str:
    e = trace.events[index]
    return f"the intent for {e.detail['digest']} recorded at t{e.tick} was never confirmed (the run ended at t{trace.last_tick})"


PROPERTY = register(Property(
    name="effects-confirmed",
    temporal=EVENTUALLY,
    description="every intent recorded was confirmed by the end of the run",
    breaks=breaks,
    why=why,
    guard=GUARDS["fencing"],
))  # fmt: skip
