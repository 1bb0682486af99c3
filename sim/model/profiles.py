"""Engine profiles: what a real engine gives the work by itself, and what it leaves to the
application, as settings of the model (docs/profiles.md).

A profile is data. For one system (and mode) it says, for each of the model's settings that
describe the system rather than what happens to the work (`checkpoints`, `fencing`, `pins`,
`rule`, `key`, and knobs beyond the article), the value the engine gives on its own, why,
and the source of that claim: the technical companion (its section), the engine's
documentation (its address), or a conformance run (`sim conform`). Separately it lists what
the application has to add to get each missing protection, and how.

`--profile NAME` on `sim trace`, `diff`, `sweep`, `explore` and `check` starts from the
engine's settings; an explicit `--set` overrides them. `sim sweep --profile NAME` runs the
event combinations under the engine alone and with each missing protection added.

The claims rest on documentation as read, and on the companion's reading of it (its section
14 summarises it as of October 2026); a profile marked `runnable` can be compared with the
real engine by `sim conform`. None of this measures an engine: it maps documented behaviour
onto the model's switches, and where the mapping is a judgement the `why` says so.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from sim.base.errors import SimError
from sim.base.limits import quote
from sim.model.switches import FAULT_SWITCHES, PROTECTIONS, Switches, parse_value


class ProfileError(SimError, ValueError):
    """An unknown profile name."""


@dataclass(frozen=True, slots=True)
class Claim:
    """One setting of a profile: `name=value`, why, and where that is documented."""

    setting: str
    why: str
    source: str
    #: what of this setting, as the model runs it, is the application's code rather than the
    #: engine's ("" when all of it is the engine's): `sim sweep --profile` does not credit the
    #: engine with an invariant that holds only through it
    application_part: str = ""

    @property
    def name(self) -> str:
        return self.setting.partition("=")[0]

    @property
    def value(self) -> str:
        return self.setting.partition("=")[2]


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    system: str
    #: what the engine gives by itself
    engine: tuple[Claim, ...]
    #: what the application must add for each protection the engine does not give: the
    #: setting that turns it on, how the application does it, and the source
    application: tuple[Claim, ...]
    #: `sim conform` can run the real engine here
    runnable: bool = False
    note: str = ""

    def settings(self) -> dict[str, str]:
        """The engine's settings, as `--set` would give them."""
        return {c.name: c.value for c in self.engine}

    def switches(self, sets: dict[str, str] | None = None, base: Switches | None = None) -> Switches:
        """`base` (the worked example's switches) with the engine's settings, then `sets`."""
        return (base or Switches()).with_values({**self.settings(), **(sets or {})}, source=f"--profile {self.name}")

    def missing(self) -> tuple[Claim, ...]:
        """The protections the application must add, in `PROTECTIONS` order."""
        return tuple(sorted(self.application, key=lambda c: list(PROTECTIONS).index(c.name)))


# -- sources ------------------------------------------------------------------------------------
# Each source names the page that states the claim: an address (and the section, where the page
# has several), the technical companion's section, or a section of this project's docs.
COMPANION = "technical companion"
#: this project's own conformance runs (`sim conform`): the section of docs/conform.md that
#: reports them, and the figures in reports/conformance.json
CONFORM = 'docs/conform.md, "What each engine showed"; reports/conformance.json'
TEMPORAL_CONFORM = 'docs/conform.md, "Temporal" ("A finding: a stopped worker is still handed tasks")'
RESTATE_CONFORM = 'docs/conform.md, "What Restate showed"'
TEMPORAL_IDEMPOTENCY = "https://docs.temporal.io/activities (Activity idempotency)"
TEMPORAL_FAILURES = ("https://docs.temporal.io/encyclopedia/detecting-activity-failures (Start-To-Close Timeout and "
                     "Activity Heartbeat: an attempt past its timeout is timed out and retried)")
TEMPORAL_SLOTS = ("https://docs.temporal.io/develop/worker-performance (Task slots: a Worker runs as many "
                  "concurrent Activity Tasks as it has slots, max_concurrent_activities in the Python SDK)")
TEMPORAL_WORKFLOW = "https://docs.temporal.io/workflows (deterministic workflow code, replay)"
DBOS_DOCS = "https://docs.dbos.dev/python/tutorials/workflow-tutorial (workflows, steps, recovery)"
DBOS_CONCURRENT = ("https://docs.dbos.dev/explanations/concurrent-executions (a conflicting step checkpoint parks "
                   "the execution, which delivers the workflow's recorded outcome)")
LANGGRAPH_DOCS = "https://langchain-ai.github.io/langgraph/concepts/durable_execution/ (durability modes)"
RESTATE_DOCS = "https://docs.restate.dev/concepts/durable_execution (ctx.run journal)"
DURABLE_DOCS = "https://learn.microsoft.com/azure/azure-functions/durable/durable-functions-orchestrations"
STEP_DOCS = "https://docs.aws.amazon.com/step-functions/latest/dg/redrive-executions.html"
STEP_REDRIVE_API = ("https://docs.aws.amazon.com/step-functions/latest/apireference/API_RedriveExecution.html "
                    "(same input, same definition and execution ARN, successful steps not rerun)")
STEP_TOKENS = ("https://docs.aws.amazon.com/step-functions/latest/apireference/API_SendTaskSuccess.html "
               "(Errors: TaskTimedOut, the token expired or its task already closed)")
AIRFLOW_DOCS = "https://airflow.apache.org/docs/apache-airflow/stable/core-concepts/tasks.html"
BAZEL_DOCS = "https://bazel.build/remote/caching"
STRIPE_DOCS = "https://docs.stripe.com/api/idempotent_requests"
AWS_IDEMPOTENCY = "https://aws.amazon.com/builders-library/making-retries-safe-with-idempotent-APIs/"

# -- what every engine here leaves to the application ---------------------------------------------
KEY_APP = Claim(
    "key=per-operation",
    "the receiver enforces idempotency, not the engine: the step must send a key that names the "
    "operation (workflow id + step id), the same on every retry",
    f"{COMPANION} §8; {TEMPORAL_IDEMPOTENCY}",
)
PINS_APP = Claim(
    "pins=on",
    "pass the report's content (or its content hash) into the run, and key each step by the "
    "section it read, instead of a reference read at step time; the acceptance step compares "
    "each part's section hash with the current report",
    f"{COMPANION} §6 and §10",
)
RULE_APP = Claim(
    "rule=current-accepted",
    "an acceptance step the application writes, and dependants that read only the digest "
    "accepted for the current report",
    f"{COMPANION} §10 and §14 (\"decide what accepted means for your output\")",
)
FENCING_APP = Claim(
    "fencing=on",
    "an owner token checked atomically in every store the steps write",
    f"{COMPANION} §7",
)

REFERENCE = Claim("pins=off", "steps read the input by reference, at the time they run", f"{COMPANION} §14")
LATEST = Claim(
    "rule=latest-finished",
    "the engine returns the result of the latest execution; it has no notion of an accepted digest",
    f"{COMPANION} §14",
)
NO_KEY = Claim("key=none", "the engine adds no key to calls its steps make", f"{COMPANION} §8")
PER_STEP = "checkpoints=per-step"


def _profile(name: str, system: str, engine: tuple[Claim, ...], runnable: bool = False, note: str = "",
             adds: tuple[Claim, ...] = ()) -> Profile:  # fmt: skip
    """A profile whose application part is every protection its engine leaves off (`adds`:
    how this system's application adds one, where it differs from the general way)."""
    given = {c.name: c.value for c in engine}
    own = {c.name: c for c in adds}
    app = tuple(
        own.get(claim.name, claim) for claim in (FENCING_APP, PINS_APP, KEY_APP, RULE_APP)
        if given.get(claim.name) != claim.value
    )  # fmt: skip
    return Profile(name, system, engine, app, runnable, note)


def _langgraph(mode: str, checkpoints: str, why: str) -> Profile:
    return _profile(
        f"langgraph-{mode}", f"LangGraph (Functional API, durability={mode!r})",
        (
            Claim(f"checkpoints={checkpoints}", why, LANGGRAPH_DOCS),
            Claim("fencing=off", "a resumed thread does not fence an older execution of it: a stopped "
                  "worker that continues writes its checkpoints too", f"{COMPANION} §14; {CONFORM} (zombie: the "
                  "zombie's write landed)"),
            Claim("zombie=from-memory", "a resumed worker runs on from the state it holds and never "
                  "reads the checkpoints again, so it spends its own model calls", f"{CONFORM} (zombie: "
                  "the stopped worker made its own s4 call, 4 calls against 3)"),
            REFERENCE, NO_KEY, LATEST,
        ),
        runnable=True,
    )  # fmt: skip


PROFILES: tuple[Profile, ...] = (
    _profile(
        "temporal", "Temporal",
        (
            Claim(PER_STEP, "each activity's result is recorded in the workflow's history and replayed",
                  f"{COMPANION} §5; {TEMPORAL_WORKFLOW}"),
            Claim("fencing=on", "the server accepts an activity's completion only from the attempt it "
                  "handed the task to; the result of an attempt it has timed out is refused",
                  f"{TEMPORAL_FAILURES}; {TEMPORAL_CONFORM}"),
            Claim("fencing_scope=attempt", "a worker holds as many activity tasks at once as it has slots, and "
                  "a task handed to it before it was replaced is still run when it continues: its result "
                  "reaches the server, whose completion check refuses it (the fence is at the next write, "
                  "not before the next step; the conformance zombie's late result was refused, and it ran "
                  "the tasks it had been handed: 0 to 3 extra model calls, and replayed workflow tasks)", f"{TEMPORAL_SLOTS}; {TEMPORAL_CONFORM}"),
            REFERENCE, NO_KEY, LATEST,
        ),
        runnable=True,
    ),
    _profile(
        "dbos", "DBOS Transact",
        (
            Claim(PER_STEP, "each step's output is recorded in the system database and not run again "
                  "on recovery", DBOS_DOCS),
            Claim("fencing=on", "the workflow row names its executor and a step write from another one is "
                  "refused (owner equality rather than a token order)", f"{DBOS_CONCURRENT}; {CONFORM} (zombie: "
                  "its s3 write rejected)"),
            Claim("fencing_by=owner", "the check is equality with the executor recorded on the workflow "
                  "row, not an order of tokens (the conformance run's log: \"no longer owned by this "
                  "execution\")", 'docs/conform.md, "What the model does not capture" (the DBOS log line)'),
            Claim("fenced_end=adopts", "a fenced execution does not fail: it waits for the workflow's "
                  "recorded result and returns it (a workflow id's result is the one its owner recorded)",
                  f"{DBOS_CONCURRENT}; {CONFORM} (zombie: it returns the owner's result)"),
            REFERENCE, NO_KEY, LATEST,
        ),
        runnable=True,
    ),
    _langgraph("sync", "per-step", "each task's result is persisted before the next step starts"),
    _langgraph("async", "per-step", "task results are persisted asynchronously while the next step runs; "
               "a crash can lose the last one (a cost, not a correctness matter in the model)"),
    _langgraph("exit", "end-only", "checkpoints are written only when the run exits, so a crash loses "
               "every step of the run"),
    _profile(
        "restate", "Restate",
        (
            Claim(PER_STEP, "ctx.run stores each step's result in the invocation's journal",
                  f"{COMPANION} §5; {RESTATE_DOCS}"),
            Claim("fencing=on", "the server owns the journal and drives one invocation attempt at a time; "
                  "entries from a superseded attempt are not accepted", f"{RESTATE_DOCS}; {RESTATE_CONFORM}"),
            Claim("fencing_scope=step", "each ctx.run result is sent to the server, which decides what the "
                  "invocation does next; once it aborts an attempt the stream is gone, so a superseded "
                  "attempt gets no further step and its result reaches no store (the conformance zombie: "
                  "cut, no write, no extra call)", f"{RESTATE_DOCS}; {RESTATE_CONFORM}"),
            REFERENCE, NO_KEY, LATEST,
        ),
        runnable=True,
    ),
    _profile(
        "durable-functions", "Azure Durable Functions",
        (
            Claim(PER_STEP, "the orchestrator is replayed against its history; a completed activity's "
                  "recorded result is used instead of running it again", f"{COMPANION} §5; {DURABLE_DOCS}"),
            Claim("fencing=on", "a judgement: activity results reach the orchestration only through its "
                  "history, which one orchestrator instance owns at a time, so a superseded result is not "
                  "applied", DURABLE_DOCS),
            REFERENCE, NO_KEY, LATEST,
        ),
        note="documentation only: not runnable here",
    ),
    _profile(
        "step-functions", "AWS Step Functions (redrive)",
        (
            Claim(PER_STEP, "redrive continues a failed execution from the unsuccessful step, keeping "
                  "the results of successful ones (with documented exceptions)",
                  f"{COMPANION} §10; {STEP_DOCS}; {STEP_REDRIVE_API}"),
            Claim("pins=off", "redrive reruns the execution's own input document and keeps the successful "
                  "steps' results by step, not by what they read; the engine hashes no content, so where a "
                  "task reads the report by reference the steps it redoes read the report as it is then, "
                  "beside the kept ones. A new report is a new execution only if the application starts "
                  "one, and then nothing of the old one is reused (the model has no setting for that: "
                  "docs/profiles.md, \"What a profile cannot say yet\")", f"{COMPANION} §10; {STEP_REDRIVE_API}"),
            Claim("fencing=on", "a worker completes a task with the task token Step Functions issued for it; "
                  "the token of a task that timed out or was closed is refused", STEP_TOKENS),
            NO_KEY, LATEST,
        ),
        note="documentation only: not runnable here",
        adds=(Claim(
            "pins=on", "pass the report's content (or its hash) in the execution's input, so that a redrive "
            "reruns that content, and start a new execution for a new version; reusing an unchanged "
            "section's result across executions is the application's own cache keyed by the section's "
            "hash, and comparing an accepted digest's parts with the current report is its acceptance "
            "step: the model's pins=on is all three, none of them the engine's",
            f"{COMPANION} §10 (\"whether a new execution reuses earlier results is an application-level "
            f"choice\"); {STEP_REDRIVE_API}"),),
    ),
    _profile(
        "airflow", "Apache Airflow",
        (
            Claim(PER_STEP, "each task instance's state is recorded; a failed run resumes from the "
                  "failed tasks", AIRFLOW_DOCS),
            Claim("fencing=off", "a task whose heartbeat timed out is marked failed or retried; nothing "
                  "in the task's own writes checks that it still owns the work", f"{COMPANION} §9; {AIRFLOW_DOCS}"),
            REFERENCE, NO_KEY, LATEST,
        ),
        note="documentation only: not runnable here",
    ),
    _profile(
        "bazel", "Bazel remote cache",
        (
            Claim(PER_STEP, "every action's outputs are stored in the cache as it finishes",
                  f"{COMPANION} §6; {BAZEL_DOCS}"),
            Claim("pins=on", "an action is keyed by a hash of its declared inputs, command line and "
                  "environment, so a changed input misses the cache", f"{COMPANION} §6; {BAZEL_DOCS}",
                  application_part="the acceptance check: with pins on the model's assessor also refuses a "
                  "digest whose pin or part hashes are not the current report's; a build cache accepts "
                  "nothing, so that check is the application's"),
            Claim("fencing=off", "the cache accepts any writer's outputs; it relies on actions being "
                  "reproducible", BAZEL_DOCS),
            NO_KEY, LATEST,
        ),
        note="documentation only: a build cache, not a workflow engine; not runnable here",
    ),
    _profile(
        "idempotency-keys", "Stripe and AWS idempotency keys (a receiver)",
        (
            Claim("key=per-operation", "the receiver stores the first request and answer under the "
                  "client's key and answers a repeat with them; the client must send the same key on "
                  "every retry", f"{COMPANION} §8; {STRIPE_DOCS}; {AWS_IDEMPOTENCY}"),
            Claim("fencing=off", "a receiver checks keys, never owner tokens", f"{COMPANION} §8"),
            REFERENCE, LATEST,
            Claim("checkpoints=per-step", "no engine: the caller's own records are whatever it keeps; the "
                  "model's default is kept", f"{COMPANION} §8"),
        ),
        note="documentation only: a receiver's protocol, not an engine; Stripe may forget a key after "
             "24 hours (the knob `retention`, when set, models that)",
    ),
)  # fmt: skip

BY_NAME: dict[str, Profile] = {p.name: p for p in PROFILES}
NAMES: tuple[str, ...] = tuple(BY_NAME)


def get(name: str, source: str = "--profile") -> Profile:
    profile = BY_NAME.get(name)
    if profile is None:
        close = difflib.get_close_matches(name, NAMES, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ProfileError(f"{source}: unknown profile {quote(name)}; {hint}profiles: {', '.join(NAMES)}")
    return profile


def _validate() -> None:
    """Every claim names a real switch or knob value; none sets what happens to the work."""
    for p in PROFILES:
        for claim in (*p.engine, *p.application):
            parse_value(claim.name, claim.value, f"profile {p.name}")
            if claim.name in FAULT_SWITCHES:
                raise ValueError(f"profile {p.name}: {claim.name} is an event, not a property of an engine")
            protection = PROTECTIONS.get(claim.name)
            if claim.application_part and (protection is None or claim.value != protection.value):
                raise ValueError(f"profile {p.name}: {claim.setting} is no protection turned on; "
                                 "only such a claim has an application part")  # fmt: skip


_validate()
