"""The invariants of SPEC.md section 6: a registry of named checks over a trace.

Each check yields the index of every trace event that breaks its invariant, in trace order;
the first one gives the tick the invariant broke. The verdicts (`violations`) and the
swimlane's "!" marks (`breaking_events`) both come from these generators, so there is one
definition of each invariant. The checks read ground truth from the trace (what each digest
was really built from, which report was current), never the model's own belief, so they
also catch what a switched-off protection hides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from sim.trace import Kind, ReportHistory, Trace

Check = Callable[[Trace, ReportHistory], Iterator[int]]


@dataclass(frozen=True, slots=True)
class Invariant:
    name: str
    description: str
    breaks: Check

    def first_tick(self, trace: Trace, report: ReportHistory | None = None) -> int | None:
        """The tick it first broke, or None when it holds."""
        for index in self.breaks(trace, report or ReportHistory(trace)):
            return trace.events[index].tick
        return None


def duplicate_effect(trace: Trace, report: ReportHistory) -> Iterator[int]:
    """Every post the feed applied beyond the first for one accepted digest."""
    applied: set[str] = set()
    for i, e in enumerate(trace.events):
        if e.kind is Kind.FEED and e.detail["answer"] == "applied":
            digest = e.detail["digest"]
            if digest in applied:
                yield i
            applied.add(digest)


def stale_write(trace: Trace, report: ReportHistory) -> Iterator[int]:
    """Every applied write whose token was below the epoch it met."""
    for i, e in enumerate(trace.events):
        if e.kind is Kind.WRITE and e.detail["applied"] and e.detail["token"] < e.detail["epoch"]:
            yield i


def wrong_acceptance(trace: Trace, report: ReportHistory) -> Iterator[int]:
    """Every acceptance of a digest not built from the report current at that tick."""
    for i, e in enumerate(trace.events):
        if e.kind is Kind.ACCEPTED and tuple(e.detail["built_from"]) != report.at(e.tick):
            yield i


def misused_dependant(trace: Trace, report: ReportHistory) -> Iterator[int]:
    """The newsletter's start, if it took a digest never accepted or built from an old report."""
    for i, e in enumerate(trace.events):
        if e.kind is Kind.NEWSLETTER and (
            not e.detail["accepted"] or tuple(e.detail["built_from"]) != report.at(e.tick)
        ):
            yield i


def two_acceptances(trace: Trace, report: ReportHistory) -> Iterator[int]:
    """Every acceptance while a digest was already accepted under the same report content."""
    seen: set[tuple[int, ...]] = set()
    for i, e in enumerate(trace.events):
        if e.kind is Kind.ACCEPTED:
            current = report.at(e.tick)
            if current in seen:
                yield i
            seen.add(current)


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
    report = ReportHistory(trace)
    out = []
    for name in NAMES:
        tick = BY_NAME[name].first_tick(trace, report)
        if tick is not None:
            out.append((name, tick))
    return out


def breaking_events(trace: Trace) -> dict[int, tuple[str, ...]]:
    """Event index -> the invariants that event breaks (every instance, not only the first)."""
    report = ReportHistory(trace)
    out: dict[int, list[str]] = {}
    for name in NAMES:
        for index in BY_NAME[name].breaks(trace, report):
            out.setdefault(index, []).append(name)
    return {index: tuple(out[index]) for index in sorted(out)}
