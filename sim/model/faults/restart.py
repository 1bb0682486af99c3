"""The controller restarting (outside the article's model, its ninth case): at the start of
tick t the controller crashes, and it restarts `down` ticks later, in its own phase of that
tick. While it is down its phase does nothing: no assessment, no newsletter gate, no
suspicion, no admission. The workers keep running: the stores are durable services, not
the controller's memory, so they keep taking writes (and checking tokens against the
epoch), and the workers keep heartbeating, but nobody listens.

What the restarted controller finds on storage is the knob `controller_state`
(`sim.model.knobs.controller_state`): with everything the article requires durable, nothing
breaks and the outage only costs time; without a durable epoch counter a token is issued
twice and fencing lets a stale write through; with its old suspicion timers it suspects
live attempts (docs/outside.md, case 9).

A schedule has at most one controller restart: the controller's memory of heartbeats after
a restart depends on that one outage (docs/model.md §9).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sim.base.errors import ScheduleError
from sim.model.events import ControllerDown, payload
from sim.model.faults.base import (
    AtTick,
    Bounds,
    Choices,
    Effect,
    Entry,
    Fault,
    Moment,
    Observed,
    Restart,
    Setting,
    draw_tick,
    integer_field,
    lower,
)
from sim.base.limits import MAX_HORIZON


@dataclass(frozen=True, slots=True)
class ControllerRestart(AtTick):
    """The controller crashes at the start of tick `at` and restarts in its phase of `at + down`."""

    key = "controller_restarts"
    entries = {
        "at": Entry("the tick at whose start the controller crashes (at most one restart per schedule)",
                    required=True, lo=0, hi=MAX_HORIZON),
        "down": Entry("how many ticks later it restarts, in its own phase (`at + down` by the horizon)",
                      required=True, lo=1, hi=MAX_HORIZON),
    }
    most = 1
    plural = "controller restarts"
    check_name = "controller_restart"
    effects = frozenset({Effect.RESTARTS_CONTROLLER})
    moment = Moment.INPUT
    shown_by = "controller-down"
    unfired_words = "controller crash"
    case = 9
    coverage_labels = ("controller restarted",)
    article = False

    at: int
    down: int = 1

    # -- the data ------------------------------------------------------------------
    @classmethod
    def parse(cls, item: dict[str, Any], where: str) -> ControllerRestart:
        at = integer_field(item, "at", where)
        down = integer_field(item, "down", where)
        assert at is not None and down is not None
        return cls(at=at, down=down)

    def dump(self) -> str:
        return f"{{at = {self.at}, down = {self.down}}}"

    @classmethod
    def validate(cls, faults: Sequence[ControllerRestart], schedule: Setting) -> None:
        for f in faults:
            if f.at < 0:
                raise ScheduleError(f"controller_restarts: negative tick {f.at}")
            if f.down < 1 or f.at + f.down > schedule.horizon:
                raise ScheduleError(
                    f"controller_restarts: down must be 1 or more and the restart at t{f.at} + {f.down} "
                    f"must come by the horizon (t{schedule.horizon})"
                )
        if len(faults) > cls.most:
            raise ScheduleError("controller_restarts: at most one controller restart per schedule")

    def sort_key(self) -> tuple[int, int]:
        return (self.at, self.down)

    def describe(self) -> str:
        return f"the controller crashes at t{self.at} and restarts at t{self.at + self.down}"

    # -- the engine --------------------------------------------------------------------
    def directive(self) -> Restart:
        return Restart(self.down)

    # -- sim explore -------------------------------------------------------------------
    @classmethod
    def draw(cls, c: Choices, bounds: Bounds, sections: int, drawn: Sequence[Fault]) -> ControllerRestart | None:
        at = draw_tick(c, 0, bounds)
        down = c.integer(1, bounds.max_pause)
        if any(isinstance(f, ControllerRestart) for f in drawn):
            return None
        return cls(at, down)

    def simpler(self, sections: int) -> Iterator[ControllerRestart]:
        for at in lower(self.at, 0):
            yield ControllerRestart(at, self.down)
        for down in lower(self.down, 1):
            yield ControllerRestart(self.at, down)

    def complexity(self) -> tuple[int, int]:
        return self.at, self.down

    @classmethod
    def singles(cls, bounds: Bounds, sections: int) -> Iterator[ControllerRestart]:
        for at in range(bounds.last_tick + 1):
            for down in range(1, bounds.max_pause + 1):
                yield cls(at, down)

    @classmethod
    def observe(cls, event: Observed) -> tuple[str, int, int]:
        return cls.coverage_labels[0], event.tick, payload(event, ControllerDown)["until"]

    # -- sim check ---------------------------------------------------------------------
    @classmethod
    def offers(cls, code: Sequence[Fault], tick: int, where: tuple[int, ...], horizon: int,
               schedule: Setting) -> list[Fault]:  # fmt: skip
        if any(isinstance(f, ControllerRestart) for f in code):
            return []
        return [cls(tick, down) for down in range(1, horizon - tick + 1)]

    @classmethod
    def bound_words(cls, horizon: int, schedule: Setting) -> str:
        return f"one, crashing at any tick t0..t{horizon - 1} and restarting by t{horizon}"

    def restricts_until(self) -> int | None:
        # at most one restart per schedule: once it has taken effect, none may be offered
        return 1 << 30
