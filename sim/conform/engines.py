"""The engines `sim conform` runs, and the switches that describe each one to the model.

Each engine names its profile (`sim.profiles`: the settings it gives by itself, with a source
for each claim); the prediction is `sim`'s run of a conformance scenario under those settings,
less the post key and the acceptance rule, which the harness's application decides.

Each engine's `uncaptured` names the behaviours the model cannot express (of issue 14's four,
a zombie running on from memory and fencing per step are knobs now, `zombie` and
`fencing_scope`, which the profiles set; a fenced worker adopting the owner's result, retries
inside one attempt, and replay on resume, which this harness found, are not), and which
(fault, figure) rows each one explains.
A row whose observed figure differs from the prediction is reported as "not captured by the
model: <behaviour>" only when its engine lists that (fault, figure) here; any other difference
is a mismatch (exit 1). A listed row whose figures agree is reported as a match.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# -- the behaviours the model does not capture ------------------------------------------------
@dataclass(frozen=True, slots=True)
class Behaviour:
    #: a short name, shown in the verdict column
    name: str
    #: what the engine does that the model cannot express
    text: str


ADOPTS_OWNER = Behaviour(
    "adopts the owner's result",
    "fencing by owner equality, and a fenced worker that adopts the owner's result: it waits for "
    "the owner's recorded outcome and returns it instead of stopping",
)
REPLAY_ON_RESUME = Behaviour(
    "replay on resume",
    "a successor that resumes after acceptance replays the workflow from the engine's record, "
    "restoring every recorded step; the model's reconciling successor goes straight to the post "
    "and restores none",
)


@dataclass(frozen=True, slots=True)
class Engine:
    name: str
    #: what `sim conform` prints as the engine
    title: str
    #: the module whose absence means the engine is not installed
    module: str
    #: the distributions whose versions the report names
    distributions: tuple[str, ...]
    #: the engine's profile (`sim.profiles`): what the engine gives by itself
    profile: str
    #: why each switch has that value
    reasons: tuple[str, ...]
    #: the engine's store in the run folder, and a query counting the step results it has
    #: recorded for the workflow (`?` is the workflow id): the harness's barrier waits on it
    store: str = ""
    recorded: str = ""
    #: (fault, figure) -> the behaviour the model does not capture that explains a difference
    uncaptured: dict[tuple[str, str], Behaviour] = field(default_factory=dict)
    #: the module that runs the engine's server for each fault (sim/conform/server_restate.py
    #: says what it offers), or "" for an engine that runs inside its workers
    server: str = ""

    @property
    def switches(self) -> dict[str, str]:
        """The profile's settings the prediction uses: all but what the harness's application
        decides itself (the post key, per fault scenario; the acceptance rule, by its accept
        step)."""
        from sim.profiles import get

        return {k: v for k, v in get(self.profile).settings().items() if k not in APPLICATION}

    @property
    def install(self) -> str:
        return f"pip install -e '.[{self.name}]'"


#: the settings the harness's application decides (per fault scenario), not the engine
APPLICATION = ("key", "rule")

ENGINES: dict[str, Engine] = {
    "langgraph": Engine(
        name="langgraph",
        title="LangGraph Functional API, SQLite checkpointer, durability sync",
        module="langgraph.func",
        distributions=("langgraph", "langgraph-checkpoint-sqlite"),
        profile="langgraph-sync",
        reasons=(
            "fencing=off: checkpoint writes carry no owner; a second invoke on the same thread "
            "runs beside the first and both write",
            "pins=off: a task's cached result is found by the task's identity in the run, not by "
            "its input's content; the report is read by reference",
            "checkpoints=per-step: each task's result is written as the task returns (from a background "
            "thread of the run; the harness waits for the write before it signals)",
        ),
        # a task's result is written by a background thread of the run (durability "sync"
        # concerns the checkpoint at the end of a step, not each task's write)
        store="langgraph.sqlite",
        recorded="SELECT COUNT(*) FROM writes WHERE thread_id = ? AND channel = '__return__'",
        uncaptured={
            ("lost-answer", "steps restored"): REPLAY_ON_RESUME,
            ("lost-answer-keyless", "steps restored"): REPLAY_ON_RESUME,
        },
    ),
    "dbos": Engine(
        name="dbos",
        title="DBOS Transact, SQLite system database",
        module="dbos",
        distributions=("dbos",),
        profile="dbos",
        reasons=(
            "fencing=on: a recovering executor takes the workflow over, and a step's output "
            "written by an execution that no longer owns it is refused (by owner equality, not "
            "by a token order)",
            "pins=off: a step's recorded output is found by the step's position in the workflow, "
            "not by its input's content; the report is read by reference",
            "checkpoints=per-step: each step's output is recorded as the step returns",
        ),
        store="dbos.sqlite",
        recorded="SELECT COUNT(*) FROM operation_outputs WHERE workflow_uuid = ?",
        uncaptured={
            ("zombie", "zombie's end"): ADOPTS_OWNER,
            ("lost-answer", "steps restored"): REPLAY_ON_RESUME,
            ("lost-answer-keyless", "steps restored"): REPLAY_ON_RESUME,
        },
    ),
    "restate": Engine(
        name="restate",
        title="Restate workflow, ctx.run steps, restate-server (one node, per fault)",
        module="restate",
        distributions=("restate-sdk", "hypercorn"),
        profile="restate",
        reasons=(
            "fencing=on, fencing_scope=step: the server owns the invocation's journal and drives one "
            "attempt at a time; when it aborts an attempt (a worker that went silent past the "
            "inactivity and abort timeouts) the worker's stream is gone, and a ctx.run result it "
            "proposes afterwards is not journaled: it gets no further step",
            "pins=off: a ctx.run result is found by its position in the journal, not by its input's "
            "content; the report is read by reference",
            "checkpoints=per-step: each ctx.run result is journaled by the server before the "
            "workflow goes on",
        ),
        server="sim.conform.server_restate",
        uncaptured={
            ("lost-answer", "steps restored"): REPLAY_ON_RESUME,
            ("lost-answer-keyless", "steps restored"): REPLAY_ON_RESUME,
        },
    ),
}

#: engines issue 14 names that this harness does not run yet (they need servers)
NOT_BUILT = ("temporal",)
