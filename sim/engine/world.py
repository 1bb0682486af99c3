"""The shared state of one run: the report, the records and their protected writes, the feed,
the fault schedule as the engine consults it, and the trace log.

The world knows nothing of the actors (`sim.engine.actors`) that change it; `sim.engine.run`
puts the two together.
"""

from __future__ import annotations

from typing import Any, Protocol

import simpy

from sim.engine.records import (
    Acceptance,
    Candidate,
    Feed,
    JournalKey,
    JournalRecord,
    Part,
    journal_key,
)
from sim.faults import Fault, Moment, PostPoint, RunFacts, Stall
from sim.schedule import Schedule
from sim.switches import Checkpoints, Fencing, Gate, Pins, Switches
from sim.trace import Event, Kind

_new_event = tuple.__new__

#: where a consult happened: (tick, sequence number within the run); the input phase of tick t is (t, 0)
Position = tuple[int, int]
#: a recorded consult: (tick, sequence number, moment, where)
Consult = tuple[int, int, Moment, tuple[int, ...]]


class Writer(Protocol):
    """Who writes to a protected store: an attempt, by its number and owner token."""

    @property
    def n(self) -> int: ...

    @property
    def token(self) -> int: ...


class World:
    def __init__(self, switches: Switches, schedule: Schedule, record: bool = False) -> None:
        self.env = simpy.Environment()
        self.switches = switches
        self.schedule = schedule
        self.fencing = switches.fencing is Fencing.ON
        self.pins = switches.pins is Pins.ON
        self.per_step = switches.checkpoints is Checkpoints.PER_STEP
        self.fail_open = switches.gate is Gate.FAIL_OPEN
        # the report: content revision per section, by version
        self.versions: list[tuple[int, ...]] = [(0,) * schedule.sections]
        self.version = 0  # 0-based index of the current version
        self.content = self.versions[0]
        self.last_change: int | None = None
        self.last_acceptance: int | None = None
        # the records
        self.epoch = schedule.first_token - 1  # no attempt admitted yet
        self.journal: dict[JournalKey, JournalRecord] = {}
        self.candidates: list[Candidate] = []
        self.acceptances: list[Acceptance] = []
        self.effects: dict[str, str] = {}  # digest -> "intent" | "confirmed"
        self.feed = Feed()
        # the fault schedule, as the engine consults it (docs/model.md §9 and sim/faults)
        self.posts = 0  # post actions begun so far
        self.sends = 0  # sends begun so far
        self.faults = {(f.moment.value, *f.where()): f for f in schedule.faults}
        self.moments = 0  # consults so far (the input phases aside)
        self.input_ticks = sorted({f.where()[0] for f in schedule.faults if f.moment is Moment.INPUT})
        self.last_change_at = self.input_ticks[-1] if self.input_ticks else -1
        self.fired: dict[Fault, Position] = {}
        #: with `record`, every consult of the run in order (what `sim check` grows schedules from)
        self.consults: list[Consult] | None = [] if record else None
        # the trace
        self.events: list[Event] = []
        self.last_tick = 0
        self.horizon_reached = False
        self.finished = self.env.event()

    # -- logging -----------------------------------------------------------------------
    def log(self, tick: int, kind: Kind, attempt: int | None, detail: dict[str, Any]) -> None:
        # tuple.__new__ builds the same Event without the NamedTuple's Python-level __new__
        self.events.append(_new_event(Event, (tick, kind, attempt, detail)))

    # -- the input -----------------------------------------------------------------------
    def change_report(self, sections: tuple[int, ...]) -> None:
        tick = int(self.env.now)
        content = tuple(
            rev + 1 if i + 1 in sections else rev for i, rev in enumerate(self.content)
        )
        self.versions.append(content)
        self.version = len(self.versions) - 1
        self.content = content
        self.last_change = tick
        self.log(tick, Kind.REPORT_CHANGED, None, {
            "version": self.version + 1, "sections": list(sections), "content": list(content),
        })  # fmt: skip

    def pending_changes(self, tick: int) -> bool:
        return tick < self.last_change_at  # the same as any(c.at > tick for c in changes)

    # -- faults ------------------------------------------------------------------------
    def consult(self, moment: Moment, where: tuple[int, ...]) -> Fault | None:
        """The fault that takes effect at this moment and place, if the schedule has one."""
        fault = self.faults.get((moment._value_, *where))
        if moment is Moment.INPUT:
            position = (where[0], 0)
        else:
            self.moments += 1
            position = (int(self.env.now), self.moments)
            if self.consults is not None:
                self.consults.append((position[0], position[1], moment, where))
        if fault is not None:
            self.fired[fault] = position
        return fault

    def stall_at(self, attempt: int, tick: int) -> Stall | None:
        """Whether attempt #n falls silent as it begins what it does at `tick`."""
        fault = self.consult(Moment.ACT, (attempt, tick))
        return None if fault is None else fault.directive()  # type: ignore[return-value]

    def next_post(self) -> PostPoint | None:
        """A post action begins: where it dies, if it does."""
        self.posts += 1
        fault = self.consult(Moment.POST, (self.posts,))
        return None if fault is None else fault.directive()  # type: ignore[return-value]

    def report_changes(self, tick: int) -> None:
        """The input phase of `tick`: a scheduled change gives sections new content."""
        fault = self.consult(Moment.INPUT, (tick,))
        if fault is not None:
            self.change_report(fault.directive())  # type: ignore[arg-type]

    # -- protected writes --------------------------------------------------------------
    def guard(self, tick: int, writer: Writer, store: str, detail: dict[str, Any]) -> bool:
        """The token check every protected store makes, atomically with the write."""
        applied = not (self.fencing and writer.token < self.epoch)
        self.log(tick, Kind.WRITE, writer.n, {
            "store": store, "token": writer.token, "epoch": self.epoch, "applied": applied, **detail,
        })  # fmt: skip
        return applied

    def journal_key(self, step: int, pin: int | None) -> JournalKey:
        """The key a step of an attempt pinned to version `pin` (None: pins off) looks up."""
        return journal_key(step, None if pin is None else self.versions[pin][step])

    def _journal(self, writer: Writer, steps: list[tuple[int, Part | None]]) -> None:
        for i, part in steps:
            assert part is not None
            self.journal[journal_key(i, part.content if self.pins else None)] = JournalRecord(part.result, part.content, writer.n)

    def write_journal(self, tick: int, writer: Writer, steps: list[tuple[int, Part | None]]) -> bool:
        detail = {"record": "steps", "steps": [[i + 1, p.result, p.content] for i, p in steps if p]}
        if not self.guard(tick, writer, "journal", detail):
            return False
        self._journal(writer, steps)
        return True

    def write_candidate(self, tick: int, writer: Writer, candidate: Candidate,
                        steps: list[tuple[int, Part | None]]) -> bool:  # fmt: skip
        """The candidate (and, end-only, the attempt's step records with it) in one write."""
        detail = {
            "record": "candidate", "digest": candidate.digest,
            "parts": [[p.result, p.content] for p in candidate.parts],
            "pin": None if candidate.pin is None else candidate.pin + 1,
            "steps": [[i + 1, p.result, p.content] for i, p in steps if p],
        }  # fmt: skip
        if not self.guard(tick, writer, "candidate", detail):
            return False
        self._journal(writer, steps)
        self.candidates.append(candidate)
        return True

    def write_effect(self, tick: int, writer: Writer, digest: str, record: str) -> bool:
        if not self.guard(tick, writer, "effect", {"record": record, "digest": digest}):
            return False
        self.effects[digest] = record
        return True

    def send(self, tick: int, writer: Writer, digest: str, key: str | None) -> None:
        self.sends += 1
        fault = self.consult(Moment.SEND, (self.sends,))
        copies: int = 1 if fault is None else fault.directive()  # type: ignore[assignment]
        self.log(tick, Kind.SENT, writer.n, {"digest": digest, "key": key, "copies": copies})
        for _ in range(copies):
            answer, post = self.feed.receive(key, digest)
            self.log(tick, Kind.FEED, writer.n, {"digest": digest, "key": key, "answer": answer, "post": post})

    # -- the controller's view -------------------------------------------------------------
    def satisfied(self) -> bool:
        """The work is done for the current input (docs/model.md §5.3 d)."""
        if self.pins:
            return any(a.version == self.version for a in self.acceptances)
        if self.last_acceptance is None:
            return False
        return self.last_change is None or self.last_change <= self.last_acceptance

    # -- the end of a run -------------------------------------------------------------------
    def unfired(self, admitted: int) -> tuple[str, ...]:
        """Each fault of the schedule that never took effect, with why."""
        facts = RunFacts(admitted=admitted, posts=self.posts, sends=self.sends, last_tick=self.last_tick)
        return tuple(f.unfired(facts) for f in self.schedule.faults if f not in self.fired)
