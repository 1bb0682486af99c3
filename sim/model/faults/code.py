"""Orchestration code that changes under running work (outside the article's model, its
eighth case): at the start of tick t a deploy increments the code version. Each attempt runs
the code deployed when it was admitted; a successor that restores a step from the journal
reuses a result its predecessor computed under the code before. Two knobs say what happens
then: `journal_code` (does the journal key carry the code version) and `replay` (does the
engine restore matching records, or replay the history strictly and stop with a
non-determinism error on a record of other code). The three outcomes: a silently mixed
digest (faithful-digest breaks), a stuck run, or redone steps (docs/outside.md, case 8).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sim.model.faults.base import (
    AtTick,
    Bounds,
    Choices,
    CodeChange,
    Effect,
    Entry,
    Fault,
    Moment,
    Observed,
    Setting,
    draw_tick,
    integer_field,
    lower,
)

#: the one `CodeChange` directive
CHANGE = CodeChange()


@dataclass(frozen=True, slots=True)
class CodeUpdate(AtTick):
    """At the start of tick `at` the orchestration code's version increments."""

    key = "code_changes"
    entries = {
        "at": Entry("the tick at whose start the orchestration code's version increments (one change per tick)",
                    required=True, lo=0),
    }
    plural = "code changes"
    check_name = "code_change"
    effects = frozenset({Effect.CHANGES_CODE})
    moment = Moment.INPUT
    shown_by = "code-changed"
    unfired_words = "code change"
    case = 8
    coverage_labels = ("code changed",)
    article = False

    at: int

    # -- the data ------------------------------------------------------------------
    @classmethod
    def parse(cls, item: dict[str, Any], where: str) -> CodeUpdate:
        at = integer_field(item, "at", where)
        assert at is not None
        return cls(at=at)

    def dump(self) -> str:
        return f"{{at = {self.at}}}"

    @classmethod
    def validate(cls, faults: Sequence[CodeUpdate], schedule: Setting) -> None:
        cls.check_ticks(faults, "code changes")

    def sort_key(self) -> tuple[int]:
        return (self.at,)

    def describe(self) -> str:
        return f"the orchestration code changes at t{self.at}"

    # -- the engine --------------------------------------------------------------------
    def directive(self) -> CodeChange:
        return CHANGE

    # -- sim explore -------------------------------------------------------------------
    @classmethod
    def draw(cls, c: Choices, bounds: Bounds, sections: int, drawn: Sequence[Fault]) -> CodeUpdate | None:
        # (a fault at the same moment as one drawn already is dropped by `draw_schedule`)
        return cls(draw_tick(c, 0, bounds))

    def simpler(self, sections: int) -> Iterator[CodeUpdate]:
        for at in lower(self.at, 0):
            yield CodeUpdate(at)

    def complexity(self) -> tuple[int, int]:
        return self.at, 0

    @classmethod
    def singles(cls, bounds: Bounds, sections: int) -> Iterator[CodeUpdate]:
        for at in range(bounds.last_tick + 1):
            yield cls(at)

    @classmethod
    def observe(cls, event: Observed) -> tuple[str, int, int]:
        return cls.coverage_labels[0], event.tick, event.tick

    # -- sim check ---------------------------------------------------------------------
    @classmethod
    def offers(cls, code: Sequence[Fault], tick: int, where: tuple[int, ...], horizon: int,
               schedule: Setting) -> list[Fault]:  # fmt: skip
        return [cls(tick)]

    @classmethod
    def bound_words(cls, horizon: int, schedule: Setting) -> str:
        return f"any tick t0..t{horizon}"
