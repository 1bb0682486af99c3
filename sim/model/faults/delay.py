"""Heartbeats delayed while the worker works on (outside the article's model, its fourth
case: clocks outside their assumed bound, or a slow heartbeat path). From tick t, attempt
#n's heartbeats do not reach the controller for some ticks, though #n keeps working. If
that lasts the heartbeat limit, the controller suspects a live owner and admits a successor
(a false suspicion). With fencing on nothing breaks, but the old owner's next write is
rejected and the model calls it made since the suspicion are wasted; with fencing off its
stale writes land (docs/outside.md, case 4).

Delays compose: a heartbeat is unheard if any delay covers it, and the controller counts from
the last heartbeat it heard, so a delay that starts inside another extends it
(`sim.engine.rules.delay_heartbeats`) and a crash inside one does not restart the count
(`AttemptState.last_heard`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sim.base.errors import ScheduleError
from sim.model.events import UnheardPayload, payload
from sim.model.faults.base import (
    Bounds,
    Choices,
    Entry,
    Fault,
    Moment,
    Observed,
    RunFacts,
    Setting,
    Unheard,
    draw_tick,
    integer_field,
    lower,
)
from sim.base.limits import MAX_HORIZON


@dataclass(frozen=True, slots=True)
class HeartbeatDelay(Fault):
    """From tick `at` (as attempt #`attempt` acts), its heartbeats go unheard for `ticks` ticks."""

    key = "heartbeat_delays"
    entries = {
        "attempt": Entry("the attempt whose heartbeats go unheard (#1 is the first)", required=True, lo=1),
        "at": Entry("the tick from which, as the attempt acts, its heartbeats go unheard (at the earliest its "
                    "attempt's number)", required=True, lo=1),
        "ticks": Entry("for how many ticks they go unheard (1..horizon)", required=True, lo=1, hi=MAX_HORIZON),
    }
    plural = "heartbeat delays"
    check_name = "heartbeat_delay"
    moment = Moment.ACT
    shown_by = "unheard"
    case = 4
    coverage_labels = ("heartbeats delayed",)
    article = False

    attempt: int
    at: int
    ticks: int = 1

    # -- the data ------------------------------------------------------------------
    @classmethod
    def parse(cls, item: dict[str, Any], where: str) -> HeartbeatDelay:
        attempt = integer_field(item, "attempt", where)
        at = integer_field(item, "at", where)
        ticks = integer_field(item, "ticks", where)
        assert attempt is not None and at is not None and ticks is not None
        return cls(attempt=attempt, at=at, ticks=ticks)

    def dump(self) -> str:
        return f"{{attempt = {self.attempt}, at = {self.at}, ticks = {self.ticks}}}"

    @classmethod
    def validate(cls, faults: Sequence[HeartbeatDelay], schedule: Setting) -> None:
        for f in faults:
            if f.attempt < 1 or f.at < f.attempt:
                raise ScheduleError(
                    f"heartbeat_delays: attempt #{f.attempt} at t{f.at}: attempts start at #1 and #n acts from tn"
                )
            if not 1 <= f.ticks <= schedule.horizon:
                raise ScheduleError(f"heartbeat_delays: ticks must be 1..{schedule.horizon}, got {f.ticks}")
        spots = [(f.attempt, f.at) for f in faults]
        if len(set(spots)) != len(spots):
            raise ScheduleError("heartbeat_delays: two delays of one attempt at one tick")

    def sort_key(self) -> tuple[int, int, int]:
        return (self.attempt, self.at, self.ticks)

    def describe(self) -> str:
        return f"#{self.attempt}'s heartbeats go unheard from t{self.at} for {self.ticks} tick(s) while it works"

    # -- the engine --------------------------------------------------------------------
    def where(self) -> tuple[int, int]:
        return (self.attempt, self.at)

    def directive(self) -> Unheard:
        return Unheard(self.ticks)

    def unfired(self, facts: RunFacts) -> str:
        if self.attempt > facts.admitted:
            return f"heartbeat delay of #{self.attempt}: only {facts.admitted} attempt(s) were admitted"
        return f"heartbeat delay of #{self.attempt} at t{self.at}: it was not acting then"

    # -- sim explore -------------------------------------------------------------------
    @classmethod
    def draw(cls, c: Choices, bounds: Bounds, sections: int, drawn: Sequence[Fault]) -> HeartbeatDelay | None:
        attempt = c.integer(1, bounds.attempts)
        at = draw_tick(c, attempt, bounds)
        return cls(attempt, at, c.integer(1, bounds.max_pause))

    def simpler(self, sections: int) -> Iterator[HeartbeatDelay]:
        for attempt in lower(self.attempt, 1):
            yield HeartbeatDelay(attempt, max(self.at, attempt), self.ticks)
        for at in lower(self.at, self.attempt):
            yield HeartbeatDelay(self.attempt, at, self.ticks)
        for ticks in lower(self.ticks, 1):
            yield HeartbeatDelay(self.attempt, self.at, ticks)

    def complexity(self) -> tuple[int, int]:
        return self.at + self.ticks, self.attempt

    @classmethod
    def singles(cls, bounds: Bounds, sections: int) -> Iterator[HeartbeatDelay]:
        for attempt in range(1, bounds.attempts + 1):
            for at in range(attempt, max(attempt, bounds.last_tick) + 1):
                for ticks in range(1, bounds.max_pause + 1):
                    yield cls(attempt, at, ticks)

    @classmethod
    def observe(cls, event: Observed) -> tuple[str, int, int]:
        return cls.coverage_labels[0], event.tick, payload(event, UnheardPayload)["until"]

    # -- sim check ---------------------------------------------------------------------
    @classmethod
    def offers(cls, code: Sequence[Fault], tick: int, where: tuple[int, ...], horizon: int,
               schedule: Setting) -> list[Fault]:  # fmt: skip
        attempt, at = where
        return [cls(attempt, at, ticks) for ticks in range(1, horizon - at + 1)]

    @classmethod
    def bound_words(cls, horizon: int, schedule: Setting) -> str:
        return f"any attempt acting at a tick < t{horizon}, unheard for up to the horizon"
