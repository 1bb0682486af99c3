"""A duplicated delivery: the run's nth send reaches the feed as two concurrent copies (the
feed receives them one after the other, docs/model.md §2)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sim.base.errors import ScheduleError
from sim.model.events import Sent, payload
from sim.model.faults.base import (
    Bounds,
    Choices,
    Copies,
    Entry,
    Fault,
    Moment,
    Observed,
    RunFacts,
    Setting,
    integer_field,
    lower,
)


#: the directive: two copies reach the feed
TWICE = Copies(2)


@dataclass(frozen=True, slots=True)
class DuplicateDelivery(Fault):
    """The `nth` send of the run reaches the feed as two concurrent copies."""

    key = "duplicate_deliveries"
    entries = {
        "nth": Entry("which send of the run reaches the feed as two concurrent copies (1: the first)", lo=1),
    }
    plural = "duplicate deliveries"
    check_name = "duplicate_delivery"
    moment = Moment.SEND
    shown_by = "sent"
    coverage_labels = ("duplicate delivery",)

    nth: int = 1

    # -- the data ------------------------------------------------------------------
    @classmethod
    def parse(cls, item: dict[str, Any], where: str) -> DuplicateDelivery:
        nth = integer_field(item, "nth", where, default=1)
        assert nth is not None
        return cls(nth=nth)

    def dump(self) -> str:
        return "{nth = %d}" % self.nth

    @classmethod
    def validate(cls, faults: Sequence[DuplicateDelivery], schedule: Setting) -> None:
        for d in faults:
            if d.nth < 1:
                raise ScheduleError(f"duplicate_deliveries: nth must be at least 1, got {d.nth}")

    def sort_key(self) -> tuple[int]:
        return (self.nth,)

    def describe(self) -> str:
        return f"send {self.nth} reaches the feed twice"

    # -- the engine --------------------------------------------------------------------
    def where(self) -> tuple[int]:
        return (self.nth,)

    def directive(self) -> Copies:
        return TWICE

    def unfired(self, facts: RunFacts) -> str:
        return f"duplicate delivery of send {self.nth}: only {facts.sends} send(s) happened"

    # -- sim explore -------------------------------------------------------------------
    @classmethod
    def draw(cls, c: Choices, bounds: Bounds, sections: int, drawn: Sequence[Fault]) -> DuplicateDelivery | None:
        nth = c.integer(1, bounds.max_nth)
        if any(isinstance(f, DuplicateDelivery) and f.nth == nth for f in drawn):
            return None
        return cls(nth)

    def simpler(self, sections: int) -> Iterator[DuplicateDelivery]:
        for nth in lower(self.nth, 1):
            yield DuplicateDelivery(nth)

    def complexity(self) -> tuple[int, int]:
        return 0, self.nth

    @classmethod
    def singles(cls, bounds: Bounds, sections: int) -> Iterator[DuplicateDelivery]:
        for nth in range(1, bounds.max_nth + 1):
            yield cls(nth)

    @classmethod
    def observe(cls, event: Observed) -> tuple[str, int, int] | None:
        if payload(event, Sent)["copies"] > 1:
            return "duplicate delivery", event.tick, event.tick
        return None

    # -- sim check ---------------------------------------------------------------------
    @classmethod
    def offers(cls, code: Sequence[Fault], tick: int, where: tuple[int, ...], horizon: int,
               schedule: Setting) -> list[Fault]:  # fmt: skip
        return [cls(where[0])]

    @classmethod
    def bound_words(cls, horizon: int, schedule: Setting) -> str:
        return f"any send at a tick <= t{horizon}"
