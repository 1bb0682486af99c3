"""The figures of one conformance run, observed on an engine or predicted by `sim`, in one shape.

Both sides of a comparison are an `Observed`: the harness reads one from the engine's run
(sim/conform/harness.py `read_figures`) and makes one from `sim`'s run of the fault's scenario
(`from_model`); an engine behaviour the model does not capture is a predicate over the pair
(sim/conform/engines.py `Behaviour`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Context:
    """What the schedule is, as a behaviour's predicate reads it (the same on both sides)."""

    #: the stopped worker, as an index into `calls_by_execution` (w1 is 0), or None
    stopped: int | None = None
    #: the workers killed or stopped in the post, after the acceptance (w1 is 1): each one's
    #: successor resumes a workflow whose steps are all recorded
    after_acceptance: tuple[int, ...] = ()
    #: the workers killed in a step before the post, as indexes into `calls_by_execution`
    killed: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Observed:
    #: the model calls of each execution, w1 first (the model's attempt #n is execution wn)
    calls_by_execution: tuple[int, ...]
    #: section results a workflow body obtained that another execution computed
    restored: int
    #: the zombie's held step's write: "landed", "rejected" or "none" (it reached no store);
    #: None where the fault has no zombie (the row is not shown)
    zombie_write: str | None
    #: the zombie's end: "stops", "runs on to its own result" or "returns the owner's result";
    #: None where the fault has no zombie
    zombie_end: str | None
    #: (execution, the revenue figure its digest quotes), in order
    acceptances: tuple[tuple[str, str], ...]
    posts: int
    newsletter: str | None
    #: the steps the engine had recorded when w1 reached its barrier, and how many came
    #: before it; None where the engine's record is not read at the barrier (a server that
    #: records a step before it hands out the next)
    recorded_at_barrier: int | None = None
    #: the engine's own history of the run, mapped onto sim's writes (sim/conform/history.py):
    #: (step, the executions whose result was recorded, in order) per step; None where the
    #: engine's history is not read
    history: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    #: the first barrier a worker ended before reaching (a fault not injected), or None
    unreached: str | None = None
    #: `restored` by execution (not a figure of its own: the behaviours' predicates read it)
    restored_by_execution: tuple[int, ...] = ()
    #: `sim`'s invariant monitors' verdicts on the run (sim/conform/invariants.py): (property,
    #: verdict) for each property judged there; None where not judged
    invariants: tuple[tuple[str, str], ...] | None = None
    #: the posts the stopped worker sent (not a figure of its own: a behaviour's predicate reads
    #: it); None where no worker is stopped
    zombie_sends: int | None = None
    #: the schedule's facts (not a figure)
    context: Context = Context()
