"""Plain-text narrative of a trace: one line per event, and the outcome in words."""

from __future__ import annotations

from typing import Any

from sim.outcome import Outcome
from sim.schedule import Schedule
from sim.trace import Event, Kind, Trace, revenue


def _content(schedule: Schedule, content: int) -> str:
    return f"content rev {content}"


#: what a silent attempt was doing, by the SILENT event's `during`.
DURING = {
    "compute": "while computing",
    "assemble": "before assembling",
    "waiting": "while waiting",
    "post": "before posting",
}


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
        during = DURING.get(d["during"], d["during"])
        if d["crashed"]:
            return f"{who} goes silent {during} (crashed: never wakes)"
        return f"{who} goes silent {during} (paused until t{d['wake']})"
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

    def tick(t: int | None) -> str:
        return "-" if t is None else f"t{t}"

    lines = [
        f"model calls          {result.model_calls} ({by}; minimum {trace.schedule.sections})",
        f"steps restored       {result.steps_restored}",
        f"stale writes         {result.stale_writes_rejected} rejected, {result.stale_writes_applied} applied",
        f"posts applied        {result.posts_applied}",
        f"first acceptance     {tick(result.first_accepted_tick)} (a digest built from the final report)",
        f"confirmed            {tick(result.confirmed_tick)}",
        f"newsletter           {news}",
        f"finished             {'yes' if result.finished else 'no'}"
        + (f" (stopped at the horizon, t{result.last_tick})" if result.horizon_reached else ""),
    ]
    if result.violations:
        for name, at in result.violations:
            lines.append(f"BROKEN               {name} at t{at}")
    else:
        lines.append("invariants           all hold")
    return lines


def _version(trace: Trace, content: Any) -> str:
    content = tuple(content)
    return f"v{trace.versions.index(content) + 1}" if content in trace.versions else "a mix of versions"


def brief(event: Event, trace: Trace) -> tuple[str, str]:
    """(subject, phrase): the event in a few words, for the per-tick story."""
    d: dict[str, Any] = event.detail
    who = f"#{event.attempt}" if event.attempt is not None else ""
    k = event.kind
    stale = k is Kind.WRITE and d["token"] < d["epoch"]
    token = f"token {d['token']} < epoch {d['epoch']}" if k is Kind.WRITE else ""
    if k is Kind.REPORT_CHANGED:
        sections = ", ".join(str(s) for s in d["sections"])
        says = f", revenue now {revenue(d['content'][1])}" if 2 in d["sections"] else ""
        return "report", f"changes to v{d['version']} (section {sections} new{says})"
    if k is Kind.ADMITTED:
        pin = f"pinned to v{d['pin']}" if d["pin"] is not None else "unpinned"
        extra = f", only to finish {d['reconcile']}'s announcement" if d["reconcile"] else ""
        return who, f"admitted with token {d['token']} = new epoch, {pin}{extra}"
    if k is Kind.SILENT:
        if d["crashed"]:
            return who, "falls silent (crashed)"
        return who, f"falls silent (paused until t{d['wake']})"
    if k is Kind.WOKE:
        return who, "wakes"
    if k is Kind.COMPUTED:
        return who, f"computes s{d['step']} (model call)"
    if k is Kind.RESTORED:
        return who, f"restores s{d['step']} (#{d['by']}'s record)"
    if k is Kind.WRITE:
        if d["record"] == "steps":
            what = "journal " + ", ".join(f"s{s[0]}" for s in d["steps"])
        elif d["record"] == "candidate":
            what = f"candidate {d['digest']}"
            if d["steps"]:
                what += " + journal " + ", ".join(f"s{s[0]}" for s in d["steps"])
        elif d["record"] == "intent":
            what = f"intent for {d['digest']}"
        else:
            what = f"confirmation for {d['digest']}"
        if not d["applied"]:
            return who, f"writes {what}: REJECTED ({token})"
        if stale:
            return who, f"writes {what} with a STALE token ({token}): applied"
        return who, f"writes {what}"
    if k is Kind.FENCED:
        return who, "is fenced and stops"
    if k is Kind.ACCEPTED:
        version = f" for v{d['version']}" if d["version"] is not None else " (no version recorded)"
        built = _version(trace, d["built_from"])
        return "", f"{d['digest']} accepted{version}, built from {built}"
    if k is Kind.REFUSED:
        return "", f"{d['digest']} refused: {d['reason']}"
    if k is Kind.STOPPED:
        return who, "stops"
    if k is Kind.UNKNOWN:
        return who, f"UNKNOWN ({d['missed']} missed heartbeats)"
    if k is Kind.SENT:
        key = f"key {d['key']}" if d["key"] is not None else "no key"
        copies = ", delivered twice" if d["copies"] > 1 else ""
        return who, f"sends the announcement of {d['digest']} ({key}{copies})"
    if k is Kind.FEED:
        answer = {
            "applied": f"applies post {d['post']}",
            "repeat": f"knows the key: answers with the original {d['post']}",
            "rejected": "rejects a different request under a used key",
        }[d["answer"]]
        return "feed", answer
    if k is Kind.DIED:
        return who, f"dies {d['point'].replace('-', ' ')}"
    if k is Kind.DONE:
        return who, "done"
    if k is Kind.NEWSLETTER:
        accepted = "" if d["accepted"] else " (never accepted)"
        return "newsletter", f"starts on {d['digest']}{accepted}, quoting {d['quote']} million"
    raise ValueError(f"unknown event kind {k}")


def _merge_compute(events: list[Event]) -> list[Event | tuple[str, str]]:
    """A computed step and its own applied journal write read as one phrase."""
    out: list[Event | tuple[str, str]] = []
    skip = set()
    for i, e in enumerate(events):
        if i in skip:
            continue
        if e.kind is Kind.COMPUTED:
            for j in range(i + 1, len(events)):
                w = events[j]
                if (
                    w.kind is Kind.WRITE and w.attempt == e.attempt and w.detail["record"] == "steps"
                    and w.detail["applied"] and w.detail["token"] >= w.detail["epoch"]
                    and [s[0] for s in w.detail["steps"]] == [e.detail["step"]]
                ):  # fmt: skip
                    skip.add(j)
                    out.append((f"#{e.attempt}", f"computes and journals s{e.detail['step']} (model call)"))
                    break
            else:
                out.append(e)
            continue
        out.append(e)
    return out


def tick_story(trace: Trace, until: int | None = None) -> list[tuple[int, str]]:
    """One line of words per tick that has events: phrases of one subject share it."""
    by_tick: dict[int, list[Event]] = {}
    for e in trace.events:
        if until is not None and e.tick > until:
            break
        by_tick.setdefault(e.tick, []).append(e)
    lines = []
    for tick, events in by_tick.items():
        parts: list[tuple[str, list[str]]] = []
        for item in _merge_compute(events):
            subject, phrase = brief(item, trace) if isinstance(item, Event) else item
            if parts and parts[-1][0] == subject and subject:
                parts[-1][1].append(phrase)
            else:
                parts.append((subject, [phrase]))
        text = "; ".join((f"{s} " if s else "") + ", ".join(p) for s, p in parts)
        lines.append((tick, text))
    return lines


__all__ = ["brief", "describe", "narrative", "outcome_lines", "revenue", "tick_story"]
