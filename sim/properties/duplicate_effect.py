"""duplicate-effect (always): the feed applies at most one post per accepted digest.

Guarded by the per-operation post key: the feed remembers the key `announce/<digest>` and
answers a resend or a second copy with the post it already applied (docs/model.md, "The
announcement").
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
    add,
    register,
)
from sim.trace import Event, Kind, ReportHistory, Trace


def step(memo: Memo, e: Event, content: tuple[int, ...], position: int) -> tuple[Memo, bool]:
    """A post the feed applied for a digest it had applied a post for already breaks it
    (the memo: the digests the feed applied a post for, sorted)."""
    if e.detail["answer"] != "applied":
        return memo, False
    digest = e.detail["digest"]
    return add(memo, digest), digest in memo


MONITOR = Monitor(frozenset({Kind.FEED}), step)


def why(trace: Trace, report: ReportHistory, index: int) -> str:
    d = trace.events[index].detail
    earlier = [
        x for x in trace.events[:index]
        if x.kind is Kind.FEED and x.detail["answer"] == "applied" and x.detail["digest"] == d["digest"]
    ]  # fmt: skip
    first = f"; the first was {earlier[0].detail['post']} at t{earlier[0].tick}" if earlier else ""
    key = "with no key" if d["key"] is None else f"under key {d['key']}"
    return f"the feed applied a second post ({d['post']}) for {d['digest']}, sent {key}{first}"


def arose(seen: Seen, e: Event) -> bool:
    """The feed received an operation again after it had applied it once (a resend or a
    second copy, whatever its answer)."""
    return e.detail["digest"] in seen.applied


PROPERTY = register(Property(
    name="duplicate-effect",
    temporal=ALWAYS,
    description="the feed applied at most one post per accepted digest",
    monitor=MONITOR,
    why=why,
    guard=GUARDS["key"],
    hazard=Hazard("the feed received an operation again after applying it once", arose, frozenset({Kind.FEED})),
))  # fmt: skip
