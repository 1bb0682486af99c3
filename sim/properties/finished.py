"""finished (eventually): by the end of the run, some accepted digest built from the final
report has its announcement confirmed.

With two digests accepted for the final report (fencing and pins off), the confirmation of
either counts (docs/model.md §6, "finished"). Judged at the end of the
run: when it does not hold, its breaking event is the run's last event. It is the outcome's
`finished` field. It relies on version pins (with pins off a digest of a superseded report
can be accepted, and nothing rebuilds it) and on fencing tokens (see effects-confirmed).
"""

from __future__ import annotations

from collections.abc import Iterator

from sim.model.events import Accepted, payload, write
from sim.properties.base import EVENTUALLY, GUARDS, Property, register
from sim.engine.trace import Kind, Trace


def holds(trace: Trace) -> bool:
    """Whether an accepted digest built from the final report had its announcement confirmed."""
    final = trace.final_content
    final_digests: set[str] = set()
    confirmed: set[str] = set()
    for e in trace.events:
        if e.kind is Kind.ACCEPTED:
            accepted = payload(e, Accepted)
            if tuple(accepted["built_from"]) == final:
                final_digests.add(accepted["digest"])
        elif e.kind is Kind.WRITE:
            w = write(e)
            if w["store"] == "effect" and w["record"] == "confirmed" and w["applied"]:
                confirmed.add(w["digest"])
    return not final_digests.isdisjoint(confirmed)


def breaks(trace: Trace) -> Iterator[int]:
    """The run's last event, when the run ended unfinished."""
    if trace.events and not holds(trace):
        yield len(trace.events) - 1


def why(trace: Trace, index: int) -> str:
    return f"the run ended at t{trace.last_tick} with no accepted digest of the final report confirmed"


PROPERTY = register(Property(
    name="finished",
    temporal=EVENTUALLY,
    description="an accepted digest built from the final report had its announcement confirmed",
    breaks=breaks,
    why=why,
    guard=GUARDS["pins"],
    also=(GUARDS["fencing"],),
))  # fmt: skip
