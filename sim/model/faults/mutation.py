"""A snapshot whose bytes change after hashing (outside the article's model, its fifth case,
second half): at the start of tick t the bytes of one section of the current report change in
place, while its content hash, and so its version, stays as it was. Every journal key and pin
still names the old bytes; a step computed from then on reads the changed ones. Reuse by hash
and the assessor's hash check both pass, so nothing in the model notices: faithful-digest
breaks with all four protections on (docs/outside.md, case 5).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sim.base.errors import ScheduleError
from sim.model.faults.base import (
    AtTick,
    Bounds,
    Choices,
    Effect,
    Entry,
    Fault,
    Moment,
    Mutation,
    Observed,
    Setting,
    draw_tick,
    integer_field,
    lower,
    toward,
)
from sim.base.limits import MAX_SECTIONS


@dataclass(frozen=True, slots=True)
class SnapshotMutation(AtTick):
    """At the start of tick `at`, the bytes of `section` (1-based) change under its hash."""

    key = "snapshot_mutations"
    entries = {
        "at": Entry("the tick at whose start the section's bytes change under its hash (one mutation per tick)",
                    required=True, lo=0),
        "section": Entry("the section (1-based, within `sections`) whose bytes change", lo=1, hi=MAX_SECTIONS),
    }
    plural = "snapshot mutations"
    check_name = "snapshot_mutation"
    effects = frozenset({Effect.MUTATES_SNAPSHOT})
    moment = Moment.INPUT
    shown_by = "mutated"
    unfired_words = "snapshot mutation"
    case = 5
    coverage_labels = ("snapshot bytes changed",)
    article = False

    at: int
    section: int = 2

    # -- the data ------------------------------------------------------------------
    @classmethod
    def parse(cls, item: dict[str, Any], where: str) -> SnapshotMutation:
        at = integer_field(item, "at", where)
        section = integer_field(item, "section", where, default=2)
        assert at is not None and section is not None
        return cls(at=at, section=section)

    def dump(self) -> str:
        return f"{{at = {self.at}, section = {self.section}}}"

    @classmethod
    def validate(cls, faults: Sequence[SnapshotMutation], schedule: Setting) -> None:
        cls.check_ticks(faults, "mutations")
        for f in faults:
            if not 1 <= f.section <= schedule.sections:
                raise ScheduleError(f"snapshot_mutations: section {f.section} at t{f.at} is outside 1..{schedule.sections}")

    def sort_key(self) -> tuple[int, int]:
        return (self.at, self.section)

    def describe(self) -> str:
        return f"the bytes of section {self.section} change under their hash at t{self.at}"

    # -- the engine --------------------------------------------------------------------
    def directive(self) -> Mutation:
        return Mutation(self.section)

    # -- sim explore -------------------------------------------------------------------
    @classmethod
    def draw(cls, c: Choices, bounds: Bounds, sections: int, drawn: Sequence[Fault]) -> SnapshotMutation | None:
        # (a fault at the same moment as one drawn already is dropped by `draw_schedule`)
        return cls(draw_tick(c, 0, bounds), c.pick(toward(2, 1, sections)))

    def simpler(self, sections: int) -> Iterator[SnapshotMutation]:
        for at in lower(self.at, 0):
            yield SnapshotMutation(at, self.section)
        if self.section != 2 and sections >= 2:
            yield SnapshotMutation(self.at, 2)

    def fit(self, sections: int) -> SnapshotMutation:
        return SnapshotMutation(self.at, min(self.section, sections))

    def complexity(self) -> tuple[int, int]:
        return self.at, abs(self.section - 2)

    @classmethod
    def singles(cls, bounds: Bounds, sections: int) -> Iterator[SnapshotMutation]:
        for at in range(bounds.last_tick + 1):
            for section in toward(2, 1, sections):
                yield cls(at, section)

    @classmethod
    def observe(cls, event: Observed) -> tuple[str, int, int]:
        return cls.coverage_labels[0], event.tick, event.tick

    # -- sim check ---------------------------------------------------------------------
    @classmethod
    def offers(cls, code: Sequence[Fault], tick: int, where: tuple[int, ...], horizon: int,
               schedule: Setting) -> list[Fault]:  # fmt: skip
        return [cls(tick, section) for section in range(1, schedule.sections + 1)]

    @classmethod
    def bound_words(cls, horizon: int, schedule: Setting) -> str:
        return f"any tick t0..t{horizon}, any of the {schedule.sections} sections"
