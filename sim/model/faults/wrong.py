"""A fallible model call, and so a fallible assessor (outside the article's model, its sixth
case): attempt #n's model call for step s returns a summary that is wrong in content and
right in form. The article's assessor checks form (the pin, the token, completeness and the
parts' hashes), so it accepts the digest; if the wrong part is section 2's, the newsletter
quotes a wrong figure (a transposed one). An acceptance records what was judged, not that
the judgement is right: faithful-digest breaks with all four protections on. The knob
`assessor=figures` checks the figures too (docs/outside.md, case 6).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sim.base.errors import ScheduleError
from sim.model.events import Computed, payload
from sim.model.faults.base import (
    Bounds,
    Choices,
    Effect,
    Entry,
    Fault,
    Moment,
    Observed,
    RunFacts,
    Setting,
    WRONG,
    Wrong,
    integer_field,
    lower,
    toward,
)
from sim.base.limits import MAX_SECTIONS


@dataclass(frozen=True, slots=True)
class WrongSummary(Fault):
    """Attempt #`attempt`'s model call for step `step` (1-based) returns a wrong summary."""

    key = "wrong_summaries"
    entries = {
        "attempt": Entry("the attempt whose model call returns a wrong summary (#1 is the first)", lo=1),
        "step": Entry("the step (1-based, within `sections`) whose summary is wrong in content, right in form",
                      lo=1, hi=MAX_SECTIONS),
    }
    plural = "wrong summaries"
    check_name = "wrong_summary"
    effects = frozenset({Effect.WRONG_SUMMARY})
    moment = Moment.CALL
    shown_by = "computed"
    case = 6
    coverage_labels = ("wrong summary",)
    article = False

    attempt: int = 1
    step: int = 2

    # -- the data ------------------------------------------------------------------
    @classmethod
    def parse(cls, item: dict[str, Any], where: str) -> WrongSummary:
        attempt = integer_field(item, "attempt", where, default=1)
        step = integer_field(item, "step", where, default=2)
        assert attempt is not None and step is not None
        return cls(attempt=attempt, step=step)

    def dump(self) -> str:
        return f"{{attempt = {self.attempt}, step = {self.step}}}"

    @classmethod
    def validate(cls, faults: Sequence[WrongSummary], schedule: Setting) -> None:
        for f in faults:
            if f.attempt < 1:
                raise ScheduleError(f"wrong_summaries: attempts start at #1, got #{f.attempt}")
            if not 1 <= f.step <= schedule.sections:
                raise ScheduleError(f"wrong_summaries: step {f.step} of #{f.attempt} is outside 1..{schedule.sections}")
        spots = [(f.attempt, f.step) for f in faults]
        if len(set(spots)) != len(spots):
            raise ScheduleError("wrong_summaries: two wrong summaries of one step of one attempt")

    def sort_key(self) -> tuple[int, int]:
        return (self.attempt, self.step)

    def describe(self) -> str:
        return f"#{self.attempt}'s model call for s{self.step} returns a wrong summary (right in form)"

    # -- the engine --------------------------------------------------------------------
    def where(self) -> tuple[int, int]:
        return (self.attempt, self.step)

    def directive(self) -> Wrong:
        return WRONG

    def unfired(self, facts: RunFacts) -> str:
        if self.attempt > facts.admitted:
            return f"wrong summary of #{self.attempt}: only {facts.admitted} attempt(s) were admitted"
        return f"wrong summary of #{self.attempt}'s s{self.step}: it never computed that step"

    # -- sim explore -------------------------------------------------------------------
    @classmethod
    def draw(cls, c: Choices, bounds: Bounds, sections: int, drawn: Sequence[Fault]) -> WrongSummary | None:
        attempt = c.integer(1, bounds.attempts)
        step = c.pick(toward(2, 1, sections))
        return cls(attempt, step)

    def simpler(self, sections: int) -> Iterator[WrongSummary]:
        for attempt in lower(self.attempt, 1):
            yield WrongSummary(attempt, self.step)
        if self.step != 2 and sections >= 2:
            yield WrongSummary(self.attempt, 2)

    def fit(self, sections: int) -> WrongSummary:
        return WrongSummary(self.attempt, min(self.step, sections))

    def complexity(self) -> tuple[int, int]:
        return 0, self.attempt + abs(self.step - 2)

    @classmethod
    def singles(cls, bounds: Bounds, sections: int) -> Iterator[WrongSummary]:
        for attempt in range(1, bounds.attempts + 1):
            for step in toward(2, 1, sections):
                yield cls(attempt, step)

    @classmethod
    def observe(cls, event: Observed) -> tuple[str, int, int] | None:
        if not payload(event, Computed).get("wrong"):
            return None
        return cls.coverage_labels[0], event.tick, event.tick

    # -- sim check ---------------------------------------------------------------------
    @classmethod
    def offers(cls, code: Sequence[Fault], tick: int, where: tuple[int, ...], horizon: int,
               schedule: Setting) -> list[Fault]:  # fmt: skip
        attempt, step = where
        return [cls(attempt, step)]

    @classmethod
    def bound_words(cls, horizon: int, schedule: Setting) -> str:
        return f"any model call at a tick up to t{horizon}"
