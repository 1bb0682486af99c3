"""The records of docs/model.md §2 and the feed receiver of the article's section 8.

The protected stores (journal, candidate store, effect records) share one token check,
`Records.guard`: with fencing on it compares the writer's token with the one authoritative
epoch, atomically with the write, and rejects an older token. With fencing off it checks
nothing. Either way the write is logged with the token and the epoch it met, so the
invariants can see a stale write that landed.
"""

from __future__ import annotations

from typing import NamedTuple

JournalKey = int | tuple[int, int]


def journal_key(step: int, content: int | None) -> JournalKey:
    """The journal's key for a step: (step, section content) with pins on, the step alone with
    pins off (`content` None), so a successor restores a step only when its key matches."""
    return step if content is None else (step, content)


class JournalRecord(NamedTuple):
    result: str
    content: int  # the section content revision the result was computed from
    attempt: int


class Part(NamedTuple):
    result: str
    content: int


def result_id(i: int, n: int) -> str:
    """The schematic result of step i (0-based) computed by attempt #n (docs/model.md §6)."""
    return f"s{i + 1}@{n}"


def has_called(n: int, results: tuple[Part | None, ...]) -> bool:
    """Whether attempt #n, holding `results`, has called the model (computed one itself)."""
    return any(p is not None and p.result == result_id(i, n) for i, p in enumerate(results))


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
