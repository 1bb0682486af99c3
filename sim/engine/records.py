"""The records of docs/model.md §2 and the feed receiver of the article's section 8.

The protected stores (journal, candidate store, effect records) share one token check,
`Records.guard`: with fencing on it compares the writer's token with the one authoritative
epoch, atomically with the write, and rejects an older token. With fencing off it checks
nothing. Either way the write is logged with the token and the epoch it met, so the
invariants can see a stale write that landed.
"""

from __future__ import annotations

from typing import NamedTuple

JournalKey = int | tuple[int, ...]


def journal_key(step: int, content: int | None) -> JournalKey:
    """The journal's key for a step: (step, section content) with pins on, the step alone with
    pins off (`content` None), so a successor restores a step only when its key matches."""
    return step if content is None else (step, content)


def extended_key(step: int, content: int | None, extra: tuple[int, ...]) -> JournalKey:
    """The journal's key with what knobs beyond the article's model add to it (docs/outside.md,
    cases 5 and 8): the hash of a declared extra section, the code version. With none it is
    `journal_key`."""
    key = journal_key(step, content)
    if not extra:
        return key
    return (key, *extra) if isinstance(key, int) else (*key, *extra)


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


class JournalRecord(NamedTuple):
    result: str
    content: int  # the section content revision the result was computed from
    attempt: int
    truth: Truth = PLAIN


class Part(NamedTuple):
    result: str
    content: int
    truth: Truth = PLAIN


class Candidate(NamedTuple):
    digest: str
    attempt: int
    token: int
    parts: tuple[Part, ...]
    pin: int | None  # 0-based version index, None with pins off
    tick: int

    @property
    def built_from(self) -> tuple[int, ...]:
        return tuple(p.content for p in self.parts)


class Acceptance(NamedTuple):
    digest: str  # the accepted candidate, by its digest id
    version: int | None  # 0-based; None with pins off (nothing to record)
    tick: int


class Feed(NamedTuple):
    """The external feed, as a value: keyed, serialized receive. It checks idempotency keys only.

    Each `receive` is one transaction, serialized per key: lookup, parameter check, apply and
    remember run as one unit, so two concurrent copies of one request are two calls in
    sequence and the second finds the first one's record.
    """

    remembered: tuple[tuple[str, str, str], ...] = ()  # (key, request params, post id)
    posts: tuple[tuple[str, str], ...] = ()  # (post id, request params) applied, in order


def receive(feed: Feed, key: str | None, params: str) -> tuple[Feed, str, str | None]:
    """Return (the feed after, answer, post id): answer is applied, repeat (the stored answer)
    or rejected."""
    if key is not None:
        for known, saved, post in feed.remembered:
            if known == key:
                if saved != params:
                    return feed, "rejected", None
                return feed, "repeat", post
    post = f"P{len(feed.posts) + 1}"
    posts = feed.posts + ((post, params),)
    remembered = feed.remembered if key is None else feed.remembered + ((key, params, post),)
    return Feed(remembered, posts), "applied", post
