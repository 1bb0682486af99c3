"""A poster paused inside the effect (outside the article's model, its first case): the run's
nth post action records its intent, then the poster falls silent for some ticks before it
sends, and sends when it wakes. Its successor has meanwhile finished the announcement; the
late send still reaches the feed, which checks keys but not tokens. A per-operation key
makes the feed answer it with the post it already applied; a per-attempt key or none makes
it a second post, whatever fencing says (docs/outside.md, case 1)."""

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
    Hold,
    Moment,
    Observed,
    RunFacts,
    Setting,
    integer_field,
    lower,
)
from sim.base.limits import MAX_HORIZON


@dataclass(frozen=True, slots=True)
class PosterPause(Fault):
    """The `nth` post action of the run pauses for `ticks` ticks between its intent and its send."""

    key = "poster_pauses"
    entries = {
        "nth": Entry("which post action of the run pauses between its intent and its send (1: the first; "
                     "one pause per post)", lo=1),
        "ticks": Entry("how many ticks it stays silent before it sends (1..horizon)", required=True, lo=1, hi=MAX_HORIZON),
    }
    plural = "poster pauses"
    check_name = "poster_pause"
    moment = Moment.POST
    shown_by = "silent"
    case = 1
    coverage_labels = ("poster paused inside its post",)
    article = False

    nth: int = 1
    ticks: int = 1

    # -- the data ------------------------------------------------------------------
    @classmethod
    def parse(cls, item: dict[str, Any], where: str) -> PosterPause:
        nth = integer_field(item, "nth", where, default=1)
        ticks = integer_field(item, "ticks", where)
        assert nth is not None and ticks is not None
        return cls(nth=nth, ticks=ticks)

    def dump(self) -> str:
        return f"{{nth = {self.nth}, ticks = {self.ticks}}}"

    @classmethod
    def validate(cls, faults: Sequence[PosterPause], schedule: Setting) -> None:
        for p in faults:
            if p.nth < 1:
                raise ScheduleError(f"poster_pauses: nth must be at least 1, got {p.nth}")
            if not 1 <= p.ticks <= schedule.horizon:
                raise ScheduleError(f"poster_pauses: ticks must be 1..{schedule.horizon}, got {p.ticks}")
        if len({p.nth for p in faults}) != len(faults):
            raise ScheduleError("poster_pauses: two pauses for the same post")

    def sort_key(self) -> tuple[int, int]:
        return (self.nth, self.ticks)

    def describe(self) -> str:
        return f"post action {self.nth} pauses {self.ticks} tick(s) after its intent, then sends"

    # -- the engine --------------------------------------------------------------------
    def where(self) -> tuple[int]:
        return (self.nth,)

    def directive(self) -> Hold:
        return Hold(self.ticks)

    def unfired(self, facts: RunFacts) -> str:
        return f"pause of post {self.nth}: only {facts.posts} post action(s) happened"

    # -- sim explore -------------------------------------------------------------------
    @classmethod
    def draw(cls, c: Choices, bounds: Bounds, sections: int, drawn: Sequence[Fault]) -> PosterPause | None:
        nth = c.integer(1, bounds.max_nth)
        ticks = c.integer(1, bounds.max_pause)
        if any(f.moment is Moment.POST and f.where() == (nth,) for f in drawn):
            return None
        return cls(nth, ticks)

    def simpler(self, sections: int) -> Iterator[PosterPause]:
        for nth in lower(self.nth, 1):
            yield PosterPause(nth, self.ticks)
        for ticks in lower(self.ticks, 1):
            yield PosterPause(self.nth, ticks)

    def complexity(self) -> tuple[int, int]:
        return 0, self.nth + self.ticks

    @classmethod
    def singles(cls, bounds: Bounds, sections: int) -> Iterator[PosterPause]:
        for nth in range(1, bounds.max_nth + 1):
            for ticks in range(1, bounds.max_pause + 1):
                yield cls(nth, ticks)

    @classmethod
    def observe(cls, event: Observed) -> tuple[str, int, int] | None:
        silent = payload(event, Silent)
        if silent["during"] != "send":
            return None
        return cls.coverage_labels[0], event.tick, silent["wake"] or 0

    # -- sim check ---------------------------------------------------------------------
    @classmethod
    def offers(cls, code: Sequence[Fault], tick: int, where: tuple[int, ...], horizon: int,
               schedule: Setting) -> list[Fault]:  # fmt: skip
        (nth,) = where
        return [cls(nth, ticks) for ticks in range(1, horizon - tick + 1)]

    @classmethod
    def bound_words(cls, horizon: int, schedule: Setting) -> str:
        return f"any post action at a tick < t{horizon}, pausing after its intent and waking by t{horizon}"
