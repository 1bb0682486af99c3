"""stale-write (always): no protected store applies a write whose owner token is below the
epoch it meets.

Guarded by fencing tokens: with fencing on, every protected store rejects such a write
(docs/model.md, "Writes and fencing").
"""

from __future__ import annotations

from sim.properties.base import (
    ALWAYS,
    GUARDS,
    Hazard,
    Memo,
    Monitor,
    Property,
    Seen,
    register,
)
from sim.trace import Event, Kind, ReportHistory, Trace


def step(memo: Memo, e: Event, content: tuple[int, ...], position: int) -> tuple[Memo, bool]:
    """An applied write whose token was below the epoch it met breaks it."""
    d = e.detail
    return memo, d["applied"] and d["token"] < d["epoch"]


MONITOR = Monitor(frozenset({Kind.WRITE}), step)


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
    monitor=MONITOR,
    why=why,
    guard=GUARDS["fencing"],
    hazard=Hazard("an attempt tried a protected write with a token below the epoch", arose, frozenset({Kind.WRITE})),
))  # fmt: skip
