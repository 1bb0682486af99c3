"""The schedule enumerator that `sim check` used before its state-space search
(`sim.analysis.check.search`): the search's test oracle and its benchmark's reference.

The bounded space: every fault schedule with at most `max_faults` faults, each one a fault
that a registered fault kind (`sim.model.faults`) offers at a moment of the run at a tick <= horizon
(`Fault.offers`; `CheckBound.to_json` lists what each kind offers, in words).

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
from array import array
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, field
from hashlib import blake2b

from sim import properties
from sim.analysis.check.check import (
    SETTING,
    CheckBound,
    Config,
    Counterexample,
    InlineExecutor,
    schedule_of,
)
from sim.engine.run import run_world
from sim.engine.world import Consult, Position, World
from sim.model.events import PLANNED
from sim.model.faults import Fault, Moment
from sim.analysis.check.search import Keys, keys
from sim.model.schedule import Schedule
from sim.model.switches import Switches
from sim.engine.trace import Event, Kind, Trace

Code = tuple[Fault, ...]  # a schedule: its faults, in the order they are consulted


# -- one run -----------------------------------------------------------------------------------
def children(code: Code, consults: Sequence[Consult], fired: dict[Fault, Position], horizon: int,
             kinds: Sequence[type[Fault]], setting: Schedule = SETTING) -> list[Code]:  # fmt: skip
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
    for kind in kinds:
        by_moment.setdefault(kind.moment, []).append(kind)
    out: list[Code] = []
    for tick, _, moment, where in points:
        for kind in by_moment.get(moment, ()):
            out.extend(code + (fault,) for fault in kind.offers(code, tick, where, horizon, setting))
    return out


_KIND_CODE = {kind: i for i, kind in enumerate(Kind)}


def fingerprint(events: Sequence[Event]) -> int:
    """An 8-byte BLAKE2b digest of what happened in the events, as an int: each event kind's
    planned fields (`sim.model.events.PLANNED`, e.g. a silence's wake tick) are left out.

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


def run_code(switches: Switches, code: Code, record: bool, setting: Schedule = SETTING) -> tuple[Trace, World]:
    world = World(switches, schedule_of(code, setting), record=record)
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
    ticks: int = 0  # engine ticks run (each schedule from t0 to its last tick)
    children: list[Code] = field(default_factory=list)


def run_job(job: Job) -> JobResult:
    """Run every schedule of the batch; return the counts and the children still to run."""
    result = JobResult()
    prints = array("Q")
    violations = result.violations
    shortest = result.shortest
    limit = job.bound.max_faults
    judged = job.bound.judged_for(job.switches)
    for code in job.codes:
        grow = len(code) < limit
        trace, world = run_code(job.switches, code, grow, job.bound.setting)
        result.schedules += 1
        prints.append(fingerprint(trace.events))
        result.ticks += trace.last_tick + 1
        if trace.horizon_reached:
            result.horizon_reached += 1
        for name, tick in properties.violations(trace, judged):
            violations[name] = violations.get(name, 0) + 1
            key = (len(code), tick, keys(code))
            if name not in shortest or key < shortest[name][0]:
                shortest[name] = (key, code)
        if grow:
            assert world.consults is not None
            result.children.extend(children(code, world.consults, world.fired, job.bound.horizon, job.bound.kinds,
                                            job.bound.setting))
    result.fingerprints = prints.tobytes()
    return result


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


# -- the whole walk: every configuration's tree, walked by one scheduler ------------------------------
@dataclass(frozen=True, slots=True)
class Enumerated:
    """What the walk found under one configuration (`sim.analysis.check.check.Result`'s figures, plus the
    distinct traces; the search cannot count those)."""

    config: Config
    schedules: int
    distinct_traces: int
    violations: dict[str, int]
    counterexamples: dict[str, Counterexample]
    horizon_reached: int
    ticks: int = 0  # engine ticks run in all (schedule-ticks)


class _Tally:
    """The merged results of one configuration (sums, a set union and minima: order-free)."""

    def __init__(self) -> None:
        self.schedules = 0
        self.horizon_reached = 0
        self.ticks = 0
        self.prints = FingerprintSet()
        self.violations: dict[str, int] = {}
        self.shortest: dict[str, tuple[tuple[int, int, Keys], Code]] = {}

    def add(self, result: JobResult) -> None:
        self.schedules += result.schedules
        self.horizon_reached += result.horizon_reached
        self.ticks += result.ticks
        self.prints.update(array("Q", result.fingerprints))
        for name, count in result.violations.items():
            self.violations[name] = self.violations.get(name, 0) + count
        for name, (key, code) in result.shortest.items():
            if name not in self.shortest or key < self.shortest[name][0]:
                self.shortest[name] = (key, code)

    def result(self, config: Config, bound: CheckBound) -> Enumerated:
        return Enumerated(
            config=config,
            schedules=self.schedules,
            distinct_traces=len(self.prints),
            violations={p.name: self.violations.get(p.name, 0) for p in bound.judged_for(config.switches)},
            counterexamples={
                name: Counterexample(name, schedule_of(code, bound.setting).faults, key[1], bound.setting)
                for name, (key, code) in sorted(self.shortest.items())
            },
            horizon_reached=self.horizon_reached,
            ticks=self.ticks,
        )


#: how many leaves (schedules that do not grow) a growing schedule counts as in a job
GROWING_WEIGHT = 32

def enumerate_all(configs: Sequence[Config], bound: CheckBound, executor: Executor | None = None, workers: int = 1,
                  batch: int = 256, progress: Callable[[int, int], None] | None = None) -> list[Enumerated]:  # fmt: skip
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
    return [tally.result(config, bound) for tally, config in zip(tallies, configs)]


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
