"""The fault-kind seam: the registry, each kind's round trip, and a toy kind added from here.

The toy kind (`Hiccup`: attempt #n misses exactly one tick at t, then carries on) is written
and registered in this file alone, without editing `sim/`: if the seam holds, the scenario
loader reads and writes it, the engine fires it, `sim explore` draws it and `sim check`
offers it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import sim.model.faults as faults

from sim.analysis.check import check as checker
from sim.analysis.check import enumerator
from sim.engine.run import run
from sim.analysis.explore import (
    ExploreBounds,
    SeededChoices,
    draw_schedule,
    fired_only,
    observed,
    single_faults,
)
from sim.model.faults import (
    KINDS,
    DuplicateDelivery,
    Fault,
    Moment,
    PosterDeath,
    PostPoint,
    ReportChange,
    Silence,
    Stall,
    register,
    unregister,
)
from sim.model.faults.base import (
    Bounds,
    Choices,
    Observed,
    RunFacts,
    Setting,
    draw_tick,
    integer_field,
    lower,
)
from sim.scenario import dump, parse
from sim.model.schedule import Schedule
from sim.model.switches import Switches


@dataclass(frozen=True, slots=True)
class Hiccup(Fault):
    """Attempt #attempt misses one heartbeat at `at` and resumes at `at + 1`."""

    key = "hiccups"
    fields = ("attempt", "at")
    plural = "hiccups"
    check_name = "hiccup"
    moment = Moment.ACT
    shown_by = "silent"
    coverage_labels = ("hiccup",)

    attempt: int
    at: int

    @classmethod
    def parse(cls, item: dict[str, Any], where: str) -> Hiccup:
        attempt, at = integer_field(item, "attempt", where), integer_field(item, "at", where)
        assert attempt is not None and at is not None
        return cls(attempt, at)

    def dump(self) -> str:
        return "{attempt = %d, at = %d}" % (self.attempt, self.at)

    def sort_key(self) -> tuple[int, int]:
        return (self.attempt, self.at)

    def describe(self) -> str:
        return f"#{self.attempt} hiccups at t{self.at}"

    def where(self) -> tuple[int, int]:
        return (self.attempt, self.at)

    def directive(self) -> Stall:
        return Stall(self.at + 1)

    def unfired(self, facts: RunFacts) -> str:
        return f"hiccup of #{self.attempt} at t{self.at}: it was not acting then"

    @classmethod
    def draw(cls, c: Choices, bounds: Bounds, sections: int, drawn: Sequence[Fault]) -> Hiccup | None:
        attempt = c.integer(1, bounds.attempts)
        return cls(attempt, draw_tick(c, attempt, bounds))

    def simpler(self, sections: int) -> Iterator[Hiccup]:
        for at in lower(self.at, self.attempt):
            yield Hiccup(self.attempt, at)

    def complexity(self) -> tuple[int, int]:
        return self.at, self.attempt

    @classmethod
    def singles(cls, bounds: Bounds, sections: int) -> Iterator[Hiccup]:
        yield cls(1, 1)

    @classmethod
    def observe(cls, event: Observed) -> tuple[str, int, int] | None:
        return ("hiccup", event.tick, event.tick + 1) if event.detail["wake"] == event.tick + 1 else None

    @classmethod
    def offers(cls, code: Sequence[Fault], tick: int, where: tuple[int, ...], horizon: int,
               schedule: Setting) -> list[Fault]:  # fmt: skip
        attempt, tick = where
        return [cls(attempt, tick)] if tick < horizon else []

    @classmethod
    def bound_words(cls, horizon: int, schedule: Setting) -> str:
        return f"any attempt at any tick < t{horizon}, for one tick"


@pytest.fixture
def hiccups() -> Iterator[type[Hiccup]]:
    register(Hiccup)
    try:
        yield Hiccup
    finally:
        unregister(Hiccup)


def test_the_registry_holds_the_article_kinds_then_the_others_in_file_order() -> None:
    # read from sim/model/faults/__init__.py's register lines, so a new kind is one line there
    lines = (Path(faults.__file__).read_text(encoding="utf-8")).splitlines()
    in_file = [line[len("register("):-1] for line in lines if line.startswith("register(")]
    assert [k.__name__ for k in KINDS] == in_file
    assert [k.key for k in KINDS if k.article] == ["silences", "changes", "poster_deaths", "duplicate_deliveries"]
    assert [k.article for k in KINDS] == sorted((k.article for k in KINDS), reverse=True)  # the article's first
    with pytest.raises(ValueError, match="already registered"):
        register(Silence)


@pytest.mark.parametrize(
    "fault",
    [Silence(2, 5, 9), Silence(1, 3), ReportChange(4, (1, 3)), PosterDeath(PostPoint.AFTER_INTENT, 2),
     DuplicateDelivery(3), *(next(iter(kind.singles(ExploreBounds(faults="all"), 4))) for kind in KINDS)],  # fmt: skip
    ids=lambda f: f"{type(f).__name__}-{f.dump()}",
)
def test_each_kind_round_trips_through_a_scenario_file(fault: Fault) -> None:
    schedule = Schedule(faults=(fault,))
    text = dump("round trip", Switches(), schedule)
    assert f"{fault.key} = [{fault.dump()}]" in text
    assert parse(text, "rt.toml", "rt").schedule == schedule


def test_the_toy_kind_round_trips_through_a_scenario_file(hiccups: type[Hiccup]) -> None:
    text = '[switches]\nchange = "never"\n[schedule]\nhiccups = [{attempt = 1, at = 2}]\n'
    scenario = parse(text, "toy.toml", "toy")
    assert scenario.schedule.of(Hiccup) == (Hiccup(1, 2),)
    written = dump("toy", scenario.switches, scenario.schedule)
    assert "hiccups = [{attempt = 1, at = 2}]" in written
    assert parse(written, "again.toml", "again").schedule == scenario.schedule
    with pytest.raises(Exception, match=r"toy.toml: schedule.hiccups\[0\].at: missing"):
        parse("[schedule]\nhiccups = [{attempt = 1}]\n", "toy.toml", "toy")


def test_the_toy_kind_fires_in_the_engine(hiccups: type[Hiccup]) -> None:
    schedule = Schedule(faults=(Hiccup(1, 2),))
    trace = run(Switches(), schedule)
    silent = [(e.tick, e.attempt, e.detail["wake"]) for e in trace.events if e.kind.value == "silent"]
    assert silent == [(2, 1, 3)]
    assert trace.fired == (Hiccup(1, 2),) and trace.unfired == ()
    assert ("hiccup", 2, 3) in list(observed(trace))
    never = run(Switches(), Schedule(faults=(Hiccup(5, 2),)))
    assert never.unfired == ("hiccup of #5 at t2: it was not acting then",)
    assert fired_only(never).faults == ()


def test_the_toy_kind_is_drawn_and_shrunk_by_explore(hiccups: type[Hiccup]) -> None:
    choices = SeededChoices(random.Random(7))
    drawn = [draw_schedule(choices) for _ in range(300)]
    assert any(s.of(Hiccup) for s in drawn)
    assert Schedule(faults=(Hiccup(1, 1),)) in single_faults(Schedule(), ExploreBounds())


def test_the_toy_kind_is_offered_by_check(hiccups: type[Hiccup]) -> None:
    bound = checker.CheckBound(max_faults=1, horizon=4)
    result = enumerator.run_job(enumerator.Job(Switches(), bound, ((),)))
    toys = [code for code in result.children if isinstance(code[-1], Hiccup)]
    assert toys == [(Hiccup(1, 1),), (Hiccup(1, 2),), (Hiccup(1, 3),)]
    assert bound.to_json()["faults"]["hiccup"] == "any attempt at any tick < t4, for one tick"
    (with_toy,) = checker.check([checker.Config("all-on", Switches())], bound)
    unregister(Hiccup)
    try:
        (without,) = checker.check([checker.Config("all-on", Switches())], bound)
    finally:
        register(Hiccup)
    assert with_toy.schedules == without.schedules + 3


def test_silences_of_one_attempt_may_not_overlap_the_one_rule() -> None:
    assert Silence(1, 3, 8).overlaps(Silence(1, 5))
    assert not Silence(1, 3, 8).overlaps(Silence(1, 9))
    assert not Silence(1, 3).overlaps(Silence(2, 3))
    # the check offers no second silence while the attempt is still silent
    assert Silence.offers((Silence(1, 3, 8),), 8, (1, 8), 12, Schedule()) == []
    assert len(Silence.offers((Silence(1, 3, 8),), 9, (1, 9), 12, Schedule())) == 1 + 3


def test_nth_zero_is_refused_not_read_as_one() -> None:
    from sim.base.errors import SimError

    with pytest.raises(SimError, match="nth must be at least 1, got 0"):
        parse('[schedule]\nposter_deaths = [{point = "after-send", nth = 0}]\n', "z.toml", "z").schedule
