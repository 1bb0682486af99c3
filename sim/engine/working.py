"""The rules' working copies of `State` and `AttemptState` (`rules.Draft`, `rules.Worker`).

Generated from the fields of `sim.engine.state` by `python -m sim.engine.state`: do not edit;
`tests/test_compiled.py` fails while it differs from what that writes."""

from __future__ import annotations

from typing import ClassVar

from sim.engine.records import Acceptance, Candidate, Feed, JournalKey, JournalRecord, Part
from sim.engine.state import AttemptState, Held, Setup, State, Status

_new = tuple.__new__


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
        return _new(State, (
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
        return _new(AttemptState, (
            self.n, self.token, self.pin, self.inherited, self.status, self.next_tick, self.crashed,
            self.silent_since, self.results, self.unwritten, self.step, self.phase, self.held, self.verdict,
            self.candidate, self.ended, self.unheard, self.code, self.effect, self.calls,
        ))


if State._fields != WorkingState.FIELDS or AttemptState._fields != WorkingAttemptState.FIELDS:
    raise ImportError("sim/engine/working.py is stale: run `python -m sim.engine.state` to write it again")
