"""Fault schedules as data.

A schedule says what happens *to* the work: which attempt falls silent at which tick (and
whether it wakes), when the report changes and which sections change, which poster dies
and at which point of its post, which send the feed receives twice, plus the constants of
the setting (sections, first owner token, heartbeat limit, the newsletter's ready tick).

The worked example's timings are one schedule, built from three of the switches by
`worked_example`; the engine never special-cases them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from sim.errors import ScheduleError
from sim.switches import Change, PostDeath, Silent, Switches


class DeathPoint(Enum):
    """Where in its post a dying poster stops (SPEC.md section 3, effect lifecycle)."""

    BEFORE_INTENT = "before-intent"
    AFTER_INTENT = "after-intent"
    AFTER_SEND = "after-send"


@dataclass(frozen=True, slots=True)
class Silence:
    """Attempt `attempt` falls silent at tick `at`, as it starts whatever it does then.

    It heartbeats at `at` and begins its action (a model call it starts is made and
    counted); the action's writes wait. `wake` is the tick it resumes and finishes that
    action, or None for a crash (it never resumes).
    """

    attempt: int
    at: int
    wake: int | None = None

    @property
    def crashed(self) -> bool:
        return self.wake is None


@dataclass(frozen=True, slots=True)
class ReportChange:
    """At tick `at` the report gets a new version; `sections` (1-based) get new content."""

    at: int
    sections: tuple[int, ...] = (2,)


@dataclass(frozen=True, slots=True)
class PosterDeath:
    """The `nth` post action of the run (any attempt, resends included) dies at `point`."""

    point: DeathPoint = DeathPoint.AFTER_SEND
    nth: int = 1


@dataclass(frozen=True, slots=True)
class DuplicateDelivery:
    """The `nth` send of the run reaches the feed as two concurrent copies."""

    nth: int = 1


@dataclass(frozen=True, slots=True)
class Schedule:
    silences: tuple[Silence, ...] = ()
    changes: tuple[ReportChange, ...] = ()
    poster_deaths: tuple[PosterDeath, ...] = ()
    duplicate_deliveries: tuple[DuplicateDelivery, ...] = ()
    sections: int = 4
    first_token: int = 41
    heartbeat_limit: int = 2
    newsletter_ready: int = 12
    horizon: int = 200
    _silence_index: dict[tuple[int, int], Silence] = field(
        init=False, default_factory=dict, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        self.validate()
        index = {(s.attempt, s.at): s for s in self.silences}
        object.__setattr__(self, "_silence_index", index)

    def silence_at(self, attempt: int, tick: int) -> Silence | None:
        return self._silence_index.get((attempt, tick))

    @property
    def fault_count(self) -> int:
        return (
            len(self.silences)
            + len(self.changes)
            + len(self.poster_deaths)
            + len(self.duplicate_deliveries)
        )

    def validate(self) -> None:
        """Raise a ScheduleError naming the first thing that cannot happen."""
        if not 2 <= self.sections <= 26:
            raise ScheduleError(f"sections: {self.sections} is outside 2..26")
        if self.first_token < 0:
            raise ScheduleError(f"first_token: negative token {self.first_token}")
        if self.heartbeat_limit < 1:
            raise ScheduleError(f"heartbeat_limit: {self.heartbeat_limit} must be at least 1")
        if self.newsletter_ready < 0:
            raise ScheduleError(f"newsletter_ready: negative tick {self.newsletter_ready}")
        if self.horizon < 1:
            raise ScheduleError(f"horizon: {self.horizon} must be at least 1")
        for s in self.silences:
            if s.attempt < 1:
                raise ScheduleError(f"silences: attempt #{s.attempt} does not exist (attempts start at #1)")
            if s.at < 0:
                raise ScheduleError(f"silences: negative tick {s.at} for attempt #{s.attempt}")
            if s.at < s.attempt:
                raise ScheduleError(
                    f"silences: attempt #{s.attempt} cannot act before t{s.attempt} "
                    f"(it is admitted at the earliest at t{s.attempt - 1}), silence at t{s.at}"
                )
            if s.wake is not None and s.wake > self.horizon:
                raise ScheduleError(
                    f"silences: attempt #{s.attempt} wakes at t{s.wake}, after the horizon t{self.horizon}"
                )
            if s.wake is not None and s.wake <= s.at:
                raise ScheduleError(
                    f"silences: attempt #{s.attempt} wakes at t{s.wake}, not after its silence at t{s.at}"
                )
        by_attempt: dict[int, list[Silence]] = {}
        for s in sorted(self.silences, key=lambda s: (s.attempt, s.at)):
            by_attempt.setdefault(s.attempt, []).append(s)
        for attempt, items in by_attempt.items():
            for before, after in zip(items, items[1:]):
                if before.wake is None or after.at <= before.wake:
                    raise ScheduleError(
                        f"silences: attempt #{attempt} falls silent at t{after.at} while still "
                        f"silent from t{before.at}"
                    )
        ticks = [c.at for c in self.changes]
        for c in self.changes:
            if c.at < 0:
                raise ScheduleError(f"changes: negative tick {c.at}")
            if not c.sections:
                raise ScheduleError(f"changes: the change at t{c.at} touches no section")
            for sec in c.sections:
                if not 1 <= sec <= self.sections:
                    raise ScheduleError(
                        f"changes: section {sec} at t{c.at} is outside 1..{self.sections}"
                    )
            if len(set(c.sections)) != len(c.sections):
                raise ScheduleError(f"changes: the change at t{c.at} names a section twice")
        if len(set(ticks)) != len(ticks):
            raise ScheduleError("changes: two report changes at the same tick")
        for d in self.poster_deaths:
            if d.nth < 1:
                raise ScheduleError(f"poster_deaths: nth must be at least 1, got {d.nth}")
        if len({d.nth for d in self.poster_deaths}) != len(self.poster_deaths):
            raise ScheduleError("poster_deaths: two deaths for the same post")
        for dup in self.duplicate_deliveries:
            if dup.nth < 1:
                raise ScheduleError(f"duplicate_deliveries: nth must be at least 1, got {dup.nth}")


#: the worked example's fixed timings (SPEC.md section 5 and the article's section 11).
EXAMPLE_SILENCE_TICK = 3
EXAMPLE_WAKE_TICK = 8
EXAMPLE_CHANGE_TICK = {Change.DURING: 4, Change.AFTER: 12}


def worked_example(switches: Switches) -> Schedule:
    """The worked example's schedule for these switches: attempt #1 silent at t3 (waking
    at t8 if paused), section 2 corrected at t4 or t12, the first poster dying after its
    send, four sections, token 41, two missed heartbeats, newsletter ready at t12."""
    wake = EXAMPLE_WAKE_TICK if switches.silent is Silent.PAUSED else None
    change_tick = EXAMPLE_CHANGE_TICK.get(switches.change)
    return Schedule(
        silences=(Silence(attempt=1, at=EXAMPLE_SILENCE_TICK, wake=wake),),
        changes=() if change_tick is None else (ReportChange(at=change_tick, sections=(2,)),),
        poster_deaths=(PosterDeath(),) if switches.post_death is PostDeath.YES else (),
    )
