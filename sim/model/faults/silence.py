"""A worker that falls silent: attempt #n stops heartbeating at tick t, as it begins whatever
it does then, and either resumes at a later tick (a pause) or never (a crash). The worked
example's attempt #1, silent at t3, is one (docs/model.md §5.5)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sim.base.errors import ScheduleError
from sim.model.events import Silent, payload
from sim.model.faults.base import (
    Bounds,
    Choices,
    Entry,
    Fault,
    Moment,
    Observed,
    RunFacts,
    Setting,
    Stall,
    draw_tick,
    integer_field,
    lower,
)
from sim.base.limits import MAX_HORIZON

#: chance that a drawn silence is a crash rather than a pause
CRASH = 0.3
#: chance that a drawn silence names a later attempt than #1 (uniformly #2..#attempts)
LATER_ATTEMPT = 0.5


@dataclass(frozen=True, slots=True)
class Silence(Fault):
    """Attempt `attempt` falls silent at tick `at`; `wake` is the tick it resumes and finishes
    what it began, or None (no `wake` in a scenario file) for a crash."""

    key = "silences"
    entries = {
        "attempt": Entry("the attempt that falls silent (#1 is the first; #n is admitted at the earliest at t(n-1))",
                         required=True, lo=1),
        "at": Entry("the tick at which it falls silent, as it begins what it does then (at the earliest its "
                    "attempt's number)", required=True, lo=1),
        "wake": Entry("the tick at which it resumes and finishes what it began: after `at`, by the horizon; "
                      "left out, it never resumes (a crash)", lo=2, hi=MAX_HORIZON),
    }
    plural = "silences"
    check_name = "silence"
    moment = Moment.ACT
    shown_by = "silent"
    coverage_labels = ("silence (paused)", "silence (crashed)")

    attempt: int
    at: int
    wake: int | None = None

    @property
    def crashed(self) -> bool:
        return self.wake is None

    def overlaps(self, other: Silence) -> bool:
        """Two silences of one attempt that cannot both be scheduled: one begins while the
        attempt is still silent from the other (the one rule, used by the loader, explore and check)."""
        if self.attempt != other.attempt:
            return False
        self_first = other.wake is None or self.at <= other.wake
        other_first = self.wake is None or other.at <= self.wake
        return self_first and other_first

    # -- the data ------------------------------------------------------------------
    @classmethod
    def parse(cls, item: dict[str, Any], where: str) -> Silence:
        attempt = integer_field(item, "attempt", where)
        at = integer_field(item, "at", where)
        assert attempt is not None and at is not None
        return cls(attempt=attempt, at=at, wake=integer_field(item, "wake", where, required=False))

    def dump(self) -> str:
        return "{attempt = %d, at = %d%s}" % (self.attempt, self.at, "" if self.wake is None else f", wake = {self.wake}")

    @classmethod
    def validate(cls, faults: Sequence[Silence], schedule: Setting) -> None:
        for s in faults:
            s._validate(schedule.horizon)
        ordered = sorted(faults, key=lambda s: (s.attempt, s.at))
        for before, after in zip(ordered, ordered[1:]):
            if after.overlaps(before):
                raise ScheduleError(
                    f"silences: attempt #{after.attempt} falls silent at t{after.at} while still "
                    f"silent from t{before.at}"
                )

    def _validate(self, horizon: int) -> None:
        n = self.attempt
        if n < 1:
            raise ScheduleError(f"silences: attempt #{n} does not exist (attempts start at #1)")
        if self.at < 0:
            raise ScheduleError(f"silences: negative tick {self.at} for attempt #{n}")
        if self.at < n:
            raise ScheduleError(
                f"silences: attempt #{n} cannot act before t{n} "
                f"(it is admitted at the earliest at t{n - 1}), silence at t{self.at}"
            )
        if self.wake is not None and self.wake > horizon:
            raise ScheduleError(f"silences: attempt #{n} wakes at t{self.wake}, after the horizon t{horizon}")
        if self.wake is not None and self.wake <= self.at:
            raise ScheduleError(f"silences: attempt #{n} wakes at t{self.wake}, not after its silence at t{self.at}")

    def sort_key(self) -> tuple[int, int, int]:
        return (self.attempt, self.at, self.wake or 0)

    def describe(self) -> str:
        end = "crashes (never wakes)" if self.wake is None else f"pauses until t{self.wake}"
        return f"#{self.attempt} falls silent at t{self.at} and {end}"

    # -- the engine --------------------------------------------------------------------
    def where(self) -> tuple[int, int]:
        return (self.attempt, self.at)

    def directive(self) -> Stall:
        return Stall(self.wake)

    def unfired(self, facts: RunFacts) -> str:
        if self.attempt > facts.admitted:
            why = f"attempt #{self.attempt} was never admitted (only {facts.admitted})"
        else:
            why = f"attempt #{self.attempt} was not acting at t{self.at}"
        return f"silence of attempt #{self.attempt} at t{self.at}: {why}"

    # -- sim explore -------------------------------------------------------------------
    @classmethod
    def draw(cls, c: Choices, bounds: Bounds, sections: int, drawn: Sequence[Fault]) -> Silence | None:
        attempt = 1 if not c.flip(LATER_ATTEMPT) else c.integer(min(2, bounds.attempts), bounds.attempts)
        at = draw_tick(c, attempt, bounds)
        wake = None if c.flip(CRASH) else at + c.integer(1, bounds.max_pause)
        silence = cls(attempt, at, wake)
        if any(isinstance(f, Silence) and silence.overlaps(f) for f in drawn):
            return None
        return silence

    def simpler(self, sections: int) -> Iterator[Silence]:
        at, wake = self.at, self.wake
        for a in lower(self.attempt, 1):  # an earlier attempt, no earlier than it can act
            yield Silence(a, max(at, a), None if wake is None else max(wake, a + 1))
        for earlier in lower(at, self.attempt):  # earlier, the same pause
            yield Silence(self.attempt, earlier, None if wake is None else wake - (at - earlier))
        if wake is not None:
            for sooner in lower(wake, at + 1):
                yield Silence(self.attempt, at, sooner)

    def complexity(self) -> tuple[int, int]:
        return self.at + (0 if self.wake is None else self.wake - self.at), self.attempt

    @classmethod
    def singles(cls, bounds: Bounds, sections: int) -> Iterator[Silence]:
        for attempt in range(1, bounds.attempts + 1):
            for at in range(attempt, max(attempt, bounds.last_tick) + 1):
                for wake in (None, *range(at + 1, at + bounds.max_pause + 1)):
                    yield cls(attempt, at, wake)

    @classmethod
    def observe(cls, event: Observed) -> tuple[str, int, int] | None:
        silent = payload(event, Silent)
        if silent["during"] == "send":
            return None  # a poster paused inside its post (`sim.model.faults.pause`)
        label = "silence (crashed)" if silent["crashed"] else "silence (paused)"
        return label, event.tick, max(event.tick, silent["wake"] or 0)

    # -- sim check ---------------------------------------------------------------------
    @classmethod
    def offers(cls, code: Sequence[Fault], tick: int, where: tuple[int, ...], horizon: int,
               schedule: Setting) -> list[Fault]:  # fmt: skip
        attempt, tick = where
        if any(isinstance(f, Silence) and cls(attempt, tick).overlaps(f) for f in code):
            return []  # still silent: it cannot fall silent again before it woke
        return [cls(attempt, tick, wake) for wake in (None, *range(tick + 1, horizon + 1))]

    def restricts_until(self) -> int | None:
        """A pause restricts until its wake (the attempt cannot fall silent again before,
        `overlaps`); a crashed attempt is never consulted again."""
        return self.wake

    @classmethod
    def bound_words(cls, horizon: int, schedule: Setting) -> str:
        return f"any attempt at any tick <= t{horizon}: crash, or pause waking by t{horizon}"
