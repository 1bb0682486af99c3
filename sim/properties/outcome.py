"""The outcome of a run, derived from its trace.

`violations` are the safety properties that broke and `finished` is the progress property
of that name, both read from `sim.properties`; the other fields are figures of the run, read
from the engine's states (`Trace.states`: the tallies the last state keeps, the first state
that holds an acceptance's confirmation or the newsletter), not from a fold of the events.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sim import properties
from sim.engine.records import effect_key
from sim.engine.trace import Event, Trace, quoted

if TYPE_CHECKING:  # `sim scenarios` reads the outcome's fields only: no engine at import
    from sim.engine.state import State


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

    return pickle.dumps([(e.tick, e.kind._value_, e.attempt, e.detail) for e in events], 5)  # _value_: the plain attribute


def outcome(trace: Trace) -> Outcome:
    """The figures of a run, read from the engine's states (`Trace.states`): the tallies of the
    last state, the first acceptance of the final report and its confirmation from the first
    state that holds them, the newsletter from the first state in which it started."""
    last = trace.state_at(trace.last_tick)
    by_attempt = tuple(a.calls for a in last.attempts)
    first_accepted = first_acceptance(trace)
    confirmed_tick = None
    if first_accepted is not None:  # its last effect confirmed (the article's one announcement)
        n, last_effect = len(last.setup.receivers) - 1, last.setup.receivers[-1].name
        confirmed = (effect_key(first_accepted[1], n, last_effect), "confirmed")
        confirmed_tick = first_state(trace, lambda s: confirmed in s.effects)
    return Outcome(
        model_calls=sum(by_attempt),
        model_calls_by_attempt=by_attempt,
        steps_restored=last.restored,
        stale_writes_rejected=last.stale_refused,
        stale_writes_applied=last.stale_applied,
        posts_applied=sum(len(f.posts) for f in last.feeds),
        first_accepted_tick=None if first_accepted is None else first_accepted[0],
        confirmed_tick=confirmed_tick,
        newsletter=newsletter(trace),
        violations=tuple(properties.violations(trace)),
        finished=properties.FINISHED.holds(trace),
        last_tick=trace.last_tick,
        horizon_reached=trace.horizon_reached,
    )


def first_state(trace: Trace, holds: Callable[[State], bool]) -> int | None:
    """The first tick whose state `holds` (None: none)."""
    first = trace.last_tick + 1 - len(trace.states)
    for i, s in enumerate(trace.states):
        if holds(s):
            return first + i
    return None


def first_acceptance(trace: Trace) -> tuple[int, str] | None:
    """(tick, digest) of the first acceptance of a digest built from the final report: the
    verdict its producer holds (which a storage loss of the acceptance records leaves), the
    earliest, and of two in one tick the one assessed first (candidates are assessed in write
    order)."""
    final = trace.final_content
    last = trace.state_at(trace.last_tick)
    best: tuple[int, str] | None = None
    for c in last.candidates:
        given = last.attempts[c.attempt - 1].verdict
        if c.built_from == final and given is not None and given[0] and (best is None or given[1] < best[0]):
            best = (given[1], c.digest)
    return best


def newsletter(trace: Trace) -> Newsletter:
    """The tick the newsletter started, its digest and the figure it quotes (the first state
    that holds it)."""
    start = first_state(trace, lambda s: s.newsletter is not None)
    if start is None:
        return Newsletter(None, None, None)
    s = trace.state_at(start)
    assert s.newsletter is not None
    part = next(c for c in s.candidates if c.digest == s.newsletter).parts[s.setup.figure]
    return Newsletter(start, s.newsletter, quoted(part.content, part.truth.wrong))
