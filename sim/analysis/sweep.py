"""The 864-run sweep: every combination of the eight switches, the protections each run
needed, and the aggregates the article talks about.

Runs are numbered 1..864 in the order of `sim.model.switches.COMBINATIONS` (the product of the
switches in `sim.model.switches.SWITCHES` order, first value first), so run 1 is the worked example with
every protection on and a run keeps its id as long as the switch set does not change.

Definitions (docs/sweep.md explains them in words):

- Event combination: the switches that say what happens to the work, `(silent, change,
  post_death)`, 2 x 3 x 2 = 12. Checkpoints are a cost lever, reported as cost.
- Protections: fencing, version pins, the per-operation key and the strict newsletter rule
  (`sim.model.switches.PROTECTIONS`). A protection is on at its "on" value; key and rule have two
  weaker values each, and each is tried separately.
- `needed`, per run: for each protection that is on, the runs that weaken it alone (all
  other switches equal) and the invariants they break that this run does not; the
  protection is needed when any does. For each invariant the run breaks, the protections
  that, switched on alone, give a run that does not break it.
- Minimal protection sets, per event combination x checkpoint mode: a set S of protections
  is sufficient when every run of that cell with all of S on (the others at any value)
  breaks no invariant; the minimal sufficient sets are reported.
- Gate comparison: the 144 runs with pins off and the strict rule are run again with
  `gate=fail-closed`.

Results never depend on the number of worker processes: every run is a pure function of
its switches, the work is split into chunks in run order and reassembled in that order.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from sim.base.memory import collector_paused
from sim.engine.run import run as run_engine
from sim.properties.outcome import Outcome, outcome, what_happened
from sim.properties import ARTICLE_NAMES as NAMES
from sim.properties import ARTICLE_SAFETY as SAFETY
from sim.model.schedule import worked_example
from sim.model.switches import (
    COMBINATIONS,
    FAULT_SWITCHES,
    PROTECTIONS,
    SWEPT,
    SWITCHES,
    WEAKENINGS,
    Checkpoints,
    Gate,
    Pins,
    Rule,
    Switches,
)
from sim.engine.trace import Trace

if TYPE_CHECKING:  # a workflow's module only when a sweep runs one
    from sim.model.workflow import Workflow

#: the number of runs of the sweep (2 x 2 x 2 x 3 x 2 x 3 x 2 x 3).
RUNS = len(COMBINATIONS)

#: the gate comparison's subset: versions off and the strict rule, where the gate decides
#: what the rule admits (`sim.properties.misused_dependant` explains it).
GATE_SUBSET = {"pins": Pins.OFF.value, "rule": Rule.CURRENT_ACCEPTED.value}

#: the twelve event combinations, in sweep order: (silent, change, post_death) values.
EVENT_COMBINATIONS: tuple[tuple[str, ...], ...] = tuple(
    itertools.product(*[[m.value for m in SWITCHES[name]] for name in FAULT_SWITCHES])
)

CHECKPOINT_MODES: tuple[str, ...] = tuple(m.value for m in Checkpoints)

# mixed-radix place value of each swept switch, and each member's position in its Enum
_POSITION: dict[Enum, int] = {m: i for name in SWEPT for i, m in enumerate(SWITCHES[name])}
_PLACE: dict[str, int] = {}
_place = 1
for _name in reversed(SWEPT):
    _PLACE[_name] = _place
    _place *= len(SWITCHES[_name])
del _place, _name


def run_id(switches: Switches) -> int:
    """The run id (1-based) of these switches in the sweep order; the gate is ignored."""
    return 1 + sum(_POSITION[getattr(switches, name)] * _PLACE[name] for name in SWEPT)


def neighbour(rid: int, switches: Switches, name: str, value: Enum) -> int:
    """The id of the run that differs from run `rid` (with these switches) only in `name`."""
    return rid + (_POSITION[value] - _POSITION[getattr(switches, name)]) * _PLACE[name]


def event_combination(switches: Switches) -> tuple[str, ...]:
    return tuple(getattr(switches, name).value for name in FAULT_SWITCHES)


# -- the runs ------------------------------------------------------------------------------
#: what the caller keeps of each fail-open run besides its outcome, computed from the run's
#: trace in the process that simulated it (the trace is dropped there): `sim sweep` keeps the
#: swimlane (`sim.render.grid.shared`) for the explainer page. It is called as
#: `view(trace, what)` with `what = sim.properties.outcome.what_happened(trace)`, computed once per run, so
#: that a view can share its work between runs in which the same things happened. A
#: module-level function, so that worker processes can receive it.
View = Callable[[Trace, Hashable], Any]


@dataclass(frozen=True, slots=True)
class Run:
    """One run of the sweep: its id (the fail-open twin's id for a fail-closed rerun),
    its switches and its outcome; with a `view`, also what the view made of its trace."""

    id: int
    switches: Switches
    outcome: Outcome
    view: Any = None

    @property
    def broken(self) -> tuple[str, ...]:
        return self.outcome.broken


Task = tuple[int, str]  # (run id, gate value)


Result = tuple[Outcome, Any]


def _simulate_tasks(
    tasks: Sequence[Task], view: View | None = None, outcomes: dict[Hashable, Outcome] | None = None,
    workflow: Workflow | None = None,
) -> list[Result]:
    """Run a chunk of tasks (in a worker process or in this one). With `view`, each
    fail-open run also yields the view of its trace (which is then dropped).

    The outcome is computed once per distinct `what_happened` value and shared by the runs that
    have it; `outcomes` holds those already computed (a fresh dict when None), so that
    chunks run in one process share them."""
    known: dict[Hashable, Outcome] = {} if outcomes is None else outcomes
    out: list[Result] = []
    if workflow is not None:  # its assessor's settings, effects and dependants, the same in every run
        from sim.model.workflow import workflow_switches
    for rid, gate in tasks:
        switches = COMBINATIONS[rid - 1]
        if gate != switches.gate.value:
            switches = dataclasses.replace(switches, gate=Gate(gate))
        if workflow is not None:
            switches = workflow_switches(workflow, base=switches)
        trace = run_engine(switches, worked_example(switches, workflow))
        what = what_happened(trace)
        result = known.get(what)
        if result is None:
            result = known[what] = outcome(trace)
        seen = view(trace, what) if view is not None and gate == Gate.FAIL_OPEN.value else None
        out.append((result, seen))
    return out


#: runs per chunk in one process (a progress step); with N processes, 4 chunks per process
IN_PROCESS_CHUNK = 48


def _chunks(tasks: list[Task], size: int) -> list[list[Task]]:
    return [tasks[i : i + size] for i in range(0, len(tasks), size)]


def gate_subset_ids() -> tuple[int, ...]:
    """The ids of the 144 runs with pins off and the strict newsletter rule."""
    return tuple(
        i + 1
        for i, s in enumerate(COMBINATIONS)
        if all(getattr(s, name).value == value for name, value in GATE_SUBSET.items())
    )


SweepProgress = Callable[[int, int], None]  # (runs done, runs in all)


def simulate_all(
    workers: int = 1, progress: SweepProgress | None = None, view: View | None = None,
    workflow: Workflow | None = None,
) -> tuple[list[Run], list[Run]]:
    """The 864 runs (gate fail-open) and the 144 fail-closed reruns, each in run order.
    With `view`, every fail-open run carries the view of its trace (see `View`)."""
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    tasks: list[Task] = [(i, Gate.FAIL_OPEN.value) for i in range(1, RUNS + 1)]
    tasks += [(i, Gate.FAIL_CLOSED.value) for i in gate_subset_ids()]
    # a few chunks per worker keep every process busy; in-process chunks feed the progress bar
    size = IN_PROCESS_CHUNK if workers == 1 else -(-len(tasks) // (4 * workers))
    chunks = _chunks(tasks, size)
    outcomes: list[Result] = []
    done = 0
    # in this process every chunk reads and fills one table of outcomes; a worker's chunk
    # arrives with an empty one of its own (the partial is pickled with each chunk)
    simulate_chunk = functools.partial(_simulate_tasks, view=view, outcomes={}, workflow=workflow)

    def collect(results: Iterable[list[Result]]) -> None:
        nonlocal done
        for chunk in results:
            outcomes.extend(chunk)
            done += len(chunk)
            if progress is not None:
                progress(done, len(tasks))

    if workers == 1:
        with collector_paused():
            collect(simulate_chunk(chunk) for chunk in chunks)
    else:
        from sim.analysis.workers import pool as worker_pool  # the process pool only when it is used

        with worker_pool(workers) as pool:
            collect(pool.map(simulate_chunk, chunks))
    runs: list[Run] = []
    closed: list[Run] = []
    for (rid, gate), (result, seen) in zip(tasks, outcomes):
        switches = COMBINATIONS[rid - 1]
        if gate == Gate.FAIL_OPEN.value:
            runs.append(Run(rid, switches, result, seen))
        else:
            closed.append(Run(rid, dataclasses.replace(switches, gate=Gate(gate)), result))
    return runs, closed


# -- needed --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Weakened:
    """The run that weakens one protection of a run to `value`, and what it breaks more."""

    value: str
    run: int
    breaks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Need:
    protection: str
    weakened: tuple[Weakened, ...]

    @property
    def needed(self) -> bool:
        return any(w.breaks for w in self.weakened)


@dataclass(frozen=True, slots=True)
class Prevention:
    """A broken invariant and the single protections (with the run that has it on) that
    would have prevented it."""

    invariant: str
    by: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class Needed:
    protections: tuple[Need, ...]
    prevented_by: tuple[Prevention, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The protections this run needed."""
        return tuple(n.protection for n in self.protections if n.needed)

    def to_json(self) -> dict[str, Any]:
        return {
            "protections": {
                n.protection: {
                    "needed": n.needed,
                    "weakened": [
                        {"value": w.value, "run": w.run, "breaks": list(w.breaks)} for w in n.weakened
                    ],
                }
                for n in self.protections
            },
            "prevented_by": {
                p.invariant: [{"protection": name, "run": rid} for name, rid in p.by]
                for p in self.prevented_by
            },
        }


def needed(run: Run, runs: Sequence[Run]) -> Needed:
    """What this run's protections were needed for, and what would have prevented each
    invariant it breaks (`runs` is the whole sweep, in run order)."""
    switches = run.switches
    broken = run.broken
    needs = []
    preventions = []
    for name, on in PROTECTIONS.items():
        if getattr(switches, name) is not on:
            continue
        weakened = []
        for value in SWITCHES[name]:
            if value is on:
                continue
            other = runs[neighbour(run.id, switches, name, value) - 1]
            more = tuple(inv for inv in other.broken if inv not in broken)
            weakened.append(Weakened(value.value, other.id, more))
        needs.append(Need(name, tuple(weakened)))
    for inv in broken:
        by = []
        for name, on in PROTECTIONS.items():
            if getattr(switches, name) is on:
                continue
            other = runs[neighbour(run.id, switches, name, on) - 1]
            if inv not in other.broken:
                by.append((name, other.id))
        preventions.append(Prevention(inv, tuple(by)))
    return Needed(tuple(needs), tuple(preventions))


# -- aggregates ----------------------------------------------------------------------------
def _all_on(switches: Switches) -> bool:
    return all(getattr(switches, name) is on for name, on in PROTECTIONS.items())


def _calls(runs: Sequence[Run]) -> dict[str, Any]:
    calls = [r.outcome.model_calls for r in runs]
    return {
        "min": min(calls),
        "max": max(calls),
        "mean": round(sum(calls) / len(calls), 2),
    }


def _per_invariant(runs: Sequence[Run]) -> dict[str, int]:
    return {name: sum(1 for r in runs if name in r.broken) for name in NAMES}


def all_on_summary(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """All four protections on, per checkpoint mode: runs, broken, finished, model calls."""
    out = []
    for mode in CHECKPOINT_MODES:
        cell = [r for r in runs if _all_on(r.switches) and r.switches.checkpoints.value == mode]
        out.append({
            "checkpoints": mode,
            "runs": len(cell),
            "broken": sum(1 for r in cell if r.broken),
            "finished": sum(1 for r in cell if r.outcome.finished),
            "model_calls": _calls(cell),
            "example": cell[0].id,
        })  # fmt: skip
    return out


def weakening_summary(runs: Sequence[Run], mode: str) -> list[dict[str, Any]]:
    """Exactly one protection weakened, over the 12 event combinations, with `mode`
    checkpoints: runs broken per invariant, unfinished runs, extra model calls against
    the all-on run of the same event combination. The first row is all-on itself."""
    base = [
        r for r in runs if _all_on(r.switches) and r.switches.checkpoints.value == mode
    ]
    rows = []
    for name, value in (("all-on", ""),) + WEAKENINGS:
        cell = []
        extra = []
        for b in base:
            other = b if name == "all-on" else runs[run_id(b.switches.with_values({name: value})) - 1]
            cell.append(other)
            extra.append(other.outcome.model_calls - b.outcome.model_calls)
        breaking = [r for r in cell if r.broken]
        rows.append({
            "weakened": "none" if name == "all-on" else f"{name}={value}",
            "runs": len(cell),
            "broken": len(breaking),
            "invariants": _per_invariant(cell),
            "unfinished": sum(1 for r in cell if not r.outcome.finished),
            "extra_model_calls": {"total": sum(extra), "min": min(extra), "max": max(extra)},
            "example": breaking[0].id if breaking else None,
        })  # fmt: skip
    return rows


def _subsets() -> list[tuple[str, ...]]:
    names = tuple(PROTECTIONS)
    return [s for size in range(len(names) + 1) for s in itertools.combinations(names, size)]


def minimal_sets(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """For each event combination x checkpoint mode, the minimal sufficient protection sets."""
    cells: dict[tuple[tuple[str, ...], str], list[Run]] = {}
    for r in runs:
        cells.setdefault((event_combination(r.switches), r.switches.checkpoints.value), []).append(r)
    out = []
    for events in EVENT_COMBINATIONS:
        for mode in CHECKPOINT_MODES:
            cell = cells[(events, mode)]
            minimal: list[tuple[str, ...]] = []
            for subset in _subsets():  # by size, so a superset of a minimal set comes later
                if any(set(m) <= set(subset) for m in minimal):
                    continue
                guarded = [
                    r for r in cell if all(getattr(r.switches, p) is PROTECTIONS[p] for p in subset)
                ]
                if all(not r.broken for r in guarded):
                    minimal.append(subset)
            out.append({
                **dict(zip(FAULT_SWITCHES, events)),
                "checkpoints": mode,
                "runs": len(cell),
                "broken": sum(1 for r in cell if r.broken),
                "minimal_sets": [list(m) for m in minimal],
            })  # fmt: skip
    return out


def gate_summary(runs: Sequence[Run], closed: Sequence[Run]) -> dict[str, Any]:
    """The fail-open / fail-closed comparison over the pins-off, strict-rule subset."""
    opened = [runs[r.id - 1] for r in closed]

    def counts(subset: Sequence[Run]) -> dict[str, Any]:
        wrong_digest = [r.id for r in subset if "misused-dependant" in r.broken]
        never = [r.id for r in subset if r.outcome.newsletter.start_tick is None]
        wrong_accept = [r.id for r in subset if "wrong-acceptance" in r.broken]
        return {
            "runs": len(subset),
            "misused_dependant": len(wrong_digest),
            "never_admitted": len(never),
            "wrong_acceptance": len(wrong_accept),
            "finished": sum(1 for r in subset if r.outcome.finished),
            "broken": sum(1 for r in subset if r.broken),
            "ids": {
                "misused_dependant": wrong_digest,
                "never_admitted": never,
                "wrong_acceptance": wrong_accept,
            },
        }

    return {
        "subset": dict(GATE_SUBSET),
        "fail-open": counts(opened),
        "fail-closed": counts(closed),
    }


def totals(runs: Sequence[Run], needs: Sequence[Needed]) -> dict[str, Any]:
    """Per invariant over all runs, plus how often each protection was on and needed."""
    return {
        "runs": len(runs),
        "broken": sum(1 for r in runs if r.broken),
        "finished": sum(1 for r in runs if r.outcome.finished),
        "horizon_reached": sum(1 for r in runs if r.outcome.horizon_reached),
        "invariants": {
            name: {
                "runs": sum(1 for r in runs if name in r.broken),
                "first": next((r.id for r in runs if name in r.broken), None),
            }
            for name in NAMES
        },
        "protections": {
            name: {
                "on": sum(1 for r in runs if getattr(r.switches, name) is on),
                "needed": sum(1 for n in needs if name in n.names),
            }
            for name, on in PROTECTIONS.items()
        },
    }


# -- the sweep -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Sweep:
    runs: tuple[Run, ...]
    needs: tuple[Needed, ...]
    closed: tuple[Run, ...]  # the fail-closed reruns, by their fail-open twin's id
    summary: dict[str, Any]

    @property
    def views(self) -> tuple[Any, ...] | None:
        """Each run's view, in run order, when the sweep was run with a `view`."""
        if any(r.view is None for r in self.runs):
            return None
        return tuple(r.view for r in self.runs)

    def run_json(self, index: int) -> dict[str, Any]:
        run = self.runs[index]
        return {
            "id": run.id,
            "switches": run.switches.as_dict(),
            "outcome": run.outcome.to_json(),
            "needed": self.needs[index].to_json(),
        }

    def document(self) -> dict[str, Any]:
        """The JSON document of reports/sweep.json and `sim sweep --json`."""
        return {"runs": [self.run_json(i) for i in range(len(self.runs))], "summary": self.summary}


def summarize(runs: Sequence[Run], closed: Sequence[Run], needs: Sequence[Needed]) -> dict[str, Any]:
    return {
        "order": list(SWEPT),
        "events": list(FAULT_SWITCHES),
        "protections": {name: on.value for name, on in PROTECTIONS.items()},
        "invariants": {p.name: p.description for p in SAFETY},
        "all_on": all_on_summary(runs),
        "weakened": {mode: weakening_summary(runs, mode) for mode in CHECKPOINT_MODES},
        "minimal_sets": minimal_sets(runs),
        "gate": gate_summary(runs, closed),
        "totals": totals(runs, needs),
    }


def sweep(workers: int = 1, progress: SweepProgress | None = None, view: View | None = None,
          workflow: Workflow | None = None) -> Sweep:  # fmt: skip
    """Run all 864 combinations (and the 144 fail-closed reruns) and aggregate them.
    With `view`, each run also carries the view of its trace (see `View`). With `workflow`,
    the runs are the workflow's worked example (`sim.model.workflow`), its receiver's and
    assessor's knobs set in every run."""
    if workflow is not None and workflow.is_article:
        workflow = None  # the article's pipeline: the built-in runs, as `sim sweep` makes them
    runs, closed = simulate_all(workers, progress, view, workflow)
    needs = [needed(r, runs) for r in runs]
    summary = summarize(runs, closed, needs)
    if workflow is not None:  # the reports then say whose runs they are, and how to replay them
        summary["workflow"] = workflow.name  # its reports' folder: reports/workflows/NAME/
        summary["workflow_reference"] = workflow.reference  # how a command loads it again
    return Sweep(tuple(runs), tuple(needs), tuple(closed), summary)


__all__ = [
    "EVENT_COMBINATIONS",
    "RUNS",
    "Needed",
    "Run",
    "Sweep",
    "View",
    "event_combination",
    "gate_subset_ids",
    "needed",
    "run_id",
    "simulate_all",
    "sweep",
]
