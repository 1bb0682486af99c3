"""The rules of docs/model.md §5 as step functions over the state value (`sim.engine.state`).

The contract. Every step function takes (state, tick, faults) and returns (next state, the
events it logged, in order); it changes nothing else and keeps nothing between calls, so the
same state, tick and faults always give the same result:

- `input_phase(state, t, faults)`: §5.1, a scheduled report change lands.
- `act(state, n, t, faults)`: §5.2 and §5.4, attempt #n does at most one step at tick t; the
  attempt's `next_tick` says when it acts again (None: its program has ended).
- `assess`, `gate`, `suspect`, `rebuild` (each `(state, t, faults)`): the controller's steps
  a to d of §5.3, run in `order.CONTROLLER_STEPS` order.
- beyond the article's model, a controller outage (`sim.model.faults.restart`): `input_phase`
  crashes it (`crash`), `controller` skips its phase while it is down and `restart`s it
  in the tick it comes back.
- `end_of_tick(state, t)`: after the controller's steps, whether the run is over (§5.8); if
  not, the controller acts next at t + 1 (`State.tick`). `controller(state, t, faults)` is
  the controller's whole phase of a tick: its four steps, then `end_of_tick`.

`faults` is the fault schedule as the engine consults it (`Faults.consult`): a step asks it,
at each moment of docs/model.md §9 it reaches (`sim.model.faults.Moment`), which fault the schedule
makes fire there, naming the place by values of the state (attempt number and tick, the nth
post or send). Which steps run in a tick, and in what order, is `sim.engine.order`'s alone.

Inside a step the state is thawed into a `Draft` (and an attempt into a `Worker`), changed in
place and frozen again; a step with nothing to do returns the state it was given. Their
fields are the records' own, derived from the declarations of `sim.engine.state`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar, cast

from mypy_extensions import mypyc_attr

from sim.engine import order
from sim.engine.records import (
    Candidate,
    JournalKey,
    JournalRecord,
    Part,
    PLAIN,
    has_called,
    receive,
)
from sim.engine.primitives import built_from, effect_key, extended_key, last_heard, named_run, result_id, stuck
from sim.engine.state import (
    ASSEMBLE,
    POST,
    STEPS,
    WAIT,
    AttemptState,
    Dependant,
    Held,
    Setup,
    State,
    find_candidate,
)
from sim.model.faults import (
    CodeChange,
    Copies,
    Fault,
    Hold,
    Loss,
    Moment as FaultMoment,
    Mutation,
    NewContent,
    PostPoint,
    Restart,
    Stall,
    Unheard,
    WRONG,
    Wrong,
)
from sim.model.switches import Key, Rule
from sim.engine.working import WorkingAttemptState, WorkingState
from sim.engine.trace import Event, Kind as EventKind, quoted

#: the rules read the members of `Kind`, `Moment` and `Status` on every tick: from these classes
#: of their members, compiled as constants (the generated `sim.engine.working`), rather than
#: from the enums, where each is a lookup through the metaclass's `__getattr__` (docs/compiled.md)
from sim.engine.working import KindMembers as Kind, MomentMembers as Moment, StatusMembers as Status
#: and make the records without their NamedTuples' Python-level `__new__` (generated there too)
from sim.engine.working import new_Acceptance, new_AttemptState, new_Candidate, new_JournalRecord, new_Part, new_Truth

#: module constants are `Final`: compiled, each is read from a C static rather than looked up by name
_new: Final = tuple.__new__
_Event: Final = Event  # the classes made here by `_new`, as constants too
_State: Final = State
NO_EVENTS: Final[tuple[Event, ...]] = ()
Step = tuple[State, Sequence[Event]]
Steps = list[tuple[int, Part | None]]


D = TypeVar("D")
R = TypeVar("R", State, AttemptState)

#: the positions of the fields set by `with_field` here (a NamedTuple's `_replace` is an
#: interpreted function: about 12,000 instructions a call)
_FINISHED: Final = State._fields.index("finished")
_LAST_TICK: Final = State._fields.index("last_tick")
_HORIZON_REACHED: Final = State._fields.index("horizon_reached")
_STATUS: Final = AttemptState._fields.index("status")


def with_field(record: R, i: int, value: object, j: int = -1, other: object = None) -> R:
    """The record with field i set to value (and field j to other, if j is a position):
    `record._replace(...)` by the fields' positions, compiled."""
    fields = list(cast("tuple[object, ...]", record))
    fields[i] = value
    if j >= 0:
        fields[j] = other
    return _new(type(record), fields)


def directed(fault: Fault | None, kind: type[D], default: D | None = None) -> D:
    """The directive of the fault consulted at a moment, as the one type the rule carrying it
    out reads (`default`: the moment's directive when no fault matched). A directive of no
    type the moment's rules carry out is an error of the fault kind's module, not a no-op."""
    directive = default if fault is None else fault.directive()
    if not isinstance(directive, kind):
        raise TypeError(f"{type(fault).__name__}: {directive!r} is no directive of its moment; expected {kind.__name__}")
    return directive


#: the SEND moment's directive when no fault matches: the request reaches the feed once
ONE_COPY: Final = Copies(1)


@mypyc_attr(allow_interpreted_subclasses=True)  # `sim.engine.world.World` and the tests' schedules extend it
class Faults:
    """The fault schedule as the engine consults it (`sim.engine.world.World` is one; `sim
    check`'s search has its own), and the kinds of event its user reads (`logged`; None: every
    kind): the search reads only the kinds its monitors follow, and the rules make no other
    (`Draft.log`, `Draft.logs`). A class rather than a protocol: compiled, a consult is then a
    call through the class's table, not a method looked up by name (about 2 % of the search)."""

    __slots__ = ("logged",)

    def __init__(self, logged: frozenset[EventKind] | None = None) -> None:
        self.logged = logged

    def consult(self, tick: int, moment: FaultMoment, where: tuple[int, ...]) -> Fault | None:
        """The fault that takes effect at this moment and place, if any."""
        raise NotImplementedError


class Draft(WorkingState):
    """One step's working copy of a state: its fields (`WorkingState`, derived from the
    declaration of `State`), changed in place, and the events logged."""

    __slots__ = ("events", "faults", "logged")

    def __init__(self, s: State, faults: Faults) -> None:
        WorkingState.__init__(self, s)
        self.events: list[Event] = []
        self.faults = faults
        self.logged = faults.logged

    def done(self) -> Step:
        return self.freeze(), self.events

    def log(self, tick: int, kind: EventKind, attempt: int | None, detail: dict[str, Any]) -> None:
        """Log an event, unless its kind is not one the faults' user reads (`Faults.logged`)."""
        logged = self.logged
        if logged is None or kind in logged:
            # tuple.__new__ builds the same Event without the NamedTuple's Python-level __new__
            self.events.append(_new(_Event, (tick, kind, attempt, detail)))

    def logs(self, kind: EventKind) -> bool:
        """Whether an event of this kind is logged: where its detail costs something to make."""
        logged = self.logged
        return logged is None or kind in logged

    def put(self, attempt: AttemptState) -> None:
        i = attempt.n - 1
        self.attempts = self.attempts[:i] + (attempt,) + self.attempts[i + 1:]

    @property
    def content(self) -> tuple[int, ...]:
        return self.versions[self.version]



class Worker(WorkingAttemptState):
    """One step's working copy of an attempt (`WorkingAttemptState`, derived from the
    declaration of `AttemptState`)."""

    __slots__ = ()


# -- the records ----------------------------------------------------------------------------
def journal_get(journal: tuple[tuple[JournalKey, JournalRecord], ...], key: JournalKey) -> JournalRecord | None:
    for known, record in journal:
        if known == key:
            return record
    return None


def effect_of(effects: tuple[tuple[str, str], ...], digest: str) -> str | None:
    for known, record in effects:
        if known == digest:
            return record
    return None


def put_pair(pairs: tuple[tuple[Any, Any], ...], key: Any, value: Any) -> tuple[tuple[Any, Any], ...]:
    """`pairs` with `key` set to `value`: in place if it is there, else appended."""
    for i, (known, _) in enumerate(pairs):
        if known == key:
            return pairs[:i] + ((key, value),) + pairs[i + 1:]
    return pairs + ((key, value),)


def fenced_out(d: Draft, w: Worker) -> bool:
    """The check every protected store makes: with fencing on, a token older than the epoch
    is refused (with `fencing_by=owner`, any writer but the recorded owner)."""
    return stale(d.setup, w.token, w.n, d.epoch, d.owner)


def stale(setup: Setup, token: int, n: int, epoch: int, owner: int | None) -> bool:
    """Whether fencing refuses the holder of `token`, attempt #n (docs/model.md §2)."""
    if not setup.fencing:
        return False
    return n != owner if setup.owner_fencing else token < epoch


def guard(d: Draft, tick: int, w: Worker, store: str, detail: dict[str, Any]) -> bool:
    """The token check, made atomically with the write (the write is logged either way)."""
    applied = not fenced_out(d, w)
    if w.n < len(d.attempts):  # a superseded writer: admitted before the latest admission
        if applied:
            d.stale_applied += 1
        else:
            d.stale_refused += 1
    d.log(tick, Kind.WRITE, w.n, {
        "store": store, "token": w.token, "epoch": d.epoch, "applied": applied, **detail,
    })  # fmt: skip
    return applied


def journal_steps(d: Draft, w: Worker, steps: Steps) -> None:
    setup = d.setup
    for i, part in steps:
        assert part is not None
        truth = part.truth
        if setup.pins:
            extra = (truth.also[0][1],) if setup.reads_keyed and truth.also else ()
            key = extended_key(i, part.content, extra + ((truth.code,) if setup.journal_code else ()))
        else:
            key = extended_key(i, None, (truth.code,) if setup.journal_code else ())
        d.journal = put_pair(d.journal, key, new_JournalRecord(part.result, part.content, w.n, truth))


def step_key(d: Draft, w: Worker, i: int) -> JournalKey:
    """The key an attempt looks step i up by: the step and, with pins on, the hash of its
    section in the pinned version (beyond the article's model: the next section's hash with
    reads=next-section-keyed, the code version with journal_code=yes)."""
    setup = d.setup
    code = (w.code,) if setup.journal_code else ()
    if w.pin is None:
        return extended_key(i, None, code)
    snapshot = d.versions[w.pin]
    extra = (snapshot[i + 1],) if setup.reads_keyed and i + 1 < len(snapshot) else ()
    return extended_key(i, snapshot[i], extra + code)


def write_journal(d: Draft, tick: int, w: Worker, steps: Steps) -> bool:
    detail = {"record": "steps", "steps": [[i + 1, p.result, p.content] for i, p in steps if p]}
    if not guard(d, tick, w, "journal", detail):
        return False
    journal_steps(d, w, steps)
    return True


def write_candidate(d: Draft, tick: int, w: Worker, candidate: Candidate, steps: Steps) -> bool:
    """The candidate (and, end-only, the attempt's step records with it) in one write."""
    detail = {
        "record": "candidate", "digest": candidate.digest,
        "parts": [[p.result, p.content] for p in candidate.parts],
        "pin": None if candidate.pin is None else candidate.pin + 1,
        "steps": [[i + 1, p.result, p.content] for i, p in steps if p],
    }  # fmt: skip
    if not guard(d, tick, w, "candidate", detail):
        return False
    journal_steps(d, w, steps)
    d.candidates = d.candidates + (candidate,)
    return True


def named(d: Draft, w: Worker, detail: dict[str, Any]) -> dict[str, Any]:
    """An effect's event detail, naming the effect when the run has several (`Setup.named`)."""
    if named_run(d.setup):
        detail["effect"] = d.setup.receivers[w.effect].name
    return detail


def record_key(d: Draft, w: Worker, digest: str) -> str:
    """The effect records' key of the effect `w` posts now, for `digest` (`records.effect_key`)."""
    return effect_key(digest, w.effect, d.setup.receivers[w.effect].name)


def effect_record(d: Draft, w: Worker, digest: str) -> str | None:
    """The effect record of the effect `w` posts now, for `digest`."""
    return effect_of(d.effects, record_key(d, w, digest))


def write_effect(d: Draft, tick: int, w: Worker, digest: str, record: str) -> bool:
    if not guard(d, tick, w, "effect", named(d, w, {"record": record, "digest": digest})):
        return False
    d.effects = put_pair(d.effects, record_key(d, w, digest), record)
    return True


def send(d: Draft, tick: int, w: Worker, digest: str, key: str | None) -> None:
    d.sends += 1
    copies = directed(d.faults.consult(tick, Moment.SEND, (d.sends,)), Copies, ONE_COPY).copies
    if d.logs(Kind.SENT):
        d.log(tick, Kind.SENT, w.n, named(d, w, {"digest": digest, "key": key, "copies": copies}))
    e = w.effect
    receiver = d.setup.receivers[e]
    # beyond the article's model (compensate=yes, a workflow's correction = true): a successor
    # finishing an inherited effect cannot know whether its predecessor's send was applied, so
    # it sends a correction that supersedes any earlier copy (docs/outside.md, case 2)
    supersedes = receiver.correction and w.inherited is not None
    for _ in range(copies):
        receipt = receive(d.feeds[e], key, digest, tick, receiver.retention, receiver.kind == "dedup", supersedes)
        d.feeds = d.feeds[:e] + (receipt.feed,) + d.feeds[e + 1:]
        post = receipt.post
        if receipt.forgotten is not None:  # the key's retention ran out (case 3)
            forgot, since = receipt.forgotten
            d.log(tick, Kind.EXPIRED, w.n, named(d, w, {"key": key, "post": forgot, "remembered": since}))
        for old in receipt.retracted:  # the correction retracts the earlier copies (case 2)
            d.log(tick, Kind.RETRACTED, w.n, named(d, w, {"digest": digest, "post": old, "correction": post}))
        d.log(tick, Kind.FEED, w.n, named(d, w, {"digest": digest, "key": key, "answer": receipt.answer, "post": post}))


def read_back(d: Draft, tick: int, w: Worker, digest: str) -> bool:
    """A read-back receiver asked "did you apply this?" by a successor finishing an inherited
    effect (docs/workflows.md): it answers with the post it applied for the digest, if any."""
    feed = d.feeds[w.effect]
    post = next((p for p, params in feed.posts if params == digest and p not in feed.retracted), None)
    answer = "absent" if post is None else "found"
    d.log(tick, Kind.FEED, w.n, named(d, w, {"digest": digest, "key": None, "answer": answer, "post": post}))
    return post is not None


# -- a. the input (docs/model.md §5.1) --------------------------------------------------------
def input_phase(state: State, tick: int, faults: Faults) -> Step:
    """The input phase of `tick`: a scheduled change gives sections new content (or, beyond
    the article's model, a store loses its records)."""
    fault = faults.consult(tick, Moment.INPUT, (tick,))
    if fault is None:
        return state, NO_EVENTS
    directive = fault.directive()
    d = Draft(state, faults)
    if isinstance(directive, Loss):
        return lose(d, tick, directive.store)
    if isinstance(directive, Restart):
        return crash(d, tick, directive.down)
    if isinstance(directive, Mutation):
        return mutate(d, tick, directive.section)
    if isinstance(directive, CodeChange):
        d.code += 1
        d.log(tick, Kind.CODE_CHANGED, None, {"code": d.code + 1})
        return d.done()
    sections = directed(fault, NewContent).sections
    content = tuple(rev + 1 if i + 1 in sections else rev for i, rev in enumerate(d.content))
    d.versions = d.versions + (content,)
    d.version = len(d.versions) - 1
    d.last_change = tick
    if d.logs(Kind.REPORT_CHANGED):
        d.log(tick, Kind.REPORT_CHANGED, None, {
            "version": d.version + 1, "sections": list(sections), "content": list(content),
        })  # fmt: skip
    return d.done()


def lose(d: Draft, tick: int, store: str) -> Step:
    """A storage loss (beyond the article's model): the store's records are gone. The
    controller's acceptances take its memory of when it last accepted with them; what the
    attempts remember in their own state (a verdict they were given) stays."""
    if store == "journal":
        records, d.journal = len(d.journal), ()
    elif store == "acceptances":
        records, d.acceptances, d.last_acceptance = len(d.acceptances), (), None
    else:
        records, d.effects = len(d.effects), ()
    d.log(tick, Kind.LOST, None, {"store": store, "records": records})
    return d.done()


def crash(d: Draft, tick: int, down: int) -> Step:
    """The controller crashes (beyond the article's model): until it restarts, in its phase
    of tick + down, its phase does nothing (`controller`). The stores and the workers go on."""
    d.down = tick + down
    d.outage = (tick, tick + down)
    d.log(tick, Kind.CONTROLLER_DOWN, None, {"until": tick + down})
    return d.done()


def restart(state: State, t: int, faults: Faults) -> Step:
    """The controller restarts in its phase of tick t, before its steps (beyond the article's
    model), with what survived on storage (the knob `controller_state`): everything the
    article requires ("durable"), all but the owner-token counter ("no-epoch": it starts
    again below the first token, so the next admission reissues a token already used), all
    but the unconfirmed intents ("no-intents"). Its suspicion timers are rebuilt except
    with "old-timers" (`heard`). Nothing happens in a tick it is not coming back in."""
    if state.down is None:
        return state, NO_EVENTS
    d = Draft(state, faults)
    d.down = None
    how = d.setup.controller_state
    lost = 0
    if how == "no-epoch":
        d.epoch = d.setup.first_token - 1
    elif how == "no-intents":
        kept = tuple(pair for pair in d.effects if pair[1] != "intent")
        lost, d.effects = len(d.effects) - len(kept), kept
    d.log(t, Kind.CONTROLLER_UP, None, {"state": how, "epoch": d.epoch, "intents_lost": lost})
    return d.done()


def mutate(d: Draft, tick: int, section: int) -> Step:
    """A snapshot mutation (beyond the article's model): the bytes of a section of the current
    report change in place; its content hash, the version and every key naming it stay."""
    i = section - 1
    content = d.content[i]
    if (i, content) not in d.mutated:
        d.mutated = tuple(sorted(d.mutated + ((i, content),)))
    d.log(tick, Kind.MUTATED, None, {"section": section, "version": d.version + 1, "content": content})
    return d.done()


# -- the workers (docs/model.md §5.2 and §5.4) ------------------------------------------------
def act(state: State, n: int, t: int, faults: Faults) -> Step:
    """Attempt #n does at most one step at tick t; its `next_tick` says when it acts next."""
    d = Draft(state, faults)
    w = Worker(state.attempts[n - 1])
    w.next_tick = program(d, w, t)
    i = n - 1
    d.attempts = d.attempts[:i] + (w.freeze(),) + d.attempts[i + 1:]
    return d.freeze(), d.events


def program(d: Draft, w: Worker, t: int) -> int | None:
    """One step of the worker's program (docs/model.md §5.4); return the next tick to act, or
    None to stop. A paused worker wakes first (`wake`) and finishes the action it began; then
    the ACT moment's fault (`act_fault`) and the step its phase names (`PROGRAM`): the steps,
    assembling, waiting for the verdict, posting (a successor that reconciles starts there)."""
    if w.status is Status.REFUSED or w.status is Status.FENCED:
        return None
    if w.silent_since is not None:  # waking from a pause
        held = wake(d, w, t)
        if d.setup.step_fencing and fenced_out(d, w):  # its held result is discarded
            fence_woken(d, w, t, held)
            return None
        if held is not None:
            return finish(d, w, t, held)
    elif d.setup.step_fencing and fenced_out(d, w):  # replaced while working: no next step
        fence(d, w, t)
        return None
    return PROGRAM[w.phase](d, w, t, act_fault(d, w, t))


def wake(d: Draft, w: Worker, t: int) -> Held | None:
    """A paused worker wakes: it is heard again, and takes back the action it began as it fell
    silent (with `retries`, the step's re-deliveries while it was paused run first: `redo`)."""
    since, w.silent_since = w.silent_since, None
    assert since is not None
    d.log(t, Kind.WOKE, w.n, {})
    held, w.held = w.held, None
    if d.setup.retries and held is not None and held[0] == "compute":
        redo(d, w, t, held[1], min(d.setup.retries, (t - since) // d.setup.heartbeat_limit))
    return held


def act_fault(d: Draft, w: Worker, t: int) -> Stall | None:
    """The ACT moment's fault (docs/model.md §9): a pause, returned (it falls silent as it
    begins its step), or a heartbeat delay (it works on; the controller stops hearing it)."""
    fault = d.faults.consult(t, Moment.ACT, (w.n, t))
    directive = None if fault is None else fault.directive()
    if isinstance(directive, Unheard):
        w.unheard = delay_heartbeats(w.unheard, t, directive.ticks)
        d.log(t, Kind.UNHEARD, w.n, {"until": w.unheard[1]})
        return None
    return None if fault is None else directed(fault, Stall)


def begin(d: Draft, w: Worker, t: int, silence: Stall | None, action: Held) -> int | None:
    """It begins an action: with a pause it falls silent as it starts (the action waits for
    its wake), otherwise it finishes it now."""
    if silence is not None:
        return fall_silent(d, w, t, silence, action)
    return finish(d, w, t, action)


def do_steps(d: Draft, w: Worker, t: int, silence: Stall | None) -> int | None:
    """§5.4, 2: the steps in order, each restored for free while its journal record matches
    (`restore_steps`), the first one that does not computed (a tick, a model call); with
    every step done it goes on to assemble in the same tick."""
    if not restore_steps(d, w, t):  # a strict replay met a record of other code: stuck
        return None
    if w.step < len(w.results):
        return begin(d, w, t, silence, ("compute", compute(d, w, t, w.step)))
    w.phase = ASSEMBLE
    return do_assemble(d, w, t, silence)


def restore_steps(d: Draft, w: Worker, t: int) -> bool:
    """Restore each step from the current one whose journal key matches (zombie=from-memory:
    only before its first model call); False when a strict replay stops the attempt."""
    if d.setup.rereads or not has_called(w.n, w.results):
        while w.step < len(w.results):
            restored = restore(d, w, t, w.step)
            if restored is None:
                return False
            if not restored:
                break
            w.step += 1
    return True


def do_assemble(d: Draft, w: Worker, t: int, silence: Stall | None) -> int | None:
    """§5.4, 3: assemble the candidate (`assemble`)."""
    return begin(d, w, t, silence, ("assemble", None))


def do_wait(d: Draft, w: Worker, t: int, silence: Stall | None) -> int | None:
    """§5.4, 4: wait for the verdict; posting from the tick after an acceptance, in the same
    tick it reads it; a refusal it reads stops it."""
    verdict = w.verdict
    if verdict is None or verdict[1] >= t:  # posts from the tick after acceptance
        if silence is not None:
            return fall_silent(d, w, t, silence, None)
        return t + 1
    if not verdict[0]:  # refused while it was silent and UNKNOWN: it stops now
        stop(d, w, t)
        return None
    w.phase = POST
    return do_post(d, w, t, silence)


def do_post(d: Draft, w: Worker, t: int, silence: Stall | None) -> int | None:
    """§5.4, 4 (and 1, reconcile first): the post (`post`)."""
    return begin(d, w, t, silence, ("post", None))


def delay_heartbeats(unheard: tuple[int, int] | None, t: int, ticks: int) -> tuple[int, int]:
    """A heartbeat delay from t (beyond the article's model, `sim.model.faults.delay`): the
    heartbeats after t and before t + ticks go unheard. Delays compose: a heartbeat is unheard
    if any delay covers it, so one starting inside the window of an earlier one (whose
    heartbeat at t is itself unheard) extends that window and keeps its start, the last
    heartbeat the controller heard; one starting after it ends opens a new window from t."""
    if unheard is not None and unheard[0] < t < unheard[1]:
        return (unheard[0], max(unheard[1], t + ticks))
    return (t, t + ticks)


def fall_silent(d: Draft, w: Worker, t: int, silence: Stall, held: Held | None) -> int | None:
    """It heartbeated at t as it started; whatever it began waits for the wake."""
    w.held = held
    w.silent_since = t
    doing = "waiting" if held is None else held[0]
    d.log(t, Kind.SILENT, w.n, {"crashed": silence.wake is None, "wake": silence.wake, "during": doing})
    if silence.wake is None:
        w.crashed = True
        return None
    return silence.wake


def fence_woken(d: Draft, w: Worker, t: int, held: Held | None) -> None:
    """fencing_scope=step (beyond the article's model): a replaced worker waking from a pause
    gets no further step, and the result of the action it was finishing never reaches the
    engine's stores. A send it was already making is not the engine's to stop: it goes out to
    the feed, which checks keys, never tokens (docs/model.md §9, docs/outside.md case 1); only
    its answer is discarded, unrecorded."""
    if held is not None and held[0] == "send":
        digest = w.candidate
        assert digest is not None
        send(d, t, w, digest, post_key(d, w, digest))
    fence(d, w, t)


def finish(d: Draft, w: Worker, t: int, action: Held) -> int | None:
    """Finish a begun action: write a computed step, or write the candidate."""
    what, part = action
    if what == "compute":
        assert part is not None
        i = w.step
        w.results = w.results[:i] + (part,) + w.results[i + 1:]
        w.step += 1
        if not d.setup.per_step:
            w.unwritten = w.unwritten + (i,)
            return t + 1
        if not write_journal(d, t, w, [(i, part)]):
            fence(d, w, t)
            return None
        return t + 1
    if what == "assemble":
        return assemble(d, w, t)
    if what == "send":
        return deliver(d, w, t)
    return post(d, w, t)


def assemble(d: Draft, w: Worker, t: int) -> int | None:
    candidate = new_Candidate(
        digest=f"d{w.n}",
        attempt=w.n,
        token=w.token,
        parts=tuple(p for p in w.results if p is not None),
        pin=w.pin,
        tick=t,
    )
    steps = [(i, w.results[i]) for i in w.unwritten]
    if not write_candidate(d, t, w, candidate, steps):
        fence(d, w, t)
        return None
    w.unwritten = ()
    w.candidate = candidate.digest
    w.phase = WAIT
    return t + 1


def restore(d: Draft, w: Worker, t: int, i: int) -> bool | None:
    """A step whose journal key matches is restored at no cost (no tick, no call). With
    replay=strict (beyond the article's model) a matching record written under other code
    is a non-determinism error: the attempt stops there, still running (None)."""
    record = journal_get(d.journal, step_key(d, w, i))
    if record is None:
        return False
    if d.setup.strict and record.truth.code != w.code:
        d.log(t, Kind.REPLAY_FAILED, w.n, {"step": i + 1, "recorded": record.truth.code + 1, "code": w.code + 1})
        return None
    w.results = w.results[:i] + (new_Part(record.result, record.content, record.truth),) + w.results[i + 1:]
    d.restored += 1
    if d.logs(Kind.RESTORED):
        d.log(t, Kind.RESTORED, w.n, {"step": i + 1, "result": record.result, "by": record.attempt,
                                      "content": record.content})  # fmt: skip
    return True


def compute(d: Draft, w: Worker, t: int, i: int) -> Part:
    """One model call. With pins on it reads the pinned snapshot, otherwise the live report.

    Beyond the article's model it also records what the call really read and ran under (its
    `Truth`): bytes changed under their hash, the next section (reads=next-section), a wrong
    summary (the CALL moment's fault), the attempt's code version. The `computed` event
    names each only when it is not the article's case, so the article's events are unchanged."""
    snapshot = d.versions[w.pin] if w.pin is not None else d.versions[d.version]
    content = snapshot[i]
    mutated = d.mutated
    changed = bool(mutated) and (i, content) in mutated
    also: tuple[tuple[int, int, bool], ...] = ()
    if d.setup.reads_next and i + 1 < len(snapshot):
        also = ((i + 1, snapshot[i + 1], (i + 1, snapshot[i + 1]) in mutated),)
    fault = d.faults.consult(t, Moment.CALL, (w.n, i + 1))
    wrong = fault is not None and directed(fault, Wrong) == WRONG
    part = new_Part(result_id(i, w.n), content, new_Truth(changed, also, wrong, w.code))
    calls = d.setup.calls[i] if d.setup.calls else 1
    w.calls += calls
    if not d.logs(Kind.COMPUTED):  # its event's detail is made only where it is logged
        return part
    detail: dict[str, Any] = {"step": i + 1, "result": part.result, "content": content}
    if calls != 1:  # a workflow's step of no model call, or of several (the article's: one)
        detail["calls"] = calls
    if changed:
        detail["changed"] = True
    if also:
        detail["also"] = [[s + 1, c, m] for s, c, m in also]
    if wrong:
        detail["wrong"] = True
    if w.code:
        detail["code"] = w.code + 1
    d.log(t, Kind.COMPUTED, w.n, detail)
    return part


def redo(d: Draft, w: Worker, t: int, part: Part | None, deliveries: int) -> None:
    """Beyond the article's model (the knob `retries`): the step deliveries the engine sent
    while the worker was paused inside a model call, one each time the step timeout (the
    heartbeat limit) passed; it runs each now, a model call each, and keeps the held one."""
    assert part is not None
    w.calls += deliveries
    for k in range(1, deliveries + 1):
        d.log(t, Kind.COMPUTED, w.n, {"step": w.step + 1, "result": part.result, "content": part.content, "retry": k})


def stop(d: Draft, w: Worker, t: int) -> None:
    """Its candidate was refused: it stops."""
    w.status = Status.REFUSED
    w.ended = t
    assert w.candidate is not None
    d.log(t, Kind.STOPPED, w.n, {"digest": w.candidate})


def fence(d: Draft, w: Worker, t: int) -> None:
    """A protected store rejected its write: it stops (it may still be alive)."""
    w.status = Status.FENCED
    w.ended = t
    d.log(t, Kind.FENCED, w.n, {})
    if d.setup.adopts:  # beyond the article's model: it returns the outcome once there is one
        owner = next((a for a in d.attempts if a.status is Status.DONE), None)
        if owner is not None:
            d.log(t, Kind.ADOPTED, w.n, {"owner": owner.n, "digest": owner.candidate})


def post(d: Draft, w: Worker, t: int) -> int | None:
    """Record the intent, send with the key rule, record the feed's answer (one tick): the
    effect `w.effect` of the run's effects, which it posts one a tick, in order."""
    digest = w.candidate
    assert digest is not None
    if w.inherited is not None:
        # reconcile finds effects confirmed (a stale poster finished them, fencing off, or its
        # predecessor before it was lost): nothing is left to do for them, and nothing is sent
        # (docs/model.md §5.4)
        while w.effect < len(d.setup.receivers) and effect_record(d, w, digest) == "confirmed":
            w.effect += 1
        if w.effect == len(d.setup.receivers):
            done(d, w, t, digest)
            return None
    # Every poster records its intent first, so a stale token is fenced before the send;
    # only a successor finishing an inherited effect resends under the intent its
    # predecessor already recorded (docs/model.md §5.4: "reconcile first").
    records_intent = w.inherited is None or effect_record(d, w, digest) is None
    if records_intent and fenced_out(d, w):
        # its intent will be refused: it never reaches any point of a post, so it is not
        # one of the run's post actions and no post fault is consulted for it
        write_effect(d, t, w, digest, "intent")
        fence(d, w, t)
        return None
    d.posts += 1
    death, hold = post_directive(d.faults.consult(t, Moment.POST, (d.posts,)))
    if death is PostPoint.BEFORE_INTENT:
        return die(d, w, t, death)
    if records_intent:
        write_effect(d, t, w, digest, "intent")  # not refused: checked above
    if death is PostPoint.AFTER_INTENT:
        return die(d, w, t, death)
    if hold is not None:  # paused inside the effect: it sends when it wakes
        return fall_silent(d, w, t, Stall(t + hold.ticks), ("send", None))
    return deliver(d, w, t, death)


def post_directive(fault: Fault | None) -> tuple[PostPoint | None, Hold | None]:
    """The POST moment's directive: the point of the post at which the poster dies, or how
    long it holds its send (docs/model.md §9)."""
    if fault is None:
        return None, None
    death = fault.directive()
    if isinstance(death, PostPoint):
        return death, None
    return None, directed(fault, Hold)


def deliver(d: Draft, w: Worker, t: int, death: PostPoint | None = None) -> int | None:
    """The rest of a post after its intent: send, then record the feed's answer. The feed
    checks keys, never tokens: a stale poster's send reaches it; its confirmation is fenced.
    A successor finishing an inherited effect at a read-back receiver asks it first, and
    sends only if it applied nothing for the digest. The next effect follows in the next tick."""
    digest = w.candidate
    assert digest is not None
    if w.inherited is None or d.setup.receivers[w.effect].kind != "read-back" or not read_back(d, t, w, digest):
        send(d, t, w, digest, post_key(d, w, digest))
    if death is PostPoint.AFTER_SEND:
        return die(d, w, t, death)
    if not write_effect(d, t, w, digest, "confirmed"):
        fence(d, w, t)
        return None
    if w.effect + 1 < len(d.setup.receivers):
        w.effect += 1
        return t + 1
    done(d, w, t, digest)
    return None


def done(d: Draft, w: Worker, t: int, digest: str) -> None:
    """The announcement is confirmed: the attempt is done. With fenced_end=adopts (beyond the
    article's model) the first attempt done is the run's outcome, which every attempt fenced
    so far returns now (one fenced later returns it at once: `fence`)."""
    first = d.setup.adopts and not any(a.status is Status.DONE for a in d.attempts)
    w.status = Status.DONE
    w.ended = t
    d.log(t, Kind.DONE, w.n, {"digest": digest})
    if first:
        for a in d.attempts:
            if a.status is Status.FENCED:
                d.log(t, Kind.ADOPTED, a.n, {"owner": w.n, "digest": digest})


def post_key(d: Draft, w: Worker, digest: str) -> str | None:
    """The key switch's key for the effect `w` posts: per operation, the effect's name and the
    digest (the article's `announce/<digest>`); per attempt, the attempt's number."""
    key = d.setup.key
    if key is Key.PER_OPERATION:
        return f"{d.setup.receivers[w.effect].name}/{digest}"
    if key is Key.PER_ATTEMPT:
        return f"attempt/{w.n}"
    return None


def die(d: Draft, w: Worker, t: int, point: PostPoint) -> int | None:
    """It dies at `point` of its post: it never acts again."""
    w.crashed = True
    w.silent_since = t
    d.log(t, Kind.DIED, w.n, {"point": point.value})
    return None


def announcement_owed(a: AttemptState) -> str | None:
    """The accepted digest whose announcement this attempt still owes, if any: a successor
    of a lost owner inherits it (docs/model.md §5.4, "reconcile first")."""
    if a.inherited is not None or (a.verdict is not None and a.verdict[0]):
        return a.candidate
    return None


# -- the controller (docs/model.md §5.3) ------------------------------------------------------
def admit(d: Draft, tick: int, reason: str, inherit: str | None) -> None:
    """Publish a new epoch, then admit an attempt holding it (record before dispatch)."""
    token = d.epoch + 1
    d.epoch = token
    if inherit is not None:
        pin = find_candidate(d.candidates, inherit).pin
    else:
        pin = d.version if d.setup.pins else None
    n = len(d.attempts) + 1
    d.attempts = d.attempts + (new_AttemptState(
        n=n, token=token, pin=pin, inherited=inherit, status=Status.RUNNING,
        next_tick=tick + 1,  # it does not act in the tick it was admitted
        crashed=False, silent_since=None, results=(None,) * d.setup.sections, unwritten=(),
        step=0, phase=POST if inherit is not None else STEPS, held=None, verdict=None,
        candidate=inherit, ended=None, unheard=None, code=d.code,
    ),)  # fmt: skip
    d.owner = n
    d.log(tick, Kind.ADMITTED, n, {
        "token": token, "reason": reason, "pin": None if pin is None else pin + 1,
        "reconcile": inherit,
    })  # fmt: skip


def assess(state: State, t: int, faults: Faults) -> Step:
    """a. Each candidate written before this tick gets its verdict, in write order."""
    if state.assessed >= len(state.candidates) or state.candidates[state.assessed].tick >= t:
        return state, NO_EVENTS
    d = Draft(state, faults)
    while d.assessed < len(d.candidates) and d.candidates[d.assessed].tick < t:
        c = d.candidates[d.assessed]
        d.assessed += 1
        reason = refusal(d, c)
        producer = Worker(d.attempts[c.attempt - 1])
        if reason is None:
            version = d.version if d.setup.pins else None
            d.acceptances = d.acceptances + (new_Acceptance(c.digest, version, t),)
            d.last_acceptance = t
            producer.verdict = (True, t)
            d.put(producer.freeze())
            detail: dict[str, Any] = {
                "digest": c.digest, "producer": c.attempt,
                "version": None if version is None else version + 1,
                "built_from": list(built_from(c)),
            }  # fmt: skip
            if d.code or any(p.truth != PLAIN for p in c.parts):  # beyond the article's model
                detail["code"] = d.code + 1
                detail["truth"] = [
                    [i + 1, p.truth.changed, [[s + 1, rev, m] for s, rev, m in p.truth.also], p.truth.wrong, p.truth.code + 1]
                    for i, p in enumerate(c.parts)
                ]  # fmt: skip
            d.log(t, Kind.ACCEPTED, None, detail)
            continue
        if d.setup.figures:
            strike(d, c)
        producer.verdict = (False, t)
        d.log(t, Kind.REFUSED, None, {"digest": c.digest, "producer": c.attempt, "reason": reason})
        # running -> refused; a silent UNKNOWN producer stays UNKNOWN (a crashed one for
        # good), and a paused one stops when it wakes and reads the verdict
        if producer.status is Status.RUNNING or (
            producer.status is Status.UNKNOWN and producer.silent_since is None
        ):
            stop(d, producer, t)
        d.put(producer.freeze())
    return d.done()


def refusal(d: Draft, c: Candidate) -> str | None:
    if stale(d.setup, c.token, c.attempt, d.epoch, d.owner):
        return "stale token"
    if d.setup.figures:  # beyond the article's model: the assessor reads every figure
        wrong = [f"s{i + 1}" for i, p in enumerate(c.parts) if p.truth.wrong]
        if wrong:
            return f"the figures of {', '.join(wrong)} do not match the section; its journal record is struck"
    if not d.setup.pins:
        return None  # every complete candidate is accepted
    if c.pin != d.version:
        return f"pinned to v{(c.pin or 0) + 1}, report is v{d.version + 1}"
    if built_from(c) != d.content:
        return "a part does not match the pinned version"
    if any(a.version == d.version for a in d.acceptances):
        return f"a digest is already accepted for v{d.version + 1}"
    return None


def strike(d: Draft, c: Candidate) -> None:
    """assessor=figures (beyond the article's model): the journal records of a refused
    digest's wrong parts are struck, so that the rebuild computes those steps again rather
    than restoring the same wrong summaries by key."""
    wrong = {p.result for p in c.parts if p.truth.wrong}
    if wrong:
        d.journal = tuple((key, record) for key, record in d.journal if record.result not in wrong)


def gate(state: State, t: int, faults: Faults) -> Step:
    """b. From its ready tick on, each dependant not yet started takes a digest by its rule
    (the newsletter rule), in the order the dependants are declared."""
    d: Draft | None = None
    for i, dependant in enumerate(state.setup.dependants):
        if state.started[i] is not None or t < dependant.ready:
            continue
        digest = choose(state, dependant)
        if digest is None:
            continue
        if d is None:
            d = Draft(state, faults)
        d.started = d.started[:i] + (digest.digest,) + d.started[i + 1:]
        part = digest.parts[state.setup.figure]
        detail = {
            "digest": digest.digest, "quote": quoted(part.content, part.truth.wrong),
            "built_from": list(built_from(digest)), "accepted": any(a.digest == digest.digest for a in state.acceptances),
        }  # fmt: skip
        if named_run(state.setup):
            detail["dependant"] = dependant.name
        d.log(t, Kind.NEWSLETTER, None, detail)
    return (state, NO_EVENTS) if d is None else d.done()


def choose(state: State, dependant: Dependant) -> Candidate | None:
    """The dependant's rule (docs/model.md §4, the newsletter rule): which digest it would take now."""
    acceptances = state.acceptances
    rule = dependant.rule
    if rule is Rule.LATEST_FINISHED:
        return state.candidates[-1] if state.candidates else None
    if rule is Rule.CURRENT_ACCEPTED and state.setup.pins:
        current = [a for a in acceptances if a.version == state.version]
        return find_candidate(state.candidates, current[-1].digest) if current else None
    if rule is Rule.CURRENT_ACCEPTED and not dependant.fail_open:
        return None  # fail-closed: nothing to compare, so it waits
    return find_candidate(state.candidates, acceptances[-1].digest) if acceptances else None


def suspect(state: State, t: int, faults: Faults) -> Step:
    """c. A running attempt silent for the heartbeat limit becomes UNKNOWN; if it owned the
    work, a successor is admitted (inheriting an announcement it owed)."""
    limit = state.setup.heartbeat_limit
    if state.outage is None:
        for a in state.attempts:
            if (a.silent_since is not None or a.unheard is not None) and suspected(a, t, limit, last_heard(a, t)):
                break
        else:
            return state, NO_EVENTS
    elif not any(suspected(a, t, limit, heard(state, a, t)) for a in state.attempts):
        return state, NO_EVENTS
    d = Draft(state, faults)
    for i in range(len(state.attempts)):
        a = d.attempts[i]
        since = heard(state, a, t)
        if since is not None and suspected(a, t, limit, since):
            a = with_field(a, _STATUS, Status.UNKNOWN)
            d.put(a)
            d.log(t, Kind.UNKNOWN, a.n, {"missed": t - since})
            if a.n == d.owner:
                admit(d, t, "suspicion", announcement_owed(a))
    return d.done()


def suspected(a: AttemptState, t: int, limit: int, since: int | None) -> bool:
    """Running, and unheard since `since` for the heartbeat limit. A stuck attempt (a strict
    replay failed, beyond the article's model) is never suspected: the engine keeps it as
    the owner whatever its heartbeats (docs/model.md §9)."""
    return a.status is Status.RUNNING and since is not None and t - since >= limit and not stuck(a)


def heard(state: State, a: AttemptState, t: int) -> int | None:
    """The tick the controller counts #n's silence from at t (None: it heard it at t).

    Without a controller outage, the attempt's own `last_heard`. After a restart (beyond the
    article's model, `sim.model.faults.restart`) the heartbeats sent while the controller was down,
    from its crash tick through its restart tick (the workers act before the controller), were
    heard by nobody; the knob `controller_state` says what the restarted controller counts
    from instead: rebuilt timers count every attempt as heard at the restart; old timers
    ("old-timers") count from the last tick it was up before its crash. A heartbeat after the
    restart is heard as usual."""
    since = last_heard(a, t)
    outage = state.outage
    if outage is None:
        return since
    down, back = outage
    sent = t if since is None else since  # its last heartbeat
    if sent > back:
        return since
    if state.setup.controller_state == "old-timers":
        return down - 1 if sent >= down else since
    return back


def rebuild(state: State, t: int, faults: Faults) -> Step:
    """d. With no owner yet, or when the owner ended without the work done, admit another."""
    if state.owner is None:
        reason = "start"
    elif rebuild_due(state, t):
        reason = "rebuild"
    else:
        return state, NO_EVENTS
    d = Draft(state, faults)
    admit(d, t, reason, None)
    return d.done()


def rebuild_due(state: State, t: int) -> bool:
    if state.owner is None:
        return False
    owner = state.attempts[state.owner - 1]
    return (
        owner.ended is not None
        and owner.ended < t
        and (owner.status is Status.DONE or owner.status is Status.REFUSED)
        and not satisfied(state)
    )


def satisfied(state: State) -> bool:
    """The work is done for the current input (docs/model.md §5.3 d)."""
    if state.setup.pins:
        return any(a.version == state.version for a in state.acceptances)
    if state.last_acceptance is None:
        return False
    return state.last_change is None or state.last_change <= state.last_acceptance


# -- the end of a tick (docs/model.md §5.8) ----------------------------------------------------
assert State._fields[-1] == "tick"


def end_of_tick(state: State, t: int) -> State:
    """After the controller's steps at t: the run is over, or the controller acts at t + 1."""
    if quiescent(state, t):
        return with_field(state, _FINISHED, True, _LAST_TICK, t)
    if t >= state.setup.horizon:
        return with_field(with_field(state, _FINISHED, True, _LAST_TICK, t), _HORIZON_REACHED, True)
    fields = cast("tuple[object, ...]", state)  # as a tuple of any length: compiled, not unboxed field by field
    return _new(_State, fields[:-1] + (t + 1,))  # state._replace(tick=t + 1), faster


def controller(state: State, t: int, faults: Faults) -> Step:
    """The controller's phase of tick t: its steps in `order.CONTROLLER_STEPS` order, then
    `end_of_tick`. Beyond the article's model, the one place a controller outage acts: while
    the controller is down its phase does nothing; in the tick it comes back its first step,
    `restart`, brings it back."""
    if state.down is not None and t < state.down:
        return end_of_tick(state, t), NO_EVENTS
    if WRITTEN_ORDER:  # the steps called directly (C calls, compiled), in `order.CONTROLLER_STEPS` order
        state, e0 = restart(state, t, faults)
        state, e1 = assess(state, t, faults)
        state, e2 = gate(state, t, faults)
        state, e3 = suspect(state, t, faults)
        state, e4 = rebuild(state, t, faults)
    else:
        state, events = stepped(CONTROLLER_STEPS, state, t, faults)
        return end_of_tick(state, t), events or NO_EVENTS
    if e0 or e1 or e2 or e3 or e4:
        return end_of_tick(state, t), [*e0, *e1, *e2, *e3, *e4]
    return end_of_tick(state, t), NO_EVENTS


def quiescent(state: State, t: int) -> bool:
    """Nothing can happen any more: the run is over (never while the controller is down)."""
    if state.down is not None or state.assessed < len(state.candidates) or t < state.setup.last_change_at:
        return False
    for i, dependant in enumerate(state.setup.dependants):
        if state.started[i] is None and t < dependant.ready:
            return False
    for a in state.attempts:
        if a.next_tick is not None or (a.crashed and a.status is Status.RUNNING):
            return False
    return not rebuild_due(state, t + 1)


def workers_phase(state: State, t: int, faults: Faults) -> Step:
    """§5.2: each attempt due at t does its step, in `order.worker_priority` order (an
    attempt the controller admits at t acts from t + 1)."""
    due = [a.n for a in state.attempts if a.next_tick == t]
    if not due:
        return state, NO_EVENTS
    if len(due) == 1:  # most ticks: one attempt acts, nothing to order
        return act(state, due[0], t, faults)
    events: list[Event] = []
    for n in sorted(due, key=order.worker_priority):
        state, e = act(state, n, t, faults)
        events += e
    return state, events


def run_tick(state: State, t: int, faults: Faults) -> tuple[State, list[Event]]:
    """The whole of tick t, stepped directly rather than by SimPy (`sim check`'s search):
    its phases in `order.PHASES` order, the order SimPy's priorities give them. The input
    phase consults the faults at every tick."""
    if not WRITTEN_ORDER:
        return stepped(TICK_PHASES, state, t, faults)
    state, e0 = input_phase(state, t, faults)  # the phases called directly, in `order.PHASES` order
    state, e1 = workers_phase(state, t, faults)
    state, e2 = controller(state, t, faults)
    return state, [*e0, *e1, *e2]


def stepped(steps: Sequence[Callable[[State, int, Faults], Step]], state: State, t: int,
            faults: Faults) -> tuple[State, list[Event]]:  # fmt: skip
    """Steps in the order given, each from the state the one before left, and their events:
    the declared order (`TICK_PHASES`, `CONTROLLER_STEPS`) where it is not the written one."""
    events: list[Event] = []
    for step in steps:
        state, e = step(state, t, faults)
        events += e
    return state, events


#: the phases of a tick, in the order `sim.engine.order` gives
TICK_PHASES: Final[tuple[Callable[[State, int, Faults], Step], ...]] = tuple(globals()[name] for name in order.PHASES)

#: the controller's steps, in the order `sim.engine.order` gives
CONTROLLER_STEPS: Final[tuple[Callable[[State, int, Faults], Step], ...]] = tuple(
    globals()[name] for name in order.CONTROLLER_STEPS
)

#: whether `run_tick` and `controller` may call the phases and the controller's steps as they are
#: written out there, by name: only while that is the order `sim.engine.order` declares (compiled,
#: a direct call is a C call, and one through `TICK_PHASES` goes through the interpreter's calling
#: convention, about 3 % of the search's instructions); an order changed there and not here runs
#: the declared order through the tuples, never the written one
def as_written(phases: Sequence[object], steps: Sequence[object]) -> bool:
    """Whether these are the phases and the controller's steps in the order `run_tick` and
    `controller` call them by name."""
    return tuple(phases) == (input_phase, workers_phase, controller) and tuple(steps) == (
        restart, assess, gate, suspect, rebuild)  # fmt: skip


WRITTEN_ORDER: Final = as_written(TICK_PHASES, CONTROLLER_STEPS)

#: the step of the worker's program each phase names (docs/model.md §5.4)
PROGRAM: Final[dict[str, Callable[[Draft, Worker, int, Stall | None], int | None]]] = {
    STEPS: do_steps, ASSEMBLE: do_assemble, WAIT: do_wait, POST: do_post,
}  # fmt: skip
