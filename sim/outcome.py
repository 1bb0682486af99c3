"""The outcome of a run, derived from its trace.

`violations` are the safety properties that broke and `finished` is the progress property
of that name, both read from `sim.properties`; the other fields are figures of the run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

from sim import properties
from sim.events import Accepted, Feed, payload, write
from sim.events import Newsletter as Started
from sim.properties.stale_write import superseded
from sim.trace import Event, Kind, Trace


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


#: the outcome's fields, in the order of `Outcome.to_json`
FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Outcome))


def what_happened(trace: Trace) -> Hashable:
    """What happened in a run, as one hashable value: equal for two runs with the same
    events, report versions, schedule, last tick and horizon flag, whatever their switches.
    The outcome is a function of it (`tests/test_sweep_perf.py` checks every sweep run) and
    so is the swimlane (`sim.render.grid`), so the sweep computes each once per distinct
    value: the 1,008 runs have 384 distinct values, their 864 fail-open runs 276.

    The events are encoded with `pickle` (a third of the cost of their `repr`): equal bytes
    decode to equal values of the same types, so two runs share a value only when their
    events are equal to the type (`True` is not `1`). The bytes also record which values are
    one shared object, so equal events may still encode differently: that costs a second
    computation, never a wrong one. The value is meant for this process only."""
    return encoded(trace.events), trace.versions, trace.schedule, trace.last_tick, trace.horizon_reached


def encoded(events: Iterable[Event]) -> bytes:
    """Events as bytes that are equal only for equal events (see `what_happened`)."""
    import pickle  # here, not at import: `sim scenarios` reads the outcome's fields only

    return pickle.dumps([(e.tick, e.kind.value, e.attempt, e.detail) for e in events], 5)


def outcome(trace: Trace) -> Outcome:
    attempts = 0
    calls: dict[int, int] = {}
    restored = rejected = stale_applied = posts = 0
    final = trace.final_content
    first_accepted: tuple[int, str] | None = None
    confirmed: dict[str, int] = {}
    letter = Newsletter(None, None, None)
    for e in trace.events:
        kind = e.kind
        if kind is Kind.COMPUTED:
            calls[e.attempt or 0] = calls.get(e.attempt or 0, 0) + 1
        elif kind is Kind.RESTORED:
            restored += 1
        elif kind is Kind.WRITE:
            w = write(e)
            if superseded(e, attempts):  # its writer was superseded (the attempts admitted so far)
                if w["applied"]:
                    stale_applied += 1
                else:
                    rejected += 1
            if w["store"] == "effect" and w["record"] == "confirmed" and w["applied"]:
                confirmed.setdefault(w["digest"], e.tick)
        elif kind is Kind.FEED:
            if payload(e, Feed)["answer"] == "applied":
                posts += 1
        elif kind is Kind.ACCEPTED:
            accepted = payload(e, Accepted)
            if first_accepted is None and tuple(accepted["built_from"]) == final:
                first_accepted = (e.tick, accepted["digest"])
        elif kind is Kind.ADMITTED:
            attempts += 1
        elif kind is Kind.NEWSLETTER:
            started = payload(e, Started)
            letter = Newsletter(e.tick, started["digest"], started["quote"])
    by_attempt = tuple(calls.get(n, 0) for n in range(1, attempts + 1))
    confirmed_tick = None if first_accepted is None else confirmed.get(first_accepted[1])
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
        violations=tuple(properties.violations(trace)),
        finished=properties.FINISHED.holds(trace),
        last_tick=trace.last_tick,
        horizon_reached=trace.horizon_reached,
    )
