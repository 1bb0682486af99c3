"""A workflow: the shape of a pipeline, as a user declares it (docs/workflows.md).

A workflow names its **inputs** (each a versioned input made of named parts: a report's
sections, a repository's files, a list of sources), its **steps** (units of work, each reading
parts and/or other steps' outputs, one model call each unless it says otherwise), the
**artifact** the steps assemble (with its assessor: one acceptance per input version), the
**effects** sent after the acceptance (each with its receiver's behaviour) and the
**dependants** that read the accepted artifact. The article's pipeline is
`workflows/digest.toml`.

Every key a workflow file may hold is declared once, in `TABLES` (its type, what is allowed,
its words): the loader checks a file against it (`sim.workflow`), and the JSON Schema that
editors read is built from it (`json_schema`). Rules across keys (a read of an undeclared
part, a cycle in the steps, an effect ordered before the acceptance) are `check`'s.

What follows from a shape is derived here, by rules written in docs/workflows.md:
`reads_through` (what the journal keys a step by, through the steps it reads), `order` (the
steps in an order that respects their reads), and `example_faults` (the worked example's
faults for this workflow: which step the first attempt falls silent at, which part changes and
when, where the poster dies), so that the eight switches mean the same for every workflow.
`engine_shape` says how this version's engine runs the workflow, or why it cannot yet.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from sim.base.errors import SimError
from sim.model.switches import Reader, Receiver, Switches

#: a name: a letter, then letters, digits, '-' or '_' (at most 40 characters)
NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}\Z")

#: the bounds of a workflow (docs/limits.md)
MAX_INPUTS = 4
MAX_PARTS = 26
MAX_STEPS = 32
MAX_EFFECTS = 4
MAX_DEPENDANTS = 4
MAX_CALLS = 8
#: a dependant's ready tick at most: well inside the engine's horizon (t200), so that the
#: dependant starts, and the worked example's change after it lands, in every run
MAX_READY = 150


class WorkflowError(SimError, ValueError):
    """A workflow file that cannot be used: one line naming the file, the key and what is allowed."""


# -- the declaration ---------------------------------------------------------------------
@dataclass(frozen=True)
class Key:
    """One key of a workflow table."""

    name: str
    #: "text", "name", "names" (a list of names), "reads" (a list of part or step references),
    #: "integer", "boolean" or "choice"
    kind: str
    words: str
    required: bool = False
    choices: tuple[str, ...] = ()
    #: for "integer": (least, most); for "names" and "reads": (fewest, most) entries
    bounds: tuple[int, int] | None = None
    default: Any = None


@dataclass(frozen=True)
class Table:
    """A table of the file: the top level (name ""), a table, or an array of tables."""

    name: str
    words: str
    keys: tuple[Key, ...]
    array: bool = False
    #: for an array of tables: (fewest, most) entries
    count: tuple[int, int] = (1, 1)


RECEIVERS = ("dedup", "no-key", "read-back")
ASSESSORS = ("form", "figures")
RULES = ("current-accepted", "any-accepted", "latest-finished")
GATES = ("fail-open", "fail-closed")

TABLES: tuple[Table, ...] = (
    Table("", "A workflow: a pipeline's inputs, steps, artifact, effects and dependants (docs/workflows.md).", (
        Key("name", "name", "The workflow's name (the file's stem for a shipped one).", required=True),
        Key("description", "text", "What the pipeline does, in a sentence or two.", required=True),
    )),
    Table("inputs", "A named, versioned input made of named parts; a change touches parts.", (
        Key("name", "name", "The input's name; its parts are read as NAME.PART.", required=True),
        Key("parts", "names", "The input's parts, in order (a report's sections, a repository's files).",
            required=True, bounds=(1, MAX_PARTS)),
    ), array=True, count=(1, MAX_INPUTS)),
    Table("steps", "A unit of work: it reads parts and/or other steps' outputs.", (
        Key("name", "name", "The step's name.", required=True),
        Key("reads", "reads", "What the step reads: parts (INPUT.PART) and steps (STEP), at least one.",
            required=True, bounds=(1, MAX_STEPS + MAX_PARTS)),
        Key("calls", "integer", "Model calls the step makes (1 unless it says otherwise; 0 for a step that "
            "only computes).", bounds=(0, MAX_CALLS), default=1),
    ), array=True, count=(1, MAX_STEPS)),
    Table("artifact", "What the steps assemble; the assessor judges it, one acceptance per input version.", (
        Key("name", "name", "The artifact's name (the digest, the candidate revision, the brief).", required=True),
        Key("assembles", "names", "The steps whose outputs the artifact is built from.", required=True,
            bounds=(1, MAX_STEPS)),
        Key("figure", "reads", "The part (INPUT.PART) whose figure the artifact carries and the dependants "
            "quote: the part the worked example changes.", required=True, bounds=(1, 1)),
        Key("assessor", "choice", "What the assessor checks: form (completeness, pins, token, hashes) or "
            "figures (also every figure against its part).", choices=ASSESSORS, default="form"),
    )),
    Table("effects", "An external effect, sent in order after the acceptance.", (
        Key("name", "name", "The effect's name (announce, open a pull request, email).", required=True),
        Key("receiver", "choice", "The receiver: dedup (deduplicates by key), no-key (every request is new, "
            "and it cannot be asked) or read-back (answers 'did you apply this?').", required=True,
            choices=RECEIVERS),
        Key("retention", "integer", "For a dedup receiver: ticks it remembers a key (absent: for ever).",
            bounds=(1, 1000)),
        Key("correction", "boolean", "Whether a successor that inherits an unconfirmed send sends a correction "
            "that retracts earlier copies.", default=False),
        Key("after", "name", "What the effect follows: 'acceptance' (the default) or an earlier effect.",
            default="acceptance"),
    ), array=True, count=(1, MAX_EFFECTS)),
    Table("dependants", "A consumer of the accepted artifact.", (
        Key("name", "name", "The dependant's name (the newsletter, deploy, the weekly digest).", required=True),
        Key("ready", "integer", "The tick from which it may start.", required=True, bounds=(0, MAX_READY)),
        Key("rule", "choice", "Which artifact it takes; absent: the switch `rule` decides (the sweep varies it).",
            choices=RULES),
        Key("gate", "choice", "What it does when the controller cannot answer; absent: the switch `gate`.",
            choices=GATES),
    ), array=True, count=(0, MAX_DEPENDANTS)),
)

TABLE = {t.name: t for t in TABLES}


# -- the shape ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Input:
    name: str
    parts: tuple[str, ...]


@dataclass(frozen=True)
class Step:
    name: str
    reads: tuple[str, ...]
    calls: int = 1


@dataclass(frozen=True)
class Artifact:
    name: str
    assembles: tuple[str, ...]
    figure: str
    assessor: str = "form"


@dataclass(frozen=True)
class Effect:
    name: str
    receiver: str
    retention: int | None = None
    correction: bool = False
    after: str = "acceptance"


@dataclass(frozen=True)
class Dependant:
    name: str
    ready: int
    rule: str | None = None
    gate: str | None = None


@dataclass(frozen=True)
class Workflow:
    name: str
    description: str
    inputs: tuple[Input, ...]
    steps: tuple[Step, ...]
    artifact: Artifact
    effects: tuple[Effect, ...]
    dependants: tuple[Dependant, ...]
    source: str = "<built-in>"
    #: loaded by name from the shipped workflows (workflows/NAME.toml), not from a path
    shipped: bool = False

    @property
    def reference(self) -> str:
        """How a command names this workflow to load it again: a shipped one by its name, any
        other by its path as the user gave it."""
        return self.name if self.shipped else self.source

    @property
    def written_reference(self) -> str:
        """How a file written elsewhere (a counterexample) names this workflow: a shipped one by
        its name, any other by its absolute path."""
        from pathlib import Path

        return self.name if self.shipped else str(Path(self.source).resolve())

    @property
    def is_article(self) -> bool:
        """The shipped article's pipeline (workflows/digest.toml), which the commands run as
        the built-in worked example."""
        return self.shipped and self.name == "digest"

    @property
    def parts(self) -> tuple[str, ...]:
        """Every part, as INPUT.PART, in declaration order."""
        return tuple(f"{i.name}.{p}" for i in self.inputs for p in i.parts)

    @property
    def step(self) -> dict[str, Step]:
        return {s.name: s for s in self.steps}


# -- rules across keys -------------------------------------------------------------------
def check(wf: Workflow) -> None:
    """The rules no single key states: names unique, every read declared, no cycle, the artifact
    built from declared steps, every step used, effects after the acceptance."""
    where = wf.source
    seen: dict[str, str] = {}
    for kind, names in (("input", [i.name for i in wf.inputs]), ("step", [s.name for s in wf.steps]),
                        ("effect", [e.name for e in wf.effects]), ("dependant", [d.name for d in wf.dependants])):  # fmt: skip
        for n in names:
            if n in seen:
                raise WorkflowError(f"{where}: {kind}s: the name {n!r} is already a {seen[n]}'s; names are unique")
            seen[n] = kind
    for i in wf.inputs:
        if len(set(i.parts)) != len(i.parts):
            raise WorkflowError(f"{where}: inputs.{i.name}.parts: a part is named twice")
    parts, steps = set(wf.parts), wf.step
    for s in wf.steps:
        for r in s.reads:
            if r not in parts and r not in steps:
                allowed = ", ".join([*wf.parts, *(x for x in steps if x != s.name)])
                raise WorkflowError(f"{where}: steps.{s.name}.reads: {r!r} is neither a declared part nor a step; "
                                    f"allowed: {allowed}")  # fmt: skip
    cycle = _cycle(wf)
    if cycle:
        raise WorkflowError(f"{where}: steps: the reads make a cycle ({' -> '.join(cycle)}); steps read only "
                            "steps that do not read them back")  # fmt: skip
    _check_artifact(wf)
    _check_effects(wf)


def _check_artifact(wf: Workflow) -> None:
    where, a = wf.source, wf.artifact
    for n in a.assembles:
        if n not in wf.step:
            raise WorkflowError(f"{where}: artifact.assembles: {n!r} is not a step; steps: {', '.join(wf.step)}")
    if a.figure not in wf.parts:
        raise WorkflowError(f"{where}: artifact.figure: {a.figure!r} is not a part; parts: {', '.join(wf.parts)}")
    used = set(a.assembles) | {r for s in wf.steps for r in s.reads}
    for s in wf.steps:
        if s.name not in used:
            raise WorkflowError(f"{where}: steps.{s.name}: neither the artifact nor another step reads it; "
                                "list it in artifact.assembles or in a step's reads")  # fmt: skip
    if not any(a.figure in reads_through(wf, n) for n in a.assembles):
        raise WorkflowError(f"{where}: artifact.figure: no step the artifact assembles reads {a.figure!r}")


def _check_effects(wf: Workflow) -> None:
    where = wf.source
    earlier: list[str] = []
    for e in wf.effects:
        if e.name == "acceptance":  # `after = "acceptance"` names the acceptance, never an effect
            raise WorkflowError(f"{where}: effects.acceptance: the name 'acceptance' is the artifact's acceptance, "
                                "which `after` names; give the effect another name")  # fmt: skip
        if e.after in wf.step or e.after in {i.name for i in wf.inputs}:
            raise WorkflowError(f"{where}: effects.{e.name}.after: {e.after!r} comes before the acceptance; an "
                                "effect is sent only after the artifact is accepted (allowed: 'acceptance' or an "
                                "earlier effect)")  # fmt: skip
        if e.after != "acceptance" and e.after not in earlier:
            allowed = ", ".join(["acceptance", *earlier])
            raise WorkflowError(f"{where}: effects.{e.name}.after: {e.after!r} is not an earlier effect; allowed: {allowed}")
        if e.retention is not None and e.receiver != "dedup":
            raise WorkflowError(f"{where}: effects.{e.name}.retention: only a dedup receiver remembers keys "
                                f"(this one is {e.receiver})")  # fmt: skip
        earlier.append(e.name)


def _cycle(wf: Workflow) -> list[str]:
    """A cycle in the steps' reads, as the names along it (empty if none)."""
    steps = wf.step
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(n: str) -> list[str]:
        state[n] = 1
        path.append(n)
        for r in steps[n].reads:
            if r in steps and state.get(r) == 1:
                return path[path.index(r):] + [r]
            if r in steps and r not in state:
                found = visit(r)
                if found:
                    return found
        path.pop()
        state[n] = 2
        return []

    for name in steps:
        if name not in state:
            found = visit(name)
            if found:
                return found
    return []


# -- what follows from the shape ----------------------------------------------------------
def reads_through(wf: Workflow, step: str) -> tuple[str, ...]:
    """The parts a step depends on, through the steps it reads (in declaration order): what
    the journal keys the step by with pins on, so that a change of any of them is a new key."""
    steps, found, seen = wf.step, set(), {step}
    todo = [step]
    while todo:  # each step visited once: a step read along many paths costs no more
        for r in steps[todo.pop()].reads:
            if r not in steps:
                found.add(r)
            elif r not in seen:
                seen.add(r)
                todo.append(r)
    return tuple(p for p in wf.parts if p in found)


def order(wf: Workflow) -> tuple[str, ...]:
    """The steps in the order an attempt runs them: each after every step it reads, ties in
    declaration order."""
    steps, done = wf.step, list[str]()
    while len(done) < len(steps):
        done.append(next(s.name for s in wf.steps if s.name not in done
                         and all(r in done or r not in steps for r in s.reads)))  # fmt: skip
    return tuple(done)


@dataclass(frozen=True)
class ExampleFaults:
    """The worked example's faults for a workflow (docs/workflows.md, "What runs today" and the
    rule above it), in the engine's ticks: attempt #1 computes one step a tick from t1."""

    silent_step: str  # the step attempt #1 falls silent at
    silent_tick: int
    wake_tick: int  # if paused
    changed: str  # the part the change touches (INPUT.PART)
    change_ticks: tuple[int, int]  # (during, after)
    poster_effect: str  # the effect whose poster dies after its send


#: ticks from attempt #1's silence to its wake when paused: two missed heartbeats, the
#: successor's admission, and its first steps (the article's t3 -> t8)
WAKE_AFTER = 5


@functools.lru_cache(maxsize=16)  # a sweep asks it once per run of the same workflow
def example_faults(wf: Workflow) -> ExampleFaults:
    """The article's faults, placed by rule: the first attempt falls silent at the step that
    follows, in `order`, the first step reading the artifact's figure part (so it has already
    summarised the part that changes); the change touches that part one tick later (during) or
    at the first dependant's ready tick (after, t12 in the article); the first effect's poster
    dies after its send."""
    steps = order(wf)
    figure = wf.artifact.figure
    first = next(n for n in steps if figure in reads_through(wf, n))
    at = min(steps.index(first) + 1, len(steps) - 1)
    silent_tick = at + 1
    # after: at the dependant's ready tick, and never before the change during the silence
    after = max(wf.dependants[0].ready if wf.dependants else silent_tick + 2 * len(steps), silent_tick + 2)
    return ExampleFaults(steps[at], silent_tick, silent_tick + WAKE_AFTER, figure, (silent_tick + 1, after),
                         wf.effects[0].name)  # fmt: skip


@dataclass(frozen=True)
class EngineShape:
    """How this version's engine runs a workflow: its steps, in `order`, are the engine's
    steps s1..sN; a part's change reaches every step that reads it (through the steps it
    reads), so a step's content revision, its journal key with pins on and the candidate's
    "built from" change exactly when one of its parts does; its effects, in order, each with
    its receiver, and its dependants are the run's (`Schedule.effects`, `Schedule.dependants`);
    the knob `assessor` says the assessor's behaviour."""

    steps: tuple[str, ...]  # the workflow's steps, in the engine's order (s1 first)
    calls: tuple[int, ...]  # each engine step's model calls; () when every step makes one
    changed: tuple[int, ...]  # the engine's steps (1-based) the worked example's change reaches
    newsletter_ready: int
    knobs: dict[str, str]
    effects: tuple[Receiver, ...] = ()
    dependants: tuple[Reader, ...] = ()
    #: the steps each part's change reaches, where some step has no part of its own (`change_atoms`)
    change_atoms: tuple[tuple[int, ...], ...] = ()

    @property
    def sections(self) -> int:
        return len(self.steps)

    @property
    def figure(self) -> int:
        """The engine's step (1-based) whose result carries the figure: the first the change reaches."""
        return self.changed[0]


@functools.lru_cache(maxsize=16)  # a sweep asks it once per run of the same workflow (its knobs are read, never changed)
def engine_shape(wf: Workflow) -> EngineShape | str:
    """The engine's parameters for this workflow, or (a string) why this version's engine cannot
    run it: it runs any inputs and effects and dependants within the bounds, and 2 to 26 steps
    (each of any model calls)."""
    if not 2 <= len(wf.steps) <= MAX_PARTS:
        return f"it has {len(wf.steps)} steps (this version runs 2 to {MAX_PARTS})"
    steps = order(wf)
    reaching = [n + 1 for n, name in enumerate(steps) if wf.artifact.figure in reads_through(wf, name)]
    calls = tuple(wf.step[n].calls for n in steps)
    effects = tuple(Receiver(e.name, e.receiver, e.retention, e.correction) for e in wf.effects)
    dependants = tuple(Reader(d.name, d.ready, d.rule, d.gate) for d in wf.dependants)
    ready = wf.dependants[0].ready if wf.dependants else example_faults(wf).change_ticks[1]
    return EngineShape(steps, calls if any(c != 1 for c in calls) else (), tuple(reaching), ready,
                       {"assessor": wf.artifact.assessor}, effects, dependants, change_atoms(wf, steps))  # fmt: skip


def change_atoms(wf: Workflow, steps: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
    """For each of the inputs' parts, the engine steps (1-based) its change reaches: those that
    read it, directly or through the steps they read. A change of several parts reaches the
    union of theirs, so these are what any report change on the workflow is made of. () when
    each step alone is one of them (every set of steps is then some change, as in the
    article: a change may name any)."""
    atoms = {tuple(n + 1 for n, name in enumerate(steps) if part in reads_through(wf, name)) for part in wf.parts}
    atoms.discard(())
    if all((n,) in atoms for n in range(1, len(steps) + 1)):
        return ()
    return tuple(sorted(atoms, key=lambda atom: (len(atom), atom)))


def on_workflow(switches: Switches, wf: Workflow | None) -> Switches:
    """The switches with the workflow's effects (each with its receiver) and dependants, which
    the engine and the properties read (unchanged for no workflow, or one the engine cannot run)."""
    if wf is None:
        return switches
    shape = engine_shape(wf)
    if isinstance(shape, str):
        return switches
    from dataclasses import replace

    return replace(switches, effects=shape.effects, dependants=shape.dependants)


def workflow_switches(wf: Workflow, sets: dict[str, str] | None = None, base: Switches | None = None) -> Switches:
    """The switches a run of the workflow uses: `base` (the worked example's) with the
    workflow's own knobs (`knobs_of`), then `sets` (`--set`) over them, and its effects and
    dependants (`on_workflow`)."""
    return on_workflow((base or Switches()).with_values({**knobs_of(wf), **(sets or {})}), wf)


def set_pairs(switches: Switches, wf: Workflow | None) -> list[str]:
    """`name=value` for each switch and knob of `switches` away from what a run of `wf` (or of
    the article, for None) has without `--set`: the switches against the worked example's, the
    knobs against the workflow's own. A knob the workflow sets, set back to the article's
    default (`--set assessor=form` on a workflow that declares `figures`), is one: left out, a
    replay would run the workflow's own value."""
    own = knobs_of(wf)
    pairs = [pair for pair in switches.label().split() if pair.partition("=")[::2] not in own.items()]
    pairs += [f"{name}={switches.knob(name)}" for name, value in own.items()
              if switches.knob(name) != value and f"{name}={switches.knob(name)}" not in pairs]  # fmt: skip
    return pairs


def knobs_of(wf: Workflow | None) -> dict[str, str]:
    """The knobs that say a workflow's receiver and assessor to the engine (none for the
    article's built-in shape, or for a workflow the engine cannot run)."""
    if wf is None:
        return {}
    shape = engine_shape(wf)
    return {} if isinstance(shape, str) else dict(shape.knobs)
