"""duplicate-effect (always): the feed applies at most one post per accepted digest; in a
workflow's run, each effect's receiver at most one per digest (each effect judged apart).

Guarded by the per-operation post key: the feed remembers the key `announce/<digest>` and
answers a resend or a second copy with the post it already applied (docs/model.md §2,
"the feed"). Beyond the article's model the key does not hold it when the receiver has no
idempotency (receiver=none) or forgets keys (a finite retention).
"""

from __future__ import annotations

from sim.model.events import Feed, operation, payload
from sim.properties.base import (
    ALWAYS,
    GUARDS,
    Hazard,
    Memo,
    Monitor,
    Property,
    Failure,
    Seen,
    add,
    register,
)
from sim.model.switches import Switches
from sim.engine.trace import Event, Kind, Trace


def step(memo: Memo, e: Event, content: tuple[int, ...], position: int) -> tuple[Memo, bool]:
    """A post the feed applied for a digest it had applied a post for already breaks it
    (the memo: the digests the feed applied a post for, sorted)."""
    feed = payload(e, Feed)
    if feed["answer"] != "applied":
        return memo, False
    done = operation(feed)
    return add(memo, done), done in memo


MONITOR = Monitor(frozenset({Kind.FEED}), step)


def why(trace: Trace, index: int) -> str:
    d = payload(trace.events[index], Feed)
    feeds = [(x.tick, payload(x, Feed)) for x in trace.events[:index] if x.kind is Kind.FEED]
    earlier = [(tick, f) for tick, f in feeds if f["answer"] == "applied" and operation(f) == operation(d)]
    first = f"; the first was {earlier[0][1]['post']} at t{earlier[0][0]}" if earlier else ""
    key = "with no key" if d["key"] is None else f"under key {d['key']}"
    who = "the feed" if "effect" not in d else f"{d['effect']}'s receiver"
    return f"{who} applied a second post ({d['post']}) for {d['digest']}, sent {key}{first}"


def arose(seen: Seen, e: Event) -> bool:
    """The feed received an operation again after it had applied it once (a resend or a
    second copy, whatever its answer)."""
    feed = payload(e, Feed)
    return seen.applied_before(e.tick, feed["digest"], feed["post"], feed["answer"], feed.get("effect"))


#: what puts it at risk (uncorrected-duplicate shares it)
HAZARD = Hazard("the feed received an operation again after applying it once", arose, frozenset({Kind.FEED}))


# -- beyond the article's model (docs/outside.md, cases 2 and 3) -----------------------------
def no_idempotency(switches: Switches) -> bool:
    return switches.knob("receiver") == "none"


def key_expiry(switches: Switches) -> bool:
    return switches.knob("retention") != "forever"


#: a receiver with no idempotency ignores the key (case 2)
NO_IDEMPOTENCY = Failure(
    settings=(),
    when=no_idempotency,
    reason="the receiver does not deduplicate (receiver=none)",
    caveat="the receiver has no idempotency: it ignores the key and applies every request",
    remedies=("receiver=idempotent",),
)

#: a feed that forgets keys answers a late resend as a new request (case 3)
KEY_EXPIRY = Failure(
    settings=(),
    when=key_expiry,
    reason="the feed forgets keys (a finite retention)",
    caveat="the feed forgets a key after its retention, and a later resend is a new request",
    remedies=("retention=forever",),
)


def workflow_receiver(switches: Switches) -> bool:
    return any(r.kind != "dedup" for r in switches.effects)


def workflow_retention(switches: Switches) -> bool:
    return any(r.retention is not None for r in switches.effects)


#: a workflow's effect whose receiver has no keys, or reads back, ignores the key (docs/workflows.md)
WORKFLOW_RECEIVER = Failure(
    settings=(),
    when=workflow_receiver,
    reason="a receiver of the workflow does not deduplicate (no-key or read-back)",
    caveat="an effect of the workflow goes to a receiver that ignores keys and applies every request",
    remedies=(),
)

#: a workflow's dedup receiver that forgets keys answers a late resend as new
WORKFLOW_RETENTION = Failure(
    settings=(),
    when=workflow_retention,
    reason="a receiver of the workflow forgets keys (a finite retention)",
    caveat="an effect of the workflow goes to a receiver that forgets a key after its retention",
    remedies=(),
)


PROPERTY: Property = register(Property(
    name="duplicate-effect",
    temporal=ALWAYS,
    description="the feed applied at most one post per accepted digest",
    monitor=MONITOR,
    why=why,
    guard=GUARDS["key"],
    # beyond the article's model (docs/outside.md cases 2 and 3): a receiver that ignores or
    # forgets keys defeats the per-operation key
    unless=(NO_IDEMPOTENCY, KEY_EXPIRY, WORKFLOW_RECEIVER, WORKFLOW_RETENTION),
    hazard=HAZARD,
))  # fmt: skip
