"""two-acceptances (always): no two acceptances while the same report version is current.

Guarded by version pins: with pins on, the assessor refuses a candidate when a digest is
already accepted for the current version (docs/model.md §5.3 a).
"""

from __future__ import annotations

from sim.model.events import Accepted, Refused, payload
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
from sim.engine.trace import Event, Kind, Trace


def step(memo: Memo, e: Event, content: tuple[int, ...], position: int) -> tuple[Memo, bool]:
    """An acceptance while a digest was already accepted under the same report content
    breaks it (the memo: the contents some digest was accepted under, sorted)."""
    return add(memo, content), content in memo


MONITOR = Monitor(frozenset({Kind.ACCEPTED}), step)


def why(trace: Trace, index: int) -> str:
    e = trace.events[index]
    current = trace.content_at(e.tick)
    before = [
        x for x in trace.events[:index]
        if x.kind is Kind.ACCEPTED and trace.content_at(x.tick) == current
    ]  # fmt: skip
    other = f"{payload(before[0], Accepted)['digest']} at t{before[0].tick}" if before else "another digest"
    return f"{other} was already accepted while the same report (v{trace.version_at(e.tick)}) was current"


def arose(seen: Seen, e: Event) -> bool:
    """A candidate was assessed while a digest was already accepted for the current report."""
    digest = payload(e, Accepted)["digest"] if e.kind is Kind.ACCEPTED else payload(e, Refused)["digest"]
    return seen.content(e.tick) in seen.accepted_before(e.tick, digest)


PROPERTY: Property = register(Property(
    name="two-acceptances",
    temporal=ALWAYS,
    description="no two acceptances while the same report version was current",
    monitor=MONITOR,
    why=why,
    guard=GUARDS["pins"],
    hazard=Hazard("a candidate was assessed while a digest was already accepted for the current report",
                  arose, frozenset({Kind.ACCEPTED, Kind.REFUSED})),
))  # fmt: skip
