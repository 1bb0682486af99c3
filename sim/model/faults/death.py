"""A poster that dies inside its post: the run's nth post action stops before recording its
intent, after recording it, or after sending (before recording the feed's answer). The
worked example's first poster dies after its send (docs/model.md §3, the effect lifecycle)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sim.base.errors import ScenarioError, ScheduleError
from sim.model.events import Died, payload
from sim.model.faults.base import (
    Bounds,
    Choices,
    Entry,
    Fault,
    Moment,
    Observed,
    PostPoint,
    RunFacts,
    Setting,
    integer_field,
    lower,
)
from sim.base.limits import quote

#: death points in shrink order (the worked example's after-send first)
DEATH_POINTS = (PostPoint.AFTER_SEND, PostPoint.AFTER_INTENT, PostPoint.BEFORE_INTENT)
#: death points in `sim check`'s order (the order of the post)
POINTS = tuple(PostPoint)


@dataclass(frozen=True, slots=True)
class PosterDeath(Fault):
    """The `nth` post action of the run (any attempt, resends included) dies at `point`."""

    key = "poster_deaths"
    entries = {
        "point": Entry("where in its post the poster dies (the effect lifecycle, docs/model.md §3)",
                       choices=tuple(p.value for p in PostPoint)),
        "nth": Entry("which post action of the run dies (1: the first; resends count; one death per post)", lo=1),
    }
    plural = "poster deaths"
    check_name = "poster_death"
    moment = Moment.POST
    shown_by = "died"
    case = 7
    coverage_labels = tuple(f"poster death {p.value}" for p in DEATH_POINTS)

    point: PostPoint = PostPoint.AFTER_SEND
    nth: int = 1

    # -- the data ------------------------------------------------------------------
    @classmethod
    def parse(cls, item: dict[str, Any], where: str) -> PosterDeath:
        point = item.get("point", PostPoint.AFTER_SEND.value)
        allowed = [p.value for p in PostPoint]
        if point not in allowed:
            raise ScenarioError(f"{where}.point: {quote(point)} is not a death point; allowed: {', '.join(allowed)}")
        nth = integer_field(item, "nth", where, default=1)
        assert nth is not None
        return cls(point=PostPoint(point), nth=nth)

    def dump(self) -> str:
        return '{point = "%s", nth = %d}' % (self.point.value, self.nth)

    @classmethod
    def validate(cls, faults: Sequence[PosterDeath], schedule: Setting) -> None:
        for d in faults:
            if d.nth < 1:
                raise ScheduleError(f"poster_deaths: nth must be at least 1, got {d.nth}")
        if len({d.nth for d in faults}) != len(faults):
            raise ScheduleError("poster_deaths: two deaths for the same post")

    def sort_key(self) -> tuple[int, int]:
        return (self.nth, POINTS.index(self.point))

    def describe(self) -> str:
        return f"post action {self.nth} dies {self.point.value}"

    # -- the engine --------------------------------------------------------------------
    def where(self) -> tuple[int]:
        return (self.nth,)

    def directive(self) -> PostPoint:
        return self.point

    def unfired(self, facts: RunFacts) -> str:
        return f"death of post {self.nth}: only {facts.posts} post action(s) happened"

    # -- sim explore -------------------------------------------------------------------
    @classmethod
    def draw(cls, c: Choices, bounds: Bounds, sections: int, drawn: Sequence[Fault]) -> PosterDeath | None:
        point = c.pick(DEATH_POINTS)
        nth = c.integer(1, bounds.max_nth)
        if any(isinstance(f, PosterDeath) and f.nth == nth for f in drawn):
            return None
        return cls(point, nth)

    def simpler(self, sections: int) -> Iterator[PosterDeath]:
        for nth in lower(self.nth, 1):
            yield PosterDeath(self.point, nth)
        for point in DEATH_POINTS[: DEATH_POINTS.index(self.point)]:
            yield PosterDeath(point, self.nth)

    def complexity(self) -> tuple[int, int]:
        return 0, self.nth + DEATH_POINTS.index(self.point)

    @classmethod
    def singles(cls, bounds: Bounds, sections: int) -> Iterator[PosterDeath]:
        for nth in range(1, bounds.max_nth + 1):
            for point in DEATH_POINTS:
                yield cls(point, nth)

    @classmethod
    def observe(cls, event: Observed) -> tuple[str, int, int]:
        return f"poster death {payload(event, Died)['point']}", event.tick, event.tick

    # -- sim check ---------------------------------------------------------------------
    @classmethod
    def offers(cls, code: Sequence[Fault], tick: int, where: tuple[int, ...], horizon: int,
               schedule: Setting) -> list[Fault]:  # fmt: skip
        (nth,) = where
        return [cls(point, nth) for point in POINTS]

    @classmethod
    def bound_words(cls, horizon: int, schedule: Setting) -> str:
        return f"any post action at a tick <= t{horizon}, at each of " + ", ".join(p.value for p in POINTS)
