"""The records of docs/model.md §2 and the feed receiver of the article's section 8.

The protected stores (journal, candidate store, effect records) share one token check,
`Records.guard`: with fencing on it compares the writer's token with the one authoritative
epoch, atomically with the write, and rejects an older token. With fencing off it checks
nothing. Either way the write is logged with the token and the epoch it met, so the
invariants can see a stale write that landed.
"""

from __future__ import annotations

from typing import Annotated, NamedTuple

from sim.engine import primitives
from sim.engine.keep import KEPT, NESTED, AsContent, Dropped, Form, While, declared
# defined there to be compiled with the rules (docs/compiled.md), and read here as before
from sim.engine.primitives import JournalKey as JournalKey, effect_key as effect_key, extended_key as extended_key
from sim.engine.primitives import journal_key as journal_key, result_id as result_id, wrong as wrong

#: a result id (`s2@3`) or a writer: only ever logged, never compared (restores match by
#: key, acceptance by content), so the canonical form drops it (`sim.engine.keep`); the one
#: exception, a wrong result, is `STRUCK_BY_ID`
NAME_ONLY = Dropped("a result id or a writer: only ever logged, never compared (restores match by key, "
                    "acceptance by content)")  # fmt: skip


class Truth(NamedTuple):
    """What one computed step really read and ran under: ground truth the model's records do
    not hold (beyond the article's model, docs/outside.md cases 5, 6 and 8). The article's
    model always has `PLAIN`: the bytes its key names, nothing else, a correct call, code 1."""

    changed: bool = False  # the bytes of its own section were not the bytes its hash names
    #: undeclared (or declared, with reads=next-section-keyed) sections it read besides its
    #: own: (section 0-based, content revision, its bytes changed under the hash)
    also: tuple[tuple[int, int, bool], ...] = ()
    wrong: bool = False  # the model call returned a summary wrong in content
    code: int = 0  # the code version (0-based) it was computed under


PLAIN = Truth()


#: a result id is compared in one rule only: `assessor=figures` strikes the journal record that
#: holds the very result it found wrong in a refused digest (`rules.strike`), and only wrong
#: results are compared there; so the id is kept while the record is wrong, dropped otherwise
#: (always, in the article's model, whose summaries are all right)
STRUCK_BY_ID = While("compared by `rules.strike` while the result is wrong: the journal record holding the very "
                     "result a refused digest had is struck", wrong, KEPT)


@declared
class JournalRecord(NamedTuple):
    result: Annotated[str, STRUCK_BY_ID]
    content: Annotated[int, KEPT]  # the section content revision the result was computed from
    attempt: Annotated[int, NAME_ONLY]
    #: beyond the article's model (the same in every record of the article's): what it really read and ran under
    truth: Annotated[Truth, KEPT] = PLAIN


@declared
class Part(NamedTuple):
    result: Annotated[str, STRUCK_BY_ID]
    content: Annotated[int, KEPT]
    truth: Annotated[Truth, KEPT] = PLAIN


def has_called(n: int, results: tuple[Part | None, ...]) -> bool:
    """Whether attempt #n, holding `results`, has called the model (computed one itself)."""
    return any(p is not None and p.result == result_id(i, n) for i, p in enumerate(results))


@declared
class Candidate(NamedTuple):
    digest: Annotated[str, KEPT]
    attempt: Annotated[int, KEPT]
    token: Annotated[int, KEPT]
    parts: Annotated[tuple[Part, ...], NESTED]
    pin: Annotated[int | None, AsContent("the pinned content")]  # 0-based version index, None with pins off
    tick: Annotated[int, Dropped("a candidate not yet assessed was written in an earlier tick, and is assessed "
                                 "in this one (`rules.assess`: tick < t)")]  # fmt: skip

    @property
    def built_from(self) -> tuple[int, ...]:
        """The content revision of each section its parts were computed from (`primitives.built_from`)."""
        return primitives.built_from(self)


@declared
class Acceptance(NamedTuple):
    digest: Annotated[str, KEPT]  # the accepted candidate, by its digest id
    version: Annotated[int | None, AsContent("the accepted content")]  # 0-based; None with pins off
    tick: Annotated[int, Dropped("never read")]


@declared
class Feed(NamedTuple):
    """The external feed, as a value: keyed, serialized receive. It checks idempotency keys only.

    Each `receive` is one transaction, serialized per key: lookup, parameter check, apply and
    remember run as one unit, so two concurrent copies of one request are two calls in
    sequence and the second finds the first one's record.

    Beyond the article's model (docs/outside.md, cases 2 and 3) the feed may forget a key
    after a retention, may not deduplicate at all, and retracts the earlier copies of a post
    when it applies a correction that supersedes them.
    """

    #: (key, request params, post id, tick it remembered the key)
    remembered: Annotated[tuple[tuple[str, str, str, int], ...], Form(
        "the tick the feed remembered a key is read only by the retention rule (`knows`): with the article's feed "
        "(retention forever) never, so it is dropped; with a finite retention N only the key's age counts, and an "
        "age of N or more is as good as N (the key is forgotten from then on)", "remembered")] = ()
    posts: Annotated[tuple[tuple[str, str], ...], KEPT] = ()  # (post id, request params) applied, in order
    retracted: Annotated[tuple[str, ...], KEPT] = ()  # post ids a correction retracted, in order
    #: ticks its receiver remembers a key (None: for ever), the same for the whole run
    retention: Annotated[int | None, Dropped("the receiver's, the same for the whole run (read by `canon.remembered`)")] = None


class Receipt(NamedTuple):
    """What one `receive` did: the feed after it, its answer (applied, repeat or rejected), the
    post applied or repeated, the (post, tick) a forgotten key had answered with (None: the key
    was not forgotten), and the posts a correction retracted."""

    feed: Feed
    answer: str
    post: str | None
    forgotten: tuple[str, int] | None = None
    retracted: tuple[str, ...] = ()


def effect_of_key(key: str, names: tuple[str, ...]) -> tuple[str, int]:
    """The digest and the effect (0-based, by its name among `names`) an effect record key
    names: the inverse of `effect_key`."""
    digest, _, name = key.partition("/")
    return digest, names.index(name) if name else 0


def knows(remembered_at: int, tick: int, retention: int | None) -> bool:
    """Whether a key remembered at `remembered_at` is still known at `tick`: always with
    retention None (forever), else while tick - remembered_at < retention (docs/outside.md,
    case 3: the record is dropped at the start of tick remembered_at + retention)."""
    return retention is None or tick - remembered_at < retention


def receive(feed: Feed, key: str | None, params: str, tick: int = 0, retention: int | None = None,
            idempotent: bool = True, supersedes: bool = False) -> Receipt:  # fmt: skip
    """Receive one request at `tick`. The article's feed (retention None, idempotent) answers a
    known key with its stored post (repeat), or rejects different params under it; anything
    else is applied as a new post. A request that `supersedes` earlier copies, once applied,
    retracts every earlier post of the same params still up."""
    forgotten: tuple[str, int] | None = None
    at = -1
    if key is not None and idempotent:
        for i, (known, saved, post, since) in enumerate(feed.remembered):
            if known == key:
                if not knows(since, tick, retention):
                    forgotten, at = (post, since), i
                    break
                if saved != params:
                    return Receipt(feed, "rejected", None)
                return Receipt(feed, "repeat", post)
    post = f"P{len(feed.posts) + 1}"
    retracted = feed.retracted
    gone: tuple[str, ...] = ()
    if supersedes:
        gone = tuple(p for p, saved in feed.posts if saved == params and p not in retracted)
        retracted = retracted + gone
    posts = feed.posts + ((post, params),)
    remembered = feed.remembered
    if key is not None and idempotent:
        entry = (key, params, post, tick)
        remembered = remembered + (entry,) if at < 0 else remembered[:at] + (entry,) + remembered[at + 1:]
    return Receipt(Feed(remembered, posts, retracted, feed.retention), "applied", post, forgotten, gone)
