"""Every kind of trace event, declared once: its fields, what it means, how it reads.

An `Event`'s `detail` stays the plain dict the engine logs (so `Event.to_json()` and every
digest over events are unchanged). This module says what that dict holds, per kind:

- a payload class per kind (a frozen dataclass) lists the fields in the order the engine
  inserts them, with their types. `read(event)` returns the event's payload as that class,
  so a renderer reads `payload.token`, checked by mypy, instead of `detail["token"]`.
  A `write` event has three shapes, one per protected store; its `store` field picks one.
- the payload class words the event: `narrate(who)` is its line in the tick narrative
  (`sim trace`'s event list, the ITF export's `events`), `phrase(versions)` its few words in
  the per-tick story the swimlane and the diff show.
- `EVENT_KINDS[kind]` (an `EventKind`) adds what concerns the kind as a whole: which
  fields are only an intention and not something that happened (`planned`: a pause's
  `wake`, which a fault schedule fixes in advance), who the short phrase is about, and what
  the event does to its attempt's lifecycle status and silence (docs/model.md §3
  and §5.5).

A field declared with a default is optional: the engine writes it only when something beyond
the article's model is in play (docs/outside.md), so every event of the article's model keeps
exactly its article fields; `EventKind.fields` leaves out an optional field a detail lacks.

Types are the JSON values the engine writes. JSON has one kind of array, so a fixed-shape
array (a journal step `[step, result, content]`, a candidate part `[result, content]`) is
declared as a tuple type but is a list at run time: read it by index or by unpacking, and do
not compare it with a tuple. `conforms` checks a value against a declared type that way.
"""

from __future__ import annotations

import types
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar, Literal, Union, get_args, get_origin, get_type_hints

from sim.trace import Event, Kind, revenue

#: report content by version (version 1 first), as `Trace.versions` holds it.
Versions = tuple[tuple[int, ...], ...]

#: one journal record in a write: [step (1-based), result, section content revision].
Step = tuple[int, str, int]
#: one part of a candidate: [result, section content revision].
PartRecord = tuple[str, int]
#: another section a step read (beyond the article's model): [section (1-based), content
#: revision, its bytes changed under the hash].
Also = tuple[int, int, bool]
#: what one part of an accepted digest really read and ran under (beyond the article's model):
#: [step, its own bytes changed under the hash, the other sections it read, wrong summary,
#: code version (1-based)].
PartTruth = tuple[int, bool, list[Also], bool, int]


class Payload:
    """The fields of one event, read from its `detail`; subclasses declare them."""

    __slots__ = ()

    def narrate(self, who: str) -> str:
        """The event in one line of words; `who` names its attempt ("controller" if none)."""
        raise NotImplementedError

    def phrase(self, versions: Versions) -> str:
        """The event in a few words, without its subject (see `EventKind.subject`)."""
        raise NotImplementedError


def _steps(steps: list[Step], results: bool) -> str:
    return ", ".join(f"s{s[0]}={s[1]}" if results else f"s{s[0]}" for s in steps)


def _built(versions: Versions, content: list[int]) -> str:
    built = tuple(content)
    return f"v{versions.index(built) + 1}" if built in versions else "a mix of versions"


def _recorded(version: int | None) -> str:
    return f" for v{version}" if version is not None else " (no version recorded)"


# -- the input and the controller ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReportChanged(Payload):
    version: int  # 1-based
    sections: list[int]  # the 1-based sections whose content changed
    content: list[int]  # the new content revision of every section

    def narrate(self, who: str) -> str:
        sections = ", ".join(str(s) for s in self.sections)
        return f"report changes to v{self.version} (section {sections} new)"

    def phrase(self, versions: Versions) -> str:
        sections = ", ".join(str(s) for s in self.sections)
        says = f", revenue now {revenue(self.content[1])}" if 2 in self.sections else ""
        return f"changes to v{self.version} (section {sections} new{says})"


#: why the controller admitted an attempt, in words.
WHY_ADMITTED = {"start": "first attempt", "suspicion": "successor", "rebuild": "rebuild"}


@dataclass(frozen=True, slots=True)
class Admitted(Payload):
    token: int  # the attempt's owner token, which is the new epoch
    reason: Literal["start", "suspicion", "rebuild"]
    pin: int | None  # the 1-based version it is pinned to; None with pins off
    reconcile: str | None  # the digest whose announcement it only finishes, if any

    def narrate(self, who: str) -> str:
        pin = f"pinned to v{self.pin}" if self.pin is not None else "unpinned (reads the live report)"
        extra = f"; only finishes the announcement of {self.reconcile}" if self.reconcile else ""
        why = WHY_ADMITTED[self.reason]
        return f"{who} admitted ({why}) with owner token {self.token} = new epoch, {pin}{extra}"

    def phrase(self, versions: Versions) -> str:
        pin = f"pinned to v{self.pin}" if self.pin is not None else "unpinned"
        extra = f", only to finish {self.reconcile}'s announcement" if self.reconcile else ""
        return f"admitted with token {self.token} = new epoch, {pin}{extra}"


@dataclass(frozen=True, slots=True)
class Accepted(Payload):
    digest: str
    producer: int  # the attempt that built the candidate
    version: int | None  # the 1-based version it is accepted for; None with pins off
    built_from: list[int]  # the content revision of each section its parts read
    # beyond the article's model (docs/outside.md, cases 5, 6 and 8), written only then:
    code: int | None = None  # the code version in force (1-based)
    truth: list[PartTruth] | None = None  # what each part really read and ran under

    def narrate(self, who: str) -> str:
        code = "" if self.code is None else f" under code v{self.code}"
        return f"digest {self.digest} of #{self.producer} accepted{_recorded(self.version)}{code}"

    def phrase(self, versions: Versions) -> str:
        built = _built(versions, self.built_from)
        return f"{self.digest} accepted{_recorded(self.version)}, built from {built}"


@dataclass(frozen=True, slots=True)
class Refused(Payload):
    digest: str
    producer: int
    reason: str

    def narrate(self, who: str) -> str:
        return f"digest {self.digest} of #{self.producer} refused: {self.reason}"

    def phrase(self, versions: Versions) -> str:
        return f"{self.digest} refused: {self.reason}"


@dataclass(frozen=True, slots=True)
class Unknown(Payload):
    missed: int  # heartbeats missed when the controller suspects the attempt

    def narrate(self, who: str) -> str:
        return f"{who} is UNKNOWN after {self.missed} missed heartbeats"

    def phrase(self, versions: Versions) -> str:
        return f"UNKNOWN ({self.missed} missed heartbeats)"


@dataclass(frozen=True, slots=True)
class Newsletter(Payload):
    digest: str  # the digest the newsletter starts on
    quote: str  # the revenue figure it quotes
    built_from: list[int]
    accepted: bool  # whether that digest was ever accepted

    def narrate(self, who: str) -> str:
        accepted = "" if self.accepted else " (never accepted)"
        return f"newsletter starts on {self.digest}{accepted}, quoting {self.quote} million"

    def phrase(self, versions: Versions) -> str:
        accepted = "" if self.accepted else " (never accepted)"
        return f"starts on {self.digest}{accepted}, quoting {self.quote} million"


# -- an attempt's life --------------------------------------------------------------------

#: what a silent attempt was doing, by the `silent` event's `during`.
DURING = {
    "compute": "while computing",
    "assemble": "before assembling",
    "waiting": "while waiting",
    "post": "before posting",
    "send": "after recording its intent, before sending",
}


@dataclass(frozen=True, slots=True)
class Silent(Payload):
    crashed: bool  # a crash never wakes
    wake: int | None  # planned: the tick a pause ends (None for a crash)
    during: Literal["compute", "assemble", "waiting", "post", "send"]

    def narrate(self, who: str) -> str:
        during = DURING[self.during]
        if self.crashed:
            return f"{who} goes silent {during} (crashed: never wakes)"
        return f"{who} goes silent {during} (paused until t{self.wake})"

    def phrase(self, versions: Versions) -> str:
        return "falls silent (crashed)" if self.crashed else f"falls silent (paused until t{self.wake})"


@dataclass(frozen=True, slots=True)
class Woke(Payload):
    def narrate(self, who: str) -> str:
        return f"{who} wakes up"

    def phrase(self, versions: Versions) -> str:
        return "wakes"


@dataclass(frozen=True, slots=True)
class Computed(Payload):
    step: int  # 1-based
    result: str
    content: int  # the section content revision it read
    # beyond the article's model (docs/outside.md, cases 5, 6 and 8), each written only when
    # it is not the article's case:
    changed: bool = False  # the bytes it read are not the ones the section's hash names
    also: list[Also] | None = None  # other sections it read (reads=next-section...)
    wrong: bool = False  # the summary is wrong in content, right in form
    code: int | None = None  # the code version it ran under, when not the first
    retry: int | None = None  # the engine's nth re-delivery of the step (the knob `retries`)

    def extras(self) -> str:
        out = []
        if self.changed:
            out.append("its section's bytes changed under their hash")
        for section, rev, changed in self.also or ():
            out.append(f"also reads section {section} rev {rev}" + (" (changed bytes)" if changed else ""))
        if self.wrong:
            out.append("WRONG summary, right in form")
        if self.code is not None:
            out.append(f"code v{self.code}")
        if self.retry is not None:
            out.append(f"the engine's retry {self.retry}, its result not kept")
        return f" ({'; '.join(out)})" if out else ""

    def narrate(self, who: str) -> str:
        return f"{who} computes s{self.step} (model call) -> {self.result} from section rev {self.content}{self.extras()}"

    def phrase(self, versions: Versions) -> str:
        return f"computes s{self.step} (model call){self.extras()}"


@dataclass(frozen=True, slots=True)
class Restored(Payload):
    step: int
    result: str
    by: int  # the attempt that computed the record
    content: int

    def narrate(self, who: str) -> str:
        return f"{who} restores s{self.step} from the journal ({self.result}, computed by #{self.by})"

    def phrase(self, versions: Versions) -> str:
        return f"restores s{self.step} (#{self.by}'s record)"


@dataclass(frozen=True, slots=True)
class Fenced(Payload):
    def narrate(self, who: str) -> str:
        return f"{who} is fenced: it stops (it may still be alive)"

    def phrase(self, versions: Versions) -> str:
        return "is fenced and stops"


@dataclass(frozen=True, slots=True)
class Adopted(Payload):
    """Beyond the article's model (the knob `fenced_end`): a fenced worker returns the
    owner's recorded outcome instead of stopping with nothing."""

    owner: int  # the attempt whose outcome it returns
    digest: str  # the digest whose announcement that attempt confirmed

    def narrate(self, who: str) -> str:
        return f"{who}, fenced, returns #{self.owner}'s result: the announcement of {self.digest}"

    def phrase(self, versions: Versions) -> str:
        return f"returns #{self.owner}'s result ({self.digest})"


@dataclass(frozen=True, slots=True)
class Stopped(Payload):
    digest: str  # its refused candidate

    def narrate(self, who: str) -> str:
        return f"{who} stops: its candidate {self.digest} was refused"

    def phrase(self, versions: Versions) -> str:
        return "stops"


@dataclass(frozen=True, slots=True)
class Died(Payload):
    point: Literal["before-intent", "after-intent", "after-send"]

    def narrate(self, who: str) -> str:
        return f"{who} dies {self.point.replace('-', ' ')}"

    def phrase(self, versions: Versions) -> str:
        return f"dies {self.point.replace('-', ' ')}"


@dataclass(frozen=True, slots=True)
class UnheardPayload(Payload):
    until: int  # the tick from which the controller hears its heartbeats again

    def narrate(self, who: str) -> str:
        return f"{who}'s heartbeats stop reaching the controller until t{self.until} (it keeps working)"

    def phrase(self, versions: Versions) -> str:
        return f"goes unheard until t{self.until}"


@dataclass(frozen=True, slots=True)
class Mutated(Payload):
    """Beyond the article's model (`sim.faults.mutation`): bytes change under their hash."""

    section: int  # 1-based
    version: int  # the 1-based version whose section it is (the current one)
    content: int  # the content revision its hash names (unchanged)

    def narrate(self, who: str) -> str:
        return f"the bytes of section {self.section} of v{self.version} change in place; its hash (rev {self.content}) does not"

    def phrase(self, versions: Versions) -> str:
        return f"section {self.section}'s bytes change under its hash (still v{self.version})"


@dataclass(frozen=True, slots=True)
class CodeChanged(Payload):
    """Beyond the article's model (`sim.faults.code`): a deploy changes the orchestration code."""

    code: int  # the new code version (1-based)

    def narrate(self, who: str) -> str:
        return f"the orchestration code changes to v{self.code} (new attempts run it)"

    def phrase(self, versions: Versions) -> str:
        return f"changes to v{self.code} (attempts admitted from now on run it)"


@dataclass(frozen=True, slots=True)
class ReplayFailed(Payload):
    """Beyond the article's model (the knob `replay`): a strict replay's non-determinism error."""

    step: int  # 1-based
    recorded: int  # the code version the journal record was written under (1-based)
    code: int  # the code version the attempt runs (1-based)

    def narrate(self, who: str) -> str:
        return (
            f"{who} replays s{self.step}: its record was written under code v{self.recorded}, it runs "
            f"v{self.code}: non-determinism error, it is stuck"
        )

    def phrase(self, versions: Versions) -> str:
        return f"non-determinism error at s{self.step} (record of code v{self.recorded}): stuck"


@dataclass(frozen=True, slots=True)
class ControllerDown(Payload):
    until: int  # the tick in whose controller phase it restarts

    def narrate(self, who: str) -> str:
        return f"the controller crashes: no assessment, gate, suspicion or admission until it restarts at t{self.until}"

    def phrase(self, versions: Versions) -> str:
        return f"crashes, down until t{self.until}"


#: what survived a controller restart, in words, by the knob `controller_state`'s value
RESTARTED_WITH = {
    "durable": "its records and epoch intact, suspicion timers rebuilt",
    "no-epoch": "its owner-token counter starting again",
    "no-intents": "its unconfirmed intents lost",
    "old-timers": "its old suspicion timers",
}


@dataclass(frozen=True, slots=True)
class ControllerUp(Payload):
    state: Literal["durable", "no-epoch", "no-intents", "old-timers"]
    epoch: int  # the epoch the stores compare tokens with after the restart
    intents_lost: int  # unconfirmed intent records lost at the restart

    def narrate(self, who: str) -> str:
        lost = f", {self.intents_lost} unconfirmed intent(s) lost" if self.intents_lost else ""
        return f"the controller restarts with {RESTARTED_WITH[self.state]} (epoch {self.epoch}{lost})"

    def phrase(self, versions: Versions) -> str:
        lost = f", {self.intents_lost} intent(s) lost" if self.intents_lost else ""
        return f"restarts with {RESTARTED_WITH[self.state]} (epoch {self.epoch}{lost})"


#: what a storage loss takes, in words, by store
LOST_STORE = {
    "journal": "the journal's step records",
    "acceptances": "the controller's acceptance records",
    "effects": "the effect records (intents and confirmations)",
}


@dataclass(frozen=True, slots=True)
class Lost(Payload):
    store: Literal["journal", "acceptances", "effects"]
    records: int  # how many records were lost

    def narrate(self, who: str) -> str:
        return f"storage loss: {LOST_STORE[self.store]} are gone ({self.records} record(s))"

    def phrase(self, versions: Versions) -> str:
        return f"loses {LOST_STORE[self.store]} ({self.records})"


@dataclass(frozen=True, slots=True)
class Done(Payload):
    digest: str  # the digest whose announcement it confirmed

    def narrate(self, who: str) -> str:
        return f"{who} done: announcement of {self.digest} confirmed"

    def phrase(self, versions: Versions) -> str:
        return "done"


# -- protected writes (docs/model.md §2) ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Write(Payload):
    """What every protected write logs; `JournalWrite`, `CandidateWrite` and `EffectWrite`
    add the fields of their store."""

    store: str
    token: int  # the writer's token
    epoch: int  # the epoch the write met
    applied: bool
    record: str

    @property
    def stale(self) -> bool:
        """The writer's token is below the epoch (applied only with fencing off)."""
        return self.token < self.epoch

    def what(self, results: bool) -> str:
        """What is written; with `results`, the step records' results too."""
        raise NotImplementedError

    def narrate(self, who: str) -> str:
        verdict = "applied" if self.applied else "REJECTED (stale token)"
        stale = " with a STALE token" if self.applied and self.stale else ""
        what = self.what(results=True)
        return f"{who} writes {what} with token {self.token} (epoch {self.epoch}): {verdict}{stale}"

    def phrase(self, versions: Versions) -> str:
        what = self.what(results=False)
        token = f"token {self.token} < epoch {self.epoch}"
        if not self.applied:
            return f"writes {what}: REJECTED ({token})"
        if self.stale:
            return f"writes {what} with a STALE token ({token}): applied"
        return f"writes {what}"


@dataclass(frozen=True, slots=True)
class JournalWrite(Write):
    store: Literal["journal"]
    record: Literal["steps"]
    steps: list[Step]

    def what(self, results: bool) -> str:
        return "journal " + _steps(self.steps, results)


@dataclass(frozen=True, slots=True)
class CandidateWrite(Write):
    store: Literal["candidate"]
    record: Literal["candidate"]
    digest: str
    parts: list[PartRecord]
    pin: int | None  # 1-based; None with pins off
    steps: list[Step]  # end-only checkpoints: the step records written with it

    def what(self, results: bool) -> str:
        journal = " + journal " + _steps(self.steps, results) if self.steps else ""
        return f"candidate {self.digest}{journal}"


@dataclass(frozen=True, slots=True)
class EffectWrite(Write):
    store: Literal["effect"]
    record: Literal["intent", "confirmed"]
    digest: str

    def what(self, results: bool) -> str:
        what = "intent" if self.record == "intent" else "confirmation"
        return f"effect {what} for {self.digest}" if results else f"{what} for {self.digest}"


# -- the announcement (docs/model.md §5.4) -------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sent(Payload):
    digest: str
    key: str | None  # the idempotency key; None without one
    copies: int  # 2 when the request is delivered twice, concurrently

    def narrate(self, who: str) -> str:
        key = self.key if self.key is not None else "no key"
        copies = " (delivered twice, concurrently)" if self.copies > 1 else ""
        return f"{who} sends the announcement of {self.digest} with key {key}{copies}"

    def phrase(self, versions: Versions) -> str:
        key = f"key {self.key}" if self.key is not None else "no key"
        copies = ", delivered twice" if self.copies > 1 else ""
        return f"sends the announcement of {self.digest} ({key}{copies})"


@dataclass(frozen=True, slots=True)
class Feed(Payload):
    digest: str
    key: str | None
    answer: Literal["applied", "repeat", "rejected"]
    post: str | None  # the post applied or repeated; None when rejected

    def narrate(self, who: str) -> str:
        if self.answer == "applied":
            return f"feed applies post {self.post}"
        if self.answer == "repeat":
            return f"feed recognises the key and answers with the original post {self.post}"
        return "feed rejects a different request under a used key"

    def phrase(self, versions: Versions) -> str:
        if self.answer == "applied":
            return f"applies post {self.post}"
        if self.answer == "repeat":
            return f"knows the key: answers with the original {self.post}"
        return "rejects a different request under a used key"


@dataclass(frozen=True, slots=True)
class Expired(Payload):
    """Beyond the article's model (the knob `retention`): the feed no longer knows a key."""

    key: str
    post: str  # the post the forgotten key had answered with
    remembered: int  # the tick the feed remembered the key

    def narrate(self, who: str) -> str:
        return f"feed has forgotten key {self.key} (remembered at t{self.remembered} for {self.post}): a new request"

    def phrase(self, versions: Versions) -> str:
        return f"has forgotten key {self.key} (remembered at t{self.remembered})"


@dataclass(frozen=True, slots=True)
class Retracted(Payload):
    """Beyond the article's model (the knob `compensate`): a correction retracts a copy."""

    digest: str
    post: str  # the earlier post retracted
    correction: str  # the correcting post that supersedes it

    def narrate(self, who: str) -> str:
        return f"feed retracts post {self.post} of {self.digest}: the correction {self.correction} supersedes it"

    def phrase(self, versions: Versions) -> str:
        return f"retracts {self.post} (superseded by the correction {self.correction})"


# -- the registry -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EventKind:
    """One kind of event as data: its payload shape(s) and what it means."""

    kind: Kind
    #: the payload class; a `write` has one per store, told apart by the `store` field.
    shapes: tuple[type[Payload], ...]
    #: fields that are an intention, not something that happened (a pause's planned wake):
    #: two runs that differ only there did the same thing.
    planned: tuple[str, ...] = ()
    #: who the event's short phrase is about; None: its attempt ("#n").
    subject: str | None = None
    #: its attempt's lifecycle status after it (docs/model.md); None: unchanged.
    status: str | None = None
    #: whether its attempt is silent after it; None: unchanged.
    silent: bool | None = None

    #: the field that picks the shape of a kind with several.
    TAG: ClassVar[str] = "store"

    def shape(self, detail: dict[str, Any]) -> type[Payload]:
        """The payload class of an event of this kind with this detail."""
        if len(self.shapes) == 1:
            return self.shapes[0]
        return _BY_TAG[self.kind][detail[self.TAG]]

    def read(self, event: Event) -> Payload:
        """The event's detail as its declared payload class."""
        return self.shape(event.detail)(**event.detail)

    def fields(self, detail: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
        """(name, declared type) of each field of this detail's shape, in the engine's order
        (an optional field only when the detail has it)."""
        shape = self.shape(detail)
        optional = _OPTIONAL[shape]
        if not optional:
            return declared(shape)
        return tuple((name, hint) for name, hint in declared(shape) if name in detail or name not in optional)


def declared(shape: type[Payload]) -> tuple[tuple[str, Any], ...]:
    """(name, type) of each field of a payload class, in order."""
    return _DECLARED[shape]


def _declare(shape: type[Payload]) -> tuple[tuple[str, Any], ...]:
    hints = get_type_hints(shape)
    return tuple((f.name, hints[f.name]) for f in fields(shape))  # type: ignore[arg-type]


EVENT_KINDS: dict[Kind, EventKind] = {
    k.kind: k
    for k in (
        EventKind(Kind.REPORT_CHANGED, (ReportChanged,), subject="report"),
        EventKind(Kind.ADMITTED, (Admitted,), status="running"),
        EventKind(Kind.SILENT, (Silent,), planned=("wake",), silent=True),
        EventKind(Kind.WOKE, (Woke,), silent=False),
        EventKind(Kind.COMPUTED, (Computed,)),
        EventKind(Kind.RESTORED, (Restored,)),
        EventKind(Kind.WRITE, (JournalWrite, CandidateWrite, EffectWrite)),
        EventKind(Kind.FENCED, (Fenced,), status="fenced"),
        EventKind(Kind.ACCEPTED, (Accepted,), subject=""),
        EventKind(Kind.REFUSED, (Refused,), subject=""),
        EventKind(Kind.STOPPED, (Stopped,), status="refused"),
        EventKind(Kind.UNKNOWN, (Unknown,), status="UNKNOWN"),
        EventKind(Kind.SENT, (Sent,)),
        EventKind(Kind.FEED, (Feed,), subject="feed"),
        EventKind(Kind.DIED, (Died,), silent=True),
        EventKind(Kind.DONE, (Done,), status="done"),
        EventKind(Kind.NEWSLETTER, (Newsletter,), subject="newsletter"),
        EventKind(Kind.LOST, (Lost,), subject="storage"),
        EventKind(Kind.UNHEARD, (UnheardPayload,)),
        EventKind(Kind.EXPIRED, (Expired,), subject="feed"),
        EventKind(Kind.RETRACTED, (Retracted,), subject="feed"),
        EventKind(Kind.MUTATED, (Mutated,), subject="report"),
        EventKind(Kind.CODE_CHANGED, (CodeChanged,), subject="code"),
        EventKind(Kind.REPLAY_FAILED, (ReplayFailed,)),
        EventKind(Kind.CONTROLLER_DOWN, (ControllerDown,), subject="controller"),
        EventKind(Kind.CONTROLLER_UP, (ControllerUp,), subject="controller"),
        EventKind(Kind.ADOPTED, (Adopted,)),
    )
}


#: a kind with several shapes: its shapes by the value of their `EventKind.TAG` field.
_BY_TAG = {
    k.kind: {get_args(get_type_hints(s)[k.TAG])[0]: s for s in k.shapes}
    for k in EVENT_KINDS.values()
    if len(k.shapes) > 1
}

_DECLARED = {s: _declare(s) for k in EVENT_KINDS.values() for s in k.shapes}
#: the optional fields of each shape (declared with a default)
_OPTIONAL = {
    s: frozenset(f.name for f in fields(s) if f.default is not MISSING)  # type: ignore[arg-type]
    for k in EVENT_KINDS.values() for s in k.shapes
}  # fmt: skip


#: the planned fields of each kind that has some (see `EventKind.planned`).
PLANNED: dict[Kind, tuple[str, ...]] = {k: decl.planned for k, decl in EVENT_KINDS.items() if decl.planned}


def happened(event: Event) -> dict[str, Any]:
    """The event's detail without its planned fields: what took place, not what was intended."""
    planned = PLANNED.get(event.kind)
    if planned is None:
        return event.detail
    return {k: v for k, v in event.detail.items() if k not in planned}


def read(event: Event) -> Payload:
    """The event's payload, as its kind's declared class."""
    return EVENT_KINDS[event.kind].read(event)


def conforms(value: Any, hint: Any) -> bool:
    """Whether a JSON value has the declared type (a tuple type is a fixed-shape array)."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        return any(type(value) is type(a) and value == a for a in args)
    if origin is Union or origin is types.UnionType:
        return any(conforms(value, a) for a in args)
    if origin is list:
        return isinstance(value, list) and all(conforms(v, args[0]) for v in value)
    if origin is tuple:
        shaped = isinstance(value, list) and len(value) == len(args)
        return shaped and all(conforms(v, a) for v, a in zip(value, args))
    if hint is None or hint is type(None):
        return value is None
    return type(value) is hint  # bool is not an int here, nor an int a bool


__all__ = [
    "DURING",
    "EVENT_KINDS",
    "EventKind",
    "PLANNED",
    "Payload",
    "Versions",
    "conforms",
    "declared",
    "happened",
    "read",
]
