"""A trace in words: each event's line, the per-tick story, and the outcome.

The wording of each event kind lives with its declaration in `sim.model.events`; this module only
names the event's attempt and joins the phrases of one tick.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from sim.model.events import Computed, calls_words, computed_extras, narrate, payload, phrase, stale, subject_of, write
from sim.properties.outcome import Outcome, encoded
from sim.engine.trace import Event, Kind, Trace


def describe(event: Event) -> str:
    """The event in one line of words (without its tick), as its kind words it."""
    who = f"#{event.attempt}" if event.attempt is not None else "controller"
    return narrate(event, who)


def outcome_lines(result: Outcome, trace: Trace, so_far: int | None = None) -> list[str]:
    """The outcome in lines of words; `so_far`: the outcome up to that tick of a longer run
    (`sim trace --until`), where what has not happened yet is "not by tN", not "never"."""
    by = ", ".join(f"#{i + 1} {n}" for i, n in enumerate(result.model_calls_by_attempt))
    letter = result.newsletter
    ready = trace.schedule.newsletter_ready
    if letter.start_tick is not None:
        news = f"started t{letter.start_tick} on {letter.digest} quoting {letter.quoted_revenue}"
    elif trace.switches.effects and not trace.switches.dependants:
        news = "none (the workflow declares no dependant)"
    elif so_far is None:
        news = "never started"
    else:
        news = f"not started by t{so_far}" + (f" (it may start from t{ready})" if so_far < ready else "")

    def tick(t: int | None) -> str:
        if t is not None:
            return f"t{t}"
        return "-" if so_far is None else f"not by t{so_far}"

    lines = [
        f"model calls          {result.model_calls} ({by}; minimum {trace.schedule.minimum_calls})",
        f"steps restored       {result.steps_restored}",
        f"stale writes         {result.stale_writes_rejected} rejected, {result.stale_writes_applied} applied",
        f"posts applied        {result.posts_applied}",
        f"first acceptance     {tick(result.first_accepted_tick)} (a digest built from the final report)",
        f"confirmed            {tick(result.confirmed_tick)}",
        f"newsletter           {news}",
        f"finished             {'yes' if result.finished else ('no' if so_far is None else 'not yet')}"
        + (f" (stopped at the horizon, t{result.last_tick})" if result.horizon_reached else ""),
    ]
    if result.violations:
        for name, at in result.violations:
            lines.append(f"BROKEN               {name} at t{at}")
    else:
        lines.append("invariants           all hold")
    return lines


def column_widths(rows: Sequence[Sequence[str]]) -> list[int]:
    """The width of each column of these rows (a header row included)."""
    return [max(len(cell) for cell in column) for column in zip(*rows)]


def table_line(cells: Sequence[str], widths: Sequence[int], right: Sequence[bool]) -> str:
    """One row of a plain fixed-width table: columns two spaces apart, each left- or
    right-aligned (`right`), no trailing blanks. The terminal tables that must fit 80
    columns use it instead of tabulate, whose padding they cannot spare."""
    return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)).rstrip()


def brief(event: Event, trace: Trace) -> tuple[str, str]:
    """(subject, phrase): the event in a few words, for the per-tick story."""
    subject = subject_of(event)
    if subject is None:
        subject = f"#{event.attempt}" if event.attempt is not None else ""
    return subject, phrase(event, trace.versions)


def _journals(e: Event, step: Computed, attempt: int | None) -> bool:
    """`e` is the attempt's own applied, fresh journal record of just that step."""
    if e.kind is not Kind.WRITE or e.attempt != attempt:
        return False
    w = write(e)
    return w["store"] == "journal" and w["applied"] and not stale(w) and [s[0] for s in w["steps"]] == [step["step"]]


def _merge_compute(events: list[Event]) -> list[Event | tuple[str, str]]:
    """A computed step and its own applied journal write read as one phrase."""
    out: list[Event | tuple[str, str]] = []
    merged: set[int] = set()
    for i, e in enumerate(events):
        if i in merged:
            continue
        if e.kind is Kind.COMPUTED:
            computed = payload(e, Computed)
            j = next((j for j in range(i + 1, len(events)) if _journals(events[j], computed, e.attempt)), None)
            if j is not None:
                merged.add(j)
                step = computed["step"]
                out.append((f"#{e.attempt}", f"computes and journals s{step} ({calls_words(computed)}){computed_extras(computed)}"))
                continue
        out.append(e)
    return out


def tick_story(
    trace: Trace, until: int | None = None, lines: dict[Hashable, str] | None = None
) -> list[tuple[int, str]]:
    """One line of words per tick that has events (up to `until`). A line is a function of
    the tick's events and the report versions: with `lines`, each line is looked up there by
    those first and added when missing (the sweep's 276 swimlanes have 3,966 story lines, 331
    of them distinct)."""
    by_tick: dict[int, list[Event]] = {}
    for e in trace.events:
        if until is not None and e.tick > until:
            break
        by_tick.setdefault(e.tick, []).append(e)
    if lines is None:
        return [(tick, _tick_line(events, trace)) for tick, events in by_tick.items()]
    story = []
    for tick, events in by_tick.items():
        key = (encoded(events), trace.versions)
        line = lines.get(key)
        if line is None:
            line = lines[key] = _tick_line(events, trace)
        story.append((tick, line))
    return story


def _tick_line(events: list[Event], trace: Trace) -> str:
    """The phrases of one tick; consecutive phrases of one subject share it."""
    parts: list[tuple[str, list[str]]] = []
    for item in _merge_compute(events):
        subject, phrase = brief(item, trace) if isinstance(item, Event) else item
        if parts and parts[-1][0] == subject and subject:
            parts[-1][1].append(phrase)
        else:
            parts.append((subject, [phrase]))
    return "; ".join((f"{s} " if s else "") + ", ".join(p) for s, p in parts)


__all__ = ["brief", "column_widths", "describe", "outcome_lines", "table_line", "tick_story"]
