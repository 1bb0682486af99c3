"""The ten failures the article leaves outside its model (docs/outside.md), as data.

One entry per case, in the article's order: the named scenarios that show it, what breaks,
what protects, and what nothing in the model protects. What `sim` runs it with is read from
the fault kinds and knobs that declare the case (`Fault.case`, `Knob.case`). The explainer page's section "Beyond the article's model" is drawn from
this list (each scenario's swimlane by the same renderer as the sweep's runs), and a test
keeps it in step with the scenarios folder and the README.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Case:
    number: int
    title: str
    #: named scenarios, the failure first
    scenarios: tuple[str, ...]
    breaks: str
    protects: str
    #: what nothing in the model protects ("" when the model's protections cover it)
    unprotected: str = ""


CASES: tuple[Case, ...] = (
    Case(
        1, "A worker paused inside the effect",
        ("paused-inside-effect", "paused-inside-effect-keyed"),
        "duplicate-effect with a per-attempt key or none, with fencing on or off: the feed "
        "checks keys, never tokens, so the late send lands",
        "the per-operation key (the feed answers the late send with the first post)",
    ),
    Case(
        2, "A receiver with no idempotency",
        ("receiver-none", "receiver-none-compensated"),
        "duplicate-effect even with a per-operation key: the receiver neither deduplicates nor "
        "can be asked whether the post landed",
        "compensation only: a successor's correction retracts the earlier copy, so the post is "
        "applied twice but corrected (uncorrected-duplicate holds)",
        "the duplicate itself: a correction amends, it does not prevent",
    ),
    Case(
        3, "Key expiry and late arrivals",
        ("key-expired", "key-retained"),
        "duplicate-effect with all four protections on, when a resend arrives after the feed "
        "forgot its key",
        "a retention longer than any outage (the feed answers the resend with the first post)",
    ),
    Case(
        4, "Clocks outside their assumed bound",
        ("false-suspicion", "false-suspicion-unfenced"),
        "with fencing on nothing breaks but model calls are wasted; with fencing off the "
        "suspected owner's stale writes land (stale-write)",
        "fencing (it turns a false suspicion into wasted work)",
        "the false suspicion itself",
    ),
    Case(
        5, "Undeclared or mutable inputs",
        ("undeclared-read", "snapshot-mutated", "undeclared-read-keyed"),
        "faithful-digest with all four protections on: a step restored by its key although a "
        "section it also read has changed (reads=next-section), or a step computed from bytes "
        "that changed under their hash",
        "for the undeclared read, declaring it in the key (reads=next-section-keyed)",
        "keys that name every byte a step reads, and snapshots that cannot change after hashing",
    ),
    Case(
        6, "A fallible assessor",
        ("wrong-summary", "wrong-summary-figures"),
        "faithful-digest with all four protections on: a summary wrong in content and right in "
        "form is accepted, and the newsletter quotes a wrong figure",
        "an assessor that checks the figures (assessor=figures), which also strikes the wrong "
        "step's journal record so that the rebuild computes it again",
        "a judgement that is itself wrong: an acceptance records what was checked",
    ),
    Case(
        7, "Journal and effect are never one transaction",
        ("main", "duplicate-effect"),
        "a poster can die before its intent, after it, or after its send; after the send "
        "the answer is lost, and a resend without a recognisable key posts twice",
        "the successor's reconcile and the per-operation key",
        "the gap itself: no write of a post is atomic with the feed",
    ),
    Case(
        8, "Orchestration code that changes under running work",
        ("code-changed-mixed", "code-changed-strict", "code-changed-keyed"),
        "with the defaults a successor of new code restores steps of the old code: a silently "
        "mixed digest (faithful-digest); with replay=strict the successor stops with a "
        "non-determinism error and the run never finishes",
        "the code version in the journal key (journal_code=yes): the steps are redone, at the "
        "cost of model calls",
        "an attempt already running when the code changes finishes under the old code: nothing "
        "compares a digest's code with the code in force at its acceptance",
    ),
    Case(
        9, "The controller itself restarting",
        ("controller-restart-no-epoch", "controller-restart-old-timers", "controller-restart",
         "controller-restart-no-intents"),
        "with a token counter that restarts, a reissued token lets a stale write through fencing "
        "(stale-write); with old suspicion timers a live owner is suspected at once and its work "
        "wasted; losing unconfirmed intents changes nothing more here",
        "the article's requirement (controller_state=durable): durable records and epoch, timers "
        "rebuilt; the outage then costs only time",
        "the outage's delay: nothing is assessed, suspected or admitted while it is down",
    ),
    Case(
        10, "Losing the journal",
        ("acceptances-lost", "journal-lost"),
        "losing the acceptances: two-acceptances and a second post with all four "
        "protections on; losing the journal: redone model calls only",
        "nothing for the acceptances; the journal's loss costs work, not correctness",
        "durable records: a lost record is not detected",
    ),
)

BY_NUMBER: dict[int, Case] = {case.number: case for case in CASES}


def runs_with(number: int) -> tuple[str, ...]:
    """The fault kinds (their schedule keys) and knobs (their names) that run case `number`."""
    from sim.model.faults import KINDS
    from sim.model.knobs import KNOBS

    return tuple(k.key for k in KINDS if k.case == number) + tuple(n for n, k in KNOBS.items() if k.case == number)
