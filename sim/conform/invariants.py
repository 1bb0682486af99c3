"""`sim`'s invariant monitors run on what a real engine's run did, beside their verdicts on
`sim`'s own run of the same schedule.

The harness's application logs, in one sequence (the `log` table of the run's store,
sim/conform/app.py), each acceptance (the digest and the revenue figure it quotes), the
report's correction (written by the harness while a worker is held) and the newsletter's
read; the feed keeps each post it applied, with its sender and digest, in its own store. That
record is mapped onto `sim`'s event kinds (`events`): an acceptance is `accepted` (built from
section 2's revision 0 or 1, as its figure says, the other sections at revision 0), a post the
feed applied is `feed` (after the log's events: the monitors judged here compare posts only
with posts), the newsletter's read is `newsletter` (the digest the latest acceptance accepted). Each
property whose monitor reads only those kinds (`JUDGED`) is then run over the mapped events
with the report content current at each (its `Monitor`, the one `sim trace` and `sim check`
use), and its verdict set beside the verdict on `sim`'s trace (`model`).

Not judged on an engine's run: stale-write (it reads tokens and epochs, which no engine here
exposes), effects-confirmed (intents and confirmations are `sim`'s effect records; the
application's intent is its own row), faithful-digest (a wrong summary is a fault the harness
does not inject), uncorrected-duplicate (no correction is sent).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sim.conform import app
from sim.properties import BY_NAME, HOLDS
from sim.engine.trace import Event, Kind, Trace

#: the properties judged on an engine's run (their monitors read accepted, feed, newsletter)
JUDGED = ("two-acceptances", "wrong-acceptance", "duplicate-effect", "misused-dependant")

#: revenue figure -> section 2's content revision it was built from
REVISION = {"4.1": 0, "4.7": 1}


def built_from(revenue: str | None) -> tuple[int, ...]:
    return (0, REVISION.get(revenue or "", -1), 0, 0)


def feed_posts(workdir: Path) -> list[tuple[str | None, str]]:
    """(sender, digest) of each post the feed applied, in order, from the feed's own store (a
    post is applied before the sender hears the answer: a worker killed or cancelled then has
    sent it all the same)."""
    path = workdir / "feed.sqlite"
    if not path.exists():
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        rows = list(db.execute("SELECT sender, text FROM posts ORDER BY n"))
    finally:
        db.close()
    return [(sender, text.split(":")[0].removeprefix("digest ")) for sender, text in rows]


def events(workdir: Path) -> list[tuple[Event, tuple[int, ...]]]:
    """The run's log as `sim` events, each with the report content current when it happened;
    the feed's applied posts from the feed's own store, after them (the monitors judged here
    compare posts only with posts)."""
    content = (0, 0, 0, 0)
    out: list[tuple[Event, tuple[int, ...]]] = []
    rows = app.rows(workdir, "SELECT seq, what, execution, digest, detail FROM log ORDER BY seq")
    for seq, what, execution, digest, detail in rows:
        attempt = int(execution[1:]) if execution else None
        if what == "changed":
            content = (0, 1, 0, 0)
            continue
        if what == "posted":  # the sender's view; the feed's own record is read below
            continue
        if what == "accepted":
            e = Event(seq, Kind.ACCEPTED, None, {"digest": digest, "producer": attempt, "built_from": list(built_from(detail))})
        else:  # the newsletter's read of the latest acceptance
            e = Event(seq, Kind.NEWSLETTER, None, {"digest": digest, "accepted": digest is not None,
                                                   "built_from": list(built_from(detail))})  # fmt: skip
        out.append((e, content))
    last = rows[-1][0] if rows else 0
    for n, (sender, digest) in enumerate(feed_posts(workdir), start=1):
        attempt = int(sender[1:]) if sender else None
        out.append((Event(last + n, Kind.FEED, attempt, {"digest": digest, "answer": "applied"}), content))
    return out


def judge(mapped: list[tuple[Event, tuple[int, ...]]]) -> tuple[tuple[str, str], ...]:
    """Each judged property's verdict over the mapped events (its monitor, event by event)."""
    out = []
    for name in JUDGED:
        monitor = BY_NAME[name].monitor
        assert monitor is not None
        memo, broke = monitor.start, False
        for position, (e, content) in enumerate(mapped):
            if e.kind in monitor.kinds:
                memo, now = monitor.step(memo, e, content, position)
                broke = broke or now
        out.append((name, "broken" if broke else HOLDS))
    return tuple(out)


def observed(workdir: Path) -> tuple[tuple[str, str], ...]:
    return judge(events(workdir))


def model(trace: Trace) -> tuple[tuple[str, str], ...]:
    """The same properties' verdicts on `sim`'s run."""
    return tuple((name, HOLDS if BY_NAME[name].holds(trace) else "broken") for name in JUDGED)


def render(verdicts: tuple[tuple[str, str], ...]) -> str:
    broken = [name for name, verdict in verdicts if verdict != HOLDS]
    return f"{', '.join(broken)} broken" if broken else f"all {len(verdicts)} hold"
