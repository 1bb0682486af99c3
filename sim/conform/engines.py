"""The engines `sim conform` runs, and the switches that describe each one to the model.

`SWITCHES` is a stand-in: a later "profile" (issue 14: data naming the switch and knob
settings an engine provides by itself, with a source for each claim) will replace it. Until
then each engine's settings are the `--set` values under which `sim`'s run of a conformance
scenario is the prediction for that engine.

`UNCAPTURED` names the behaviours the model cannot express today (issue 14 lists the first
four; the fifth was found by this harness), and which (fault, figure) rows each one explains.
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


RUNS_ON_FROM_MEMORY = Behaviour(
    "zombie runs on from memory",
    "with no fencing, a zombie never re-reads the journal: it makes its own model calls for the "
    "steps its successor already recorded and overwrites them (sim's woken attempt restores them)",
)
ADOPTS_OWNER = Behaviour(
    "adopts the owner's result",
    "fencing by owner equality, and a fenced worker that adopts the owner's result: it waits for "
    "the owner's recorded outcome and returns it instead of stopping",
)
PER_STEP_FENCING = Behaviour(
    "fencing per step", "fencing per step, not per attempt: the server decides the next step"
)
RETRIES_IN_ATTEMPT = Behaviour(
    "retries inside one attempt", "the engine's retry policy redoes a step within one attempt"
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
    #: the `--set` values that describe the engine to the model (to be replaced by a profile)
    switches: dict[str, str]
    #: why each switch has that value
    reasons: tuple[str, ...]
    #: the engine's store in the run folder, and a query counting the step results it has
    #: recorded for the workflow (`?` is the workflow id): the harness's barrier waits on it
    store: str = ""
    recorded: str = ""
    #: (fault, figure) -> the behaviour the model does not capture that explains a difference
    uncaptured: dict[tuple[str, str], Behaviour] = field(default_factory=dict)

    @property
    def install(self) -> str:
        return f"pip install -e '.[{self.name}]'"


ENGINES: dict[str, Engine] = {
    "langgraph": Engine(
        name="langgraph",
        title="LangGraph Functional API, SQLite checkpointer, durability sync",
        module="langgraph.func",
        distributions=("langgraph", "langgraph-checkpoint-sqlite"),
        switches={"fencing": "off", "pins": "off", "checkpoints": "per-step"},
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
            ("zombie", "model calls"): RUNS_ON_FROM_MEMORY,
            ("zombie", "model calls by execution"): RUNS_ON_FROM_MEMORY,
            ("zombie", "steps restored"): RUNS_ON_FROM_MEMORY,
            ("lost-answer", "steps restored"): REPLAY_ON_RESUME,
            ("lost-answer-keyless", "steps restored"): REPLAY_ON_RESUME,
        },
    ),
    "dbos": Engine(
        name="dbos",
        title="DBOS Transact, SQLite system database",
        module="dbos",
        distributions=("dbos",),
        switches={"fencing": "on", "pins": "off", "checkpoints": "per-step"},
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
}

#: engines issue 14 names that this harness does not run yet (they need servers)
NOT_BUILT = ("temporal", "restate")
