"""Random interleavings: fault schedules drawn at random, run, checked, shrunk and written.

The space of schedules is defined once, by `draw_schedule`, which reads every decision from
a `Choices` source. Two sources read that one definition:

- `SeededChoices`: a `random.Random` with an explicit seed. `sim explore` uses it, because
  Hypothesis' own per-example work (about 1 ms, five engine runs) would hold the search at
  or below 1,000 schedules/s before any bookkeeping, where the seeded loop does about 4,000
  (docs/explore.md has the measurements), and because a seeded stream gives a stable
  "schedule #k of seed S".
- `HypothesisChoices`: Hypothesis' `draw`, behind `schedules()`. The property tests use it,
  so Hypothesis generates and shrinks over the very same decisions.

Every decision is ordered so that its simplest value is the one Hypothesis shrinks to: fewer
faults, earlier ticks, lower attempt numbers, and for the constants of the setting the worked
example's value (4 sections, 2 missed heartbeats, newsletter ready at t12). `shrink` applies
the same order to a counterexample the seeded search found, deterministically and without
Hypothesis, so that `sim explore` writes byte-identical files for the same seed.

An invariant is *at risk* in a run when the hazard it names arose, whether or not a
protection stopped it (`sim.properties.at_risk`). Coverage counts the faults that took effect, by kind
and tick, and the runs in which each invariant was at risk and broken.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re
import shlex
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sim import properties
from sim.base.errors import ScheduleError, SimError
from sim.model.faults import FAULT_SETS, KINDS, Choices, Fault, selected
from sim.model.faults import describe as describe_list
from sim.model.faults.base import toward
from sim.base.files import OutError, interrupts_held, write_out
from sim.run import counterexample, simulate
from sim.model.schedule import Schedule, workflow_setting
from sim.model.switches import PROTECTIONS, Switches
from sim.engine.trace import Kind, Trace

if TYPE_CHECKING:  # pragma: no cover
    from sim.model.workflow import Workflow
    from hypothesis.strategies import DrawFn, SearchStrategy

    from sim.properties.outcome import Outcome

T = TypeVar("T")

#: chance of one more fault after each fault drawn (and before the first)
MORE_FAULTS = 0.8

#: the worked example's setting: the constants a drawn schedule shrinks toward
EXAMPLE = Schedule()


@dataclass(frozen=True, slots=True)
class ExploreBounds:
    """What a drawn schedule may contain. Defaults are the documented bounds (docs/explore.md)."""

    #: at most this many faults
    max_faults: int = 4
    #: faults are scheduled at ticks 0..last_tick (a silence of attempt #n at n..last_tick)
    last_tick: int = 30
    #: faults that name an attempt name #1..#attempts
    attempts: int = 4
    #: a paused attempt wakes 1..max_pause ticks after it fell silent
    max_pause: int = 10
    #: faults that name the nth post or send name one of the first max_nth
    max_nth: int = 3
    #: the constants of the setting, the worked example's value first
    sections: tuple[int, ...] = toward(EXAMPLE.sections, 2, 6)
    heartbeat_limits: tuple[int, ...] = toward(EXAMPLE.heartbeat_limit, 1, 4)
    newsletter_ready: tuple[int, ...] = toward(EXAMPLE.newsletter_ready, 0, 24)
    #: which fault kinds are drawn (`sim.model.faults.FAULT_SETS`): the article's own, or all
    faults: str = "article"
    #: the setting a shrink moves the constants back toward, and whose figure's step every
    #: drawn schedule keeps: the worked example's, or a workflow's (`--workflow`: its sections
    #: fixed, `for_workflow`)
    example: Schedule = EXAMPLE
    #: the workflow, as a counterexample file names it (None: the article's)
    workflow: str | None = None

    @property
    def kinds(self) -> tuple[type[Fault], ...]:
        return selected(self.faults)

    def __post_init__(self) -> None:
        if self.faults not in FAULT_SETS:
            raise SimError(f"--faults: {self.faults!r} is not a fault set; allowed: {', '.join(FAULT_SETS)}")
        if self.max_faults < 0:
            raise SimError(f"--max-faults: {self.max_faults} must be at least 0")
        if self.last_tick < 1 or self.attempts < 1 or self.max_pause < 1 or self.max_nth < 1:
            raise SimError(f"bounds: every bound must be at least 1 ({self})")


class SeededChoices:
    """Decisions from an explicitly seeded `random.Random` (the fast path of `sim explore`)."""

    __slots__ = ("rng",)

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return lo + int(self.rng.random() * (hi - lo + 1))

    def pick(self, options: Sequence[T]) -> T:
        return options[int(self.rng.random() * len(options))]

    def flip(self, p: float) -> bool:
        return self.rng.random() < p


_SAMPLED: dict[tuple[Any, ...], Any] = {}


class HypothesisChoices:
    """Decisions from Hypothesis' `draw`: integers shrink to `lo`, picks to the first option,
    flips to False."""

    __slots__ = ("draw", "st")

    def __init__(self, draw: DrawFn) -> None:
        from hypothesis import strategies

        self.draw = draw
        self.st = strategies

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(self.st.integers(lo, hi))

    def pick(self, options: Sequence[T]) -> T:
        strategy = _SAMPLED.get(options)  # type: ignore[call-overload]
        if strategy is None:  # building sampled_from costs more than drawing from it
            strategy = _SAMPLED[options] = self.st.sampled_from(options)  # type: ignore[index]
        return self.draw(strategy)  # type: ignore[no-any-return]

    def flip(self, p: float) -> bool:
        # 0 (the shrink target) is False; True has probability p, as with SeededChoices
        return self.draw(self.st.integers(0, 99)) >= round(100 * (1 - p))


def draw_schedule(c: Choices, bounds: ExploreBounds = ExploreBounds()) -> Schedule:
    """One fault schedule. The single definition of the space both searches draw from: the
    setting's constants, then faults while a coin says so, each of a kind picked from the
    registry and drawn by that kind (a fault that cannot join those drawn so far is dropped)."""
    sections = c.pick(bounds.sections)
    heartbeat_limit = c.pick(bounds.heartbeat_limits)
    newsletter_ready = c.pick(bounds.newsletter_ready)
    kinds = bounds.kinds
    faults: list[Fault] = []
    drawn = 0
    while drawn < bounds.max_faults and c.flip(MORE_FAULTS):
        drawn += 1
        fault = c.pick(kinds).draw(c, bounds, sections, faults)
        if fault is not None and not any(
            f.moment is fault.moment and f.where() == fault.where() for f in faults
        ):  # two faults of different kinds at one moment and place cannot both be scheduled
            faults.append(fault)
    return Schedule(
        faults=tuple(faults),
        sections=sections,
        heartbeat_limit=heartbeat_limit,
        newsletter_ready=newsletter_ready,
        figure=bounds.example.figure,
        calls=bounds.example.calls,
        names=bounds.example.names,
        change_atoms=bounds.example.change_atoms,
    )


# -- Hypothesis strategies --------------------------------------------------------------------


def schedules(bounds: ExploreBounds = ExploreBounds()) -> SearchStrategy[Schedule]:
    """Hypothesis strategy: fault schedules within `bounds`, shrinking toward the worked example."""
    from hypothesis import strategies as st

    @st.composite
    def strategy(draw: DrawFn) -> Schedule:
        return draw_schedule(HypothesisChoices(draw), bounds)

    return strategy()


def switches(**fixed: str) -> SearchStrategy[Switches]:
    """Hypothesis strategy: switch settings, with some fixed by spelling (e.g. fencing="off").

    Only the switches that matter under an explicit schedule vary (the protections, the
    checkpoints and the gate); the three event switches keep the worked example's values,
    because a drawn schedule replaces the faults they describe.
    """
    from hypothesis import strategies as st

    from sim.model.switches import SWITCHES

    varying = [name for name in (*PROTECTIONS, "checkpoints", "gate") if name not in fixed]
    base = Switches().with_values(fixed)
    parts = {name: st.sampled_from(list(SWITCHES[name])) for name in varying}
    return st.fixed_dictionaries(parts).map(lambda values: dataclasses.replace(base, **values))  # type: ignore[arg-type]


# -- what one run tells ----------------------------------------------------------------------

#: coverage columns: ticks are grouped in buckets of this width, the last bucket open-ended
TICK_BUCKET = 5
TICK_BUCKETS = 6


def observed(trace: Trace) -> Iterator[tuple[str, int, int]]:
    """(coverage label, tick, last tick it affects) for every fault that took effect in this
    run, as its kind reads it from the trace."""
    watchers: dict[Kind, list[type[Fault]]] = {}
    for kind in KINDS:
        watchers.setdefault(Kind(kind.shown_by), []).append(kind)
    for e in trace.events:
        for kind in watchers.get(e.kind, ()):
            seen = kind.observe(e)
            if seen is not None:
                yield seen


def coverage_kinds(faults: str = "article") -> tuple[str, ...]:
    """The coverage table's rows: the labels of every kind in the fault set, in registry order."""
    return tuple(label for kind in selected(faults) for label in kind.coverage_labels)


def last_fault_tick(trace: Trace) -> int:
    """The last tick at which a fault took effect or ended (a paused attempt's wake tick, even
    if the attempt was stopped meanwhile and so does nothing when it comes)."""
    return max((end for _, _, end in observed(trace)), default=0)


def settle_bound(trace: Trace) -> int:
    """The tick by which a run with all protections on must have ended (the liveness bound).

    After its last fault a run needs at most: the heartbeat limit (suspicion of a silent
    owner), then two attempts end to end, each computing every section (one pinned to a
    report that the last change superseded, refused at assessment; then its rebuild), plus
    five ticks of bookkeeping (assembly and assessment of the refused one, the rebuild's
    admission, assembly, assessment and post collapse to: assemble, refuse, admit, assemble,
    accept/post). It cannot end before the newsletter's ready tick either.
    """
    s = trace.schedule
    return max(s.newsletter_ready, last_fault_tick(trace) + s.heartbeat_limit + 2 * s.sections + 5)


# -- shrinking ------------------------------------------------------------------------------


def fired_only(trace: Trace) -> Schedule:
    """The run's schedule without the faults that never took effect (the same run, replayable
    by the strict `sim trace`)."""
    fired = set(trace.fired)
    return trace.schedule.with_faults([f for f in trace.schedule.faults if f in fired])


#: the setting's constants a drawn schedule varies (and a shrink moves back toward the example's)
CONSTANTS = ("sections", "heartbeat_limit", "newsletter_ready")


def complexity(s: Schedule, example: Schedule = EXAMPLE) -> tuple[int, int, int]:
    """How far a schedule is from the simplest: fewer faults first, then earlier ticks, then
    the rest (attempt numbers, nth, sections touched, constants away from the example's)."""
    ticks = rest = 0
    for f in s.faults:
        late, other = f.complexity()
        ticks += late
        rest += other
    rest += sum(abs(getattr(s, name) - getattr(example, name)) for name in CONSTANTS)
    return s.fault_count, ticks, rest


def _variants(s: Schedule, example: Schedule = EXAMPLE) -> Iterator[dict[str, Any]]:
    """Simpler versions of `s`, as field changes: drop a fault, then simplify each fault and
    each constant. Some are invalid; the caller skips those."""
    faults = s.faults
    for i in range(len(faults)):
        yield {"faults": faults[:i] + faults[i + 1 :]}
    for i, fault in enumerate(faults):
        for new in fault.simpler(s.sections):
            yield {"faults": faults[:i] + (new,) + faults[i + 1 :]}
    for name in CONSTANTS:
        value, target = getattr(s, name), getattr(example, name)
        if value != target:
            yield {name: target}
            yield {name: value + (1 if value < target else -1)}
    if s.sections > example.sections:  # fewer sections: each fault fitted to them
        yield {"sections": example.sections, "faults": tuple(f.fit(example.sections) for f in faults)}


@dataclass(frozen=True, slots=True)
class Shrunk:
    schedule: Schedule
    runs: int  # engine runs the shrink spent
    interrupted: bool = False


def single_faults(s: Schedule, bounds: ExploreBounds) -> list[Schedule]:
    """Every schedule with at most one fault within `bounds` and `s`'s constants, simplest
    first (the schedule with no fault at all leads)."""
    empty = s.with_faults(())
    out = [empty]
    for kind in bounds.kinds:
        out.extend(empty.with_faults((f,)) for f in kind.singles(bounds, s.sections))
    return sorted(out, key=lambda x: complexity(x, bounds.example))


def shrink(
    switches: Switches, schedule: Schedule, invariant: str, bounds: ExploreBounds = ExploreBounds(),
    max_runs: int = 20_000,
) -> Shrunk:
    """Simplify `schedule` while `invariant` still breaks under `switches`.

    Two moves, repeated until neither helps: a greedy local pass (drop a fault, move a tick
    earlier, lower an attempt or post number, move a constant toward the worked example; the
    first simpler schedule that still breaks the invariant is kept), and, while more than one
    fault is left, a sweep of every one-fault schedule in simplicity order (a greedy pass
    cannot drop one fault and move another at once). Deterministic. Every kept schedule holds
    only faults that took effect, so the strict `sim trace` replays it. Ctrl-C returns the
    best found so far.
    """
    trace, _ = simulate(switches, schedule)
    best = fired_only(trace)
    runs = 1
    swept = False
    try:
        while runs < max_runs:
            improved = False
            key = complexity(best, bounds.example)
            for change in _variants(best, bounds.example):
                try:
                    candidate = dataclasses.replace(best, **change)
                except ScheduleError:
                    continue
                if complexity(candidate, bounds.example) >= key:
                    continue
                trace, result = simulate(switches, candidate)
                runs += 1
                if invariant in result.broken:
                    best = fired_only(trace)
                    improved = True
                    break
                if runs >= max_runs:
                    break
            if improved:
                continue
            if swept or best.fault_count <= 1:
                break
            swept = True
            for candidate in single_faults(best, bounds):
                if complexity(candidate, bounds.example) >= key or runs >= max_runs:
                    break
                trace, result = simulate(switches, candidate)
                runs += 1
                if invariant in result.broken and not trace.unfired:
                    best = candidate
                    break
            if complexity(best, bounds.example) >= key:
                break
    except KeyboardInterrupt:
        return Shrunk(best, runs, interrupted=True)
    return Shrunk(best, runs)


def for_workflow(bounds: ExploreBounds, workflow: Workflow, ref: str) -> ExploreBounds:
    """The bounds on a workflow: its sections (its steps) fixed, the newsletter's ready tick
    drawn toward its dependant's, the figure's step its own; shrinks move toward its setting."""
    setting = workflow_setting(workflow)
    ready = toward(setting.newsletter_ready, 0, max(24, setting.newsletter_ready))  # its own tick among them
    return dataclasses.replace(bounds, sections=(setting.sections,), example=setting, workflow=ref, newsletter_ready=ready)


# -- the search --------------------------------------------------------------------------------


@dataclass
class Coverage:
    """What a search exercised: fired faults by kind and tick bucket, invariants at risk/broken."""

    runs: int = 0
    faults: dict[tuple[str, int], int] = field(default_factory=dict)
    unfired: int = 0
    at_risk: dict[str, int] = field(default_factory=dict)
    broken: dict[str, int] = field(default_factory=dict)
    horizon_reached: int = 0
    unfinished: int = 0

    def add(self, trace: Trace, result: Outcome) -> None:
        self.runs += 1
        for kind, tick, _ in observed(trace):
            bucket = min(tick // TICK_BUCKET, TICK_BUCKETS - 1)
            self.faults[kind, bucket] = self.faults.get((kind, bucket), 0) + 1
        self.unfired += len(trace.unfired)
        for name in properties.at_risk(trace):
            self.at_risk[name] = self.at_risk.get(name, 0) + 1
        for name in result.broken:
            self.broken[name] = self.broken.get(name, 0) + 1
        self.horizon_reached += result.horizon_reached
        self.unfinished += not result.finished


@dataclass(frozen=True, slots=True)
class Finding:
    """One broken invariant: where the search first met it and the shrunk counterexample."""

    invariant: str
    tick: int  # the tick the shrunk counterexample breaks it at
    found_at: int  # 1-based index of the first schedule that broke it
    faults_before: int  # fired faults of that schedule, before shrinking
    schedule: Schedule  # shrunk
    shrink_runs: int
    path: Path | None
    expected: bool  # a protection it relies on is off (`sim.properties.unguarded_by`)
    #: the shrunk schedule needs a fault kind beyond the article's model, which the article's
    #: protections make no promise about (docs/outside.md): its cases, in order
    beyond: tuple[int, ...] = ()
    #: what it is kept under (`finding_key`): the invariant, and its cases beyond the article
    key: str = ""


@dataclass(frozen=True, slots=True)
class Exploration:
    switches: Switches
    seed: int
    examples: int  # requested
    bounds: ExploreBounds
    runs: int  # schedules drawn, run and checked
    seconds: float
    interrupted: bool
    coverage: Coverage
    findings: tuple[Finding, ...]

    @property
    def unexpected(self) -> tuple[Finding, ...]:
        """Findings with every protection they rely on switched on: the invariants the user
        asked to hold (`sim explore` exits 1 if there is one)."""
        return tuple(f for f in self.findings if not f.expected and not f.beyond)


def rerun_args(switches: Switches, seed: int, examples: int, bounds: ExploreBounds) -> str:
    """The `sim explore` arguments that repeat a search exactly, each value quoted for a POSIX
    shell where it needs it (`shlex.quote`: a workflow file's path with a space)."""
    parts = [f"--seed {seed}", f"--examples {examples}", f"--max-faults {bounds.max_faults}"]
    if bounds.faults != "article":
        parts.append(f"--faults {shlex.quote(bounds.faults)}")
    wf = None
    if bounds.workflow is not None:
        parts.append(f"--workflow {shlex.quote(bounds.workflow)}")
        from sim import workflow as files

        wf = files.load(bounds.workflow)
    from sim.model.workflow import set_pairs  # against the workflow's own knobs, not the article's

    return " ".join(parts + [f"--set {shlex.quote(pair)}" for pair in set_pairs(switches, wf)])


def counterexample_name(key: str, switches: Switches, seed: int, bounds: ExploreBounds = ExploreBounds()) -> str:
    """A counterexample's file name: `<key>--<switches>[--<settings>]--seed<S>.toml`, the key
    its invariant and cases (`finding_key`), the switches as in the label (`all-on` when none
    differ), then each other setting of the search away from its default (`settings_tag`), so
    that two searches of different settings never write the same name, and the names of a
    search with the defaults stay what they were."""
    label = switches.label().replace("=", "-").replace(" ", "-") or "all-on"
    return f"{key}--{label}{settings_tag(bounds, cased='--case-' in key)}--seed{seed}.toml"


def settings_tag(bounds: ExploreBounds, cased: bool = False) -> str:
    """What a name says of the search beyond its switches and seed, each only away from its
    default: `--workflow-<W>` (a shipped workflow's name; a file's stem and a hash of its path),
    `--faults-<SET>` (not on a name with a case beyond the article, which only `--faults all`
    finds, and which says so), `--max-faults-<K>`."""
    parts, default = [], ExploreBounds()
    if bounds.workflow is not None:
        parts.append(f"workflow-{workflow_tag(bounds.workflow)}")
    if bounds.faults != default.faults and not cased:
        parts.append(f"faults-{bounds.faults}")
    if bounds.max_faults != default.max_faults:
        parts.append(f"max-faults-{bounds.max_faults}")
    return "".join(f"--{part}" for part in parts)


def workflow_tag(reference: str) -> str:
    """A workflow as part of a file name: a shipped one by its name; a file (its absolute path)
    by its stem and 8 hex digits of the path's SHA-256 (two files of one stem differ)."""
    if "/" not in reference:
        return reference
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(reference).stem).strip("-") or "workflow"
    return f"{stem}-{hashlib.sha256(reference.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"


def may_write(switches: Switches, seed: int, bounds: ExploreBounds = ExploreBounds()) -> Callable[[str], bool]:
    """Whether a file name is one `sim explore` may write for these switches, seed and settings
    (a counterexample of any invariant and cases, or its page): checked before the search."""
    plain, cased = (counterexample_name(key, switches, seed, bounds).removesuffix(".toml").removeprefix(key)
                    for key in ("", "--case-"))  # fmt: skip
    return lambda name: name.endswith(tuple((cased if "--case-" in name else plain) + suffix
                                            for suffix in (".toml", ".html")))  # fmt: skip


def longest_name(switches: Switches, seed: int, bounds: ExploreBounds) -> int:
    """The longest file name, in bytes, a counterexample (or its page) of this search may get:
    an invariant with every case beyond the article's model its fault kinds run, or with none
    (the names say the settings and the seed, so enough of them can pass what a file system
    allows)."""
    cases = tuple(sorted({kind.case for kind in bounds.kinds if not kind.article and kind.case}))
    return max(len(counterexample_name(finding_key(name, found), switches, seed, bounds).encode("utf-8"))
               for name in properties.NAMES for found in {cases, ()})  # fmt: skip


def describe_faults(s: Schedule) -> str:
    """The schedule in words: its faults, then the setting's constants."""
    constants = f"{s.sections} sections, heartbeat limit {s.heartbeat_limit}, newsletter ready at t{s.newsletter_ready}"
    return describe_list(s.faults) + f" ({constants})"


#: What a counterexample file `sim explore` writes starts with (`sim.base.files.Head`): its
#: description, `_finding`'s words. How it knows its own files, the only ones it replaces.
DESCRIPTION_HEAD = rb"Breaks [a-z][a-z0-9-]* at t[0-9]+\. Found by `sim explore "
COUNTEREXAMPLE_HEAD = re.compile(rb'description = "' + DESCRIPTION_HEAD)


def write_counterexample(path: Path, description: str, switches: Switches, schedule: Schedule,
                         workflow: str | None = None) -> None:  # fmt: skip
    """Write the scenario file with its full outcome as [expect], atomically (Ctrl-C and kill
    safe), over nothing but a counterexample `sim explore` wrote; a folder that cannot take
    it, or a file of the user's at its name, is a one-line `OutError`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutError(f"--out {path.parent}: cannot create the folder ({exc.strerror or exc})") from None
    write_out(path, counterexample(description, switches, schedule, workflow), head=COUNTEREXAMPLE_HEAD)


ExploreProgress = Callable[[int, int, float, int], None]  # (runs, examples, seconds, findings)

#: schedules run to estimate a search's time (from a copy of its seed: the search is unchanged)
SAMPLE = 40


@dataclass(frozen=True, slots=True)
class Estimate:
    """A search's time, estimated before it starts from a short sample."""

    seconds: float
    sampled: int
    rate: float  # schedules per second in the sample


def estimate(switches: Switches, *, seed: int, examples: int, bounds: ExploreBounds = ExploreBounds()) -> Estimate:
    """Run the first `SAMPLE` schedules the search would draw (from its own seed, on a copy, so
    the search itself is unchanged) and scale their time to `examples`. Shrinking is left
    out: a few hundred runs per invariant broken with the article's kinds, but with `--faults
    all` each set of cases an invariant breaks with is shrunk once, which can make a search
    many times longer than this (docs/explore.md)."""
    choices = SeededChoices(random.Random(seed))
    n = min(SAMPLE, examples)
    started = time.perf_counter()
    for _ in range(n):
        simulate(switches, draw_schedule(choices, bounds))
    seconds = max(time.perf_counter() - started, 1e-6)
    rate = n / seconds if n else 0.0
    return Estimate(examples / rate if n else 0.0, n, rate)


def explore(
    switches: Switches,
    *,
    seed: int,
    examples: int,
    bounds: ExploreBounds = ExploreBounds(),
    out: Path | None = None,
    progress: ExploreProgress | None = None,
    progress_every: int = 1000,
) -> Exploration:
    """Draw `examples` schedules from `seed`, run each under `switches` and check it.

    The first schedule that breaks each invariant is shrunk and, with `out`, written there as
    a replayable scenario at once, so a Ctrl-C (which ends the search cleanly) keeps every
    counterexample found so far.
    """
    if examples < 0:
        raise SimError(f"--examples: {examples} must be at least 0")
    rng = random.Random(seed)
    choices = SeededChoices(rng)
    coverage = Coverage()
    findings: dict[str, Finding] = {}
    tried: set[tuple[str, tuple[int, ...]]] = set()  # (invariant, cases) already shrunk once
    started = time.perf_counter()
    interrupted = False
    runs = 0
    try:
        while runs < examples:
            schedule = draw_schedule(choices, bounds)
            trace, result = simulate(switches, schedule)
            runs += 1
            coverage.add(trace, result)
            _record_findings(findings, switches, seed, examples, bounds, runs, trace, result, out, tried)
            if progress is not None and runs % progress_every == 0:
                progress(runs, examples, time.perf_counter() - started, len(findings))
    except _Interrupted as stop:
        findings.setdefault(stop.finding.key, stop.finding)
        interrupted = True
    except KeyboardInterrupt:
        interrupted = True
    return Exploration(
        switches=switches,
        seed=seed,
        examples=examples,
        bounds=bounds,
        runs=runs,
        seconds=time.perf_counter() - started,
        interrupted=interrupted,
        coverage=coverage,
        findings=tuple(findings[k] for k in sorted(findings)),
    )


def _record_findings(
    findings: dict[str, Finding], switches: Switches, seed: int, examples: int, bounds: ExploreBounds,
    index: int, trace: Trace, result: Outcome, out: Path | None, tried: set[tuple[str, tuple[int, ...]]],
) -> None:  # fmt: skip
    """Shrink and keep the first schedule that breaks each invariant (per set of cases beyond
    the article's model). A schedule that breaks an invariant with the same cases as one
    already shrunk is not shrunk again: its shrink would most often end at a key already
    found (2,439 of 2,452 shrinks did, 76,906 runs, at 3,000 schedules of `--faults all`). A
    Ctrl-C during a shrink keeps the other invariants this schedule broke too, unshrunk, and
    goes on up."""
    cases = _beyond_cases(trace)
    for name in result.broken:
        if _known(findings, name, cases) or (name, cases) in tried:
            continue
        tried.add((name, cases))
        try:
            found = _finding(switches, seed, examples, bounds, name, index, trace, out, known=findings)
            if found is not None:
                findings[found.key] = found
        except _Interrupted as stop:
            findings[stop.finding.key] = stop.finding
            for other in result.broken:
                if not _known(findings, other, cases):
                    unshrunk = _finding(switches, seed, examples, bounds, other, index, trace, out, shrink_it=False,
                                        known=findings)  # fmt: skip
                    if unshrunk is not None:
                        findings[unshrunk.key] = unshrunk
            raise


def _known(findings: dict[str, Finding], invariant: str, cases: tuple[int, ...]) -> bool:
    """Whether a schedule that breaks `invariant` with faults of `cases` could add nothing:
    every one of its cases (or, with none, the invariant itself) has a finding already."""
    if not cases:
        return invariant in findings
    return all(finding_key(invariant, (c,)) in findings for c in cases)


def beyond_cases(faults: Sequence[Fault]) -> tuple[int, ...]:
    """The cases of docs/outside.md that these faults' kinds (beyond the article's model)
    run; () for the article's kinds only."""
    return tuple(sorted({c for f in faults if not type(f).article and (c := type(f).case)}))


def _beyond_cases(trace: Trace) -> tuple[int, ...]:
    """`beyond_cases` of the faults that took effect in this run."""
    return beyond_cases(fired_only(trace).faults)


def finding_key(invariant: str, cases: tuple[int, ...]) -> str:
    """What `sim explore` keeps one counterexample per: each invariant, and with `--faults
    all` each invariant per set of cases beyond the article that broke it (so one run can
    show, say, faithful-digest from a mutated snapshot and from a wrong summary), read from the
    shrunk schedule. For the article's kinds it is the invariant's name, as it always was."""
    return invariant if not cases else f"{invariant}--case-{'-'.join(map(str, cases))}"


class _Interrupted(Exception):
    def __init__(self, finding: Finding) -> None:
        self.finding = finding


def _finding(
    switches: Switches, seed: int, examples: int, bounds: ExploreBounds, invariant: str, index: int,
    trace: Trace, out: Path | None, shrink_it: bool = True, known: dict[str, Finding] | None = None,
) -> Finding | None:  # fmt: skip
    """The schedule shrunk, replayed and written; None when what it shrinks to is already
    `known` (the same invariant from the same cases beyond the article)."""
    original = fired_only(trace)
    if shrink_it:
        shrunk = shrink(switches, original, invariant, bounds)
    else:  # after a Ctrl-C: written as found
        shrunk = Shrunk(schedule=original, runs=0, interrupted=False)
    beyond = beyond_cases(shrunk.schedule.faults)
    key = finding_key(invariant, beyond)
    if known is not None and key in known:
        return None
    _, result = simulate(switches, shrunk.schedule)
    tick = dict(result.violations)[invariant]
    path = None if out is None else out / counterexample_name(key, switches, seed, bounds)
    finding = Finding(
        invariant=invariant,
        tick=tick,
        found_at=index,
        faults_before=original.fault_count,
        schedule=shrunk.schedule,
        shrink_runs=shrunk.runs,
        path=path,
        expected=not properties.guarded(switches, invariant),
        beyond=beyond,
        key=key,
    )
    if path is not None:
        how = "Ctrl-C stopped the shrink early" if shrunk.interrupted else f"{shrunk.runs} runs"
        description = (
            f"Breaks {invariant} at t{tick}. Found by `sim explore {rerun_args(switches, seed, examples, bounds)}`: "
            f"schedule #{index} broke it with {original.fault_count} fault(s) that took effect; shrunk "
            f"({how}) to {shrunk.schedule.fault_count}: {describe_faults(shrunk.schedule)}. "
            f"The search {properties.judged_words(switches, bounds.kinds, 'drawn', progress=False)}. "
            "Replay: sim trace FILE --check"
        )
        with interrupts_held():  # the file on disk and the finding in `known`: both or neither
            write_counterexample(path, description, switches, shrunk.schedule, bounds.workflow)
            if known is not None:
                known[key] = finding
    if shrunk.interrupted:
        raise _Interrupted(finding)
    return finding
