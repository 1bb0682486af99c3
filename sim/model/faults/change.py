"""A change of the input: at tick t the report gets a new version in which the named sections
have new content (never a revert). The worked example corrects section 2 at t4 or t12
(docs/model.md §1 and §5.1)."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sim.base.errors import ScenarioError, ScheduleError
from sim.model.faults.base import (
    AtTick,
    Bounds,
    Choices,
    Effect,
    Entry,
    Fault,
    Moment,
    NewContent,
    Observed,
    Setting,
    draw_tick,
    integer_field,
    lower,
    toward,
)
from sim.base.limits import MAX_CHANGE_SECTIONS, MAX_SECTIONS, quote

#: chance that a drawn change touches one more section
MORE_SECTIONS = 0.25


@functools.cache
def section_sets(sections: int) -> tuple[tuple[int, ...], ...]:
    """Every non-empty set of sections, smallest first, then in lexicographic order."""
    return tuple(
        combo for size in range(1, sections + 1) for combo in itertools.combinations(range(1, sections + 1), size)
    )


def _atoms_words(schedule: Setting) -> str:
    """The steps each part's change reaches, in words: `[1, 3], [2, 3]`."""
    return ", ".join(str(list(atom)) for atom in schedule.change_atoms) + " (the steps each part's change reaches)"


#: the changes offered at a tick, by (tick, the section sets)
_OFFERED: dict[tuple[int, tuple[tuple[int, ...], ...]], tuple[ReportChange, ...]] = {}


@dataclass(frozen=True, slots=True)
class ReportChange(AtTick):
    """At tick `at` the report gets a new version; `sections` (1-based) get new content."""

    key = "changes"
    entries = {
        "at": Entry("the tick at whose start the report gets a new version (one change per tick)", required=True, lo=0),
        "sections": Entry("the sections (1-based, within `sections`) that get new content, each once",
                          lo=1, hi=MAX_SECTIONS, many=True),
    }
    plural = "report changes"
    check_name = "change"
    effects = frozenset({Effect.CHANGES_REPORT})
    moment = Moment.INPUT
    shown_by = "report-changed"
    unfired_words = "report change"
    coverage_labels = ("report change",)

    at: int
    sections: tuple[int, ...] = (2,)

    # -- the data ------------------------------------------------------------------
    @classmethod
    def parse(cls, item: dict[str, Any], where: str) -> ReportChange:
        sections = item.get("sections", [2])
        if not isinstance(sections, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in sections):
            raise ScenarioError(f"{where}.sections: expected a list of section numbers, found {quote(sections)}")
        at = integer_field(item, "at", where)
        assert at is not None
        return cls(at=at, sections=tuple(sections))

    def dump(self) -> str:
        return "{at = %d, sections = [%s]}" % (self.at, ", ".join(map(str, self.sections)))

    @classmethod
    def validate(cls, faults: Sequence[ReportChange], schedule: Setting) -> None:
        cls.check_ticks(faults)
        for c in faults:
            if not c.sections:
                raise ScheduleError(f"changes: the change at t{c.at} touches no section")
            for sec in c.sections:
                if not 1 <= sec <= schedule.sections:
                    raise ScheduleError(f"changes: section {sec} at t{c.at} is outside 1..{schedule.sections}")
            if len(set(c.sections)) != len(c.sections):
                raise ScheduleError(f"changes: the change at t{c.at} names a section twice")
            if not schedule.realizable(c.sections):
                raise ScheduleError(f"changes: sections {list(c.sections)} at t{c.at}: no change of the inputs touches "
                                    f"exactly these steps (a change reaches every step reading its part, through the "
                                    f"steps that read others); a change is a union of {_atoms_words(schedule)}")  # fmt: skip
        if len({c.at for c in faults}) != len(faults):
            raise ScheduleError("changes: two report changes at the same tick")

    def sort_key(self) -> tuple[int, tuple[int, ...]]:
        return (self.at, self.sections)

    def describe(self) -> str:
        return f"the report changes at t{self.at} (section {', '.join(map(str, self.sections))})"

    # -- the engine --------------------------------------------------------------------
    def directive(self) -> NewContent:
        return NewContent(self.sections)

    # -- sim explore -------------------------------------------------------------------
    @classmethod
    def draw(cls, c: Choices, bounds: Bounds, sections: int, drawn: Sequence[Fault]) -> ReportChange | None:
        at = draw_tick(c, 0, bounds)
        atoms = bounds.example.change_atoms
        if atoms:  # a workflow's: a union of the steps its parts' changes reach
            touched = list(c.pick(atoms))
            for atom in atoms:
                if not set(atom) <= set(touched) and c.flip(MORE_SECTIONS):
                    touched += [x for x in atom if x not in touched]
        else:
            touched = [c.pick(toward(2, 1, sections))]
            for section in range(1, sections + 1):
                if section not in touched and c.flip(MORE_SECTIONS):
                    touched.append(section)
        if any(isinstance(f, ReportChange) and f.at == at for f in drawn):
            return None
        return cls(at, tuple(sorted(touched)))

    def simpler(self, sections: int) -> Iterator[ReportChange]:
        for at in lower(self.at, 0):
            yield ReportChange(at, self.sections)
        if len(self.sections) > 1:
            for sec in self.sections:
                yield ReportChange(self.at, tuple(x for x in self.sections if x != sec))
        elif self.sections != (2,) and sections >= 2:
            yield ReportChange(self.at, (2,))

    def fit(self, sections: int) -> ReportChange:
        """A change to a section beyond the last one moves to the last one."""
        return ReportChange(self.at, tuple(sorted({min(x, sections) for x in self.sections})))

    def complexity(self) -> tuple[int, int]:
        return self.at, len(self.sections) + abs(self.sections[0] - 2)

    @classmethod
    def singles(cls, bounds: Bounds, sections: int) -> Iterator[ReportChange]:
        atoms = bounds.example.change_atoms or tuple((section,) for section in toward(2, 1, sections))
        for at in range(bounds.last_tick + 1):
            for atom in atoms:
                yield cls(at, atom)

    @classmethod
    def observe(cls, event: Observed) -> tuple[str, int, int]:
        return "report change", event.tick, event.tick

    # -- sim check ---------------------------------------------------------------------
    @classmethod
    def offers(cls, code: Sequence[Fault], tick: int, where: tuple[int, ...], horizon: int,
               schedule: Setting) -> list[Fault]:  # fmt: skip
        sets = section_sets(schedule.sections)
        if schedule.change_atoms:  # a workflow's: only the sets some change of its parts touches
            sets = tuple(x for x in sets if schedule.realizable(x))
        key = (tick, sets)
        offered = _OFFERED.get(key)
        if offered is None:  # built once per tick: `sim check` asks at every node's input phase
            offered = _OFFERED[key] = tuple(cls(tick, sections) for sections in sets)
        return list(offered)

    @classmethod
    def bound_words(cls, horizon: int, schedule: Setting) -> str:
        if schedule.change_atoms:
            return f"any tick t0..t{horizon}, any union of {_atoms_words(schedule)}"
        return f"any tick t0..t{horizon}, any non-empty set of the {schedule.sections} sections"

    @classmethod
    def too_many_offers(cls, schedule: Setting) -> str | None:
        """Every non-empty set of the sections is offered at every tick: 2^N - 1 of them, each a
        transition from every node with a fault left; past MAX_CHANGE_SECTIONS the offers alone
        would not fit in memory (a workflow of 26 steps: 67 million a tick)."""
        if schedule.sections <= MAX_CHANGE_SECTIONS:
            return None
        return (f"a report change is offered over every non-empty set of the {schedule.sections} steps "
                f"({2 ** schedule.sections - 1:,} a tick); sim check enumerates them for at most "
                f"{MAX_CHANGE_SECTIONS} steps ({2 ** MAX_CHANGE_SECTIONS - 1:,})")  # fmt: skip
