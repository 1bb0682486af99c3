"""effects-confirmed (eventually): every intent recorded is confirmed by the end of the run.

An intent is an applied write of the record "intent" to the effect store; its confirmation
is a later applied write of the record "confirmed" for the same digest (docs/model.md
§5.4: the post is intent, send, confirmation). Each intent is an obligation of its
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

from sim.model.events import operation, write
from sim.properties.base import EVENTUALLY, GUARDS, Memo, Monitor, Property, register
from sim.engine.trace import Event, Kind, Trace


def step(memo: Memo, e: Event, content: tuple[int, ...], position: int) -> tuple[Memo, bool]:
    """Follow the intents not confirmed yet. The memo: (digest, positions of its open
    intents) pairs, sorted by digest; an applied confirmation meets every open intent of
    its digest."""
    w = write(e)
    if w["store"] != "effect" or not w["applied"]:
        return memo, False
    digest = operation(w)
    rest = tuple(pair for pair in memo if pair[0] != digest)
    if w["record"] == "confirmed":
        return rest, False
    earlier = next((positions for known, positions in memo if known == digest), ())
    return tuple(sorted((*rest, (digest, (*earlier, position))))), False


def end(memo: Memo) -> tuple[int, ...]:
    """Once the run is over: every intent never confirmed breaks it, in order."""
    return tuple(sorted(p for _, positions in memo for p in positions))


MONITOR = Monitor(frozenset({Kind.WRITE}), step, end=end)


def why(trace: Trace, index: int) -> str:
    e = trace.events[index]
    w = write(e)
    assert w["store"] == "effect"  # its breaking events are intents
    return f"the intent for {w['digest']} recorded at t{e.tick} was never confirmed (the run ended at t{trace.last_tick})"


PROPERTY: Property = register(Property(
    name="effects-confirmed",
    temporal=EVENTUALLY,
    description="every intent recorded was confirmed by the end of the run",
    monitor=MONITOR,
    why=why,
    guard=GUARDS["fencing"],
))  # fmt: skip
