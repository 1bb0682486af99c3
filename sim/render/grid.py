"""The swimlane of a run as plain data: one row per kind of record, one column per tick.

This is the drawing "One Task, Three Interruptions" as a model, independent of any renderer:
the terminal swimlane (`sim.render.swimlane`), the diff and the HTML explainer all draw
exactly this. Rows, top to bottom:

    Report              the input: v1 at t0, v2 at the tick it changed
    #1 T41, #2 T42 ...  one row per admitted attempt (its owner token): admitted, the step
                        it computes, waiting, silent, UNKNOWN, fenced, refused, died, done
    Journal s1..sN      the persisted step records and the version each was computed
                        from; a successor's restore (↺); rejected and stale writes
    Digest              candidates (◇), acceptances (✓ with the version recorded on them),
                        refusals
    Feed post           effect intent (i), the post the feed applied (P1), a resend it
                        answered with the original post (=P1), the confirmation (✓)
    Newsletter          waiting from its ready tick, then the figure it starts quoting

Each cell is a tuple of marks (short text plus a style class such as "restored",
"rejected", "accepted", "repeat", "unknown"), the indices of the trace events it shows and
the invariants that broke there. A mark that broke an invariant ends in "!". Everything is
JSON-serialisable through `Grid.to_json()`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from sim.engine.records import effect_of_key
from sim.engine.state import AttemptState, Status
from sim.model.events import (
    Accepted,
    Admitted,
    Adopted,
    AnyWrite,
    CodeChanged,
    Computed,
    ControllerDown,
    Expired,
    Feed,
    Lost,
    Mutated,
    Newsletter,
    Refused,
    ReportChanged,
    Restored,
    Retracted,
    Sent,
    Step,
    payload,
    write,
)
from sim.properties.outcome import what_happened
from sim.properties import BY_NAME, breaking_events
from sim.properties.stale_write import superseded
from sim.render.text import describe, tick_story
from sim.engine.trace import Event, Kind, Trace

#: legend key -> (group, example symbol, class, meaning). The legend lists the entries a grid
#: uses, in this order, each with the first symbol that used it in that grid.
LEGEND: dict[str, tuple[str, str, str, str]] = {
    "report": ("Report", "v2", "changed", "report version from this tick"),
    "mutated": ("Report", "s2~", "changed", "a section's bytes change under its hash"),
    "code": ("Report", "c2", "changed", "orchestration code version from this tick"),
    "admitted": ("Attempts", "T42", "admitted", "admitted with this owner token"),
    "step": ("Attempts", "s2", "running", "computes this step (model call)"),
    "step-wrong": ("Attempts", "s2*", "running", "computes this step wrongly (right in form)"),
    "assemble": ("Attempts", "asm", "running", "writes its candidate"),
    "post": ("Attempts", "post", "running", "sends the announcement"),
    "wake": ("Attempts", "wake", "running", "wakes from a pause"),
    "waiting": ("Attempts", "·", "waiting", "waiting"),
    "silent": ("Attempts", "…", "silent", "silent, no heartbeat"),
    "unknown": ("Attempts", "UNK", "unknown", "suspected: UNKNOWN"),
    "still-unknown": ("Attempts", "?", "unknown", "still UNKNOWN"),
    "fenced": ("Attempts", "fenced", "rejected", "write rejected, stops"),
    "stopped": ("Attempts", "stop", "refused", "candidate refused, stops"),
    "died": ("Attempts", "died", "died", "dies while posting"),
    "done": ("Attempts", "done", "done", "announcement confirmed"),
    "replay-failed": ("Attempts", "err", "rejected", "non-determinism error: stuck"),
    "step-retry": ("Attempts", "s2r", "stale", "runs a step the engine re-delivered (result not kept)"),
    "adopted": ("Attempts", "=#2", "done", "fenced, returns the owner's result"),
    "controller-down": ("Controller", "down", "died", "the controller crashes"),
    "controller-off": ("Controller", "…", "silent", "the controller is down: nothing assessed, suspected or admitted"),
    "controller-up": ("Controller", "up", "admitted", "the controller restarts"),
    "written": ("Journal", "v1", "written", "record, computed from this version"),
    "restored": ("Journal", "↺", "restored", "restored, not redone"),
    "rejected": ("Journal", "✗v1", "rejected", "stale write rejected"),
    "candidate": ("Digest", "◇d2", "candidate", "candidate"),
    "candidate-rejected": ("Digest", "✗◇d1", "rejected", "candidate write rejected"),
    "accepted": ("Digest", "✓v2", "accepted", "accepted for this version"),
    "accepted-unversioned": ("Digest", "✓d2", "accepted", "accepted, no version recorded"),
    "refused": ("Digest", "✗d1", "refused", "refused"),
    "intent": ("Feed post", "i", "intent", "intent recorded"),
    "intent-rejected": ("Feed post", "✗i", "rejected", "effect write rejected"),
    "posted": ("Feed post", "P1", "posted", "post applied"),
    "repeat": ("Feed post", "=P1", "repeat", "resend answered with the original post"),
    "feed-rejected": ("Feed post", "✗P", "rejected", "request rejected (key reused)"),
    "confirmed": ("Feed post", "✓", "confirmed", "confirmed"),
    "unconfirmed": ("Feed post", "?", "unknown", "intended, unconfirmed (it may or may not have happened)"),
    "newsletter-waiting": ("Newsletter", "·", "waiting", "waiting for its gate"),
    "newsletter": ("Newsletter", "4.7", "started", "starts, quoting this figure (million)"),
    "lost": ("Journal", "lost", "rejected", "records lost (a storage loss)"),
    "expired": ("Feed post", "forgot", "rejected", "the feed had forgotten the key (its retention ran out)"),
    "retracted": ("Feed post", "↶P1", "refused", "an earlier copy retracted by a correction"),
    "broke": ("Invariants", "!", "violation", "an invariant broke here"),
}

#: every style class a mark can carry (a renderer maps each to its look).
CLASSES = (
    "input", "changed", "admitted", "running", "waiting", "silent", "unknown", "stale",
    "rejected", "refused", "died", "done", "written", "restored", "candidate", "accepted",
    "intent", "posted", "repeat", "confirmed", "started", "violation",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Mark:
    """One symbol in a cell."""

    text: str
    cls: str
    legend: str

    def to_json(self) -> dict[str, str]:
        return {"text": self.text, "class": self.cls, "legend": self.legend}


@dataclass(frozen=True, slots=True)
class Cell:
    marks: tuple[Mark, ...] = ()
    #: indices into the trace's events of the events this cell shows
    events: tuple[int, ...] = ()
    #: invariants that broke at this cell
    broke: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return " ".join(m.text for m in self.marks)

    @property
    def cls(self) -> str:
        """The class that stands for the whole cell: a violation wins, else the last mark's."""
        if not self.marks:
            return "empty"
        for mark in self.marks:
            if mark.cls == "violation":
                return "violation"
        return self.marks[-1].cls

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "class": self.cls,
            "marks": [m.to_json() for m in self.marks],
            "events": list(self.events),
            "broke": list(self.broke),
        }


EMPTY = Cell()


@dataclass(frozen=True, slots=True)
class Row:
    key: str  # "report", "attempt:2", "controller", "journal:3", "digest", "feed", "newsletter"
    label: str
    group: str  # "report", "attempts", "controller", "journal", "digest", "feed", "newsletter"
    cells: tuple[Cell, ...]

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "label": self.label, "group": self.group, "cells": [c.to_json() for c in self.cells]}


@dataclass(frozen=True, slots=True)
class LegendEntry:
    key: str
    group: str
    symbol: str
    cls: str
    meaning: str

    def to_json(self) -> dict[str, str]:
        return {"key": self.key, "group": self.group, "symbol": self.symbol, "class": self.cls, "meaning": self.meaning}


@dataclass(frozen=True, slots=True)
class Violation:
    """The first break of one invariant: where it shows and why."""

    invariant: str
    description: str
    tick: int
    event: int  # index into the trace's events
    event_text: str
    why: str
    row: str
    guarded_by: str

    def to_json(self) -> dict[str, Any]:
        return {
            "invariant": self.invariant, "description": self.description, "tick": self.tick,
            "event": self.event, "event_text": self.event_text, "why": self.why,
            "row": self.row, "guarded_by": self.guarded_by,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class Grid:
    ticks: tuple[int, ...]
    rows: tuple[Row, ...]
    legend: tuple[LegendEntry, ...]
    #: (tick, one line of words) for each tick with events
    story: tuple[tuple[int, str], ...]
    violations: tuple[Violation, ...]
    last_tick: int  # the run's last tick (the grid may stop earlier, see `until`)
    switches: dict[str, str] = field(default_factory=dict)

    def row(self, key: str) -> Row | None:
        for row in self.rows:
            if row.key == key:
                return row
        return None

    def cell(self, key: str, tick: int) -> Cell:
        row = self.row(key)
        if row is None or tick not in self.ticks:
            return EMPTY
        return row.cells[self.ticks.index(tick)]

    def to_json(self) -> dict[str, Any]:
        return {
            "ticks": list(self.ticks),
            "last_tick": self.last_tick,
            "switches": dict(self.switches),
            "rows": [r.to_json() for r in self.rows],
            "legend": [e.to_json() for e in self.legend],
            "story": [{"tick": t, "text": text} for t, text in self.story],
            "violations": [v.to_json() for v in self.violations],
        }


# -- building ----------------------------------------------------------------------------


def build(trace: Trace, until: int | None = None, lines: dict[Hashable, str] | None = None) -> Grid:
    """The swimlane of `trace`, ticks t0..t`until` (default: to the run's last tick). `lines`:
    story lines already worded, by the tick's events (`sim.render.text.tick_story`)."""
    return _Builder(trace, until, lines).grid()


@dataclass(slots=True)
class Shared:
    """Swimlanes already built, by what happened in their run (`sim.properties.outcome.what_happened`), and
    the story lines already worded, by a tick's events (many runs share ticks)."""

    grids: dict[Hashable, Grid] = field(default_factory=dict)
    lines: dict[Hashable, str] = field(default_factory=dict)


def build_shared(trace: Trace, cache: Shared, what: Hashable | None = None) -> Grid:
    """`build(trace)`, reusing a grid already built from the same events.

    A grid depends on what happened in the run (`sim.properties.outcome.what_happened`: the events, report
    versions, schedule, last tick); the switches are only carried along. Many sweep runs
    differ in a switch that changes nothing that happened (a relaxed newsletter rule that
    picks the same digest), so the sweep builds each distinct swimlane once. `what` is
    `what_happened(trace)` when the caller has it already.
    """
    key = what_happened(trace) if what is None else what
    shared = cache.grids.get(key)
    if shared is None:
        shared = cache.grids[key] = build(trace, lines=cache.lines)
    switches = trace.switches.as_dict()
    return shared if shared.switches == switches else dataclasses.replace(shared, switches=switches)


#: swimlanes already built in this process (see `shared`)
_SHARED = Shared()


def shared(trace: Trace, what: Hashable | None = None) -> Grid:
    """`build_shared` with this process's own cache: what `sim sweep` keeps of each run for
    the explainer page (passed to `sim.analysis.sweep.sweep(view=...)`, so it runs in the process
    that simulated the run, with the run's `what_happened` value as `what`)."""
    return build_shared(trace, _SHARED, what)


def truncated(trace: Trace, until: int) -> Trace:
    """The trace as it stood at the end of tick `until` (for "so far" outcomes)."""
    events = tuple(e for e in trace.events if e.tick <= until)
    last = min(until, trace.last_tick)
    states = trace.states[: len(trace.states) - (trace.last_tick - last)]
    versions = trace.state_at(last).versions  # the versions the report had by then
    return dataclasses.replace(trace, events=events, versions=versions, last_tick=last, states=states)


#: event kind -> (text, class, legend key) of the mark an attempt's own event draws on its
#: lifeline; class "" is its working class ("running", or "stale" while it works on with a
#: superseded token, fencing off). Between its events a lifeline shows the attempt's state
#: (`_between`).
LIFELINE_MARKS: dict[Kind, tuple[str, str, str]] = {
    Kind.SENT: ("post", "", "post"),
    Kind.WOKE: ("wake", "", "wake"),
    Kind.UNKNOWN: ("UNK", "unknown", "unknown"),
    Kind.FENCED: ("fenced", "rejected", "fenced"),
    Kind.STOPPED: ("stop", "refused", "stopped"),
    Kind.DIED: ("died", "died", "died"),
    Kind.DONE: ("done", "done", "done"),
    Kind.REPLAY_FAILED: ("err", "rejected", "replay-failed"),
}

#: the legend keys of the marks that end an attempt
ENDINGS = ("fenced", "stopped", "died", "done", "replay-failed")


def _assembled(w: AnyWrite) -> bool:
    """An applied write of a candidate: its attempt assembled its digest."""
    return w["store"] == "candidate" and w["applied"]


def _producer(e: Event) -> int | None:
    """The attempt an event's mark belongs to: an acceptance's or refusal's producer, else its own."""
    if e.kind is Kind.ACCEPTED:
        return payload(e, Accepted)["producer"]
    if e.kind is Kind.REFUSED:
        return payload(e, Refused)["producer"]
    return e.attempt


def _act(n: int, e: Event, index: int, latest: int, marks: list[tuple[Mark, int | None]]) -> None:
    """Append the mark attempt #n's own event `e` draws on its lifeline (a mark with no text:
    the event is drawn in another row and listed here too); `latest`: the latest attempt
    admitted before it."""
    work = "stale" if n < latest else "running"  # superseded by a later admission
    if e.kind is Kind.COMPUTED:
        c = payload(e, Computed)
        if c.get("wrong"):  # beyond the article's model: a wrong summary
            marks.append((Mark(f"s{c['step']}*", work, "step-wrong"), index))
        elif c.get("retry"):  # beyond it: a step the engine re-delivered (`retries`)
            marks.append((Mark(f"s{c['step']}r", "stale", "step-retry"), index))
        else:
            marks.append((Mark(f"s{c['step']}", work, "step"), index))
    elif e.kind is Kind.WRITE and _assembled(write(e)):
        marks.append((Mark("asm", work, "assemble"), index))
    elif e.kind is Kind.ADOPTED:  # beyond it: a fenced worker returns the owner's result
        marks.append((Mark(f"=#{payload(e, Adopted)['owner']}", "done", "adopted"), index))
    elif e.kind is Kind.SILENT:
        _fall_silent(marks, index)
    elif e.kind in LIFELINE_MARKS:
        text, cls, legend = LIFELINE_MARKS[e.kind]
        marks.append((Mark(text, cls or work, legend), index))
    else:
        marks.append((Mark("", "", ""), index))


def _between(a: AttemptState) -> Mark | None:
    """The mark of a tick without events of its own, from the attempt's state at the end of
    that tick: none once its program has ended (fenced, refused, done, or stuck by a failed
    replay; a crashed one stays silent), "?" while the controller records it UNKNOWN, "…"
    while it is silent, "·" while it waits."""
    if a.ended is not None or a.stuck:
        return None
    if a.status is Status.UNKNOWN:
        return Mark("?", "unknown", "still-unknown")
    if a.silent_since is not None:
        return Mark("…", "silent", "silent")
    return Mark("·", "waiting", "waiting")


def _fall_silent(marks: list[tuple[Mark, int | None]], index: int) -> None:
    """Falling silent: right after a step it turns that step's mark into "s2…"."""
    if marks and marks[-1][0].legend in ("step", "step-wrong"):
        prev, at = marks[-1]
        marks[-1] = (Mark(prev.text + "…", "silent", "silent"), at)
        marks.append((Mark("", "silent", "silent"), index))
    else:
        marks.append((Mark("…", "silent", "silent"), index))


def _kept(did: list[tuple[Mark, int | None]]) -> list[tuple[Mark, int | None]]:
    """The marks an attempt's cell draws of what it did in a tick."""
    kept = [(m, at) for m, at in did if m.text]
    if any(m.legend in ENDINGS for m, _ in kept):
        # the end of the attempt says what became of its last action
        kept = [(m, at) for m, at in kept if m.text not in ("asm", "post", "wake")]
    if not kept:  # only events drawn in other rows (restores, writes)
        kept = [(Mark("·", "waiting", "waiting"), None)]
    return kept


def version_read(trace: Trace, e: Event) -> int:
    """The 1-based report version a model call (`computed` event `e`) read: its attempt's pin,
    else the version current at its tick (the engine's state at that tick)."""
    s = trace.state_at(e.tick)
    pin = s.attempts[(e.attempt or 0) - 1].pin
    return (s.version if pin is None else pin) + 1


class _Builder:
    def __init__(self, trace: Trace, until: int | None, lines: dict[Hashable, str] | None = None) -> None:
        self.trace = trace
        self.lines = lines
        last = trace.last_tick if until is None else max(0, min(until, trace.last_tick))
        self.ticks = tuple(range(last + 1))
        self.last = last
        self.events = [(i, e) for i, e in enumerate(trace.events) if e.tick <= last]
        self.breaks = breaking_events(trace)  # the invariants' breaks (sim.properties)
        self.sections = trace.schedule.sections
        setup = trace.states[0].setup
        #: a run with several effects or dependants (a workflow's) has a row for each, named
        self.effects = tuple(r.name for r in setup.receivers) if setup.named else ()
        self.dependants = tuple((d.name, d.ready) for d in setup.dependants) if setup.named else ()
        #: a workflow may declare no dependant: then there is no newsletter row at all
        self.dependant_rows = bool(setup.dependants)
        # row key -> tick -> (marks, events, broke)
        self.cells: dict[str, dict[int, tuple[list[Mark], list[int], list[str]]]] = {}
        self.used: dict[str, tuple[str, str]] = {}  # legend key -> first (symbol, class) using it
        # what each result id was computed from: result -> version read
        self.read_version = {payload(e, Computed)["result"]: version_read(trace, e)
                             for e in trace.events if e.kind is Kind.COMPUTED}  # fmt: skip

    def latest(self, tick: int) -> int:
        """The latest attempt admitted before the workers act in `tick` (0: none yet): the
        attempts of the state at the end of the tick before (admissions are the controller's,
        which acts last in a tick). A write of an earlier attempt is stale."""
        return len(self.trace.state_at(tick - 1).attempts) if tick > 0 else 0

    # -- cells ---------------------------------------------------------------------------
    def add(self, row: str, tick: int, mark: Mark, index: int | None, broke: tuple[str, ...] = ()) -> None:
        marks, events, names = self.cells.setdefault(row, {}).setdefault(tick, ([], [], []))
        self.used.setdefault(mark.legend, (mark.text, mark.cls))
        if broke:
            mark = dataclasses.replace(mark, text=mark.text + "!", cls="violation")
            self.used.setdefault("broke", ("!", "violation"))
            for name in broke:
                if name not in names:
                    names.append(name)
        marks.append(mark)
        if index is not None and index not in events:
            events.append(index)

    def note(self, row: str, tick: int, index: int) -> None:
        """An event this cell shows without a mark of its own."""
        _, events, _ = self.cells.setdefault(row, {}).setdefault(tick, ([], [], []))
        if index not in events:
            events.append(index)

    # -- rows ------------------------------------------------------------------------------
    def grid(self) -> Grid:
        self.report()
        attempts = self.attempts()
        self.records()
        self.newsletter()
        rows = [self.row("report", "Report", "report")]
        for n, token in attempts:
            rows.append(self.row(f"attempt:{n}", f"#{n} T{token}", "attempts"))
        if "controller" in self.cells:  # only a run whose controller restarted has this row
            rows.append(self.row("controller", "Controller", "controller"))
        names = self.trace.schedule.names  # a workflow's step names, in run order (s1.. otherwise)
        for s in range(1, self.sections + 1):
            rows.append(self.row(f"journal:{s}", f"Journal {names[s - 1] if names else f's{s}'}", "journal"))
        rows.append(self.row("digest", "Digest", "digest"))
        if self.effects:  # a workflow's run with several effects or dependants: a row for each, named
            rows += [self.row(f"feed:{name}", name, "feed") for name in self.effects]
        else:
            rows.append(self.row("feed", "Feed post", "feed"))
        if self.dependants:
            rows += [self.row(f"newsletter:{name}", name, "newsletter") for name, _ in self.dependants]
        elif self.dependant_rows:
            rows.append(self.row("newsletter", "Newsletter", "newsletter"))
        legend = tuple(
            LegendEntry(key, group, *self.used[key], meaning)
            for key, (group, _, _, meaning) in LEGEND.items()
            if key in self.used
        )
        story = tuple((t, line) for t, line in tick_story(self.trace, self.last, self.lines))
        return Grid(
            ticks=self.ticks,
            rows=tuple(rows),
            legend=legend,
            story=story,
            violations=self.violations(),
            last_tick=self.trace.last_tick,
            switches=self.trace.switches.as_dict(),
        )

    def row(self, key: str, label: str, group: str) -> Row:
        by_tick = self.cells.get(key, {})
        cells = []
        for t in self.ticks:
            if t in by_tick:
                marks, events, broke = by_tick[t]
                cells.append(Cell(tuple(marks), tuple(events), tuple(broke)))
            else:
                cells.append(EMPTY)
        return Row(key, label, group, tuple(cells))

    def report(self) -> None:
        self.add("report", 0, Mark("v1", "input", "report"), None)
        for i, e in self.events:
            if e.kind is Kind.REPORT_CHANGED:
                self.add("report", e.tick, Mark(f"v{payload(e, ReportChanged)['version']}", "changed", "report"), i)
            elif e.kind is Kind.MUTATED:  # beyond the article's model
                self.add("report", e.tick, Mark(f"s{payload(e, Mutated)['section']}~", "changed", "mutated"), i)
            elif e.kind is Kind.CODE_CHANGED:  # beyond the article's model
                self.add("report", e.tick, Mark(f"c{payload(e, CodeChanged)['code']}", "changed", "code"), i)

    def attempts(self) -> list[tuple[int, int]]:
        """One lifeline per attempt; returns (attempt, token) in admission order."""
        admitted = [(e.attempt or 0, payload(e, Admitted)["token"]) for _, e in self.events if e.kind is Kind.ADMITTED]
        by_tick: dict[int, list[tuple[int, Event]]] = {}
        for i, e in self.events:
            by_tick.setdefault(e.tick, []).append((i, e))
        for t in self.ticks:
            acted: dict[int, list[tuple[Mark, int | None]]] = {}
            latest = self.latest(t)
            for i, e in by_tick.get(t, ()):
                n = _producer(e)
                if n is None:
                    continue
                marks = acted.setdefault(n, [])
                if e.kind is Kind.ADMITTED:
                    marks.append((Mark(f"T{payload(e, Admitted)['token']}", "admitted", "admitted"), i))
                else:
                    _act(n, e, i, latest, marks)
            for a in self.trace.state_at(t).attempts:  # the attempts admitted by the end of t
                self.lifeline_cell(f"attempt:{a.n}", t, a, acted.get(a.n))
        return admitted

    def lifeline_cell(self, row: str, t: int, a: AttemptState, did: list[tuple[Mark, int | None]] | None) -> None:
        """An attempt's cell at tick `t`: what it did there, else what it is between its events."""
        if did:
            for m, at in _kept(did):
                self.add(row, t, m, at)
            for _, at in did:
                if at is not None:
                    self.note(row, t, at)
        else:
            between = _between(a)
            if between is not None:
                self.add(row, t, between, None)

    def journal_mark(self, step: Step, applied: bool, index: int, stale: bool) -> tuple[Mark, tuple[str, ...]]:
        version = self.read_version.get(step[1])
        text = f"v{version}" if version is not None else step[1]
        if not applied:
            return Mark(f"✗{text}", "rejected", "rejected"), ()
        if stale:
            return Mark(text, "stale", "written"), self.breaks.get(index, ())
        return Mark(text, "written", "written"), ()

    def records(self) -> None:
        for i, e in self.events:
            t = e.tick
            broke = self.breaks.get(i, ())
            if e.kind is Kind.RESTORED:
                self.add(f"journal:{payload(e, Restored)['step']}", t, Mark("↺", "restored", "restored"), i)
            elif e.kind is Kind.WRITE:
                self.write_marks(write(e), i, t, superseded(e, self.latest(t)), broke)
            elif e.kind is Kind.ACCEPTED:
                a = payload(e, Accepted)
                if a["version"] is not None:
                    mark = Mark(f"✓v{a['version']}", "accepted", "accepted")
                else:
                    mark = Mark(f"✓{a['digest']}", "accepted", "accepted-unversioned")
                self.add("digest", t, mark, i, broke)
            elif e.kind is Kind.REFUSED:
                self.add("digest", t, Mark(f"✗{payload(e, Refused)['digest']}", "refused", "refused"), i)
            elif e.kind is Kind.FEED:
                self.feed_mark(payload(e, Feed), i, t, broke)
            elif e.kind is Kind.SENT:
                self.note(self.feed_row(payload(e, Sent).get("effect")), t, i)
            elif e.kind is Kind.EXPIRED:  # beyond the article's model: the key's retention ran out
                self.add(self.feed_row(payload(e, Expired).get("effect")), t, Mark("forgot", "rejected", "expired"), i)
            elif e.kind is Kind.RETRACTED:  # beyond it: a correction retracts an earlier copy
                retracted = payload(e, Retracted)
                self.add(self.feed_row(retracted.get("effect")), t, Mark(f"↶{retracted['post']}", "refused", "retracted"), i)
            elif e.kind is Kind.LOST:  # beyond the article's model: a store's records are gone
                journal = [f"journal:{s}" for s in range(1, self.sections + 1)]
                feeds = [f"feed:{name}" for name in self.effects] or ["feed"]
                rows = {"acceptances": ["digest"], "effects": feeds}.get(payload(e, Lost)["store"], journal)
                for row in rows:
                    self.add(row, t, Mark("lost", "rejected", "lost"), i)
            elif e.kind is Kind.CONTROLLER_DOWN:  # beyond the article's model: a controller outage
                self.add("controller", t, Mark("down", "died", "controller-down"), i)
                for off in range(t + 1, min(payload(e, ControllerDown)["until"], self.last + 1)):
                    self.add("controller", off, Mark("…", "silent", "controller-off"), None)
            elif e.kind is Kind.CONTROLLER_UP:
                self.add("controller", t, Mark("up", "admitted", "controller-up"), i)
        self.unconfirmed()

    def feed_row(self, effect: str | None) -> str:
        """The row of an effect's event (`effect`: its effect, named in a run with several): the
        one feed row, or the effect's own."""
        return "feed" if effect is None else f"feed:{effect}"

    def feed_mark(self, f: Feed, i: int, t: int, broke: tuple[str, ...]) -> None:
        """A receiver's answer: the post applied, a repeat, a rejection, or what a read-back found."""
        row, answer = self.feed_row(f.get("effect")), f["answer"]
        if answer == "applied":
            self.add(row, t, Mark(f["post"] or "", "posted", "posted"), i, broke)
        elif answer in ("repeat", "found"):  # a resend answered, or a read-back finding the post
            self.add(row, t, Mark(f"={f['post']}", "repeat", "repeat"), i)
        elif answer == "absent":  # a read-back finding nothing: the send that follows shows
            self.note(row, t, i)
        else:
            self.add(row, t, Mark("✗P", "rejected", "feed-rejected"), i)

    def write_marks(self, w: AnyWrite, i: int, t: int, stale: bool, broke: tuple[str, ...]) -> None:
        """The marks of a protected write: its step records, its candidate or its effect record."""
        if w["store"] == "effect":
            symbol, legend = ("i", "intent") if w["record"] == "intent" else ("✓", "confirmed")
            row = self.feed_row(w.get("effect"))
            if not w["applied"]:
                self.add(row, t, Mark(f"✗{symbol}", "rejected", "intent-rejected"), i)
            else:
                self.add(row, t, Mark(symbol, "stale" if stale else legend, legend), i, broke)
            return
        for step in w["steps"]:
            mark, why = self.journal_mark(step, w["applied"], i, stale)
            self.add(f"journal:{step[0]}", t, mark, i, why)
        if w["store"] == "candidate":
            if not w["applied"]:
                self.add("digest", t, Mark(f"✗◇{w['digest']}", "rejected", "candidate-rejected"), i)
            else:
                self.add("digest", t, Mark(f"◇{w['digest']}", "stale" if stale else "candidate", "candidate"), i, broke)

    def unconfirmed(self) -> None:
        """The effect lifecycle between its intent and its confirmation: in a tick that begins and
        ends with an effect record that is an intent (the engine's states at the end of the tick
        before and of this one), the effect is intended but unconfirmed, whatever the feed did;
        an empty cell of the feed row then shows "?" (of its effect's row, in a run with several:
        the record key names the effect after the first, `records.effect_key`)."""
        states = self.trace.state_at
        for t in range(1, self.last + 1):
            now = states(t).effects
            for d, r in states(t - 1).effects:
                if r == "intent" and (d, r) in now:
                    row = self.feed_row(self.effects[effect_of_key(d, self.effects)[1]] if self.effects else None)
                    if t not in self.cells.setdefault(row, {}):
                        self.add(row, t, Mark("?", "unknown", "unconfirmed"), None)

    def newsletter(self) -> None:
        """Each dependant's row: waiting from its ready tick, then the figure it starts quoting
        (the one newsletter row, or a row per dependant in a run with several)."""
        rows: list[tuple[str, str | None, int]] = [(f"newsletter:{name}", name, ready) for name, ready in self.dependants]
        if not rows and self.dependant_rows:
            rows = [("newsletter", None, self.trace.schedule.newsletter_ready)]
        for row, name, ready in rows:
            start = None
            for i, e in self.events:
                if e.kind is Kind.NEWSLETTER and payload(e, Newsletter).get("dependant") == name:
                    start = e.tick
                    quote = payload(e, Newsletter)["quote"]
                    self.add(row, e.tick, Mark(quote, "started", "newsletter"), i, self.breaks.get(i, ()))
            end = self.last if start is None else start - 1
            for t in range(ready, end + 1):
                self.add(row, t, Mark("·", "waiting", "newsletter-waiting"), None)

    # -- violations ------------------------------------------------------------------------
    def violations(self) -> tuple[Violation, ...]:
        def row_of(name: str, tick: int) -> str:
            for key, by_tick in self.cells.items():
                if name in by_tick.get(tick, ((), (), ()))[2]:
                    return key
            return ""

        first: dict[str, int] = {}
        for i, names in sorted(self.breaks.items()):
            if self.trace.events[i].tick > self.last:
                continue
            for name in names:
                first.setdefault(name, i)
        out = []
        for name in sorted(first):
            i = first[name]
            e = self.trace.events[i]
            prop = BY_NAME[name]
            out.append(Violation(
                invariant=name,
                description=prop.description,
                tick=e.tick,
                event=i,
                event_text=describe(e),
                why=prop.why(self.trace, i),
                row=row_of(name, e.tick),
                guarded_by=prop.guard.switch if prop.guard is not None else "",
            ))  # fmt: skip
        return tuple(out)
