"""duplicate-effect (always): the feed applies at most one post per accepted digest.

Guarded by the per-operation post key: the feed remembers the key `announce/<digest>` and
answers a resend or a second copy with the post it already applied (docs/model.md §2,
"the feed"). Beyond the article's model the key does not hold it when the receiver has no
idempotency (receiver=none) or forgets keys (a finite retention).
"""

from __future__ import annotations

from sim.model.events import Feed, payload
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
    digest = feed["digest"]
    return add(memo, digest), digest in memo


MONITOR = Monitor(frozenset({Kind.FEED}), step)


def why(trace: Trace, index: int) -> str:
    d = payload(trace.events[index], Feed)
    feeds = [(x.tick, payload(x, Feed)) for x in trace.events[:index] if x.kind is Kind.FEED]
    earlier = [(tick, f) for tick, f in feeds if f["answer"] == "applied" and f["digest"] == d["digest"]]
    first = f"; the first was {earlier[0][1]['post']} at t{earlier[0][0]}" if earlier else ""
    key = "with no key" if d["key"] is None else f"under key {d['key']}"
    return f"the feed applied a second post ({d['post']}) for {d['digest']}, sent {key}{first}"


def arose(seen: Seen, e: Event) -> bool:
    """The feed received an operation again after it had applied it once (a resend or a
    second copy, whatever its answer)."""
    feed = payload(e, Feed)
    return seen.applied_before(e.tick, feed["digest"], feed["post"], feed["answer"])


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


PROPERTY = register(Property(
    name="duplicate-effect",
    temporal=ALWAYS,
    description="the feed applied at most one post per accepted digest",
    monitor=MONITOR,
    why=why,
    guard=GUARDS["key"],
    # beyond the article's model (docs/outside.md cases 2 and 3): a receiver that ignores or
    # forgets keys defeats the per-operation key
    unless=(NO_IDEMPOTENCY, KEY_EXPIRY),
    hazard=HAZARD,
))  # fmt: skip
