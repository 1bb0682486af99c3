"""Plain-text narrative of a trace: one line per event, and the outcome in words."""

from __future__ import annotations

from typing import Any

from sim.outcome import Outcome
from sim.schedule import Schedule
from sim.trace import Event, Kind, Trace, revenue


def _content(schedule: Schedule, content: int) -> str:
    return f"content rev {content}"


def describe(event: Event) -> str:
    """The event in one line of words (without its tick)."""
    d: dict[str, Any] = event.detail
    who = f"#{event.attempt}" if event.attempt is not None else "controller"
    k = event.kind
    if k is Kind.REPORT_CHANGED:
        sections = ", ".join(str(s) for s in d["sections"])
        return f"report changes to v{d['version']} (section {sections} new)"
    if k is Kind.ADMITTED:
        pin = f"pinned to v{d['pin']}" if d["pin"] is not None else "unpinned (reads the live report)"
        why = {"start": "first attempt", "suspicion": "successor", "rebuild": "rebuild"}[d["reason"]]
        extra = f"; only finishes the announcement of {d['reconcile']}" if d["reconcile"] else ""
        return f"{who} admitted ({why}) with owner token {d['token']} = new epoch, {pin}{extra}"
    if k is Kind.SILENT:
        if d["crashed"]:
            return f"{who} goes silent while {d['during']} (crashed: never wakes)"
        return f"{who} goes silent while {d['during']} (paused until t{d['wake']})"
    if k is Kind.WOKE:
        return f"{who} wakes up"
    if k is Kind.COMPUTED:
        return f"{who} computes s{d['step']} (model call) -> {d['result']} from section rev {d['content']}"
    if k is Kind.RESTORED:
        return f"{who} restores s{d['step']} from the journal ({d['result']}, computed by #{d['by']})"
    if k is Kind.WRITE:
        verdict = "applied" if d["applied"] else "REJECTED (stale token)"
        stale = " with a STALE token" if d["applied"] and d["token"] < d["epoch"] else ""
        what = {
            "steps": lambda: "journal " + ", ".join(f"s{s[0]}={s[1]}" for s in d["steps"]),
            "candidate": lambda: f"candidate {d['digest']}"
            + (" + journal " + ", ".join(f"s{s[0]}={s[1]}" for s in d["steps"]) if d["steps"] else ""),
            "intent": lambda: f"effect intent for {d.get('digest')}",
            "confirmed": lambda: f"effect confirmation for {d.get('digest')}",
        }[d["record"]]()
        return f"{who} writes {what} with token {d['token']} (epoch {d['epoch']}): {verdict}{stale}"
    if k is Kind.FENCED:
        return f"{who} is fenced: it stops (it may still be alive)"
    if k is Kind.ACCEPTED:
        version = f" for v{d['version']}" if d["version"] is not None else " (no version recorded)"
        return f"digest {d['digest']} of #{d['producer']} accepted{version}"
    if k is Kind.REFUSED:
        return f"digest {d['digest']} of #{d['producer']} refused: {d['reason']}"
    if k is Kind.STOPPED:
        return f"{who} stops: its candidate {d['digest']} was refused"
    if k is Kind.UNKNOWN:
        return f"{who} is UNKNOWN after {d['missed']} missed heartbeats"
    if k is Kind.SENT:
        key = d["key"] if d["key"] is not None else "no key"
        copies = " (delivered twice, concurrently)" if d["copies"] > 1 else ""
        return f"{who} sends the announcement of {d['digest']} with key {key}{copies}"
    if k is Kind.FEED:
        answer = {
            "applied": f"feed applies post {d['post']}",
            "repeat": f"feed recognises the key and answers with the original post {d['post']}",
            "rejected": "feed rejects a different request under a used key",
        }[d["answer"]]
        return answer
    if k is Kind.DIED:
        return f"{who} dies {d['point'].replace('-', ' ')}"
    if k is Kind.DONE:
        return f"{who} done: announcement of {d['digest']} confirmed"
    if k is Kind.NEWSLETTER:
        accepted = "" if d["accepted"] else " (never accepted)"
        return f"newsletter starts on {d['digest']}{accepted}, quoting {d['quote']} million"
    raise ValueError(f"unknown event kind {k}")


def narrative(trace: Trace, until: int | None = None) -> list[str]:
    lines = []
    for e in trace.events:
        if until is not None and e.tick > until:
            break
        lines.append(f"t{e.tick:<3} {describe(e)}")
    return lines


def outcome_lines(result: Outcome, trace: Trace) -> list[str]:
    by = ", ".join(f"#{i + 1} {n}" for i, n in enumerate(result.model_calls_by_attempt))
    letter = result.newsletter
    if letter.start_tick is None:
        news = "never started"
    else:
        news = f"started t{letter.start_tick} on {letter.digest} quoting {letter.quoted_revenue}"
    tick = lambda t: "-" if t is None else f"t{t}"  # noqa: E731
    lines = [
        f"model calls          {result.model_calls} ({by}; minimum {trace.schedule.sections})",
        f"steps restored       {result.steps_restored}",
        f"stale writes         {result.stale_writes_rejected} rejected, {result.stale_writes_applied} applied",
        f"posts applied        {result.posts_applied}",
        f"first acceptance     {tick(result.first_accepted_tick)} (a digest built from the final report)",
        f"confirmed            {tick(result.confirmed_tick)}",
        f"newsletter           {news}",
        f"finished             {'yes' if result.finished else 'no'}",
    ]
    if result.violations:
        for name, at in result.violations:
            lines.append(f"BROKEN               {name} at t{at}")
    else:
        lines.append("invariants           all hold")
    return lines


__all__ = ["describe", "narrative", "outcome_lines", "revenue"]
