"""The state of a run at every tick, derived once from its trace.

The trace's events are folded tick by tick into the state of the world at the end of each
tick (`World`, `fold`): the report's version, the epoch and owner, each attempt, the
journal, the candidates, acceptances and refusals, the effect records, the feed and the
newsletter. Two views read that one fold:

- the ITF export (`sim.render.itf.states`): every variable, in ITF's encodings;
- the three lifecycles (`lifecycles`), which the run page (`sim trace --html`) shows under
  its tick slider: each attempt's (running, UNKNOWN, refused, fenced, replaced, done), each
  artifact's (candidate, accepted, refused, superseded) and each effect's (intended,
  applied, unconfirmed, confirmed), each item with what changed since the previous tick.

The states (docs/model.md §3, docs/trace.md "The state at each tick"):

- attempt: its status as the controller records it (`EventKind.status`: running, UNKNOWN,
  refused, fenced, done), except that a running attempt whose token is below the epoch (a
  successor owns the work, and it was never suspected) is *replaced*;
- artifact (a digest): *candidate* once written, *accepted* or *refused* by the controller,
  and *superseded* while accepted but built from other content than the report's current
  one (it stays accepted as history; it is no longer dependable for the newest input);
- effect (a digest's announcement): *intended* in the tick its intent is recorded, *applied*
  in a tick the feed applies or repeats its post, *confirmed* once the confirmation is
  recorded, and *unconfirmed* in every other tick after its intent (it may or may not have
  happened).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sim.engine.records import JournalKey, journal_key
from sim.events import (
    EVENT_KINDS,
    Accepted,
    Admitted,
    CandidateWrite,
    Computed,
    EffectWrite,
    Feed,
    JournalWrite,
    Newsletter,
    Payload,
    Refused,
    ReportChanged,
    Write,
    read,
)
from sim.properties import violations
from sim.trace import Event, Trace

#: the three lifecycles, in the order a page lists them, and their states in lifecycle order.
KINDS = ("attempts", "artifacts", "effects")
STATES: dict[str, tuple[str, ...]] = {
    "attempts": ("running", "UNKNOWN", "refused", "fenced", "replaced", "done"),
    "artifacts": ("candidate", "accepted", "refused", "superseded"),
    "effects": ("intended", "applied", "unconfirmed", "confirmed"),
}


class World:
    """The state variables, folded event by event from each event's declared payload."""

    def __init__(self, trace: Trace) -> None:
        self.pins = trace.switches.pins.value == "on"
        # beyond the article's model: a receiver with no idempotency remembers no key
        self.remembers = trace.switches.knob("receiver") == "idempotent"
        self.version = 1
        self.content: tuple[int, ...] = trace.versions[0]
        self.epoch = 0
        self.owner = 0
        self.attempts: dict[int, dict[str, Any]] = {}
        self.journal: dict[JournalKey, dict[str, Any]] = {}
        self.candidates: list[dict[str, Any]] = []
        self.acceptances: list[dict[str, Any]] = []
        self.refusals: list[dict[str, Any]] = []
        self.effects: dict[str, str] = {}
        self.posts: list[dict[str, str]] = []
        self.keys: dict[str, str] = {}
        self.letter: dict[str, Any] = {"ready": False, "started": False, "tick": -1, "digest": "", "quote": ""}
        self.calls = 0
        # for the lifecycles: what each accepted digest was built from, and the digests whose
        # intent was recorded, or whose post the feed applied or repeated, in this tick
        self.built_from: dict[str, tuple[int, ...]] = {}
        self.intended_now: set[str] = set()
        self.posted_now: dict[str, str] = {}

    def begin(self, tick: int) -> None:
        """A new tick: nothing of it has happened yet."""
        self.intended_now = set()
        self.posted_now = {}

    def apply(self, e: Event) -> None:
        """Fold one event: its records first, then what its kind does to its attempt."""
        n = e.attempt or 0
        self._records(read(e), n, e.tick)
        kind = EVENT_KINDS[e.kind]
        if kind.status is not None:
            self.attempts[n]["status"] = kind.status
        if kind.silent is not None:
            self.attempts[n]["silent"] = kind.silent

    def _records(self, p: Payload, n: int, tick: int) -> None:
        match p:
            case ReportChanged():
                self.version, self.content = p.version, tuple(p.content)
            case Admitted():
                self.epoch, self.owner = p.token, n
                self.attempts[n] = {
                    "token": p.token, "pin": p.pin or 0, "status": "running",
                    "silent": False, "model_calls": 0, "reconcile": p.reconcile or "",
                }  # fmt: skip
            case Computed():
                self.attempts[n]["model_calls"] += 1
                self.calls += 1
            case Write(applied=True):
                self._write(p, n)
            case Accepted():
                self.acceptances.append({"digest": p.digest, "version": p.version or 0, "tick": tick})
                self.built_from[p.digest] = tuple(p.built_from)
            case Refused():
                self.refusals.append({"digest": p.digest, "reason": p.reason, "tick": tick})
            case Feed(answer="applied" | "repeat", post=str(post)):
                self.posted_now[p.digest] = post if p.answer == "applied" else f"={post}"
                if p.answer == "applied":
                    self.posts.append({"post": post, "digest": p.digest})
                    if p.key is not None and self.remembers:
                        self.keys[p.key] = post
            case Newsletter():
                self.letter = {"ready": True, "started": True, "tick": tick, "digest": p.digest, "quote": p.quote}

    def _write(self, w: Write, n: int) -> None:
        """An applied protected write: its step records, its candidate or its effect record."""
        if isinstance(w, (JournalWrite, CandidateWrite)):
            for step, result, rev in w.steps:
                key = journal_key(step, rev if self.pins else None)
                self.journal[key] = {"result": result, "content": rev, "by": n}
        if isinstance(w, CandidateWrite):
            self.candidates.append({
                "digest": w.digest, "attempt": n, "token": w.token, "pin": w.pin or 0,
                "parts": [p[0] for p in w.parts], "built_from": [p[1] for p in w.parts],
            })  # fmt: skip
        elif isinstance(w, EffectWrite):
            self.effects[w.digest] = w.record
            if w.record == "intent":
                self.intended_now.add(w.digest)


@dataclass(frozen=True, slots=True)
class Tick:
    """The world at the end of one tick, and what that tick did."""

    tick: int
    world: World  # the same object every tick: read it before the next one is folded
    events: tuple[Event, ...]
    broken: tuple[str, ...]  # the invariants broken by the end of this tick


def fold(trace: Trace) -> Iterator[Tick]:
    """The world after each tick t0..t(last), folded once from the trace's events."""
    broke_at = dict(violations(trace))
    by_tick: dict[int, list[Event]] = {}
    for e in trace.events:
        by_tick.setdefault(e.tick, []).append(e)
    world = World(trace)
    for tick in range(trace.last_tick + 1):
        world.begin(tick)
        events = by_tick.get(tick, [])
        for e in events:
            world.apply(e)
        if tick >= trace.schedule.newsletter_ready:
            world.letter["ready"] = True
        yield Tick(tick, world, tuple(events), tuple(sorted(name for name, at in broke_at.items() if at <= tick)))


# -- the three lifecycles ------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Item:
    """One attempt, artifact or effect at the end of a tick."""

    key: str  # "#2", "d2", "d2" (the digest whose announcement it is)
    state: str
    detail: str
    #: its state at the end of the previous tick: "" when it did not exist yet
    before: str

    @property
    def changed(self) -> bool:
        return self.state != self.before

    def to_json(self) -> list[str]:
        return [self.key, self.state, self.detail, self.before]


@dataclass(frozen=True, slots=True)
class TickState:
    """The three lifecycles at the end of a tick."""

    tick: int
    report: int  # the report's version
    owner: int  # the attempt that owns the work (0: none yet)
    attempts: tuple[Item, ...]
    artifacts: tuple[Item, ...]
    effects: tuple[Item, ...]
    broken: tuple[str, ...]

    def items(self, kind: str) -> tuple[Item, ...]:
        return {"attempts": self.attempts, "artifacts": self.artifacts, "effects": self.effects}[kind]

    def find(self, kind: str, key: str) -> Item | None:
        return next((i for i in self.items(kind) if i.key == key), None)


def _attempts(w: World) -> list[tuple[str, str, str]]:
    out = []
    for n, a in sorted(w.attempts.items()):
        state = a["status"]
        if state == "running" and a["token"] < w.epoch:
            state = "replaced"
        notes = [f"T{a['token']}", "owner" if n == w.owner else "", "silent" if a["silent"] else "",
                 f"{a['model_calls']} model call{'s' if a['model_calls'] != 1 else ''}"]  # fmt: skip
        out.append((f"#{n}", state, ", ".join(x for x in notes if x)))
    return out


def _artifacts(w: World) -> list[tuple[str, str, str]]:
    accepted = {a["digest"]: a for a in w.acceptances}
    refused = {r["digest"]: r for r in w.refusals}
    out = []
    for c in w.candidates:
        d = c["digest"]
        detail = f"by #{c['attempt']}"
        if d in accepted:
            version = accepted[d]["version"]
            state = "accepted"
            detail += f", accepted at t{accepted[d]['tick']}" + (f" for v{version}" if version else "")
            if w.built_from.get(d, w.content) != w.content:
                state = "superseded"
                detail += f"; the report is now v{w.version}"
        elif d in refused:
            state, detail = "refused", detail + f": {refused[d]['reason']}"
        else:
            state = "candidate"
        out.append((d, state, detail))
    return out


def _effects(w: World) -> list[tuple[str, str, str]]:
    posted = {p["digest"]: p["post"] for p in w.posts}
    out = []
    for d, record in sorted(w.effects.items()):
        if record == "confirmed":
            state = "confirmed"
        elif d in w.posted_now:
            state = "applied"
        elif d in w.intended_now:
            state = "intended"
        else:
            state = "unconfirmed"
        at_feed = f"the feed has {posted[d]}" if d in posted else "not at the feed"
        detail = f"announcement of {d}: {at_feed}"
        if d in w.posted_now and w.posted_now[d].startswith("="):
            detail += f" (a resend answered with {w.posted_now[d][1:]})"
        out.append((d, state, detail))
    return out


def lifecycles(trace: Trace) -> list[TickState]:
    """The three lifecycles at the end of each tick t0..t(last), with what changed."""
    out: list[TickState] = []
    before: dict[tuple[str, str], str] = {}
    for t in fold(trace):
        w = t.world
        lists: dict[str, tuple[Item, ...]] = {}
        now: dict[tuple[str, str], str] = {}
        for kind, items in (("attempts", _attempts(w)), ("artifacts", _artifacts(w)), ("effects", _effects(w))):
            lists[kind] = tuple(Item(key, state, detail, before.get((kind, key), "")) for key, state, detail in items)
            now.update(((kind, key), state) for key, state, _ in items)
        before = now
        attempts, artifacts, effects = (lists[kind] for kind in KINDS)
        out.append(TickState(t.tick, w.version, w.owner, attempts, artifacts, effects, t.broken))
    return out


__all__ = ["KINDS", "STATES", "Item", "Tick", "TickState", "World", "fold", "lifecycles"]
