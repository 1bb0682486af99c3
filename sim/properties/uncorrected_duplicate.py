"""uncorrected-duplicate (always; beyond the article's model, docs/outside.md case 2): no
digest ever has more than one post up at the feed, that is applied and not retracted.

It tells "applied twice" (duplicate-effect, which still breaks) from "applied twice and
corrected": with compensate=yes a successor's resend supersedes the earlier copy, and the
feed retracts that copy in the same transaction as it applies the correction (the
`retracted` events come just before the correcting post's `feed` event), so at no event,
and so at the end of no tick, are two copies up.

Judged only where the feed is not the article's (a knob of the feed set: receiver,
compensate, retention): with the article's feed, duplicate-effect already says everything
there is to say, and the article's runs and scenarios stay as they were.

Guarded by the per-operation key, which keeps a second copy from being applied at all, but
not when the receiver ignores keys or forgets them: then only compensation corrects a
successor's resend, and nothing corrects a copy sent by anyone else (a late send of a
paused poster, a request delivered twice).
"""

from __future__ import annotations

from sim.model.events import Feed, Retracted, operation, payload
from sim.properties.base import (
    ALWAYS,
    GUARDS,
    Memo,
    Monitor,
    Property,
    register,
)
from sim.model.knobs import KNOBS
from sim.properties.duplicate_effect import HAZARD, KEY_EXPIRY, NO_IDEMPOTENCY, WORKFLOW_RECEIVER, WORKFLOW_RETENTION
from sim.model.switches import Switches
from sim.engine.trace import Event, Kind, Trace

#: the knobs that make the feed other than the article's
FEED_KNOBS = ("receiver", "compensate", "retention")


def not_the_article_feed(switches: Switches) -> bool:
    """Whether any of the feed's knobs is set away from the article's feed, or a workflow's
    receiver is not one (a dedup receiver that keeps keys for ever and sends no correction):
    where it is judged."""
    if any(r.kind != "dedup" or r.retention is not None or r.correction for r in switches.effects):
        return True
    return any(switches.knob(name) != KNOBS[name].default for name in FEED_KNOBS)


def step(memo: Memo, e: Event, content: tuple[int, ...], position: int) -> tuple[Memo, bool]:
    """The memo: (digest, posts of it up) pairs, sorted, for digests with a post up. A post
    applied while one of its digest is up breaks it; a retraction takes one down."""
    if e.kind is Kind.FEED:
        feed = payload(e, Feed)
        if feed["answer"] != "applied":
            return memo, False
        digest = operation(feed)
    else:
        digest = operation(payload(e, Retracted))
    up = next((n for known, n in memo if known == digest), 0)
    rest = tuple(pair for pair in memo if pair[0] != digest)
    up += 1 if e.kind is Kind.FEED else -1
    after = rest if up <= 0 else tuple(sorted((*rest, (digest, up))))
    return after, e.kind is Kind.FEED and up > 1


MONITOR = Monitor(frozenset({Kind.FEED, Kind.RETRACTED}), step)


def why(trace: Trace, index: int) -> str:
    d = payload(trace.events[index], Feed)
    gone = {payload(x, Retracted)["post"] for x in trace.events[:index] if x.kind is Kind.RETRACTED}
    feeds = [payload(x, Feed) for x in trace.events[:index] if x.kind is Kind.FEED]
    up = [
        str(f["post"]) for f in feeds
        if f["answer"] == "applied" and operation(f) == operation(d) and f["post"] not in gone
    ]  # fmt: skip
    return f"the feed now shows {d['post']} and {', '.join(up)} for {d['digest']}, and nothing retracted the extra copy"


PROPERTY = register(Property(
    name="uncorrected-duplicate",
    temporal=ALWAYS,
    description="the feed never showed two posts (applied, not retracted) for one digest",
    monitor=MONITOR,
    why=why,
    guard=GUARDS["key"],
    unless=(NO_IDEMPOTENCY, KEY_EXPIRY, WORKFLOW_RECEIVER, WORKFLOW_RETENTION),
    hazard=HAZARD,
    article=False,
    applies=not_the_article_feed,
))  # fmt: skip
