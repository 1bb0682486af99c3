"""The three lifecycles of a run at every tick, read from the engine's state at each tick.

The run page (`sim trace --html`) shows them under its tick slider, and `sim trace --step`
under each frame: each attempt's (running, UNKNOWN, refused, fenced, replaced, done), each
artifact's (candidate, accepted, refused, superseded) and each effect's (intended, applied,
unconfirmed, confirmed), each item with what changed since the previous tick. They read the
state the engine reached at the end of each tick through `sim.render.shown`, the mapping the
ITF export reads too, so both show what the engine holds at that tick.

The states (docs/model.md §3, docs/trace.md "The state at each tick"):

- attempt: its status as the controller records it (`Status`: running, UNKNOWN, refused,
  fenced, done), except that a running attempt whose token is below the epoch (a successor
  owns the work, and it was never suspected) is *replaced*;
- artifact (a digest): *candidate* once written, *accepted* or *refused* by the controller,
  and *superseded* while accepted but built from other content than the report's current
  one (it stays accepted as history; it is no longer dependable for the newest input). Beyond
  the article's model, a digest whose acceptance record a storage loss took is a candidate
  again: the controller no longer knows it accepted it;
- effect (a digest's announcement, while the effect records hold it): *intended* in the tick
  its intent is recorded, *applied* in a tick the feed applies or repeats its post,
  *confirmed* once the confirmation is recorded, and *unconfirmed* in every other tick after
  its intent (it may or may not have happened).
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.engine.records import effect_key, effect_of_key
from sim.engine.state import State
from sim.model.events import Feed, payload, write
from sim.render.shown import At, epoch, refusals, ticks, verdict
from sim.engine.trace import Kind, Trace

#: the three lifecycles, in the order a page lists them, and their states in lifecycle order.
KINDS = ("attempts", "artifacts", "effects")
STATES: dict[str, tuple[str, ...]] = {
    "attempts": ("running", "UNKNOWN", "refused", "fenced", "replaced", "done"),
    "artifacts": ("candidate", "accepted", "refused", "superseded"),
    "effects": ("intended", "applied", "unconfirmed", "confirmed"),
}


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


def _attempts(at: At) -> list[tuple[str, str, str]]:
    out = []
    s, now = at.state, epoch(at)
    for a in s.attempts:
        state = a.status.value
        if state == "running" and a.token < now:
            state = "replaced"
        calls = at.history.calls[a.n - 1]
        notes = [f"T{a.token}", "owner" if a.n == s.owner else "", "silent" if a.silent_since is not None else "",
                 f"{calls} model call{'s' if calls != 1 else ''}"]  # fmt: skip
        out.append((f"#{a.n}", state, ", ".join(x for x in notes if x)))
    return out


def _artifacts(at: At) -> list[tuple[str, str, str]]:
    s = at.state
    accepted = {a.digest: a for a in s.acceptances}
    refused = {r["digest"]: r for r in refusals(at)}
    out = []
    for c in s.candidates:
        d = c.digest
        detail = f"by #{c.attempt}"
        if d in accepted:
            version = accepted[d].version
            state = "accepted"
            detail += f", accepted at t{accepted[d].tick}" + (f" for v{version + 1}" if version is not None else "")
            if c.built_from != s.content:
                state = "superseded"
                detail += f"; the report is now v{s.version + 1}"
        elif d in refused:
            state, detail = "refused", detail + f": {refused[d]['reason']}"
        else:
            state = "candidate"
            given = verdict(s, d)
            if given is not None:  # accepted, and the acceptance records were lost since
                detail += f"; its acceptance at t{given[1]} was lost"
        out.append((d, state, detail))
    return out


def effect_words(s: State, key: str) -> tuple[str, str]:
    """What an effect record is called on the page, and what its receiver holds of it: the
    article's "announcement of d2" and "the feed has P1"; in a run with several effects, the
    effect's name and its own receiver."""
    digest, i = effect_of_key(key, tuple(r.name for r in s.setup.receivers))
    feed = s.feeds[i]
    up = [post for post, d in feed.posts if d == digest and post not in feed.retracted]
    gone = [post for post, d in feed.posts if d == digest and post in feed.retracted]
    name = s.setup.receivers[i].name
    what, where = (f"{name} of {digest}", f"{name}'s receiver") if s.setup.named else (f"announcement of {digest}", "the feed")
    held = f"{where} has {', '.join(up)}" if up else f"not at {where}"
    return what, held + (f" ({', '.join(gone)} retracted)" if gone else "")


def _this_tick(at: At) -> tuple[set[str], dict[str, str]]:
    """What the tick did to effects: the effect records whose intent it recorded, and the post
    the receiver applied (or, "=P1", answered a resend with) for each, keyed as the effect
    records are (`records.effect_key`)."""
    intended: set[str] = set()
    posted: dict[str, str] = {}
    names = [r.name for r in at.state.setup.receivers]
    for e in at.events:
        if e.kind is Kind.WRITE:
            w = write(e)
            if w["store"] == "effect" and w["applied"] and w["record"] == "intent":
                intended.add(_record_key(w["digest"], w.get("effect"), names))
        elif e.kind is Kind.FEED:
            p = payload(e, Feed)
            post = p["post"]
            if post is not None and p["answer"] in ("applied", "repeat"):
                key = _record_key(p["digest"], p.get("effect"), names)
                posted[key] = post if p["answer"] == "applied" else f"={post}"
    return intended, posted


def _record_key(digest: str, effect: str | None, names: list[str]) -> str:
    """The effect record key of an event's digest and effect (None: the run's one effect)."""
    return effect_key(digest, 0 if effect is None else names.index(effect), effect or "")


def _effects(at: At) -> list[tuple[str, str, str]]:
    intended_now, posted_now = _this_tick(at)
    out = []
    for d, record in sorted(at.state.effects):
        if record == "confirmed":
            state = "confirmed"
        elif d in posted_now:
            state = "applied"
        elif d in intended_now:
            state = "intended"
        else:
            state = "unconfirmed"
        what, held = effect_words(at.state, d)
        detail = f"{what}: {held}"
        if d in posted_now and posted_now[d].startswith("="):
            detail += f" (a resend answered with {posted_now[d][1:]})"
        out.append((d, state, detail))
    return out


def lifecycles(trace: Trace) -> list[TickState]:
    """The three lifecycles at the end of each tick t0..t(last), with what changed."""
    out: list[TickState] = []
    before: dict[tuple[str, str], str] = {}
    for at in ticks(trace):
        lists: dict[str, tuple[Item, ...]] = {}
        now: dict[tuple[str, str], str] = {}
        for kind, items in (("attempts", _attempts(at)), ("artifacts", _artifacts(at)), ("effects", _effects(at))):
            lists[kind] = tuple(Item(key, state, detail, before.get((kind, key), "")) for key, state, detail in items)
            now.update(((kind, key), state) for key, state, _ in items)
        before = now
        attempts, artifacts, effects = (lists[kind] for kind in KINDS)
        report, owner = at.state.version + 1, at.state.owner or 0
        out.append(TickState(at.tick, report, owner, attempts, artifacts, effects, at.broken))
    return out


__all__ = ["KINDS", "STATES", "Item", "TickState", "lifecycles"]
