"""The outcome of a run, derived from its trace (SPEC.md section 8 names every field)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from sim import invariants
from sim.trace import Kind, Trace


@dataclass(frozen=True, slots=True)
class Newsletter:
    start_tick: int | None
    digest: str | None
    quoted_revenue: str | None


@dataclass(frozen=True, slots=True)
class Outcome:
    model_calls: int
    model_calls_by_attempt: tuple[int, ...]
    steps_restored: int
    stale_writes_rejected: int
    stale_writes_applied: int
    posts_applied: int
    first_accepted_tick: int | None
    confirmed_tick: int | None
    newsletter: Newsletter
    violations: tuple[tuple[str, int], ...]
    finished: bool
    last_tick: int
    horizon_reached: bool

    @property
    def broken(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.violations)

    def to_json(self) -> dict[str, Any]:
        return {
            "model_calls": self.model_calls,
            "model_calls_by_attempt": list(self.model_calls_by_attempt),
            "steps_restored": self.steps_restored,
            "stale_writes_rejected": self.stale_writes_rejected,
            "stale_writes_applied": self.stale_writes_applied,
            "posts_applied": self.posts_applied,
            "first_accepted_tick": self.first_accepted_tick,
            "confirmed_tick": self.confirmed_tick,
            "newsletter": {
                "start_tick": self.newsletter.start_tick,
                "digest": self.newsletter.digest,
                "quoted_revenue": self.newsletter.quoted_revenue,
            },
            "violations": [{"invariant": name, "tick": tick} for name, tick in self.violations],
            "finished": self.finished,
            "last_tick": self.last_tick,
            "horizon_reached": self.horizon_reached,
        }


#: the outcome's fields, in the order of SPEC.md section 8 and of `Outcome.to_json`
FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Outcome))


def outcome(trace: Trace) -> Outcome:
    attempts = 0
    calls: dict[int, int] = {}
    restored = rejected = stale_applied = posts = 0
    final = trace.final_content
    first_accepted: tuple[int, str] | None = None
    final_digests: list[str] = []
    confirmed: dict[str, int] = {}
    letter = Newsletter(None, None, None)
    for e in trace.events:
        kind = e.kind
        if kind is Kind.COMPUTED:
            calls[e.attempt or 0] = calls.get(e.attempt or 0, 0) + 1
        elif kind is Kind.RESTORED:
            restored += 1
        elif kind is Kind.WRITE:
            d = e.detail
            if d["token"] < d["epoch"]:
                if d["applied"]:
                    stale_applied += 1
                else:
                    rejected += 1
            if d["store"] == "effect" and d["record"] == "confirmed" and d["applied"]:
                confirmed.setdefault(d["digest"], e.tick)
        elif kind is Kind.FEED:
            if e.detail["answer"] == "applied":
                posts += 1
        elif kind is Kind.ACCEPTED:
            if tuple(e.detail["built_from"]) == final:
                final_digests.append(e.detail["digest"])
                if first_accepted is None:
                    first_accepted = (e.tick, e.detail["digest"])
        elif kind is Kind.ADMITTED:
            attempts += 1
        elif kind is Kind.NEWSLETTER:
            letter = Newsletter(e.tick, e.detail["digest"], e.detail["quote"])
    by_attempt = tuple(calls.get(n, 0) for n in range(1, attempts + 1))
    confirmed_tick = None if first_accepted is None else confirmed.get(first_accepted[1])
    # SPEC 6: finished when *an* accepted digest for the final report has its announcement
    # confirmed (with two such digests, the second one's confirmation counts too)
    finished = any(digest in confirmed for digest in final_digests)
    return Outcome(
        model_calls=sum(by_attempt),
        model_calls_by_attempt=by_attempt,
        steps_restored=restored,
        stale_writes_rejected=rejected,
        stale_writes_applied=stale_applied,
        posts_applied=posts,
        first_accepted_tick=None if first_accepted is None else first_accepted[0],
        confirmed_tick=confirmed_tick,
        newsletter=letter,
        violations=tuple(invariants.violations(trace)),
        finished=finished,
        last_tick=trace.last_tick,
        horizon_reached=trace.horizon_reached,
    )
