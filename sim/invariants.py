"""The invariants of SPEC.md section 6: a registry of named checks over a trace.

Each check returns the first tick the invariant broke, or None. The checks read ground
truth from the trace (what each digest was really built from, which report was current),
never the model's own belief, so they also catch what a switched-off protection hides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from sim.trace import Kind, Trace


@dataclass(frozen=True, slots=True)
class Invariant:
    name: str
    description: str
    check: Callable[[Trace], int | None]


def _report_by_tick(trace: Trace) -> Callable[[int], tuple[int, ...]]:
    changes = [(e.tick, tuple(e.detail["content"])) for e in trace.events if e.kind is Kind.REPORT_CHANGED]
    first = trace.versions[0]

    def content_at(tick: int) -> tuple[int, ...]:
        content = first
        for at, new in changes:
            if at > tick:
                break
            content = new
        return content

    return content_at


def duplicate_effect(trace: Trace) -> int | None:
    applied: dict[str, int] = {}
    for e in trace.events:
        if e.kind is Kind.FEED and e.detail["answer"] == "applied":
            digest = e.detail["digest"]
            applied[digest] = applied.get(digest, 0) + 1
            if applied[digest] == 2:
                return e.tick
    return None


def stale_write(trace: Trace) -> int | None:
    for e in trace.events:
        if e.kind is Kind.WRITE and e.detail["applied"] and e.detail["token"] < e.detail["epoch"]:
            return e.tick
    return None


def wrong_acceptance(trace: Trace) -> int | None:
    content_at = _report_by_tick(trace)
    for e in trace.events:
        if e.kind is Kind.ACCEPTED and tuple(e.detail["built_from"]) != content_at(e.tick):
            return e.tick
    return None


def misused_dependant(trace: Trace) -> int | None:
    content_at = _report_by_tick(trace)
    for e in trace.events:
        if e.kind is Kind.NEWSLETTER:
            if not e.detail["accepted"] or tuple(e.detail["built_from"]) != content_at(e.tick):
                return e.tick
    return None


def two_acceptances(trace: Trace) -> int | None:
    content_at = _report_by_tick(trace)
    seen: set[tuple[int, ...]] = set()
    for e in trace.events:
        if e.kind is Kind.ACCEPTED:
            current = content_at(e.tick)
            if current in seen:
                return e.tick
            seen.add(current)
    return None


INVARIANTS: tuple[Invariant, ...] = (
    Invariant("duplicate-effect", "the feed applied at most one post per accepted digest", duplicate_effect),
    Invariant("stale-write", "no protected store applied a write whose token was below the epoch", stale_write),
    Invariant(
        "wrong-acceptance",
        "every accepted digest was built from the report content current when it was accepted",
        wrong_acceptance,
    ),
    Invariant(
        "misused-dependant",
        "the newsletter started only on an accepted digest built from the then-current report",
        misused_dependant,
    ),
    Invariant("two-acceptances", "no two acceptances while the same report version was current", two_acceptances),
)

BY_NAME = {inv.name: inv for inv in INVARIANTS}
NAMES = tuple(sorted(BY_NAME))

#: the protection that guards each invariant (SPEC 4 and the article's section 11).
GUARDED_BY = {
    "stale-write": "fencing",
    "wrong-acceptance": "pins",
    "two-acceptances": "pins",
    "duplicate-effect": "key",
    "misused-dependant": "rule",
}


def violations(trace: Trace) -> list[tuple[str, int]]:
    """(invariant name, first tick it broke) for every broken invariant, sorted by name."""
    out = []
    for name in NAMES:
        tick = BY_NAME[name].check(trace)
        if tick is not None:
            out.append((name, tick))
    return out
