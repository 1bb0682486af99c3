"""The small pieces of the records that the rules, the canonical form and the search use at
every step: the attempt's status, the journal's and the effect records' keys, a result's id,
the conditions the declarations of `State`, `AttemptState` and the journal's records name
(`alive`, `heard_of`, `wrong`), and what the records' properties read (`State.content`,
`AttemptState.last_heard`, ...: each property calls the function here).

They are defined here, in a module compiled with the rules (docs/compiled.md), rather than in
`sim.engine.records` and `sim.engine.state`, which cannot be compiled (their NamedTuples carry
`Annotated` declarations that `sim.engine.keep` reads at run time): compiled, a call from the
rules or a canonical form is a C call instead of a call into the interpreter. Those two modules
import them from here, and every other module reads them there, as before.

This module imports no other module of `sim` (records and state import it): each function
names what it reads of a record by a protocol below, which the records' NamedTuples meet.
"""

from __future__ import annotations

from enum import Enum
from typing import Final, Protocol

JournalKey = int | tuple[int, ...]


class Status(Enum):
    """The attempt lifecycle of docs/model.md §3, as the controller records it."""

    RUNNING = "running"
    UNKNOWN = "UNKNOWN"
    FENCED = "fenced"
    REFUSED = "refused"
    DONE = "done"

    # hashed by identity, in C: a member is its only instance, and its equality is identity. An
    # attempt's form holds its status, so every node key the search hashes does (`Enum.__hash__`
    # is an interpreted call: about 1 % of the search's instructions). A hash differs from process
    # to process either way (a name's hash does too), and nothing iterates a set of statuses.
    __hash__ = object.__hash__


#: `Status.RUNNING` as a constant (compiled, a C static; an enum member read from its class is
#: a lookup through the metaclass's `__getattr__`)
_RUNNING: Final = Status.RUNNING


class Attempt(Protocol):
    """What the functions below read of an attempt (`sim.engine.state.AttemptState`)."""

    @property
    def next_tick(self) -> int | None: ...
    @property
    def status(self) -> Status: ...
    @property
    def ended(self) -> int | None: ...
    @property
    def crashed(self) -> bool: ...
    @property
    def silent_since(self) -> int | None: ...
    @property
    def unheard(self) -> tuple[int, int] | None: ...


class TruthLike(Protocol):
    """What `wrong` reads of a record's truth (`sim.engine.records.Truth`)."""

    @property
    def wrong(self) -> bool: ...


class Result(Protocol):
    """What `wrong` and `built_from` read of a journal record or a part (`sim.engine.records`)."""

    @property
    def content(self) -> int: ...
    @property
    def truth(self) -> TruthLike: ...


class Built(Protocol):
    """What `built_from` reads of a candidate (`sim.engine.records.Candidate`)."""

    @property
    def parts(self) -> tuple[Result, ...]: ...


class Versions(Protocol):
    """What `content` reads of a state (`sim.engine.state.State`)."""

    @property
    def versions(self) -> tuple[tuple[int, ...], ...]: ...
    @property
    def version(self) -> int: ...


class Effects(Protocol):
    """What `named_run` reads of a run's setup (`sim.engine.state.Setup`)."""

    @property
    def receivers(self) -> tuple[object, ...]: ...
    @property
    def dependants(self) -> tuple[object, ...]: ...


def journal_key(step: int, content: int | None) -> JournalKey:
    """The journal's key for a step: (step, section content) with pins on, the step alone with
    pins off (`content` None), so a successor restores a step only when its key matches."""
    return step if content is None else (step, content)


def extended_key(step: int, content: int | None, extra: tuple[int, ...]) -> JournalKey:
    """The journal's key with what knobs beyond the article's model add to it (docs/outside.md,
    cases 5 and 8): the hash of a declared extra section, the code version. With none it is
    `journal_key`."""
    key = journal_key(step, content)
    if not extra:
        return key
    return (key, *extra) if isinstance(key, int) else (*key, *extra)


def result_id(i: int, n: int) -> str:
    """The schematic result of step i (0-based) computed by attempt #n (docs/model.md §6)."""
    return f"s{i + 1}@{n}"


def effect_key(digest: str, effect: int, name: str) -> str:
    """The effect records' key of effect `effect` (0-based, named `name`) of a digest: the
    digest id for the first (the article's one announcement), "<digest>/<name>" for a later one."""
    return digest if effect == 0 else f"{digest}/{name}"


def wrong(r: Result) -> bool:
    """Whether a record holds a wrong summary (beyond the article's model: `wrong_summaries`)."""
    return r.truth.wrong


def alive(a: Attempt) -> bool:
    """Its program has not ended (`next_tick` set): only then does its program read its own
    working state (token, pin, results, step, phase, held, code)."""
    return a.next_tick is not None


def heard_of(a: Attempt) -> bool:
    """Its heartbeats still matter: its program runs (a new delay may start while one is
    open), or it may still be suspected. An attempt stuck by replay=strict has ended its
    program while it is still running (issue 22)."""
    return a.next_tick is not None or a.status is _RUNNING


def stuck(a: Attempt) -> bool:
    """Its program ended with neither a crash nor an end state (done, refused, fenced):
    a strict replay failed (beyond the article's model, `replay=strict`). It is still
    running and the owner, and nothing suspects or replaces it (docs/model.md §9)."""
    return a.next_tick is None and a.ended is None and not a.crashed


def last_heard(a: Attempt, t: int) -> int | None:
    """The tick of its last heartbeat the controller heard, if it has missed any by t:
    silent since then, or working with its heartbeats delayed. A heartbeat is unheard if
    a delay covers it, so a worker that falls silent inside a delay was last heard where
    the delay began, not where it fell silent (docs/model.md §9)."""
    since = a.silent_since
    unheard = a.unheard
    if since is not None:
        if unheard is not None and unheard[0] < since < unheard[1]:
            return unheard[0]
        return since
    if unheard is not None and unheard[0] <= t < unheard[1]:
        return unheard[0]
    return None


def content(s: Versions) -> tuple[int, ...]:
    """The report's content now: each section's content revision."""
    return s.versions[s.version]


def named_run(setup: Effects) -> bool:
    """Whether events name their effect and dependant: only when the run has several."""
    return len(setup.receivers) > 1 or len(setup.dependants) > 1


def built_from(c: Built) -> tuple[int, ...]:
    """The content revision of each section the candidate's parts were computed from."""
    return tuple([p.content for p in c.parts])
