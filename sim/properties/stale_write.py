"""stale-write (always): no protected store applies a write whose owner token is below the
epoch it meets.

The ground truth: a write is stale when its writer had been superseded, i.e. a later
attempt had been admitted by then (each admission publishes a new epoch). While the owner
tokens only grow, that is exactly "its token is below the epoch the store holds". Beyond the
article's model a controller whose token counter did not survive its restart
(`controller_state = "no-epoch"`) reissues tokens, and a superseded writer can then hold a
token equal to the epoch (docs/outside.md, case 9): the ground truth still sees it.

Guarded by fencing tokens: with fencing on, every protected store rejects such a write
(docs/model.md §2, "protected stores"), as long as tokens are never reissued.
"""

from __future__ import annotations

from typing import Final

from sim.model.events import write
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
from sim.engine.trace import Event, Kind, Trace


def superseded(e: Event, latest: int) -> bool:
    """The write event `e` carries a superseded token: its writer was admitted before the
    latest attempt admitted by then (`latest`, its number)."""
    return (e.attempt or 0) < latest


#: `Kind.ADMITTED` as a constant (compiled, a C static: docs/compiled.md)
_ADMITTED: Final = Kind.ADMITTED


def step(memo: Memo, e: Event, content: tuple[int, ...], position: int) -> tuple[Memo, bool]:
    """An applied write of a superseded writer breaks it. The memo: the number of the latest
    attempt admitted."""
    if e.kind is _ADMITTED:
        return e.attempt, False
    return memo, write(e)["applied"] and superseded(e, memo)


MONITOR = Monitor(frozenset({Kind.WRITE, Kind.ADMITTED}), step, start=0)


def why(trace: Trace, index: int) -> str:
    e = trace.events[index]
    d = write(e)
    if d["token"] < d["epoch"]:
        return f"token {d['token']} is below the epoch {d['epoch']}, and the store applied the write"
    latest = max(a.attempt or 0 for a in trace.events[:index] if a.kind is Kind.ADMITTED)
    return (
        f"#{e.attempt} was superseded by #{latest}, but its token {d['token']} is not below the "
        f"epoch {d['epoch']} (a token counter that started again), and the store applied the write"
    )


def arose(seen: Seen, e: Event) -> bool:
    """A superseded attempt tried a protected write (applied or not)."""
    return superseded(e, seen.admitted(e.tick))


PROPERTY: Property = register(Property(
    name="stale-write",
    temporal=ALWAYS,
    description="no protected store applied a write whose token was below the epoch",
    monitor=MONITOR,
    why=why,
    guard=GUARDS["fencing"],
    hazard=Hazard("an attempt tried a protected write with a token below the epoch", arose, frozenset({Kind.WRITE})),
))  # fmt: skip
