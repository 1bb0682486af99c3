"""Exhaustive bounded model checking of fault schedules (`sim check`).

The bounded space: every fault schedule with at most `max_faults` faults, each one a fault
that a registered fault kind (`sim.faults`) offers at a moment of the run at a tick <= horizon
(`Fault.offers`; `CheckBound.to_json` lists what each kind offers, in words).

It is searched as a state space (`sim.search`): nodes are canonical states at the start of a
tick, transitions are the choices of faults within a tick, levels are ticks, and equal nodes
merge. The search counts the schedules (paths) and, per property, those that break it, and
finds each broken property's shortest counterexample, exactly as the schedule enumerator it
replaced (`sim.enumerator`, kept as the test oracle and the benchmark's reference).

Work units: each configuration is searched on its own, or split into `split` subtrees at the
first level with at least `split` nodes (the nodes go to units by their stable fingerprint).
Units go to any `concurrent.futures.Executor` (this process, a process pool, a Dask cluster);
their findings merge by sums, maxima and minima, so the result depends on the split but not
on the executor, the number of workers or the order units finish in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sim import properties
from sim.errors import SimError, SwitchError
from sim.faults import FAULT_SETS, Fault, selected
from sim.faults import describe as describe_list
from sim.files import starts_with
from sim.limits import MAX_CHECK_FAULTS
from sim.run import counterexample
from sim.schedule import Schedule
from sim.search import MERGES, Found, Node, Search, Space, fingerprint, node_key, root
from sim.switches import (
    PROTECTIONS,
    WEAKENINGS,
    Checkpoints,
    Switches,
    for_own_schedules,
    parse_value,
)

#: the default bound: `sim check --max-faults 2 --protections each` takes a few minutes.
DEFAULT_MAX_FAULTS = 2
DEFAULT_HORIZON = 12
#: the most units of work one configuration may be cut into (`--split`)
MAX_SPLIT = 4096
#: how a counterexample file's description starts (what tells `sim check`'s files from others)
COUNTEREXAMPLE_MARK = "sim check counterexample:"

#: the properties `sim check --faults article` judges (`CheckBound.judged`)
JUDGED = properties.judged(beyond=False)

#: the setting's constants are the worked example's (Schedule's defaults).
SETTING = Schedule()

Code = tuple[Fault, ...]  # a schedule: its faults, in the order they take effect


class BoundError(SimError, ValueError):
    """A bound that cannot be checked (a negative fault count, a horizon out of range)."""


@dataclass(frozen=True, slots=True)
class CheckBound:
    """What is enumerated: at most `max_faults` faults, each taking effect at a tick <= `horizon`."""

    max_faults: int = DEFAULT_MAX_FAULTS
    horizon: int = DEFAULT_HORIZON
    #: which fault kinds (`sim.faults.FAULT_SETS`): the article's own, or all registered
    faults: str = "article"

    def __post_init__(self) -> None:
        if self.faults not in FAULT_SETS:
            raise BoundError(f"--faults: {self.faults!r} is not a fault set; allowed: {', '.join(FAULT_SETS)}")
        if not 0 <= self.max_faults <= MAX_CHECK_FAULTS:
            raise BoundError(f"--max-faults: {self.max_faults} is outside 0..{MAX_CHECK_FAULTS}")
        if not 1 <= self.horizon < SETTING.horizon:
            raise BoundError(f"--horizon: {self.horizon} is outside 1..{SETTING.horizon - 1}")

    @property
    def kinds(self) -> tuple[type[Fault], ...]:
        return selected(self.faults)

    @property
    def judged(self) -> tuple[properties.Property, ...]:
        """The properties judged: with `--faults all` also those beyond the article's model."""
        return properties.judged(beyond=self.faults == "all")

    def to_json(self) -> dict[str, Any]:
        return {
            "max_faults": self.max_faults,
            "horizon": self.horizon,
            "fault_set": self.faults,
            "faults": {kind.check_name: kind.bound_words(self.horizon, SETTING) for kind in self.kinds},
            "setting": {
                "sections": SETTING.sections,
                "first_token": SETTING.first_token,
                "heartbeat_limit": SETTING.heartbeat_limit,
                "newsletter_ready": SETTING.newsletter_ready,
                "engine_horizon": SETTING.horizon,
            },
        }

    def describe(self) -> str:
        return (
            f"every schedule of up to {self.max_faults} fault(s) ({', '.join(k.plural for k in self.kinds)}) "
            f"taking effect by t{self.horizon}"
        )


# -- schedules from codes ----------------------------------------------------------------------
def schedule_of(code: Iterable[Fault]) -> Schedule:
    """The Schedule a code stands for (the setting's constants, the faults in canonical order)."""
    return SETTING.with_faults(tuple(code))


class InlineExecutor(Executor):
    """Runs each unit at once in this process: the one-worker case, with no IPC."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 (handed to the caller through the future, as a pool does)
            future.set_exception(exc)
        return future


# -- the configurations and their results ----------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Config:
    """One row of the check: a protections label and the switches it runs under."""

    protections: str
    switches: Switches


@dataclass(frozen=True, slots=True)
class Counterexample:
    invariant: str
    code: Code
    tick: int

    @property
    def schedule(self) -> Schedule:
        return schedule_of(self.code)

    def describe(self) -> str:
        return describe_list(self.code, none="no faults")


@dataclass(frozen=True, slots=True)
class Result:
    config: Config
    #: schedules in the bound (paths of the search)
    schedules: int
    #: invariant name -> schedules that broke it, for every judged property (in the bound's
    #: `judged` order)
    violations: dict[str, int]
    #: invariant name -> its shortest counterexample, for the broken ones
    counterexamples: dict[str, Counterexample]
    #: schedules that hit the engine's horizon guard (a model bug if ever non-zero)
    horizon_reached: int
    #: the search: distinct nodes, transitions, and the last tick any node reached
    nodes: int = 0
    transitions: int = 0
    depth: int = 0
    #: every unit of the configuration was searched (False: the check was interrupted first)
    complete: bool = True

    @property
    def protections(self) -> str:
        return self.config.protections

    @property
    def switches(self) -> Switches:
        return self.config.switches

    @property
    def checkpoints(self) -> str:
        return self.switches.checkpoints.value

    @property
    def broken(self) -> bool:
        return any(self.violations.values())

    @property
    def verdict(self) -> str:
        return properties.verdict(self.broken)


def result_of(config: Config, found: Found, judged: tuple[str, ...], complete: bool = True) -> Result:
    return Result(
        complete=complete,
        config=config,
        schedules=found.schedules,
        violations={name: found.violations.get(name, 0) for name in judged},
        counterexamples={
            name: Counterexample(name, schedule_of(path).faults, key[1])
            for name, (key, path) in sorted(found.shortest.items())
        },
        horizon_reached=found.horizon_reached,
        nodes=found.nodes,
        transitions=found.transitions,
        depth=found.depth,
    )


# -- work units -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Unit:
    """One piece of a check: a configuration's subtree(s) from the level at `tick`."""

    index: int  # the configuration's
    space: Space
    tick: int
    nodes: tuple[Node, ...]


def run_unit(unit: Unit) -> Found:
    """Search the unit's nodes to the end (in a worker process, or here)."""
    frontier = {node_key(node, unit.space.merge): node for node in unit.nodes}
    return Search(unit.space).run(frontier, unit.tick)


def space_of(config: Config, bound: CheckBound, merge: str = "canonical") -> Space:
    return Space(config.switches, bound.max_faults, bound.horizon, SETTING, tuple(p.name for p in bound.judged),
                 tuple(kind.key for kind in bound.kinds), merge)


def units_of(index: int, config: Config, bound: CheckBound, split: int,
             merge: str = "canonical") -> tuple[list[Unit], Found]:  # fmt: skip
    """The configuration's units, and what was found on the way to the level they start at.

    With `split` 1 the one unit is the root. Otherwise the levels are searched here until
    one has at least `split` nodes; its nodes go to `split` units by fingerprint."""
    space = space_of(config, bound, merge)
    start = root(space)
    if split <= 1:
        return [Unit(index, space, 0, (start,))], Found()
    search = Search(space)
    frontier = {node_key(start, merge): start}
    t = 0
    while frontier and len(frontier) < split:
        frontier = search.level(frontier, t)
        t += 1
    parts: list[list[Node]] = [[] for _ in range(split)]
    for key in sorted(frontier, key=fingerprint):
        parts[fingerprint(key) % split].append(frontier[key])
    return [Unit(index, space, t, tuple(part)) for part in parts if part], search.found


#: progress callback: (units done, units in all, nodes searched so far)
CheckProgress = Callable[[int, int, int], None]


def check(configs: Sequence[Config], bound: CheckBound, executor: Executor | None = None, workers: int = 1,
          split: int = 1, progress: CheckProgress | None = None, merge: str = "canonical") -> list[Result]:  # fmt: skip
    """Search the bounded space under each configuration; one Result per configuration.

    `executor` runs the units (in this process if None), about two per worker in flight.
    Results depend on `split` (how many subtrees each configuration is cut into; it changes
    the node and transition counts, never the schedules, verdicts or counterexamples) but
    not on the executor or `workers`. `merge` "none" merges only equal full states
    (`sim.search.MERGES`): the same schedules, counts and counterexamples, trusting no
    canonical form, with more nodes.
    """
    if merge not in MERGES:
        raise BoundError(f"--merge: {merge!r} is not a merge mode; allowed: {', '.join(MERGES)}")
    executor = executor or InlineExecutor()
    found = [Found() for _ in configs]
    queue: list[Unit] = []
    for i, config in enumerate(configs):
        units, before = units_of(i, config, bound, split, merge)
        found[i].add(before)
        queue.extend(units)
    total = len(queue)
    queue.reverse()
    inflight: dict[Future[Found], Unit] = {}
    done = 0
    left = [0] * len(configs)  # units not yet searched, per configuration
    for unit in queue:
        left[unit.index] += 1
    judged = tuple(p.name for p in bound.judged)
    try:
        while queue or inflight:
            while queue and len(inflight) < 2 * max(1, workers):
                unit = queue.pop()
                inflight[executor.submit(run_unit, unit)] = unit
            finished, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            for future in finished:
                unit = inflight.pop(future)
                found[unit.index].add(future.result())
                left[unit.index] -= 1
                done += 1
            if progress is not None:
                progress(done, total, sum(f.nodes for f in found))
    except KeyboardInterrupt:
        for future in inflight:
            future.cancel()
        partial = [result_of(config, f, judged, complete=not n) for config, f, n in zip(configs, found, left)]
        raise Interrupted(partial, done, total) from None
    return [result_of(config, f, judged) for config, f in zip(configs, found)]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a check: the results of the units searched so far (a configuration
    with units left is not `complete`), and how many of all the units were done."""

    def __init__(self, results: list[Result], done: int, total: int) -> None:
        super().__init__(f"interrupted after {done} of {total} units of work")
        self.results = results
        self.done = done
        self.total = total


# -- the configurations `--protections` names ----------------------------------------------------
def protections_label(switches: Switches) -> str:
    """`all-on`, or the weakened protections as `name=value` joined by `+`."""
    off = [f"{name}={getattr(switches, name).value}" for name, on in PROTECTIONS.items() if getattr(switches, name) is not on]
    return "+".join(off) or "all-on"


def configurations(base: Switches, protections: str, checkpoints: Sequence[Checkpoints]) -> list[Config]:
    """The rows to check: `all`, `each` (all-on and the six weakenings) or a comma list of
    labels such as `all-on,fencing=off,key=none+rule=any-accepted`."""
    if protections == "all":
        labels = ["all-on"]
    elif protections == "each":
        labels = ["all-on"] + [f"{name}={value}" for name, value in WEAKENINGS]
    else:
        labels = [item.strip() for item in protections.split(",") if item.strip()]
        if not labels:
            raise SwitchError("--protections: expected all, each, or a comma list such as all-on,fencing=off")
    out: list[Config] = []
    seen: set[Switches] = set()
    for check_point in checkpoints:
        for label in labels:
            values: dict[str, str] = {}
            if label != "all-on":
                for pair in label.split("+"):
                    name, sep, value = pair.partition("=")
                    if not sep or name.strip() not in PROTECTIONS:
                        raise SwitchError(
                            f"--protections: {pair!r} is not a weakening; expected all, each, all-on, "
                            f"or name=value with name in {', '.join(PROTECTIONS)} (join several with +)"
                        )
                    parse_value(name.strip(), value.strip(), "--protections")
                    values[name.strip()] = value.strip()
            switches = replace(base.with_values(values), checkpoints=check_point)
            if switches in seen:
                continue
            seen.add(switches)
            out.append(Config(protections_label(switches), switches))
    return out


def base_switches(values: dict[str, str]) -> Switches:
    """The worked example's switches with `--set` applied; the fault switches are refused,
    since `sim check` replaces the worked example's fixed faults with the enumerated ones."""
    return for_own_schedules(values, "check")


# -- counterexamples as scenario files ---------------------------------------------------------------
def counterexample_name(result: Result, example: Counterexample) -> str:
    """The counterexample's file name: `<protections>.<checkpoints>.<invariant>.toml`."""
    return f"{result.protections}.{result.checkpoints}.{example.invariant}.toml"


def counterexample_text(result: Result, example: Counterexample) -> str:
    """The counterexample as a replayable scenario with its expected figures."""
    description = (
        f"{COUNTEREXAMPLE_MARK} {example.invariant} breaks at t{example.tick} with "
        f"{result.protections} ({result.checkpoints} checkpoints), a shortest schedule within the "
        f"bound: {example.describe()}. The [schedule] lists replace the worked example's faults."
    )
    return counterexample(description, result.switches, example.schedule)


def is_counterexample_file(path: Path) -> bool:
    """Whether `path` is a counterexample file `sim check` wrote (a regular file, never
    followed if a symlink, whose first line is the description this module writes)."""
    return path.suffix == ".toml" and starts_with(path, ('description = "' + COUNTEREXAMPLE_MARK).encode("utf-8"))


__all__ = [
    "BoundError",
    "CheckBound",
    "CheckProgress",
    "Config",
    "Counterexample",
    "InlineExecutor",
    "Result",
    "Unit",
    "base_switches",
    "check",
    "configurations",
    "counterexample_name",
    "counterexample_text",
    "is_counterexample_file",
    "run_unit",
    "schedule_of",
    "units_of",
]
