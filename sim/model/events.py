"""Every kind of trace event, declared once: its name (`Kind`), its fields, what it means, how
it reads. An `Event` is one thing that happened at a tick; `sim.engine.trace` re-exports both.

An `Event`'s `detail` is the plain dict the engine logs (so `Event.to_json()` and every
digest over events are unchanged). This module says what that dict holds, per kind, and is
the only module that reads it by key (`tests/test_typed_events.py` checks that):

- a payload type per kind (a `TypedDict`) lists the fields in the order the engine inserts
  them, with their types. `payload(event, Accepted)` returns the event's detail typed as
  that payload, so a reader writes `payload(e, Accepted)["digest"]` and mypy checks the field
  name and its type. It is the detail itself, not a copy: a reader on a hot path (a
  property's monitor, over the millions of events of `sim check`) allocates nothing.
  `payload` refuses an event of another kind.
- a `write` event has three shapes, one per protected store: `write(event)` returns it as
  `AnyWrite`, the union of `JournalWrite`, `CandidateWrite` and `EffectWrite`, which a reader
  narrows by its `store` (or `record`) field.
- each kind's wording, two functions after its payload type: `narrate(event, who)` gives its
  line in the tick narrative (`sim trace`'s event list, the ITF export's `events`),
  `phrase(event, versions)` its few words in the per-tick story the swimlane and the diff
  show.
- `EVENT_KINDS[kind]` (an `EventKind`) adds what concerns the kind as a whole: its payload
  type(s) and wording, which fields are only an intention and not something that happened
  (`planned`: a pause's `wake`, which a fault schedule fixes in advance), who the short
  phrase is about, and what the event does to its attempt's lifecycle status and silence
  (docs/model.md §3 and §5.5).

A field declared `NotRequired` is optional: the engine writes it only when something beyond
the article's model is in play (docs/outside.md), so every event of the article's model keeps
exactly its article fields; a reader reads it with `.get`, and `EventKind.fields` leaves it
out of a detail that lacks it.

Types are the JSON values the engine writes. JSON has one kind of array, so a fixed-shape
array (a journal step `[step, result, content]`, a candidate part `[result, content]`) is
declared as a tuple type but is a list at run time: read it by index or by unpacking, and do
not compare it with a tuple. `conforms` checks a value against a declared type that way.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import (
    Any,
    ClassVar,
    Literal,
    NamedTuple,
    NotRequired,
    TypedDict,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)


class Kind(Enum):
    """The kinds of event (each one's spelling is its JSON `kind`); `EVENT_KINDS` declares each
    one's fields and wording."""

    REPORT_CHANGED = "report-changed"
    ADMITTED = "admitted"
    SILENT = "silent"
    WOKE = "woke"
    COMPUTED = "computed"  # a model call
    RESTORED = "restored"
    WRITE = "write"  # a protected write, of one of three stores
    FENCED = "fenced"
    ACCEPTED = "accepted"
    REFUSED = "refused"
    STOPPED = "stopped"  # the attempt stops because its candidate was refused
    UNKNOWN = "unknown"
    SENT = "sent"
    FEED = "feed"
    DIED = "died"
    DONE = "done"
    NEWSLETTER = "newsletter"
    LOST = "lost"  # a storage loss (beyond the article's model: `sim.model.faults.loss`)
    UNHEARD = "unheard"  # heartbeats delayed while working (beyond it: `sim.model.faults.delay`)
    EXPIRED = "expired"  # the feed had forgotten a key (beyond it: the knob `retention`)
    RETRACTED = "retracted"  # a correction retracted an earlier post (beyond it: `compensate`)
    MUTATED = "mutated"  # a section's bytes change under its hash (beyond it: `sim.model.faults.mutation`)
    CODE_CHANGED = "code-changed"  # the orchestration code changes (beyond it: `sim.model.faults.code`)
    REPLAY_FAILED = "replay-failed"  # a strict replay met a record of other code (the knob `replay`)
    CONTROLLER_DOWN = "controller-down"  # the controller crashes (beyond it: `sim.model.faults.restart`)
    CONTROLLER_UP = "controller-up"  # and restarts, with what survived on storage
    ADOPTED = "adopted"  # a fenced worker returns the owner's result (beyond it: `fenced_end`)

    # hashed by identity, in C (as `Status` is, `sim.engine.primitives`): the search looks up the
    # monitors of every event by its kind; a member is its only instance, its equality identity
    __hash__ = object.__hash__


class Event(NamedTuple):
    """One thing that happened at a tick; `detail` holds the fields its kind declares."""

    tick: int
    kind: Kind
    attempt: int | None
    detail: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"tick": self.tick, "kind": self.kind.value, "attempt": self.attempt, **self.detail}


#: revenue figure of section 2, by the section's content revision (v1 says 4.1, v2 says 4.7).
REVENUE = ("4.1", "4.7")


def revenue(revision: int) -> str:
    """The revenue figure a section-2 summary of this content revision quotes."""
    return REVENUE[revision] if revision < len(REVENUE) else f"r{revision}"


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

#: a payload type (one of the `TypedDict`s below)
P = TypeVar("P")


def _steps(steps: list[Step], results: bool) -> str:
    return ", ".join(f"s{s[0]}={s[1]}" if results else f"s{s[0]}" for s in steps)


def _built(versions: Versions, content: list[int]) -> str:
    built = tuple(content)
    return f"v{versions.index(built) + 1}" if built in versions else "a mix of versions"


def _recorded(version: int | None) -> str:
    return f" for v{version}" if version is not None else " (no version recorded)"


# Each payload type is followed by its wording: `_<kind>_line(payload, who)`, the event in one
# line of words (`who` names its attempt, "controller" if none), and
# `_<kind>_phrase(payload, versions)`, the event in a few words without its subject (see
# `EventKind.subject`).

# -- the input and the controller ---------------------------------------------------------


class ReportChanged(TypedDict):
    version: int  # 1-based
    sections: list[int]  # the 1-based sections whose content changed
    content: list[int]  # the new content revision of every section


def _report_changed_line(p: ReportChanged, who: str) -> str:
    sections = ", ".join(str(s) for s in p["sections"])
    return f"report changes to v{p['version']} (section {sections} new)"


def _report_changed_phrase(p: ReportChanged, versions: Versions) -> str:
    sections = ", ".join(str(s) for s in p["sections"])
    says = f", revenue now {revenue(p['content'][1])}" if 2 in p["sections"] else ""
    return f"changes to v{p['version']} (section {sections} new{says})"


#: why the controller admitted an attempt, in words.
WHY_ADMITTED = {"start": "first attempt", "suspicion": "successor", "rebuild": "rebuild"}


class Admitted(TypedDict):
    token: int  # the attempt's owner token, which is the new epoch
    reason: Literal["start", "suspicion", "rebuild"]
    pin: int | None  # the 1-based version it is pinned to; None with pins off
    reconcile: str | None  # the digest whose announcement it only finishes, if any


def _admitted_line(p: Admitted, who: str) -> str:
    pin = f"pinned to v{p['pin']}" if p["pin"] is not None else "unpinned (reads the live report)"
    extra = f"; only finishes the announcement of {p['reconcile']}" if p["reconcile"] else ""
    why = WHY_ADMITTED[p["reason"]]
    return f"{who} admitted ({why}) with owner token {p['token']} = new epoch, {pin}{extra}"


def _admitted_phrase(p: Admitted, versions: Versions) -> str:
    pin = f"pinned to v{p['pin']}" if p["pin"] is not None else "unpinned"
    extra = f", only to finish {p['reconcile']}'s announcement" if p["reconcile"] else ""
    return f"admitted with token {p['token']} = new epoch, {pin}{extra}"


class Accepted(TypedDict):
    digest: str
    producer: int  # the attempt that built the candidate
    version: int | None  # the 1-based version it is accepted for; None with pins off
    built_from: list[int]  # the content revision of each section its parts read
    # beyond the article's model (docs/outside.md, cases 5, 6 and 8), written only then:
    code: NotRequired[int]  # the code version in force (1-based)
    truth: NotRequired[list[PartTruth]]  # what each part really read and ran under


def _accepted_line(p: Accepted, who: str) -> str:
    code = p.get("code")
    under = "" if code is None else f" under code v{code}"
    return f"digest {p['digest']} of #{p['producer']} accepted{_recorded(p['version'])}{under}"


def _accepted_phrase(p: Accepted, versions: Versions) -> str:
    built = _built(versions, p["built_from"])
    return f"{p['digest']} accepted{_recorded(p['version'])}, built from {built}"


class Refused(TypedDict):
    digest: str
    producer: int
    reason: str


def _refused_line(p: Refused, who: str) -> str:
    return f"digest {p['digest']} of #{p['producer']} refused: {p['reason']}"


def _refused_phrase(p: Refused, versions: Versions) -> str:
    return f"{p['digest']} refused: {p['reason']}"


class Unknown(TypedDict):
    missed: int  # heartbeats missed when the controller suspects the attempt


def _unknown_line(p: Unknown, who: str) -> str:
    return f"{who} is UNKNOWN after {p['missed']} missed heartbeats"


def _unknown_phrase(p: Unknown, versions: Versions) -> str:
    return f"UNKNOWN ({p['missed']} missed heartbeats)"


class Newsletter(TypedDict):
    digest: str  # the digest the newsletter starts on
    quote: str  # the revenue figure it quotes
    built_from: list[int]
    accepted: bool  # whether that digest was ever accepted
    dependant: NotRequired[str]  # which dependant, in a run with several (a workflow's)


def _newsletter_line(p: Newsletter, who: str) -> str:
    accepted = "" if p["accepted"] else " (never accepted)"
    return f"{p.get('dependant', 'newsletter')} starts on {p['digest']}{accepted}, quoting {p['quote']} million"


def _newsletter_phrase(p: Newsletter, versions: Versions) -> str:  # its subject names the dependant
    accepted = "" if p["accepted"] else " (never accepted)"
    return f"starts on {p['digest']}{accepted}, quoting {p['quote']} million"


# -- an attempt's life --------------------------------------------------------------------

#: what a silent attempt was doing, by the `silent` event's `during`.
DURING = {
    "compute": "while computing",
    "assemble": "before assembling",
    "waiting": "while waiting",
    "post": "before posting",
    "send": "after recording its intent, before sending",
}


class Silent(TypedDict):
    crashed: bool  # a crash never wakes
    wake: int | None  # planned: the tick a pause ends (None for a crash)
    during: Literal["compute", "assemble", "waiting", "post", "send"]


def _silent_line(p: Silent, who: str) -> str:
    during = DURING[p["during"]]
    if p["crashed"]:
        return f"{who} goes silent {during} (crashed: never wakes)"
    return f"{who} goes silent {during} (paused until t{p['wake']})"


def _silent_phrase(p: Silent, versions: Versions) -> str:
    return "falls silent (crashed)" if p["crashed"] else f"falls silent (paused until t{p['wake']})"


class Woke(TypedDict):
    pass


def _woke_line(p: Woke, who: str) -> str:
    return f"{who} wakes up"


def _woke_phrase(p: Woke, versions: Versions) -> str:
    return "wakes"


class Computed(TypedDict):
    step: int  # 1-based
    result: str
    content: int  # the section content revision it read
    # beyond the article's model (docs/outside.md, cases 5, 6 and 8), each written only when
    # it is not the article's case:
    changed: NotRequired[bool]  # True: the bytes it read are not the ones the section's hash names
    also: NotRequired[list[Also]]  # other sections it read (reads=next-section...)
    wrong: NotRequired[bool]  # True: the summary is wrong in content, right in form
    code: NotRequired[int]  # the code version it ran under, when not the first
    retry: NotRequired[int]  # the engine's nth re-delivery of the step (the knob `retries`)
    calls: NotRequired[int]  # a workflow's step of other than one model call: its count


def calls_words(p: Computed) -> str:
    """A computed step's model calls, in words: "model call" (one, the article's), or its count."""
    n = p.get("calls", 1)
    return "model call" if n == 1 else "no model call" if n == 0 else f"{n} model calls"


def computed_extras(p: Computed) -> str:
    """What a model call had beyond the article's plain case, in words ("" for none)."""
    out = []
    if p.get("changed"):
        out.append("its section's bytes changed under their hash")
    for section, rev, changed in p.get("also", ()):
        out.append(f"also reads section {section} rev {rev}" + (" (changed bytes)" if changed else ""))
    if p.get("wrong"):
        out.append("WRONG summary, right in form")
    code, retry = p.get("code"), p.get("retry")
    if code is not None:
        out.append(f"code v{code}")
    if retry is not None:
        out.append(f"the engine's retry {retry}, its result not kept")
    return f" ({'; '.join(out)})" if out else ""


def _computed_line(p: Computed, who: str) -> str:
    return f"{who} computes s{p['step']} ({calls_words(p)}) -> {p['result']} from section rev {p['content']}{computed_extras(p)}"


def _computed_phrase(p: Computed, versions: Versions) -> str:
    return f"computes s{p['step']} ({calls_words(p)}){computed_extras(p)}"


class Restored(TypedDict):
    step: int
    result: str
    by: int  # the attempt that computed the record
    content: int


def _restored_line(p: Restored, who: str) -> str:
    return f"{who} restores s{p['step']} from the journal ({p['result']}, computed by #{p['by']})"


def _restored_phrase(p: Restored, versions: Versions) -> str:
    return f"restores s{p['step']} (#{p['by']}'s record)"


class Fenced(TypedDict):
    pass


def _fenced_line(p: Fenced, who: str) -> str:
    return f"{who} is fenced: it stops (it may still be alive)"


def _fenced_phrase(p: Fenced, versions: Versions) -> str:
    return "is fenced and stops"


class Adopted(TypedDict):
    """Beyond the article's model (the knob `fenced_end`): a fenced worker returns the
    owner's recorded outcome instead of stopping with nothing."""

    owner: int  # the attempt whose outcome it returns
    digest: str  # the digest whose announcement that attempt confirmed


def _adopted_line(p: Adopted, who: str) -> str:
    return f"{who}, fenced, returns #{p['owner']}'s result: the announcement of {p['digest']}"


def _adopted_phrase(p: Adopted, versions: Versions) -> str:
    return f"returns #{p['owner']}'s result ({p['digest']})"


class Stopped(TypedDict):
    digest: str  # its refused candidate


def _stopped_line(p: Stopped, who: str) -> str:
    return f"{who} stops: its candidate {p['digest']} was refused"


def _stopped_phrase(p: Stopped, versions: Versions) -> str:
    return "stops"


class Died(TypedDict):
    point: Literal["before-intent", "after-intent", "after-send"]


def _died_line(p: Died, who: str) -> str:
    return f"{who} dies {p['point'].replace('-', ' ')}"


def _died_phrase(p: Died, versions: Versions) -> str:
    return f"dies {p['point'].replace('-', ' ')}"


class UnheardPayload(TypedDict):
    until: int  # the tick from which the controller hears its heartbeats again


def _unheard_line(p: UnheardPayload, who: str) -> str:
    return f"{who}'s heartbeats stop reaching the controller until t{p['until']} (it keeps working)"


def _unheard_phrase(p: UnheardPayload, versions: Versions) -> str:
    return f"goes unheard until t{p['until']}"


class Mutated(TypedDict):
    """Beyond the article's model (`sim.model.faults.mutation`): bytes change under their hash."""

    section: int  # 1-based
    version: int  # the 1-based version whose section it is (the current one)
    content: int  # the content revision its hash names (unchanged)


def _mutated_line(p: Mutated, who: str) -> str:
    return (
        f"the bytes of section {p['section']} of v{p['version']} change in place; its hash "
        f"(rev {p['content']}) does not"
    )


def _mutated_phrase(p: Mutated, versions: Versions) -> str:
    return f"section {p['section']}'s bytes change under its hash (still v{p['version']})"


class CodeChanged(TypedDict):
    """Beyond the article's model (`sim.model.faults.code`): a deploy changes the orchestration code."""

    code: int  # the new code version (1-based)


def _code_changed_line(p: CodeChanged, who: str) -> str:
    return f"the orchestration code changes to v{p['code']} (new attempts run it)"


def _code_changed_phrase(p: CodeChanged, versions: Versions) -> str:
    return f"changes to v{p['code']} (attempts admitted from now on run it)"


class ReplayFailed(TypedDict):
    """Beyond the article's model (the knob `replay`): a strict replay's non-determinism error."""

    step: int  # 1-based
    recorded: int  # the code version the journal record was written under (1-based)
    code: int  # the code version the attempt runs (1-based)


def _replay_failed_line(p: ReplayFailed, who: str) -> str:
    return (
        f"{who} replays s{p['step']}: its record was written under code v{p['recorded']}, it runs "
        f"v{p['code']}: non-determinism error, it is stuck"
    )


def _replay_failed_phrase(p: ReplayFailed, versions: Versions) -> str:
    return f"non-determinism error at s{p['step']} (record of code v{p['recorded']}): stuck"


class ControllerDown(TypedDict):
    until: int  # the tick in whose controller phase it restarts


def _controller_down_line(p: ControllerDown, who: str) -> str:
    return (
        "the controller crashes: no assessment, gate, suspicion or admission until it restarts "
        f"at t{p['until']}"
    )


def _controller_down_phrase(p: ControllerDown, versions: Versions) -> str:
    return f"crashes, down until t{p['until']}"


#: what survived a controller restart, in words, by the knob `controller_state`'s value
RESTARTED_WITH = {
    "durable": "its records and epoch intact, suspicion timers rebuilt",
    "no-epoch": "its owner-token counter starting again",
    "no-intents": "its unconfirmed intents lost",
    "old-timers": "its old suspicion timers",
}


class ControllerUp(TypedDict):
    state: Literal["durable", "no-epoch", "no-intents", "old-timers"]
    epoch: int  # the epoch the stores compare tokens with after the restart
    intents_lost: int  # unconfirmed intent records lost at the restart


def _controller_up_line(p: ControllerUp, who: str) -> str:
    lost = f", {p['intents_lost']} unconfirmed intent(s) lost" if p["intents_lost"] else ""
    return f"the controller restarts with {RESTARTED_WITH[p['state']]} (epoch {p['epoch']}{lost})"


def _controller_up_phrase(p: ControllerUp, versions: Versions) -> str:
    lost = f", {p['intents_lost']} intent(s) lost" if p["intents_lost"] else ""
    return f"restarts with {RESTARTED_WITH[p['state']]} (epoch {p['epoch']}{lost})"


#: what a storage loss takes, in words, by store
LOST_STORE = {
    "journal": "the journal's step records",
    "acceptances": "the controller's acceptance records",
    "effects": "the effect records (intents and confirmations)",
}


class Lost(TypedDict):
    store: Literal["journal", "acceptances", "effects"]
    records: int  # how many records were lost


def _lost_line(p: Lost, who: str) -> str:
    return f"storage loss: {LOST_STORE[p['store']]} are gone ({p['records']} record(s))"


def _lost_phrase(p: Lost, versions: Versions) -> str:
    return f"loses {LOST_STORE[p['store']]} ({p['records']})"


class Done(TypedDict):
    digest: str  # the digest whose announcement it confirmed


def _done_line(p: Done, who: str) -> str:
    return f"{who} done: announcement of {p['digest']} confirmed"


def _done_phrase(p: Done, versions: Versions) -> str:
    return "done"


# -- protected writes (docs/model.md §2) ----------------------------------------------------
# Every protected write logs `store`, the writer's `token`, the `epoch` the write met,
# whether it was `applied`, and its `record`, then the fields of its store; a `TypedDict`
# cannot narrow an inherited field's type, so each shape lists all five
# (`tests/test_events.py` checks they agree).


class JournalWrite(TypedDict):
    store: Literal["journal"]
    token: int  # the writer's token
    epoch: int  # the epoch the write met
    applied: bool
    record: Literal["steps"]
    steps: list[Step]


class CandidateWrite(TypedDict):
    store: Literal["candidate"]
    token: int
    epoch: int
    applied: bool
    record: Literal["candidate"]
    digest: str
    parts: list[PartRecord]
    pin: int | None  # 1-based; None with pins off
    steps: list[Step]  # end-only checkpoints: the step records written with it


class EffectWrite(TypedDict):
    store: Literal["effect"]
    token: int
    epoch: int
    applied: bool
    record: Literal["intent", "confirmed"]
    digest: str
    effect: NotRequired[str]  # which effect, in a run with several (a workflow's)


#: a protected write, of any store: narrow it by its `store` (or `record`)
AnyWrite = Union[JournalWrite, CandidateWrite, EffectWrite]


def stale(p: AnyWrite) -> bool:
    """The writer's token is below the epoch (applied only with fencing off)."""
    return p["token"] < p["epoch"]


def _what(p: AnyWrite, results: bool) -> str:
    """What is written; with `results`, the step records' results too."""
    if p["store"] == "journal":
        return "journal " + _steps(p["steps"], results)
    if p["store"] == "candidate":
        journal = " + journal " + _steps(p["steps"], results) if p["steps"] else ""
        return f"candidate {p['digest']}{journal}"
    what = "intent" if p["record"] == "intent" else "confirmation"
    of = p["digest"] if "effect" not in p else f"{p['effect']} of {p['digest']}"
    return f"effect {what} for {of}" if results else f"{what} for {of}"


def _write_line(p: AnyWrite, who: str) -> str:
    verdict = "applied" if p["applied"] else "REJECTED (stale token)"
    old = " with a STALE token" if p["applied"] and stale(p) else ""
    what = _what(p, results=True)
    return f"{who} writes {what} with token {p['token']} (epoch {p['epoch']}): {verdict}{old}"


def _write_phrase(p: AnyWrite, versions: Versions) -> str:
    what = _what(p, results=False)
    token = f"token {p['token']} < epoch {p['epoch']}"
    if not p["applied"]:
        return f"writes {what}: REJECTED ({token})"
    if stale(p):
        return f"writes {what} with a STALE token ({token}): applied"
    return f"writes {what}"


# -- the announcement (docs/model.md §5.4) -------------------------------------------------


class Sent(TypedDict):
    digest: str
    key: str | None  # the idempotency key; None without one
    copies: int  # how many concurrent copies reach the feed (`sim.model.faults.Copies`): 1, or 2 when duplicated
    effect: NotRequired[str]  # which effect, in a run with several (a workflow's)


def _times(copies: int) -> str:
    """How many times a send is delivered, in words (a SEND directive's `Copies`)."""
    return "twice" if copies == 2 else f"{copies} times"


def _sent_line(p: Sent, who: str) -> str:
    key = p["key"] if p["key"] is not None else "no key"
    copies = f" (delivered {_times(p['copies'])}, concurrently)" if p["copies"] > 1 else ""
    what = "the announcement" if "effect" not in p else p["effect"]
    return f"{who} sends {what} of {p['digest']} with key {key}{copies}"


def _sent_phrase(p: Sent, versions: Versions) -> str:
    key = f"key {p['key']}" if p["key"] is not None else "no key"
    copies = f", delivered {_times(p['copies'])}" if p["copies"] > 1 else ""
    what = "the announcement" if "effect" not in p else p["effect"]
    return f"sends {what} of {p['digest']} ({key}{copies})"


class Feed(TypedDict):
    digest: str
    key: str | None
    #: a read-back receiver asked by a successor (docs/workflows.md) answers found or absent
    answer: Literal["applied", "repeat", "rejected", "found", "absent"]
    post: str | None  # the post applied or repeated; None when rejected
    effect: NotRequired[str]  # which effect, in a run with several (a workflow's)


def operation(p: Feed | Sent | Retracted | EffectWrite) -> str:
    """What an effect's event is about, as one name: the digest, and the effect in a run with
    several (the properties follow each effect of each digest apart)."""
    effect = p.get("effect")
    return p["digest"] if effect is None else f"{p['digest']}/{effect}"


def _receiver(p: Feed | Sent | Expired | Retracted) -> str:
    effect = p.get("effect")
    return "feed" if effect is None else f"{effect}'s receiver"


def _feed_line(p: Feed, who: str) -> str:
    answer, receiver = p["answer"], _receiver(p)
    if answer == "applied":
        return f"{receiver} applies post {p['post']}"
    if answer == "repeat":
        return f"{receiver} recognises the key and answers with the original post {p['post']}"
    if answer == "rejected":
        return f"{receiver} rejects a different request under a used key"
    return f"{receiver} {_feed_phrase(p, ())}"


def _feed_phrase(p: Feed, versions: Versions) -> str:
    answer = p["answer"]
    if answer == "applied":
        return f"applies post {p['post']}"
    if answer == "repeat":
        return f"knows the key: answers with the original {p['post']}"
    if answer == "found":
        return f"reads back: it applied {p['post']} for {p['digest']}"
    if answer == "absent":
        return f"reads back: nothing applied for {p['digest']}"
    return "rejects a different request under a used key"


class Expired(TypedDict):
    """Beyond the article's model (the knob `retention`): the feed no longer knows a key."""

    key: str
    post: str  # the post the forgotten key had answered with
    remembered: int  # the tick the feed remembered the key
    effect: NotRequired[str]  # which effect, in a run with several (a workflow's)


def _expired_line(p: Expired, who: str) -> str:
    return f"{_receiver(p)} has forgotten key {p['key']} (remembered at t{p['remembered']} for {p['post']}): a new request"


def _expired_phrase(p: Expired, versions: Versions) -> str:
    return f"has forgotten key {p['key']} (remembered at t{p['remembered']})"


class Retracted(TypedDict):
    """Beyond the article's model (the knob `compensate`): a correction retracts a copy."""

    digest: str
    post: str  # the earlier post retracted
    correction: str  # the correcting post that supersedes it
    effect: NotRequired[str]  # which effect, in a run with several (a workflow's)


def _retracted_line(p: Retracted, who: str) -> str:
    return f"{_receiver(p)} retracts post {p['post']} of {p['digest']}: the correction {p['correction']} supersedes it"


def _retracted_phrase(p: Retracted, versions: Versions) -> str:
    return f"retracts {p['post']} (superseded by the correction {p['correction']})"


# -- the registry -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EventKind:
    """One kind of event as data: its payload shape(s), its wording and what it means."""

    kind: Kind
    #: the payload type; a `write` has one per store, told apart by the `store` field.
    shapes: tuple[type[Any], ...]
    #: its line in the tick narrative: (payload, who) -> words
    narrate: Callable[[Any, str], str]
    #: its few words in the per-tick story, without its subject: (payload, versions) -> words
    phrase: Callable[[Any, Versions], str]
    #: fields that are an intention, not something that happened (a pause's planned wake):
    #: two runs that differ only there did the same thing.
    planned: tuple[str, ...] = ()
    #: who the event's short phrase is about; None: its attempt ("#n").
    subject: str | None = None
    #: the detail field that, when present, names the subject instead (a workflow's run with
    #: several effects or dependants names which: `subject_of`)
    named_by: str | None = None
    #: its attempt's lifecycle status after it (docs/model.md); None: unchanged.
    status: str | None = None
    #: whether its attempt is silent after it; None: unchanged.
    silent: bool | None = None

    #: the field that picks the shape of a kind with several.
    TAG: ClassVar[str] = "store"

    def shape(self, detail: dict[str, Any]) -> type[Any]:
        """The payload type of an event of this kind with this detail."""
        if len(self.shapes) == 1:
            return self.shapes[0]
        return _BY_TAG[self.kind][detail[self.TAG]]

    def fields(self, detail: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
        """(name, declared type) of each field of this detail's shape, in the engine's order
        (an optional field only when the detail has it)."""
        shape = self.shape(detail)
        optional = _OPTIONAL[shape]
        if not optional:
            return declared(shape)
        return tuple((name, hint) for name, hint in declared(shape) if name in detail or name not in optional)


def declared(shape: type[Any]) -> tuple[tuple[str, Any], ...]:
    """(name, type) of each field of a payload type, in order (an optional field's type
    without its `NotRequired`)."""
    return _DECLARED[shape]


def _declare(shape: type[Any]) -> tuple[tuple[str, Any], ...]:
    hints = get_type_hints(shape, include_extras=True)
    return tuple((name, get_args(hint)[0] if get_origin(hint) is NotRequired else hint) for name, hint in hints.items())


EVENT_KINDS: dict[Kind, EventKind] = {
    k.kind: k
    for k in (
        EventKind(Kind.REPORT_CHANGED, (ReportChanged,), _report_changed_line, _report_changed_phrase, subject="report"),
        EventKind(Kind.ADMITTED, (Admitted,), _admitted_line, _admitted_phrase, status="running"),
        EventKind(Kind.SILENT, (Silent,), _silent_line, _silent_phrase, planned=("wake",), silent=True),
        EventKind(Kind.WOKE, (Woke,), _woke_line, _woke_phrase, silent=False),
        EventKind(Kind.COMPUTED, (Computed,), _computed_line, _computed_phrase),
        EventKind(Kind.RESTORED, (Restored,), _restored_line, _restored_phrase),
        EventKind(Kind.WRITE, (JournalWrite, CandidateWrite, EffectWrite), _write_line, _write_phrase),
        EventKind(Kind.FENCED, (Fenced,), _fenced_line, _fenced_phrase, status="fenced"),
        EventKind(Kind.ACCEPTED, (Accepted,), _accepted_line, _accepted_phrase, subject=""),
        EventKind(Kind.REFUSED, (Refused,), _refused_line, _refused_phrase, subject=""),
        EventKind(Kind.STOPPED, (Stopped,), _stopped_line, _stopped_phrase, status="refused"),
        EventKind(Kind.UNKNOWN, (Unknown,), _unknown_line, _unknown_phrase, status="UNKNOWN"),
        EventKind(Kind.SENT, (Sent,), _sent_line, _sent_phrase),
        EventKind(Kind.FEED, (Feed,), _feed_line, _feed_phrase, subject="feed", named_by="effect"),
        EventKind(Kind.DIED, (Died,), _died_line, _died_phrase, silent=True),
        EventKind(Kind.DONE, (Done,), _done_line, _done_phrase, status="done"),
        EventKind(Kind.NEWSLETTER, (Newsletter,), _newsletter_line, _newsletter_phrase, subject="newsletter",
                  named_by="dependant"),
        EventKind(Kind.LOST, (Lost,), _lost_line, _lost_phrase, subject="storage"),
        EventKind(Kind.UNHEARD, (UnheardPayload,), _unheard_line, _unheard_phrase),
        EventKind(Kind.EXPIRED, (Expired,), _expired_line, _expired_phrase, subject="feed", named_by="effect"),
        EventKind(Kind.RETRACTED, (Retracted,), _retracted_line, _retracted_phrase, subject="feed", named_by="effect"),
        EventKind(Kind.MUTATED, (Mutated,), _mutated_line, _mutated_phrase, subject="report"),
        EventKind(Kind.CODE_CHANGED, (CodeChanged,), _code_changed_line, _code_changed_phrase, subject="code"),
        EventKind(Kind.REPLAY_FAILED, (ReplayFailed,), _replay_failed_line, _replay_failed_phrase),
        EventKind(Kind.CONTROLLER_DOWN, (ControllerDown,), _controller_down_line, _controller_down_phrase,
                  subject="controller"),
        EventKind(Kind.CONTROLLER_UP, (ControllerUp,), _controller_up_line, _controller_up_phrase,
                  subject="controller"),
        EventKind(Kind.ADOPTED, (Adopted,), _adopted_line, _adopted_phrase),
    )
}  # fmt: skip


#: a kind with several shapes: its shapes by the value of their `EventKind.TAG` field.
_BY_TAG = {
    k.kind: {get_args(get_type_hints(s)[k.TAG])[0]: s for s in k.shapes}
    for k in EVENT_KINDS.values()
    if len(k.shapes) > 1
}

_DECLARED = {s: _declare(s) for k in EVENT_KINDS.values() for s in k.shapes}
#: the optional fields of each shape (declared `NotRequired`)
_OPTIONAL = {
    s: frozenset(name for name, hint in get_type_hints(s, include_extras=True).items() if get_origin(hint) is NotRequired)
    for k in EVENT_KINDS.values() for s in k.shapes
}  # fmt: skip
#: the kind of each payload type of a kind with one shape (a write is read with `write`)
_KIND_OF = {k.shapes[0]: k.kind for k in EVENT_KINDS.values() if len(k.shapes) == 1}


#: the planned fields of each kind that has some (see `EventKind.planned`).
PLANNED: dict[Kind, tuple[str, ...]] = {k: decl.planned for k, decl in EVENT_KINDS.items() if decl.planned}


def payload(event: Event, shape: type[P]) -> P:
    """The event's detail typed as its kind's payload `shape` (the detail itself, no copy).
    A `TypeError` if `shape` is not its kind's payload; a write is read with `write`."""
    if _KIND_OF.get(shape) is not event.kind:
        raise TypeError(f"a {event.kind.value} event has no {shape.__name__} payload" + (
            " (a write is read with `write`)" if shape in _DECLARED and shape not in _KIND_OF else ""))
    return event.detail  # type: ignore[return-value]


#: `Kind.WRITE` as a plain global: an enum member read from its class costs more (`write` runs
#: in the properties' monitors)
_WRITE = Kind.WRITE


def write(event: Event) -> AnyWrite:
    """A write event's detail typed as the write of one of the stores (the detail itself)."""
    if event.kind is not _WRITE:
        raise TypeError(f"a {event.kind.value} event is not a write")
    return event.detail  # type: ignore[return-value]


def narrate(event: Event, who: str) -> str:
    """The event in one line of words; `who` names its attempt ("controller" if none)."""
    return EVENT_KINDS[event.kind].narrate(event.detail, who)


def subject_of(event: Event) -> str | None:
    """Who the event's short phrase is about (`EventKind.subject`): in a run with several
    effects, an effect's receiver by the effect's name; with several dependants, the dependant."""
    kind = EVENT_KINDS[event.kind]
    name = event.detail.get(kind.named_by) if kind.named_by is not None else None
    if name is None:
        return kind.subject
    return f"{name}'s receiver" if kind.named_by == "effect" else str(name)


def phrase(event: Event, versions: Versions) -> str:
    """The event in a few words, without its subject (see `EventKind.subject`)."""
    return EVENT_KINDS[event.kind].phrase(event.detail, versions)


def happened(event: Event) -> dict[str, Any]:
    """The event's detail without its planned fields: what took place, not what was intended."""
    planned = PLANNED.get(event.kind)
    if planned is None:
        return event.detail
    return {k: v for k, v in event.detail.items() if k not in planned}


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
    "REVENUE",
    "AnyWrite",
    "Event",
    "EventKind",
    "Kind",
    "PLANNED",
    "Versions",
    "calls_words",
    "computed_extras",
    "conforms",
    "declared",
    "happened",
    "narrate",
    "operation",
    "payload",
    "phrase",
    "revenue",
    "subject_of",
    "stale",
    "write",
]
