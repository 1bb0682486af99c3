"""The rules' working copies of `State` and `AttemptState` (`rules.Draft`, `rules.Worker`), and the
members of the enums they read, as constants.

Generated from the fields of `sim.engine.state` by `python -m sim.engine.state`: do not edit;
`tests/test_compiled.py` fails while it differs from what that writes."""

from __future__ import annotations

from typing import ClassVar, Final

from sim.engine.primitives import Status
from sim.engine.records import Acceptance, Candidate, Feed, JournalKey, JournalRecord, Part, Truth
from sim.engine.setup import Setup
from sim.engine.state import AttemptState, Held, State
from sim.model.events import Kind
from sim.model.faults.base import Moment

_new: Final = tuple.__new__
#: the record types made here, as constants (compiled, a C static rather than a lookup by name)
_State: Final = State
_AttemptState: Final = AttemptState
_Truth: Final = Truth
_Part: Final = Part
_JournalRecord: Final = JournalRecord
_Candidate: Final = Candidate
_Acceptance: Final = Acceptance


class WorkingState:
    """The working copy of `State` (generated)."""

    __slots__ = (
        'setup', 'versions', 'version', 'last_change', 'last_acceptance', 'epoch', 'journal', 'candidates',
        'acceptances', 'effects', 'feeds', 'posts', 'sends', 'attempts', 'owner', 'assessed', 'started',
        'down', 'outage', 'finished', 'last_tick', 'horizon_reached', 'code', 'mutated', 'restored',
        'stale_refused', 'stale_applied', 'tick',
    )
    #: the fields it was written for (at import, a record with others refuses it)
    FIELDS: ClassVar[tuple[str, ...]] = (
        'setup', 'versions', 'version', 'last_change', 'last_acceptance', 'epoch', 'journal', 'candidates',
        'acceptances', 'effects', 'feeds', 'posts', 'sends', 'attempts', 'owner', 'assessed', 'started',
        'down', 'outage', 'finished', 'last_tick', 'horizon_reached', 'code', 'mutated', 'restored',
        'stale_refused', 'stale_applied', 'tick',
    )

    setup: Setup
    versions: tuple[tuple[int, ...], ...]
    version: int
    last_change: int | None
    last_acceptance: int | None
    epoch: int
    journal: tuple[tuple[JournalKey, JournalRecord], ...]
    candidates: tuple[Candidate, ...]
    acceptances: tuple[Acceptance, ...]
    effects: tuple[tuple[str, str], ...]
    feeds: tuple[Feed, ...]
    posts: int
    sends: int
    attempts: tuple[AttemptState, ...]
    owner: int | None
    assessed: int
    started: tuple[str | None, ...]
    down: int | None
    outage: tuple[int, int] | None
    finished: bool
    last_tick: int
    horizon_reached: bool
    code: int
    mutated: tuple[tuple[int, int], ...]
    restored: int
    stale_refused: int
    stale_applied: int
    tick: int

    def __init__(self, r: State) -> None:
        (
            self.setup, self.versions, self.version, self.last_change, self.last_acceptance, self.epoch,
            self.journal, self.candidates, self.acceptances, self.effects, self.feeds, self.posts, self.sends,
            self.attempts, self.owner, self.assessed, self.started, self.down, self.outage, self.finished,
            self.last_tick, self.horizon_reached, self.code, self.mutated, self.restored, self.stale_refused,
            self.stale_applied, self.tick,
        ) = r

    def freeze(self) -> State:
        return _new(_State, (
            self.setup, self.versions, self.version, self.last_change, self.last_acceptance, self.epoch,
            self.journal, self.candidates, self.acceptances, self.effects, self.feeds, self.posts, self.sends,
            self.attempts, self.owner, self.assessed, self.started, self.down, self.outage, self.finished,
            self.last_tick, self.horizon_reached, self.code, self.mutated, self.restored, self.stale_refused,
            self.stale_applied, self.tick,
        ))


class WorkingAttemptState:
    """The working copy of `AttemptState` (generated)."""

    __slots__ = (
        'n', 'token', 'pin', 'inherited', 'status', 'next_tick', 'crashed', 'silent_since', 'results',
        'unwritten', 'step', 'phase', 'held', 'verdict', 'candidate', 'ended', 'unheard', 'code', 'effect',
        'calls',
    )
    #: the fields it was written for (at import, a record with others refuses it)
    FIELDS: ClassVar[tuple[str, ...]] = (
        'n', 'token', 'pin', 'inherited', 'status', 'next_tick', 'crashed', 'silent_since', 'results',
        'unwritten', 'step', 'phase', 'held', 'verdict', 'candidate', 'ended', 'unheard', 'code', 'effect',
        'calls',
    )

    n: int
    token: int
    pin: int | None
    inherited: str | None
    status: Status
    next_tick: int | None
    crashed: bool
    silent_since: int | None
    results: tuple[Part | None, ...]
    unwritten: tuple[int, ...]
    step: int
    phase: str
    held: Held | None
    verdict: tuple[bool, int] | None
    candidate: str | None
    ended: int | None
    unheard: tuple[int, int] | None
    code: int
    effect: int
    calls: int

    def __init__(self, r: AttemptState) -> None:
        (
            self.n, self.token, self.pin, self.inherited, self.status, self.next_tick, self.crashed,
            self.silent_since, self.results, self.unwritten, self.step, self.phase, self.held, self.verdict,
            self.candidate, self.ended, self.unheard, self.code, self.effect, self.calls,
        ) = r

    def freeze(self) -> AttemptState:
        return _new(_AttemptState, (
            self.n, self.token, self.pin, self.inherited, self.status, self.next_tick, self.crashed,
            self.silent_since, self.results, self.unwritten, self.step, self.phase, self.held, self.verdict,
            self.candidate, self.ended, self.unheard, self.code, self.effect, self.calls,
        ))


def new_Truth(changed: bool, also: tuple[tuple[int, int, bool], ...], wrong: bool = False, code: int = 0) -> Truth:
    """`Truth(...)`, every field given (generated)."""
    return _new(_Truth, (changed, also, wrong, code,))


def new_Part(result: str, content: int, truth: Truth) -> Part:
    """`Part(...)`, every field given (generated)."""
    return _new(_Part, (result, content, truth,))


def new_JournalRecord(result: str, content: int, attempt: int, truth: Truth) -> JournalRecord:
    """`JournalRecord(...)`, every field given (generated)."""
    return _new(_JournalRecord, (result, content, attempt, truth,))


def new_Candidate(
    digest: str, attempt: int, token: int, parts: tuple[Part, ...], pin: int | None, tick: int,
) -> Candidate:
    """`Candidate(...)`, every field given (generated)."""
    return _new(_Candidate, (
        digest, attempt, token, parts, pin, tick,
    ))


def new_Acceptance(digest: str, version: int | None, tick: int) -> Acceptance:
    """`Acceptance(...)`, every field given (generated)."""
    return _new(_Acceptance, (digest, version, tick,))


def new_AttemptState(
    n: int, token: int, pin: int | None, inherited: str | None, status: Status, next_tick: int | None,
    crashed: bool, silent_since: int | None, results: tuple[Part | None, ...], unwritten: tuple[int, ...],
    step: int, phase: str, held: Held | None, verdict: tuple[bool, int] | None, candidate: str | None,
    ended: int | None, unheard: tuple[int, int] | None = None, code: int = 0, effect: int = 0, calls: int = 0,
) -> AttemptState:
    """`AttemptState(...)`, every field given (generated)."""
    return _new(_AttemptState, (
        n, token, pin, inherited, status, next_tick, crashed, silent_since, results, unwritten, step, phase,
        held, verdict, candidate, ended, unheard, code, effect, calls,
    ))


class KindMembers:
    """The members of `sim.model.events.Kind`, as constants (generated)."""

    #: the members it was written for (at import, an enum with others refuses it)
    MEMBERS: ClassVar[tuple[str, ...]] = (
        'REPORT_CHANGED', 'ADMITTED', 'SILENT', 'WOKE', 'COMPUTED', 'RESTORED', 'WRITE', 'FENCED', 'ACCEPTED',
        'REFUSED', 'STOPPED', 'UNKNOWN', 'SENT', 'FEED', 'DIED', 'DONE', 'NEWSLETTER', 'LOST', 'UNHEARD',
        'EXPIRED', 'RETRACTED', 'MUTATED', 'CODE_CHANGED', 'REPLAY_FAILED', 'CONTROLLER_DOWN',
        'CONTROLLER_UP', 'ADOPTED',
    )

    REPORT_CHANGED: Final = Kind.REPORT_CHANGED
    ADMITTED: Final = Kind.ADMITTED
    SILENT: Final = Kind.SILENT
    WOKE: Final = Kind.WOKE
    COMPUTED: Final = Kind.COMPUTED
    RESTORED: Final = Kind.RESTORED
    WRITE: Final = Kind.WRITE
    FENCED: Final = Kind.FENCED
    ACCEPTED: Final = Kind.ACCEPTED
    REFUSED: Final = Kind.REFUSED
    STOPPED: Final = Kind.STOPPED
    UNKNOWN: Final = Kind.UNKNOWN
    SENT: Final = Kind.SENT
    FEED: Final = Kind.FEED
    DIED: Final = Kind.DIED
    DONE: Final = Kind.DONE
    NEWSLETTER: Final = Kind.NEWSLETTER
    LOST: Final = Kind.LOST
    UNHEARD: Final = Kind.UNHEARD
    EXPIRED: Final = Kind.EXPIRED
    RETRACTED: Final = Kind.RETRACTED
    MUTATED: Final = Kind.MUTATED
    CODE_CHANGED: Final = Kind.CODE_CHANGED
    REPLAY_FAILED: Final = Kind.REPLAY_FAILED
    CONTROLLER_DOWN: Final = Kind.CONTROLLER_DOWN
    CONTROLLER_UP: Final = Kind.CONTROLLER_UP
    ADOPTED: Final = Kind.ADOPTED


class MomentMembers:
    """The members of `sim.model.faults.base.Moment`, as constants (generated)."""

    #: the members it was written for (at import, an enum with others refuses it)
    MEMBERS: ClassVar[tuple[str, ...]] = (
        'INPUT', 'ACT', 'CALL', 'POST', 'SEND',
    )

    INPUT: Final = Moment.INPUT
    ACT: Final = Moment.ACT
    CALL: Final = Moment.CALL
    POST: Final = Moment.POST
    SEND: Final = Moment.SEND


class StatusMembers:
    """The members of `sim.engine.primitives.Status`, as constants (generated)."""

    #: the members it was written for (at import, an enum with others refuses it)
    MEMBERS: ClassVar[tuple[str, ...]] = (
        'RUNNING', 'UNKNOWN', 'FENCED', 'REFUSED', 'DONE',
    )

    RUNNING: Final = Status.RUNNING
    UNKNOWN: Final = Status.UNKNOWN
    FENCED: Final = Status.FENCED
    REFUSED: Final = Status.REFUSED
    DONE: Final = Status.DONE


if (
    State._fields != WorkingState.FIELDS
    or AttemptState._fields != WorkingAttemptState.FIELDS
    or Truth._fields != ('changed', 'also', 'wrong', 'code')
    or Part._fields != ('result', 'content', 'truth')
    or JournalRecord._fields != ('result', 'content', 'attempt', 'truth')
    or Candidate._fields != ('digest', 'attempt', 'token', 'parts', 'pin', 'tick')
    or Acceptance._fields != ('digest', 'version', 'tick')
    or AttemptState._fields != ('n', 'token', 'pin', 'inherited', 'status', 'next_tick', 'crashed', 'silent_since', 'results', 'unwritten', 'step', 'phase', 'held', 'verdict', 'candidate', 'ended', 'unheard', 'code', 'effect', 'calls')
    or tuple(Kind.__members__) != KindMembers.MEMBERS
    or tuple(Moment.__members__) != MomentMembers.MEMBERS
    or tuple(Status.__members__) != StatusMembers.MEMBERS
):
    raise ImportError("sim/engine/working.py is stale: run `python -m sim.engine.state` to write it again")
