"""What the renderers show of a run at the end of each tick: one declared mapping from the
engine's own state.

The engine publishes, with each tick's events, the state it reached at the end of the tick
(`Trace.states`, `Trace.state_at`). The ITF export (`sim.render.itf`, every variable) and the
three lifecycles of the run page and `sim trace --step` (`sim.render.lifecycle`) show what
`VARIABLES` below reads from that state, one function per variable, so they show what the
engine holds: after a storage loss, an expired key, a retraction or a controller restart
too. Nothing here rebuilds a record from the events.

What the state does not hold is read from the events as what happened (`History`): why a
candidate was refused
(its `refused` event's reason; the state says which candidates were refused, and when), and
what the tick itself did (`At.events`: an intent recorded, a post applied or answered as a
repeat in this tick). The tick the newsletter started is the first state that holds it, and
the model calls each attempt has made so far its state's tally (`AttemptState.calls`).

The values are plain: ints, strings, bools, lists, records (dicts, their fields in the order
docs/trace.md lists them) and `Map`s (a mapping, as (key, value) pairs in the order shown);
ITF encodes them as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sim.engine.records import knows
from sim.engine.state import AttemptState, Setup, State, find_candidate
from sim.model.events import Refused, payload
from sim.properties import violations
from sim.engine.trace import Event, Kind, Trace, quoted, revenue

Record = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Map:
    """A mapping shown in order: (key, value) pairs (ITF's `#map`)."""

    pairs: tuple[tuple[Any, Any], ...]


@dataclass(frozen=True, slots=True)
class History:
    """What happened up to a tick that the state does not keep."""

    calls: tuple[int, ...]  # model calls so far, per attempt (#n is calls[n - 1])
    reasons: Mapping[str, str]  # why each refused candidate was refused, by digest
    started: int  # the tick the newsletter started (-1: not yet)


@dataclass(frozen=True, slots=True)
class At:
    """One tick of a run as the readers see it: the engine's state at its end, and its events."""

    tick: int
    state: State
    events: tuple[Event, ...]  # what happened in this tick, in order
    broken: tuple[str, ...]  # the properties broken by the end of this tick
    history: History


def ticks(trace: Trace) -> Iterator[At]:
    """Each tick t0..t(last) of the run: the engine's state at its end, with its events."""
    broke_at = dict(violations(trace))
    by_tick: dict[int, list[Event]] = {}
    for e in trace.events:
        by_tick.setdefault(e.tick, []).append(e)
    reasons = {r["digest"]: r["reason"] for r in (payload(e, Refused) for e in trace.events if e.kind is Kind.REFUSED)}
    started = -1
    for tick in range(trace.last_tick + 1):
        state = trace.state_at(tick)
        if started < 0 and state.newsletter is not None:
            started = tick
        broken = tuple(sorted(name for name, at in broke_at.items() if at <= tick))
        calls = tuple(a.calls for a in state.attempts)
        yield At(tick, state, tuple(by_tick.get(tick, ())), broken, History(calls, reasons, started))


# -- the variables ---------------------------------------------------------------------------
def one_based(index: int | None) -> int:
    """A 0-based version index as shown: 1-based, 0 for none (pins off)."""
    return 0 if index is None else index + 1


def report(at: At) -> Record:
    content = at.state.content
    return {"version": at.state.version + 1, "content": list(content),
            "revenue": revenue(content[1]) if len(content) > 1 else ""}  # fmt: skip


def epoch(at: At) -> int:
    """The epoch the stores compare tokens with (0 before the first admission)."""
    return at.state.epoch if at.state.attempts else 0


def owner(at: At) -> int:
    return at.state.owner or 0


def attempt(at: At, a: AttemptState) -> Record:
    return {
        "token": a.token, "pin": one_based(a.pin), "status": a.status.value,
        "silent": a.silent_since is not None, "model_calls": at.history.calls[a.n - 1],
        "reconcile": a.inherited or "",
    }  # fmt: skip


def attempts(at: At) -> Map:
    return Map(tuple((a.n, attempt(at, a)) for a in at.state.attempts))


def journal_key(setup: Setup, key: int | tuple[int, ...]) -> int | tuple[int, ...]:
    """A journal key as shown: the step 1-based, then what the engine keys it by (the section's
    content revision with pins on; beyond the article's model the next section's revision and
    the code version, 1-based as every output writes it)."""
    if isinstance(key, int):
        return key + 1
    step, *rest = key
    if setup.journal_code:
        rest[-1] += 1
    return (step + 1, *rest) if rest else step + 1


def _sort_key(pair: tuple[Any, Any]) -> tuple[int, ...]:
    key = pair[0]
    return (key,) if isinstance(key, int) else tuple(key)


def journal(at: At) -> Map:
    setup = at.state.setup
    rows = [(journal_key(setup, key), {"result": r.result, "content": r.content, "by": r.attempt})
            for key, r in at.state.journal]  # fmt: skip
    return Map(tuple(sorted(rows, key=_sort_key)))


def candidates(at: At) -> list[Record]:
    return [
        {"digest": c.digest, "attempt": c.attempt, "token": c.token, "pin": one_based(c.pin),
         "parts": [p.result for p in c.parts], "built_from": list(c.built_from)}
        for c in at.state.candidates
    ]  # fmt: skip


def acceptances(at: At) -> list[Record]:
    return [{"digest": a.digest, "version": one_based(a.version), "tick": a.tick} for a in at.state.acceptances]


def verdict(state: State, digest: str) -> tuple[bool, int] | None:
    """The verdict the controller gave a candidate, as its producer holds it (None: none yet).
    The producer keeps it after a storage loss takes the acceptance records."""
    return state.attempts[find_candidate(state.candidates, digest).attempt - 1].verdict


def refusals(at: At) -> list[Record]:
    out = []
    for c in at.state.candidates:
        given = verdict(at.state, c.digest)
        if given is not None and not given[0]:
            out.append({"digest": c.digest, "reason": at.history.reasons[c.digest], "tick": given[1]})
    return out


def effects(at: At) -> Map:
    return Map(tuple(sorted(at.state.effects)))


def feed(at: At) -> Record:
    """The posts the feed applied, in order, and the keys it still knows at this tick (a key
    past its retention is forgotten: `records.knows`); with compensate=yes (beyond the
    article's model) the posts a correction retracted too."""
    setup, f = at.state.setup, at.state.feed
    known = sorted((key, post) for key, _, post, since in f.remembered if knows(since, at.tick, setup.retention))
    out: Record = {"posts": [{"post": post, "digest": params} for post, params in f.posts], "keys": Map(tuple(known))}
    if setup.compensate:
        out["retracted"] = list(f.retracted)
    return out


def newsletter(at: At) -> Record:
    s = at.state
    ready = at.tick >= s.setup.newsletter_ready or s.newsletter is not None
    if s.newsletter is None:
        return {"ready": ready, "started": False, "tick": -1, "digest": "", "quote": ""}
    part = find_candidate(s.candidates, s.newsletter).parts[s.setup.figure]
    quote = quoted(part.content, part.truth.wrong)
    return {"ready": ready, "started": True, "tick": at.history.started, "digest": s.newsletter, "quote": quote}


def model_calls(at: At) -> int:
    return sum(at.history.calls)


#: what the readers show of the state at the end of a tick, variable by variable, in the
#: order the ITF export lists them (docs/trace.md, "ITF export")
VARIABLES: dict[str, Callable[[At], Any]] = {
    "tick": lambda at: at.tick,
    "report": report,
    "epoch": epoch,
    "owner": owner,
    "attempts": attempts,
    "journal": journal,
    "candidates": candidates,
    "acceptances": acceptances,
    "refusals": refusals,
    "effects": effects,
    "feed": feed,
    "newsletter": newsletter,
    "model_calls": model_calls,
}

__all__ = ["VARIABLES", "At", "History", "Map", "Record", "ticks", "verdict"]
