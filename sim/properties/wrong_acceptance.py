"""wrong-acceptance (always): every digest accepted was built from the report content
current when it was accepted.

Guarded by version pins: with pins on, the assessor compares the digest's pinned version and
its parts' section hashes with the current report (docs/model.md §5.3 a).
"""

from __future__ import annotations

from sim.model.events import Accepted, Newsletter, Refused, payload
from sim.properties.base import (
    ALWAYS,
    GUARDS,
    Hazard,
    Memo,
    Monitor,
    Property,
    Seen,
    register,
    section_version,
)
from sim.engine.trace import Event, Kind, Trace, revenue


def step(memo: Memo, e: Event, content: tuple[int, ...], position: int) -> tuple[Memo, bool]:
    """An acceptance of a digest not built from the report current at its tick breaks it."""
    return memo, tuple(payload(e, Accepted)["built_from"]) != content


MONITOR = Monitor(frozenset({Kind.ACCEPTED}), step)


def stale_parts(trace: Trace, index: int) -> str:
    """"built with section N from vK (says X), ... while the report was vM": the parts of
    the event's digest (an acceptance's, or the one the newsletter started on) not built from
    the report current at its tick."""
    e = trace.events[index]
    built = tuple(payload(e, Accepted)["built_from"] if e.kind is Kind.ACCEPTED else payload(e, Newsletter)["built_from"])
    current = trace.content_at(e.tick)
    stale = [
        f"section {s + 1} from v{section_version(trace, s, built[s])}"
        + (f" (says {revenue(built[s])})" if s == 1 else "")
        for s in range(len(built)) if built[s] != current[s]
    ]  # fmt: skip
    return f"built with {', '.join(stale)} while the report was v{trace.version_at(e.tick)}"


def why(trace: Trace, index: int) -> str:
    return f"it was {stale_parts(trace, index)}"


def arose(seen: Seen, e: Event) -> bool:
    """A candidate not built from the current report was assessed (accepted or refused)."""
    digest = payload(e, Accepted)["digest"] if e.kind is Kind.ACCEPTED else payload(e, Refused)["digest"]
    return seen.built(e.tick, digest) != seen.content(e.tick)


PROPERTY: Property = register(Property(
    name="wrong-acceptance",
    temporal=ALWAYS,
    description="every accepted digest was built from the report content current when it was accepted",
    monitor=MONITOR,
    why=why,
    guard=GUARDS["pins"],
    hazard=Hazard("a candidate not built from the current report was assessed", arose,
                  frozenset({Kind.ACCEPTED, Kind.REFUSED})),
))  # fmt: skip
