"""Exhaustive bounded model checking of fault schedules (`sim check`).

The bounded space: every fault schedule with at most `max_faults` faults, each one a fault
that a registered fault kind (`sim.faults`) offers at a moment of the run at a tick <= horizon
(`Fault.offers`; `Bound.to_json` lists what each kind offers, in words).

A schedule counts only if every one of its faults takes effect (`trace.unfired` is empty):
any other schedule produces exactly the trace of the smaller schedule without the faults that
never fired, so running it would check nothing new.

How the space is walked (a generation tree, in a fixed order). Every fault is *consulted* at
one moment of a run: a change at the input phase of its tick, a silence when its attempt acts
at its tick, a death when the run's nth post action begins, a duplicate when the nth send
begins. Before that moment a fault changes nothing, so a run with one more fault is the same
run up to the moment the new fault is consulted. Hence a schedule S whose faults all fire has
exactly one *parent*: S without the fault consulted last, whose faults all fire too; and the
children of a schedule P are exactly the faults P's own run offers (its consult moments,
plus the input phase of every tick up to the horizon) after the moment P's last fault was
consulted, added one at a time. Walking this tree from the empty schedule visits every
schedule of the space once, builds none that a fault of would fail to fire ("a silence of an
attempt that does not exist by then" is never built), and needs one engine run per schedule.

Distinct traces: each run is fingerprinted (an 8-byte BLAKE2b digest of a canonical encoding
of its events), so schedules that produce the same trace are counted once. The planned wake
tick of a silence is left out of the fingerprint: it is the schedule's intention, not
something that happened (a `woke` event records a wake when it happens).

Sharding: the walk is a stack of schedules still to run. A `Job` is a batch of them; running
it returns the children of every schedule in it that may still grow, plus the counts. Jobs
go to any `concurrent.futures.Executor` (a process pool here, a cluster engine later); the
results are merged with sums, set unions and minima, so they are identical for any number of
workers and any completion order. Memory: nothing is kept per schedule but its fingerprint;
the stack stays at a few thousand schedules (jobs hold few schedules that may still grow);
the one thing that grows is the set of distinct fingerprints (8 bytes each in a sorted
array, like TLC's fingerprint set).
"""

from __future__ import annotations

import heapq
import os
import stat
from array import array
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, field, replace
from hashlib import blake2b
from pathlib import Path
from typing import Any

from sim import properties
from sim.engine import run_world
from sim.engine.world import Consult, Position, World
from sim.errors import SimError, SwitchError
from sim.events import PLANNED
from sim.faults import KINDS, Fault, Moment, check_order
from sim.faults import describe as describe_list
from sim.limits import MAX_CHECK_FAULTS
from sim.run import counterexample
from sim.schedule import Schedule
from sim.switches import (
    PROTECTIONS,
    WEAKENINGS,
    Checkpoints,
    Switches,
    for_own_schedules,
    parse_value,
)
from sim.trace import Event, Kind, Trace

#: the default bound: `sim check --max-faults 2 --protections each` takes a few minutes.
DEFAULT_MAX_FAULTS = 2
DEFAULT_HORIZON = 12
#: how a counterexample file's description starts (what tells `sim check`'s files from others)
COUNTEREXAMPLE_MARK = "sim check counterexample:"

#: the properties `sim check` judges: the invariants, and that every recorded intent is
#: confirmed by the end of the run (`finished` is the outcome's, and is not judged here)
JUDGED = (*properties.SAFETY, properties.EFFECTS_CONFIRMED)

#: the setting's constants are the worked example's (Schedule's defaults).
SETTING = Schedule()

Code = tuple[Fault, ...]  # a schedule: its faults, in the order they are consulted
#: a schedule's faults in `sim check`'s canonical order, as comparable keys (the shortest
#: counterexample is the least (fault count, tick, keys))
Keys = tuple[tuple[Any, ...], ...]


class BoundError(SimError, ValueError):
    """A bound that cannot be checked (a negative fault count, a horizon out of range)."""


@dataclass(frozen=True, slots=True)
class CheckBound:
    """What is enumerated: at most `max_faults` faults, each taking effect at a tick <= `horizon`."""

    max_faults: int = DEFAULT_MAX_FAULTS
    horizon: int = DEFAULT_HORIZON

    def __post_init__(self) -> None:
        if not 0 <= self.max_faults <= MAX_CHECK_FAULTS:
            raise BoundError(f"--max-faults: {self.max_faults} is outside 0..{MAX_CHECK_FAULTS}")
        if not 1 <= self.horizon < SETTING.horizon:
            raise BoundError(f"--horizon: {self.horizon} is outside 1..{SETTING.horizon - 1}")

    def to_json(self) -> dict[str, Any]:
        return {
            "max_faults": self.max_faults,
            "horizon": self.horizon,
            "faults": {kind.check_name: kind.bound_words(self.horizon, SETTING) for kind in KINDS},
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
            f"every schedule of up to {self.max_faults} fault(s) ({', '.join(k.plural for k in KINDS)}) "
            f"taking effect by t{self.horizon}"
        )


# -- schedules from codes ----------------------------------------------------------------------
def schedule_of(code: Iterable[Fault]) -> Schedule:
    """The Schedule a code stands for (the setting's constants, the faults in canonical order)."""
    return SETTING.with_faults(tuple(code))


def keys(code: Code) -> Keys:
    return tuple(sorted(check_order(f) for f in code))


# -- one run -----------------------------------------------------------------------------------
def children(code: Code, consults: Sequence[Consult], fired: dict[Fault, Position], horizon: int) -> list[Code]:
    """The schedules one fault larger whose new fault is consulted after all of `code`'s.

    The moments are ordered by (tick, seq): the input phase of tick t is (t, 0), the run's
    consults during tick t follow it in the order they happened.
    """
    last = max((fired[f] for f in code), default=(-1, 0))
    points: list[tuple[int, int, Moment, tuple[int, ...]]] = [
        (t, 0, Moment.INPUT, (t,)) for t in range(last[0] + 1, horizon + 1)
    ]
    points += [c for c in consults if (c[0], c[1]) > last and c[0] <= horizon]
    points.sort(key=lambda p: (p[0], p[1]))
    by_moment: dict[Moment, list[type[Fault]]] = {}
    for kind in KINDS:
        by_moment.setdefault(kind.moment, []).append(kind)
    out: list[Code] = []
    for _, _, moment, where in points:
        for kind in by_moment.get(moment, ()):
            out.extend(code + (fault,) for fault in kind.offers(code, where, horizon, SETTING))
    return out


_KIND_CODE = {kind: i for i, kind in enumerate(Kind)}


def fingerprint(events: Sequence[Event]) -> int:
    """An 8-byte BLAKE2b digest of what happened in the events, as an int: each event kind's
    planned fields (`sim.events.PLANNED`, e.g. a silence's wake tick) are left out.

    The encoding is the repr of plain values (ints, strings, None, bools, lists and dicts
    whose keys the engine inserts in a fixed order per event kind): it does not depend on
    PYTHONHASHSEED, and equal traces of one version of the engine encode equally.
    """
    code = _KIND_CODE
    parts = []
    for tick, kind, attempt, detail in events:
        planned = PLANNED.get(kind)
        if planned is not None:
            detail = {k: v for k, v in detail.items() if k not in planned}
        parts.append((tick, code[kind], attempt, detail))
    return int.from_bytes(blake2b(repr(parts).encode(), digest_size=8).digest(), "little")


def run_code(switches: Switches, code: Code, record: bool) -> tuple[Trace, World]:
    world = World(switches, schedule_of(code), record=record)
    trace = run_world(world)
    if trace.unfired:  # the walk builds only schedules whose faults all fire
        raise AssertionError(f"sim check: a fault did not fire in {code}: {trace.unfired}")
    return trace, world


# -- jobs: the unit of work an executor runs --------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Job:
    switches: Switches
    bound: CheckBound
    codes: tuple[Code, ...]


@dataclass(slots=True)
class JobResult:
    schedules: int = 0
    fingerprints: bytes = b""  # 8 bytes per schedule run, native order
    violations: dict[str, int] = field(default_factory=dict)
    #: invariant -> ((fault count, tick it broke, canonical keys), code): the shortest so far
    shortest: dict[str, tuple[tuple[int, int, Keys], Code]] = field(default_factory=dict)
    horizon_reached: int = 0
    children: list[Code] = field(default_factory=list)


def run_job(job: Job) -> JobResult:
    """Run every schedule of the batch; return the counts and the children still to run."""
    result = JobResult()
    prints = array("Q")
    violations = result.violations
    shortest = result.shortest
    limit = job.bound.max_faults
    for code in job.codes:
        grow = len(code) < limit
        trace, world = run_code(job.switches, code, grow)
        result.schedules += 1
        prints.append(fingerprint(trace.events))
        if trace.horizon_reached:
            result.horizon_reached += 1
        for name, tick in properties.violations(trace, JUDGED):
            violations[name] = violations.get(name, 0) + 1
            key = (len(code), tick, keys(code))
            if name not in shortest or key < shortest[name][0]:
                shortest[name] = (key, code)
        if grow:
            assert world.consults is not None
            result.children.extend(children(code, world.consults, world.fired, job.bound.horizon))
    result.fingerprints = prints.tobytes()
    return result


class InlineExecutor(Executor):
    """Runs each job at once in this process: the one-worker case, with no IPC."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 (handed to the caller through the future, as a pool does)
            future.set_exception(exc)
        return future


class FingerprintSet:
    """Distinct 8-byte fingerprints: a sorted array (8 bytes each) plus a set buffer that is
    merged into it whenever it reaches an eighth of the array (so about 17 bytes per distinct
    trace at the peak, against some 70 for a set of ints)."""

    def __init__(self, buffer: int = 1 << 16) -> None:
        self.sorted = array("Q")
        self.buffer: set[int] = set()
        self.limit = buffer

    def update(self, prints: Iterable[int]) -> None:
        self.buffer.update(prints)
        if len(self.buffer) >= max(self.limit, len(self.sorted) // 8):
            self._merge()

    def _merge(self) -> None:
        if not self.buffer:
            return
        fresh = sorted(self.buffer)
        self.buffer = set()
        merged = array("Q")
        last = -1
        for p in heapq.merge(self.sorted, fresh):
            if p != last:
                merged.append(p)
                last = p
        self.sorted = merged

    def __len__(self) -> int:
        self._merge()
        return len(self.sorted)


# -- the check: every configuration's tree, walked by one scheduler -----------------------------------
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
    schedules: int
    distinct_traces: int
    #: invariant name -> schedules that broke it, for every invariant (sorted by name)
    violations: dict[str, int]
    #: invariant name -> its shortest counterexample, for the broken ones
    counterexamples: dict[str, Counterexample]
    #: runs that hit the engine's horizon guard (a model bug if ever non-zero)
    horizon_reached: int

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


class _Tally:
    """The merged results of one configuration (sums, a set union and minima: order-free)."""

    def __init__(self) -> None:
        self.schedules = 0
        self.horizon_reached = 0
        self.prints = FingerprintSet()
        self.violations: dict[str, int] = {}
        self.shortest: dict[str, tuple[tuple[int, int, Keys], Code]] = {}

    def add(self, result: JobResult) -> None:
        self.schedules += result.schedules
        self.horizon_reached += result.horizon_reached
        self.prints.update(array("Q", result.fingerprints))
        for name, count in result.violations.items():
            self.violations[name] = self.violations.get(name, 0) + count
        for name, (key, code) in result.shortest.items():
            if name not in self.shortest or key < self.shortest[name][0]:
                self.shortest[name] = (key, code)

    def result(self, config: Config) -> Result:
        return Result(
            config=config,
            schedules=self.schedules,
            distinct_traces=len(self.prints),
            violations={p.name: self.violations.get(p.name, 0) for p in JUDGED},
            counterexamples={
                name: Counterexample(name, schedule_of(code).faults, key[1])
                for name, (key, code) in sorted(self.shortest.items())
            },
            horizon_reached=self.horizon_reached,
        )


#: how many leaves (schedules that do not grow) a growing schedule counts as in a job
GROWING_WEIGHT = 32

#: progress callback: (schedules run so far, an estimate of the total)
CheckProgress = Callable[[int, int], None]


def check(configs: Sequence[Config], bound: CheckBound, executor: Executor | None = None, workers: int = 1,
          batch: int = 256, progress: CheckProgress | None = None) -> list[Result]:  # fmt: skip
    """Walk the bounded space under each configuration; one Result per configuration.

    `executor` runs the jobs (in this process if None); `workers` is how many it runs at
    once, so that about two jobs per worker are kept in flight. Results do not depend on
    either, nor on `batch` (the most schedules per job).
    """
    executor = executor or InlineExecutor()
    inflight_limit = 2 * max(1, workers)
    tallies = [_Tally() for _ in configs]
    # the stack of schedules still to run: (configuration index, code). The first
    # configuration's root is on top, so the configurations are walked mostly one by one.
    stack: list[tuple[int, Code]] = [(i, ()) for i in reversed(range(len(configs)))]
    estimate = _Estimate(bound.max_faults, len(configs))
    inflight: dict[Future[JobResult], tuple[int, Job]] = {}
    done_so_far = 0
    while stack or inflight:
        while stack and len(inflight) < inflight_limit:
            index = stack[-1][0]
            # a job holds up to `batch` schedules, but a schedule that may still grow counts
            # as GROWING_WEIGHT of them: its children come back to the stack, and keeping
            # their number per job small keeps the stack (and memory) small
            size = min(batch, max(1, -(-len(stack) // inflight_limit)))
            take: list[Code] = []
            weight = 0
            while stack and weight < size and stack[-1][0] == index:
                code = stack.pop()[1]
                take.append(code)
                weight += GROWING_WEIGHT if len(code) < bound.max_faults else 1
            estimate.taken(take)
            job = Job(configs[index].switches, bound, tuple(take))
            inflight[executor.submit(run_job, job)] = (index, job)
        finished, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
        for future in finished:
            index, job = inflight.pop(future)
            result = future.result()
            estimate.finished(job.codes)
            tallies[index].add(result)
            done_so_far += result.schedules
            estimate.grew(result.children)
            stack.extend((index, code) for code in result.children)
        if progress is not None:
            progress(done_so_far, estimate.total(done_so_far))
    if progress is not None:
        progress(done_so_far, done_so_far)
    return [tally.result(config) for tally, config in zip(tallies, configs)]


class _Estimate:
    """Expected size of the unexplored part of the walk, from the fan-out seen so far."""

    def __init__(self, depth: int, roots: int) -> None:
        self.depth = depth
        self.waiting = [0] * (depth + 1)  # schedules on the stack, by size
        self.waiting[0] = roots
        self.running = [0] * (depth + 1)
        self.completed = [0] * (depth + 1)  # schedules run (their children known), by size
        self.born = [0] * (depth + 2)  # children produced, by their size

    def taken(self, codes: list[Code]) -> None:
        for code in codes:
            self.waiting[len(code)] -= 1
            self.running[len(code)] += 1

    def finished(self, codes: tuple[Code, ...]) -> None:
        for code in codes:
            self.running[len(code)] -= 1
            self.completed[len(code)] += 1

    def grew(self, kids: list[Code]) -> None:
        for kid in kids:
            self.waiting[len(kid)] += 1
            self.born[len(kid)] += 1

    def total(self, done: int) -> int:
        # expected subtree size of a schedule of size d: S_K = 1, S_d = 1 + fan-out(d) * S_{d+1};
        # a schedule on the stack or running counts itself and its expected descendants
        size = [1.0] * (self.depth + 2)
        for d in range(self.depth - 1, -1, -1):
            fan = self.born[d + 1] / self.completed[d] if self.completed[d] else 0.0
            size[d] = 1 + fan * size[d + 1]
        ahead = sum((w + r) * size[d] for d, (w, r) in enumerate(zip(self.waiting, self.running)))
        return int(done + ahead)


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
    if path.suffix != ".toml":
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return False
        first = handle.read(len(COUNTEREXAMPLE_MARK) + len('description = "'))
    return first == ('description = "' + COUNTEREXAMPLE_MARK).encode("utf-8")


__all__ = [
    "CheckBound",
    "BoundError",
    "Config",
    "Counterexample",
    "FingerprintSet",
    "InlineExecutor",
    "Job",
    "JobResult",
    "Result",
    "base_switches",
    "check",
    "children",
    "configurations",
    "counterexample_name",
    "counterexample_text",
    "fingerprint",
    "is_counterexample_file",
    "run_job",
    "schedule_of",
]
