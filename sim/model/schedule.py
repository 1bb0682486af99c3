"""Fault schedules as data.

A schedule says what happens *to* the work: a tuple of faults (each of a kind registered in
`sim.model.faults`: a silence, a report change, a poster's death, a duplicated delivery, ...), plus
the constants of the setting (sections, first owner token, heartbeat limit, the newsletter's
ready tick, the engine's horizon).

The worked example's timings are one schedule, built from three of the switches by
`worked_example`; the engine never special-cases them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from sim.base.errors import ScheduleError
from sim.model.faults import KINDS, Fault, canonical
from sim.base.limits import MAX_HORIZON, MAX_SECTIONS
from sim.model.switches import Change, PostDeath, Silent, Switches

if TYPE_CHECKING:
    from sim.model.workflow import EngineShape, Workflow

F = TypeVar("F", bound=Fault)

@dataclass(frozen=True, slots=True)
class Schedule:
    #: the faults, in their canonical order (by kind, then the kind's own order)
    faults: tuple[Fault, ...] = ()
    #: each constant's `doc` is what a scenario file's `[schedule]` key sets (`sim schema`)
    sections: int = field(default=4, metadata={"doc": "how many sections the report has (one step each)"})
    first_token: int = field(default=41, metadata={"doc": "the owner token the first attempt gets; each later attempt's is one more"})
    heartbeat_limit: int = field(default=2, metadata={"doc": "how many missed heartbeats make the controller suspect a worker"})
    newsletter_ready: int = field(default=12, metadata={"doc": "the tick from which the newsletter looks for a digest"})
    horizon: int = field(default=200, metadata={"doc": "the guard tick at which a run stops at the latest"})
    #: the step (1-based) whose summary carries the figure the newsletter quotes: the article's
    #: s2; a workflow's first step reading its figure part (`sim.model.workflow`); set by a
    #: workflow, not by a scenario file's [schedule]
    figure: int = 2
    #: each step's model calls (a workflow's `calls`, `sim.model.workflow`); () for one each,
    #: as in the article; set by a workflow, not by a scenario file's [schedule]
    calls: tuple[int, ...] = ()
    #: each step's name, in run order (a workflow's, `sim.model.workflow.order`), for the pages;
    #: () for s1..sN, as in the article; set by a workflow, never read by the rules
    names: tuple[str, ...] = ()
    #: the steps (1-based) a change of each of the inputs' parts reaches, where that is not
    #: each step alone (a workflow whose steps read other steps, or share a part): a report
    #: change may then touch only a union of these (`realizable`); () for any set, as in the
    #: article; set by a workflow, not by a scenario file's [schedule]
    change_atoms: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "faults", canonical(self.faults))
        self.validate()

    def realizable(self, sections: tuple[int, ...]) -> bool:
        """Whether some change of the inputs' parts touches exactly these sections: always in
        the article's setting; in a workflow's, when they are the union of the atoms inside
        them (`change_atoms`)."""
        if not self.change_atoms:
            return True
        wanted = set(sections)
        covered: set[int] = set()
        for atom in self.change_atoms:
            if wanted.issuperset(atom):
                covered.update(atom)
        return covered == wanted

    def of(self, kind: type[F]) -> tuple[F, ...]:
        """The faults of one kind."""
        return tuple(f for f in self.faults if type(f) is kind)

    def with_faults(self, faults: Sequence[Fault]) -> Schedule:
        return dataclasses.replace(self, faults=tuple(faults))

    def with_kind(self, kind: type[Fault], faults: Sequence[Fault]) -> Schedule:
        """The same schedule with the faults of `kind` replaced by `faults`."""
        return self.with_faults([f for f in self.faults if type(f) is not kind] + list(faults))

    @property
    def minimum_calls(self) -> int:
        """The model calls of a run in which nothing goes wrong: one a step, or a workflow's counts."""
        return sum(self.calls) if self.calls else self.sections

    @property
    def fault_count(self) -> int:
        return len(self.faults)

    def validate(self) -> None:
        """Raise a ScheduleError naming the first thing that cannot happen."""
        if not 2 <= self.sections <= MAX_SECTIONS:
            raise ScheduleError(f"sections: {self.sections} is outside 2..{MAX_SECTIONS}")
        if not 1 <= self.figure <= self.sections:
            raise ScheduleError(f"figure: step {self.figure} is outside 1..{self.sections}")
        if self.names and len(self.names) != self.sections:
            raise ScheduleError(f"names: {len(self.names)} step names for {self.sections} sections")
        if self.calls and (len(self.calls) != self.sections or any(not 0 <= c <= 8 for c in self.calls)):
            raise ScheduleError(f"calls: {list(self.calls)} is not one count 0..8 per section")
        if self.first_token < 0:
            raise ScheduleError(f"first_token: negative token {self.first_token}")
        if self.heartbeat_limit < 1:
            raise ScheduleError(f"heartbeat_limit: {self.heartbeat_limit} must be at least 1")
        if self.newsletter_ready < 0:
            raise ScheduleError(f"newsletter_ready: negative tick {self.newsletter_ready}")
        if not 1 <= self.horizon <= MAX_HORIZON:
            raise ScheduleError(f"horizon: {self.horizon} is outside 1..{MAX_HORIZON}")
        for kind in KINDS:
            kind.validate(self.of(kind), self)
        spots: dict[tuple[int, ...], Fault] = {}
        for f in self.faults:
            spot = (f.moment.value, *f.where())
            other = spots.setdefault(spot, f)
            if type(other) is not type(f):
                raise ScheduleError(
                    f"{f.key}: {f.describe()} and {other.describe()} would take effect at the same moment"
                )


#: the worked example's fixed timings (docs/model.md §5 and §7).
EXAMPLE_SILENCE_TICK = 3
EXAMPLE_WAKE_TICK = 8
EXAMPLE_CHANGE_TICK = {Change.DURING: 4, Change.AFTER: 12}


def worked_example(switches: Switches, workflow: Workflow | None = None) -> Schedule:
    """The worked example's schedule for these switches: attempt #1 silent at t3 (waking
    at t8 if paused), section 2 corrected at t4 or t12, the first poster dying after its
    send, four sections, token 41, two missed heartbeats, newsletter ready at t12.

    With a workflow (`sim.model.workflow`), the same faults placed by the workflow's rule
    (`example_faults`: for workflows/digest.toml, exactly the above) on the engine's shape
    of it (`engine_shape`); a workflow this version's engine cannot run is a WorkflowError.

    It reads three of the switches only (the events), so it is made once per combination of
    them and workflow (a schedule is a frozen value: the sweep's 1,008 runs share 12)."""
    key = (switches.silent, switches.change, switches.post_death, workflow)
    known = _EXAMPLES.get(key)
    if known is not None:
        return known
    from sim.model.faults import PosterDeath, ReportChange, Silence

    silence, wake_tick, changes = EXAMPLE_SILENCE_TICK, EXAMPLE_WAKE_TICK, EXAMPLE_CHANGE_TICK
    changed: tuple[int, ...] = (2,)
    base = Schedule()
    if workflow is not None:
        from sim.model.workflow import example_faults  # only for a workflow: the article's needs none

        shape = engine_shape_or_refuse(workflow)
        ex = example_faults(workflow)
        silence, wake_tick, changed = ex.silent_tick, ex.wake_tick, shape.changed
        changes = {Change.DURING: ex.change_ticks[0], Change.AFTER: ex.change_ticks[1]}
        plain = shape.steps == tuple(f"s{i + 1}" for i in range(shape.sections))  # the article's names
        base = Schedule(sections=shape.sections, newsletter_ready=shape.newsletter_ready, figure=shape.figure,
                        calls=shape.calls, names=() if plain else shape.steps,
                        change_atoms=shape.change_atoms)  # fmt: skip
    wake = wake_tick if switches.silent is Silent.PAUSED else None
    faults: list[Fault] = [Silence(attempt=1, at=silence, wake=wake)]
    change_tick = changes.get(switches.change)
    if change_tick is not None:
        faults.append(ReportChange(at=change_tick, sections=changed))
    if switches.post_death is PostDeath.YES:
        faults.append(PosterDeath())
    if len(_EXAMPLES) >= MAX_EXAMPLES:  # bounded: workflows loaded one after another in a process
        _EXAMPLES.clear()
    schedule = _EXAMPLES[key] = base.with_faults(faults)
    return schedule


#: the worked example's schedules made so far, by the switches it reads and the workflow
_EXAMPLES: dict[tuple[Silent, Change, PostDeath, Workflow | None], Schedule] = {}
MAX_EXAMPLES = 256


def engine_shape_or_refuse(workflow: Workflow) -> EngineShape:
    """The engine's shape of a workflow, or a WorkflowError saying why this version cannot run it."""
    from sim.model.workflow import WorkflowError, engine_shape

    shape = engine_shape(workflow)
    if isinstance(shape, str):
        raise WorkflowError(f"{workflow.source}: this version of sim cannot run it yet: {shape} "
                            "(docs/workflows.md, 'What runs today')")  # fmt: skip
    return shape


def workflow_setting(workflow: Workflow) -> Schedule:
    """The constants of a workflow's schedules (`sim check` and `sim explore` with
    `--workflow`): the article's but for the workflow's shape (its steps, its figure's step,
    its dependant's ready tick), no fault."""
    return worked_example(Switches(), workflow).with_faults(())
