"""stale-write (always): no protected store applies a write whose owner token is below the
epoch it meets.

Guarded by fencing tokens: with fencing on, every protected store rejects such a write
(docs/model.md, "Writes and fencing").
"""

from __future__ import annotations

from collections.abc import Iterator

from sim.properties.base import ALWAYS, GUARDS, Hazard, Property, Seen, register
from sim.trace import Event, Kind, ReportHistory, Trace


def breaks(trace: Trace, report: ReportHistory) -> Iterator[int]:
    """Every applied write whose token was below the epoch it met."""
    for i, e in enumerate(trace.events):
        if e.kind is Kind.WRITE and e.detail["applied"] and e.detail["token"] < e.detail["epoch"]:
            yield i


def why(trace: Trace, report: ReportHistory, index: int) -> str:
    d = trace.events[index].detail
    return f"token {d['token']} is below the epoch {d['epoch']}, and the store applied the write"


def arose(seen: Seen, e: Event) -> bool:
    """An attempt tried a protected write with a token below the epoch (applied or not)."""
    return bool(e.detail["token"] < e.detail["epoch"])


PROPERTY = register(Property(
    name="stale-write",
    temporal=ALWAYS,
    description="no protected store applied a write whose token was below the epoch",
    breaks=breaks,
    why=why,
    guard=GUARDS["fencing"],
    hazard=Hazard("an attempt tried a protected write with a token below the epoch", arose, frozenset({Kind.WRITE})),
))  # fmt: skip
