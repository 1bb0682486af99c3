"""Exhaustive bounded model checking of fault schedules (`sim check`).

The bounded space: every fault schedule with at most `max_faults` faults, each one a fault
that a registered fault kind (`sim.model.faults`) offers at a moment of the run at a tick <= horizon
(`Fault.offers`; `CheckBound.to_json` lists what each kind offers, in words).

It is searched as a state space (`sim.analysis.check.search`): nodes are canonical states at the start of a
tick, transitions are the choices of faults within a tick, levels are ticks, and equal nodes
merge. The search counts the schedules (paths) and, per property, those that break it, and
finds each broken property's shortest counterexample, exactly as the schedule enumerator it
replaced (`sim.analysis.check.enumerator`, kept as the test oracle and the benchmark's reference).

Work units: each configuration is searched on its own, or split into `split` subtrees at the
first level with at least `split` nodes (the nodes go to units by their stable fingerprint).
Units go to any `concurrent.futures.Executor` (this process, a process pool, a Dask cluster);
their findings merge by sums, maxima and minima, so the result depends on the split but not
on the executor, the number of workers or the order units finish in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sim import properties
from sim.base.errors import SimError, SwitchError
from sim.model.faults import FAULT_SETS, Fault, selected
from sim.model.faults import describe as describe_list
from sim.base.files import written_by_sim
from sim.base.limits import MAX_CHECK_FAULTS
from sim.run import counterexample
from sim.model.schedule import Schedule, workflow_setting
from sim.base.memory import rss, tree_rss
from sim.analysis.check.search import (
    MERGES, Found, MemoryLimit, Node, Search, Space, TransitionLimit, fingerprint, node_key, root,
)
from sim.model.switches import (
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
    #: which fault kinds (`sim.model.faults.FAULT_SETS`): the article's own, or all registered
    faults: str = "article"
    #: the constants every schedule has (sections, tokens, heartbeats, the newsletter's tick,
    #: the figure's step): the article's, or a workflow's (`--workflow`, `workflow_setting`)
    setting: Schedule = SETTING
    #: the workflow the setting is of, as the user named it (None: the article's)
    workflow: str | None = None

    def __post_init__(self) -> None:
        if self.faults not in FAULT_SETS:
            raise BoundError(f"--faults: {self.faults!r} is not a fault set; allowed: {', '.join(FAULT_SETS)}")
        if not 0 <= self.max_faults <= MAX_CHECK_FAULTS:
            raise BoundError(f"--max-faults: {self.max_faults} is outside 0..{MAX_CHECK_FAULTS}")
        if not 1 <= self.horizon < self.setting.horizon:
            raise BoundError(f"--horizon: {self.horizon} is outside 1..{self.setting.horizon - 1}")
        for kind in self.kinds:  # before any search: offers that cannot be enumerated are refused
            why = kind.too_many_offers(self.setting)
            if why is not None:
                raise BoundError(f"--faults {self.faults}: {why}")

    @property
    def kinds(self) -> tuple[type[Fault], ...]:
        return selected(self.faults)

    def judged_for(self, switches: Switches) -> tuple[properties.Property, ...]:
        """The properties judged under these switches: every invariant a schedule of the
        enumerated kinds can break there (`sim.properties.judged`), and effects-confirmed."""
        return properties.judged(switches, self.kinds)

    def not_judged(self, switches: Switches) -> tuple[properties.Property, ...]:
        """The invariants these switches let some fault kind break but the enumerated kinds
        cannot: what a verdict under them leaves out (`sim.properties.not_judged`)."""
        return properties.not_judged(switches, self.kinds)

    def to_json(self) -> dict[str, Any]:
        return {
            "max_faults": self.max_faults,
            "horizon": self.horizon,
            "fault_set": self.faults,
            "fault_kinds": [kind.check_name for kind in self.kinds],
            "faults": {kind.check_name: kind.bound_words(self.horizon, self.setting) for kind in self.kinds},
            "setting": {
                "sections": self.setting.sections,
                "first_token": self.setting.first_token,
                "heartbeat_limit": self.setting.heartbeat_limit,
                "newsletter_ready": self.setting.newsletter_ready,
                "engine_horizon": self.setting.horizon,
            },
            **({"workflow": self.workflow} if self.workflow is not None else {}),
        }

    def describe(self) -> str:
        return (
            f"every schedule of up to {self.max_faults} fault(s) ({', '.join(k.plural for k in self.kinds)}) "
            f"taking effect by t{self.horizon}"
        )


# -- schedules from codes ----------------------------------------------------------------------
def schedule_of(code: Iterable[Fault], setting: Schedule = SETTING) -> Schedule:
    """The Schedule a code stands for (the setting's constants, the faults in canonical order)."""
    return setting.with_faults(tuple(code))



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
    setting: Schedule = SETTING

    @property
    def schedule(self) -> Schedule:
        return schedule_of(self.code, self.setting)

    def describe(self) -> str:
        return describe_list(self.code, none="no faults")


@dataclass(frozen=True, slots=True)
class Result:
    config: Config
    #: schedules in the bound (paths of the search)
    schedules: int
    #: invariant name -> schedules that broke it, for every property judged under the row's
    #: switches (in `CheckBound.judged_for` order)
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


def result_of(config: Config, found: Found, judged: tuple[str, ...], complete: bool = True,
              setting: Schedule = SETTING) -> Result:  # fmt: skip
    return Result(
        complete=complete,
        config=config,
        schedules=found.schedules,
        violations={name: found.violations.get(name, 0) for name in judged},
        counterexamples={
            name: Counterexample(name, schedule_of(path, setting).faults, key[1], setting)
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
    #: the most resident memory the process searching it may hold (0: no bound)
    memory_limit: int = 0


def run_unit(unit: Unit) -> Found:
    """Search the unit's nodes to the end (in a worker process, or here); `MemoryLimit` if
    the process passes the unit's memory bound."""
    frontier = {node_key(node, unit.space.merge): node for node in unit.nodes}
    return Search(unit.space, unit.memory_limit).run(frontier, unit.tick)


def space_of(config: Config, bound: CheckBound, merge: str = "canonical") -> Space:
    return Space(config.switches, bound.max_faults, bound.horizon, bound.setting,
                 tuple(p.name for p in bound.judged_for(config.switches)), tuple(kind.key for kind in bound.kinds),
                 merge)  # fmt: skip


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
          split: int = 1, progress: CheckProgress | None = None, max_memory: int = 0,
          merge: str = "canonical") -> list[Result]:  # fmt: skip
    """Search the bounded space under each configuration; one Result per configuration.

    `executor` runs the units (in this process if None), about two per worker in flight.
    Results depend on `split` (how many subtrees each configuration is cut into; it changes
    the node and transition counts, never the schedules, verdicts or counterexamples) but
    not on the executor or `workers`. With `max_memory` (bytes) the check stops before this
    process and its workers together hold more (`OutOfMemory`, with what was found so far).
    `merge` "none" merges only equal full states (`sim.analysis.check.search.MERGES`): the same schedules,
    counts and counterexamples, trusting no canonical form, with more nodes.
    """
    if merge not in MERGES:
        raise BoundError(f"--merge: {merge!r} is not a merge mode; allowed: {', '.join(MERGES)}")
    inline = executor is None or isinstance(executor, InlineExecutor)
    executor = executor or InlineExecutor()
    limit = unit_memory(max_memory, 1 if inline else workers)
    found, queue = _units(configs, bound, split, merge, limit)
    total = len(queue)
    left = _per_config(queue, len(configs))  # units not yet searched, per configuration
    judged = [tuple(p.name for p in bound.judged_for(config.switches)) for config in configs]

    def partial() -> list[Result]:
        return [result_of(config, f, names, complete=not n, setting=bound.setting)
                for config, f, names, n in zip(configs, found, judged, left)]  # fmt: skip

    inflight: dict[Future[Found], Unit] = {}
    done = 0
    try:
        while queue or inflight:
            _submit(executor, queue, inflight, 2 * max(1, workers))
            finished, _ = wait(list(inflight), timeout=MEMORY_POLL if max_memory else None, return_when=FIRST_COMPLETED)
            for future in finished:
                _take(future, inflight.pop(future), found, left)
                done += 1
            if progress is not None:
                progress(done, total, sum(f.nodes for f in found))
            if max_memory and not inline:
                _within(max_memory)
    except MemoryLimit as stop:
        _cancel(inflight)
        raise OutOfMemory(partial(), done, total, max(stop.held, tree_rss()), max_memory) from None
    except KeyboardInterrupt:
        _cancel(inflight)
        raise Interrupted(partial(), done, total) from None
    return [result_of(config, f, names, setting=bound.setting) for config, f, names in zip(configs, found, judged)]


def _per_config(queue: list[Unit], configs: int) -> list[int]:
    """How many of the queue's units each configuration has."""
    counts = [0] * configs
    for unit in queue:
        counts[unit.index] += 1
    return counts


def _submit(executor: Executor, queue: list[Unit], inflight: dict[Future[Found], Unit], most: int) -> None:
    """Submit units from the end of the queue until `most` are in flight."""
    while queue and len(inflight) < most:
        unit = queue.pop()
        inflight[executor.submit(run_unit, unit)] = unit


def _take(future: Future[Found], unit: Unit, found: list[Found], left: list[int]) -> None:
    """A finished unit's findings, added to its configuration's (one unit fewer left)."""
    try:
        found[unit.index].add(future.result())
    except MemoryLimit as stop:  # what the unit found before it stopped counts, not exhaustive
        found[unit.index].add(stop.found)
        raise
    left[unit.index] -= 1


def _within(max_memory: int) -> None:
    """Stop (`MemoryLimit`) when this process and its workers together hold more than `max_memory`."""
    held = tree_rss()
    if held > max_memory:
        raise MemoryLimit(Found(), held)


def _cancel(inflight: dict[Future[Found], Unit]) -> None:
    """Cancel the units in flight (those already running finish unread)."""
    for future in inflight:
        future.cancel()


def _units(configs: Sequence[Config], bound: CheckBound, split: int, merge: str,
           limit: int) -> tuple[list[Found], list[Unit]]:  # fmt: skip
    """What each configuration found on the way to its units' level, and every unit, last
    first (the queue pops from the end), each bound to `limit` bytes of memory."""
    found = [Found() for _ in configs]
    queue: list[Unit] = []
    for i, config in enumerate(configs):
        units, before = units_of(i, config, bound, split, merge)
        found[i].add(before)
        queue.extend(replace(unit, memory_limit=limit) for unit in units)
    queue.reverse()
    return found, queue


# -- how much work a bound is, estimated before the search starts -----------------------------------
#: the largest bound the estimate runs as its sample (the whole check when it is no larger)
SAMPLE_FAULTS, SAMPLE_HORIZON = 2, 8
#: the work grows with the horizon T about as T ** (faults + HORIZON_EXTRA), and each fault
#: beyond the sample multiplies it by the sample's own last growth per fault times
#: FAULT_DAMPING ** n for the n-th (the growth per fault falls as faults are added: the budget
#: spent, runs merge). Both measured on the worked example (docs/check.md, "How much work, said up front")
HORIZON_EXTRA = 0.6
FAULT_DAMPING = 0.55


@dataclass(frozen=True, slots=True)
class Estimate:
    """A check's work, estimated from a sample: transitions over all rows, and seconds on the
    given workers at the sample's speed. `exact` when the sample was the bound itself."""

    transitions: int
    seconds: float
    sample: tuple[int, int]
    exact: bool
    #: the sample passed SAMPLE_CAP transitions (or the memory bound) and stopped: the figures
    #: are scaled from what it did by then, a lower bound
    capped: bool = False


def estimate(configs: Sequence[Config], bound: CheckBound, workers: int = 1, max_memory: int = 0) -> Estimate:
    """Search the first row at a small bound (at most SAMPLE_FAULTS faults by SAMPLE_HORIZON,
    and one fault fewer for the growth per fault), time it, and scale it to the bound (see
    HORIZON_EXTRA and FAULT_DAMPING); every row is taken to cost what the first does. On the
    bounds docs/check.md lists it is within a factor of 1.5. A sample that passes SAMPLE_CAP
    transitions (or `max_memory`) stops there, and the estimate is a lower bound (`capped`)."""
    k, t = bound.max_faults, bound.horizon
    ks, ts = min(k, SAMPLE_FAULTS), min(t, SAMPLE_HORIZON)
    started = time.process_time()
    sample, capped = _transitions(configs[0], replace(bound, max_faults=ks, horizon=ts), max_memory)
    per = (time.process_time() - started) / max(sample, 1)
    exact = (ks, ts) == (k, t) and not capped
    work = float(sample)
    if capped:  # a lower bound: the sample's share of the horizon scaled up, no growth per fault
        work *= (t / ts) ** (k + HORIZON_EXTRA)
    elif not exact:
        if k > ks:  # then ks is SAMPLE_FAULTS >= 1: the sample's last growth per fault
            growth = sample / max(_transitions(configs[0], replace(bound, max_faults=ks - 1, horizon=ts), max_memory)[0], 1)
            for n in range(1, k - ks + 1):
                work *= max(growth * FAULT_DAMPING**n, 1.0)
        work *= (t / ts) ** (k + HORIZON_EXTRA)
    total = min(work * len(configs), 1e30)
    return Estimate(int(total), total * per / max(1, workers), (ks, ts), exact, capped)


#: the most transitions the estimate's sample takes: the largest row of `-p each --faults all`
#: takes 93,004 at its sample bound (K=2, T=8); a workflow of many steps, whose report changes
#: are offered over every set of them, would take millions, and its memory, before the
#: estimate could say the check is large
SAMPLE_CAP = 500_000


def _transitions(config: Config, bound: CheckBound, max_memory: int = 0) -> tuple[int, bool]:
    """The transitions of the row's search at this bound, and whether it stopped at SAMPLE_CAP
    (or at the memory bound) first."""
    space = space_of(config, bound)
    start = root(space)
    try:
        return Search(space, max_memory, SAMPLE_CAP).run({node_key(start): start}, 0).transitions, False
    except (TransitionLimit, MemoryLimit) as stop:
        return stop.found.transitions, True


#: how often (seconds) a check with a memory bound looks at its workers' memory
MEMORY_POLL = 0.25


def unit_memory(max_memory: int, processes: int) -> int:
    """The bound of each searching process: all of `max_memory` when the search runs here,
    else an equal share of what this process does not hold (0: no bound)."""
    if not max_memory:
        return 0
    if processes <= 1:
        return max_memory
    return max(64 << 20, (max_memory - rss()) // processes)


class OutOfMemory(Exception):
    """A check stopped at its memory bound: the results so far (a configuration with work left
    is not `complete`), the units done and in all, the memory held and the bound."""

    def __init__(self, results: list[Result], done: int, total: int, held: int, bound: int) -> None:
        super().__init__(f"stopped at the memory bound after {done} of {total} units of work")
        self.results = results
        self.done = done
        self.total = total
        self.held = held
        self.bound = bound


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
                    meant = parse_value(name.strip(), value.strip(), "--protections")
                    if name.strip() in values and parse_value(name.strip(), values[name.strip()], "--protections") != meant:
                        raise SwitchError(f"--protections: {label[:80]!r} gives {name.strip()} two values; allowed: "
                                          "one value for each protection in a row")  # fmt: skip
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


def file_names(configs: Sequence[Config]) -> set[str]:
    """Every name `sim check` may write for these rows: check.json, and each property's
    counterexample and its page per row (known before the search starts)."""
    names = {"check.json"}
    for config in configs:
        for prop in properties.PROPERTIES:
            stem = f"{config.protections}.{config.switches.checkpoints.value}.{prop.name}"
            names |= {f"{stem}.toml", f"{stem}.html"}
    return names


def counterexample_text(result: Result, example: Counterexample, bound: CheckBound) -> str:
    """The counterexample as a replayable scenario with its expected figures; its description
    says what the check judged (`sim.properties.judged_words`)."""
    description = (
        f"{COUNTEREXAMPLE_MARK} {example.invariant} breaks at t{example.tick} with "
        f"{result.protections} ({result.checkpoints} checkpoints), a shortest schedule within the "
        f"bound: {example.describe()}. The [schedule] lists replace the worked example's faults. "
        f"The check {properties.judged_words(result.switches, bound.kinds, 'enumerated')}."
    )
    return counterexample(description, result.switches, example.schedule, bound.workflow)


def is_counterexample_file(path: Path) -> bool:
    """Whether `path` is a counterexample file `sim check` wrote (a regular file, never
    followed if a symlink, whose first line is the description this module writes)."""
    return path.suffix == ".toml" and written_by_sim(path, ('description = "' + COUNTEREXAMPLE_MARK).encode("utf-8"))


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
    "workflow_setting",
    "units_of",
]
