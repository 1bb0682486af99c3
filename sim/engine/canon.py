"""The canonical form of a state: what can still change a run's future or a verdict, and
nothing that only names its history (docs/check.md, "The canonical state").

`canonical(state)` is taken at the start of a tick (`state.tick`, before its input phase:
every actor has acted in every tick before it). Two states with equal canonical forms, given
the same faults from then on, produce the same events up to renaming of history-only names
(result ids, writers, ticks of past actions); `tests/test_search.py` checks it. What is
dropped, and why it cannot matter:

- the setup, `finished`, `last_tick`, `horizon_reached`, `tick`: the same in every node of
  one search level, or the end of the run;
- result ids (`s2@3`) in parts, journal records and held work, and a journal record's
  writer: they are only ever logged, never compared (restores match by key, acceptance by
  content);
- a candidate's tick: a candidate not yet assessed was written in an earlier tick, and is
  assessed in this one; an acceptance's tick: never read;
- `last_change` and `last_acceptance`: only whether each is set and their order matter
  (`rules.satisfied`); every later change or acceptance is later than both;
- an attempt's verdict tick and end tick: both lie before this tick, which is all the rules
  ask of them (`verdict[1] >= t`, `ended < t`);
- a silent attempt's silence tick: while it is running, how long ago (at most the heartbeat
  limit, when it is suspected); after that only whether it is silent;
- an attempt whose program has ended keeps only what the controller still reads of it: its
  status, whether it crashed and is silent, its candidate, whether it inherited one, and
  whether its candidate was accepted.

- version numbers: a version is named by its content instead (contents only grow, so each
  version has its own); versions no pin refers to any more are dropped;
- journal records no restore can match any more (`readable`);
- the tick the feed remembered a key: with the article's feed (retention forever) it is
  never read; with a finite retention N (docs/outside.md, case 3) only its age counts, and
  an age of N or more is as good as N (the key is forgotten from then on);
- beyond the article's model, a controller outage (`sim.faults.restart`): while it is down,
  the restart tick relative to now; its latest outage (crash and restart ticks relative to
  now) only until the heartbeat limit has passed since the restart: by then every running
  attempt whose last heartbeat came before the restart has been suspected, so the outage
  no longer changes what the controller counts from (`rules.heard`). While the outage
  still counts, a running attempt's silence is kept uncapped (the controller was not there
  to suspect it at the limit, and the restarted one counts from its own tick).
- beyond it, with `retries` set: a silence is kept uncapped too, since a paused worker runs
  one re-delivery per step timeout passed, however long it was silent.

Beyond the article's model (docs/outside.md, cases 5, 6 and 8) it also keeps the code
version in force and each live attempt's, the sections whose bytes changed under their hash,
and each part's and journal record's `Truth` (what it really read and ran under); in the
article's model these are the same in every state.

Kept: the current content, the epoch and tokens, the journal's readable keys and contents
(sorted), candidates (digest, producer, token, contents, pinned content), acceptances
(digest, accepted content), effect records,
the feed, the post and send counters (the faults name the nth post or send), the
controller's owner, assessed count and newsletter, and each live attempt's program state
with its next tick relative to now.
"""

from __future__ import annotations

from typing import Any

from sim.engine.records import Acceptance, Candidate, Feed, has_called
from sim.engine.state import AttemptState, State, Status

Canonical = tuple[Any, ...]


#: canonical forms of shared parts of states, by the identity of the part (states share the
#: parts a step did not change, so most lookups hit). Each entry keeps its part alive, so
#: an id is never reused while its entry stands; `trim` empties it when it grows large.
_memo: dict[int, tuple[object, Any, Any]] = {}
MEMO_LIMIT = 1 << 17


def trim() -> None:
    """Empty the memo of shared parts if it has grown past MEMO_LIMIT entries (the search
    calls it after each level)."""
    if len(_memo) > MEMO_LIMIT:
        _memo.clear()


def canonical(state: State) -> Canonical:
    """The canonical form of a state at the start of its tick (see the module docstring)."""
    t = state.tick
    s = state
    lc, la = s.last_change, s.last_acceptance
    order = None if lc is None or la is None else lc <= la
    limit = s.setup.heartbeat_limit
    stamp = t
    outage = s.outage
    if outage is not None:
        if t <= outage[1] + limit:
            outage = (outage[0] - t, outage[1] - t)
            limit, stamp = UNCAPPED, ~t  # `attempt`'s memo tells the two forms apart by the stamp
        else:
            outage = None
    if s.setup.retries:  # beyond it: how long a paused worker has been silent sets its retries
        limit, stamp = UNCAPPED, ~t
    return (
        s.content, s.epoch, lc is None, la is None, order, readable(s),
        shared(s.candidates, s.versions, candidates), shared(s.acceptances, s.versions, acceptances),
        s.effects, feed(s.feed, t, s.setup.retention), s.posts, s.sends,
        tuple(attempt(a, t, stamp, limit, s.versions) for a in s.attempts),
        s.owner, s.assessed, s.newsletter, None if s.down is None else s.down - t, outage, s.code, s.mutated,
        # zombie=from-memory: whether each attempt has called the model decides whether it
        # still restores, and result ids are dropped above
        () if s.setup.rereads else tuple(has_called(a.n, a.results) for a in s.attempts),
    )  # fmt: skip


#: a silence longer than any run (`attempt_form`'s cap while a controller outage counts)
UNCAPPED = 1 << 30


def shared(part: Any, versions: tuple[tuple[int, ...], ...], form: Any) -> Any:
    """`form(part, versions)`, remembered by the part's identity (and its versions')."""
    hit = _memo.get(id(part))
    if hit is not None and hit[0] is part and hit[1] is versions:
        return hit[2]
    value = form(part, versions)
    _memo[id(part)] = (part, versions, value)
    return value


def feed(f: Feed, t: int, retention: int | None) -> Any:
    """The feed's canonical form at the start of tick t, remembered by the feed's identity
    (and, with a finite retention, the tick). A remembered key's tick is read only by the
    retention rule (`records.knows`: found at tick t' iff t' - tick < retention): with the
    article's feed (forever) never, so it is dropped; with a retention N only its age
    matters, and only up to N (from then on the key is forgotten at every later tick)."""
    if not f.remembered:
        return f
    key = None if retention is None else t
    hit = _memo.get(id(f))
    if hit is not None and hit[0] is f and hit[1] == key:
        return hit[2]
    keys: tuple[tuple[Any, ...], ...]
    if retention is None:
        keys = tuple((k, params, post) for k, params, post, _ in f.remembered)
    else:
        keys = tuple((k, params, post, min(t - since, retention)) for k, params, post, since in f.remembered)
    value = (keys, f.posts, f.retracted)
    _memo[id(f)] = (f, key, value)
    return value


def candidates(cs: tuple[Candidate, ...], versions: tuple[tuple[int, ...], ...]) -> tuple[Any, ...]:
    return tuple(
        (c.digest, c.attempt, c.token, c.built_from, None if c.pin is None else versions[c.pin],
         tuple(p.truth for p in c.parts))
        for c in cs
    )  # fmt: skip


def acceptances(accs: tuple[Acceptance, ...], versions: tuple[tuple[int, ...], ...]) -> tuple[Any, ...]:
    return tuple((a.digest, None if a.version is None else versions[a.version]) for a in accs)


def readable(s: State) -> tuple[tuple[Any, ...], ...]:
    """The journal's (key, content, truth) triples that a restore can still match, sorted. With pins
    off every key can be read. With pins on a key names a section's content, and a restore
    looks up the content of the version its attempt is pinned to: the current version (every
    attempt admitted from now on) or a live attempt's pin; a content no longer among them
    never comes back (revisions only grow)."""
    if not s.setup.pins:
        return tuple(sorted((key, record.content, record.truth) for key, record in s.journal))
    pinned = [s.content]
    for a in s.attempts:
        if a.next_tick is not None and a.pin is not None and s.versions[a.pin] is not s.content:
            pinned.append(s.versions[a.pin])
    out: list[tuple[Any, ...]] = []
    for key, record in s.journal:
        i, c = key[0], key[1]  # type: ignore[index]
        for content in pinned:
            if content[i] == c:
                out.append((key, c, record.truth))
                break
    out.sort()
    return tuple(out)


def attempt(a: AttemptState, t: int, stamp: int, limit: int, versions: tuple[tuple[int, ...], ...]) -> tuple[Any, ...]:
    """One attempt's canonical form at the start of tick t (its pin as the pinned content),
    remembered by the attempt's identity and the stamp (the tick, or its complement when
    silences are kept uncapped)."""
    hit = _memo.get(id(a))
    if hit is not None and hit[0] is a and hit[1] == stamp:
        return hit[2]  # type: ignore[no-any-return]
    value = attempt_form(a, t, limit, versions)
    _memo[id(a)] = (a, stamp, value)
    return value


def attempt_form(a: AttemptState, t: int, limit: int, versions: tuple[tuple[int, ...], ...]) -> tuple[Any, ...]:
    since = a.silent_since
    if since is None:
        silent: int | bool = False
    elif a.status is Status.RUNNING:
        silent = min(t - since, limit)
    else:
        silent = True
    accepted = None if a.verdict is None else a.verdict[0]
    status = a.status._value_  # a plain string: cheaper to hash than the Enum
    unheard = a.unheard
    if unheard is not None:  # (how long unheard, capped; ticks until heard again), or gone
        unheard = (min(t - unheard[0], limit), unheard[1] - t) if unheard[1] > t else None
    if a.next_tick is None:
        if a.status is not Status.RUNNING:  # it can no longer be suspected
            unheard = None
        return (status, a.crashed, silent, a.candidate, a.inherited is not None, accepted, a.ended is not None, unheard)
    held = None if a.held is None else (a.held[0], None if a.held[1] is None else a.held[1][1:])
    return (
        a.token, None if a.pin is None else versions[a.pin], a.inherited, status, a.next_tick - t,
        a.crashed, silent, tuple(None if p is None else p[1:] for p in a.results), a.unwritten,
        a.step, a.phase, held, accepted, a.candidate, a.ended is not None, unheard, a.code,
    )  # fmt: skip
