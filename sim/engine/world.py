"""The shared state of one run, its protected writes and its trace log; `run` runs a scenario."""

from __future__ import annotations

from typing import Any

import simpy

from sim.engine.actors import Attempt, Controller, Status, input_process
from sim.engine.records import Acceptance, Candidate, Feed, JournalKey, JournalRecord, Part, journal_key
from sim.schedule import DeathPoint, Schedule, Silence
from sim.switches import Checkpoints, Fencing, Gate, Pins, Switches
from sim.trace import Event, Kind, Trace

_new_event = tuple.__new__


class World:
    def __init__(self, switches: Switches, schedule: Schedule) -> None:
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
        self.attempts: list[Attempt] = []
        self.owner: Attempt | None = None
        self.epoch = schedule.first_token - 1  # no attempt admitted yet
        self.journal: dict[JournalKey, JournalRecord] = {}
        self.candidates: list[Candidate] = []
        self.acceptances: list[Acceptance] = []
        self.effects: dict[str, str] = {}  # digest -> "intent" | "confirmed"
        self.feed = Feed()
        # fault bookkeeping
        self.posts = 0
        self.sends = 0
        self.fired: set[Silence] = set()
        self.deaths = {d.nth: d.point for d in schedule.poster_deaths}
        self.duplicates = {d.nth for d in schedule.duplicate_deliveries}
        self.last_change_at = max((c.at for c in schedule.changes), default=-1)
        # the trace
        self.events: list[Event] = []
        self.last_tick = 0
        self.horizon_reached = False
        self.finished = self.env.event()
        self.controller = Controller(self)

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
    def silence_at(self, attempt: int, tick: int) -> Silence | None:
        silence = self.schedule.silence_at(attempt, tick)
        if silence is not None:
            self.fired.add(silence)
        return silence

    def next_post(self) -> DeathPoint | None:
        self.posts += 1
        return self.deaths.get(self.posts)

    # -- protected writes --------------------------------------------------------------
    def guard(self, tick: int, writer: Attempt, store: str, detail: dict[str, Any]) -> bool:
        """The token check every protected store makes, atomically with the write."""
        applied = not (self.fencing and writer.token < self.epoch)
        self.log(tick, Kind.WRITE, writer.n, {
            "store": store, "token": writer.token, "epoch": self.epoch, "applied": applied, **detail,
        })  # fmt: skip
        return applied

    def journal_key(self, step: int, pin: int | None) -> JournalKey:
        """The key a step of an attempt pinned to version `pin` (None: pins off) looks up."""
        return journal_key(step, None if pin is None else self.versions[pin][step])

    def _journal(self, writer: Attempt, steps: list[tuple[int, Part | None]]) -> None:
        for i, part in steps:
            assert part is not None
            self.journal[journal_key(i, part.content if self.pins else None)] = JournalRecord(part.result, part.content, writer.n)

    def write_journal(self, tick: int, writer: Attempt, steps: list[tuple[int, Part | None]]) -> bool:
        detail = {"record": "steps", "steps": [[i + 1, p.result, p.content] for i, p in steps if p]}
        if not self.guard(tick, writer, "journal", detail):
            return False
        self._journal(writer, steps)
        return True

    def write_candidate(self, tick: int, writer: Attempt, candidate: Candidate,
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

    def write_effect(self, tick: int, writer: Attempt, digest: str, record: str) -> bool:
        if not self.guard(tick, writer, "effect", {"record": record, "digest": digest}):
            return False
        self.effects[digest] = record
        return True

    def send(self, tick: int, writer: Attempt, digest: str, key: str | None) -> None:
        self.sends += 1
        copies = 2 if self.sends in self.duplicates else 1
        self.log(tick, Kind.SENT, writer.n, {"digest": digest, "key": key, "copies": copies})
        for _ in range(copies):
            answer, post = self.feed.receive(key, digest)
            self.log(tick, Kind.FEED, writer.n, {"digest": digest, "key": key, "answer": answer, "post": post})

    # -- the controller's view -------------------------------------------------------------
    def admit(self, tick: int, reason: str, inherit: Candidate | None) -> Attempt:
        """Publish a new epoch, then admit an attempt holding it (record before dispatch)."""
        token = self.epoch + 1
        self.epoch = token
        if inherit is not None:
            pin = inherit.pin
        else:
            pin = self.version if self.pins else None
        attempt = Attempt(self, len(self.attempts) + 1, token, pin, inherit)
        self.attempts.append(attempt)
        self.owner = attempt
        self.log(tick, Kind.ADMITTED, attempt.n, {
            "token": token, "reason": reason, "pin": None if pin is None else pin + 1,
            "reconcile": None if inherit is None else inherit.digest,
        })  # fmt: skip
        self.env.process(attempt.process())
        return attempt

    def satisfied(self) -> bool:
        """The work is done for the current input (SPEC 5.3 d)."""
        if self.pins:
            return any(a.version == self.version for a in self.acceptances)
        if self.last_acceptance is None:
            return False
        return self.last_change is None or self.last_change <= self.last_acceptance

    # -- running -----------------------------------------------------------------------------
    def run(self) -> Trace:
        self.env.process(input_process(self))
        self.env.process(self.controller.process())
        self.env.run(until=self.finished)
        return Trace(
            switches=self.switches,
            schedule=self.schedule,
            events=tuple(self.events),
            versions=tuple(self.versions),
            last_tick=self.last_tick,
            horizon_reached=self.horizon_reached,
            unfired=self.unfired(),
        )

    def unfired(self) -> tuple[str, ...]:
        out = []
        admitted = len(self.attempts)
        for s in self.schedule.silences:
            if s not in self.fired:
                why = (
                    f"attempt #{s.attempt} was never admitted (only {admitted})"
                    if s.attempt > admitted
                    else f"attempt #{s.attempt} was not acting at t{s.at}"
                )
                out.append(f"silence of attempt #{s.attempt} at t{s.at}: {why}")
        for d in self.schedule.poster_deaths:
            if d.nth > self.posts:
                out.append(f"death of post {d.nth}: only {self.posts} post action(s) happened")
        for dup in self.schedule.duplicate_deliveries:
            if dup.nth > self.sends:
                out.append(f"duplicate delivery of send {dup.nth}: only {self.sends} send(s) happened")
        for c in self.schedule.changes:
            if c.at > self.last_tick:
                out.append(f"report change at t{c.at}: the run ended at t{self.last_tick}")
        return tuple(out)


def run(switches: Switches, schedule: Schedule) -> Trace:
    """Run one scenario to its end and return its trace."""
    return World(switches, schedule).run()


__all__ = ["run", "World", "Status"]
