"""Two runs side by side, the article's "one change at a time".

`compare` lines up two traces and their outcomes: the outcome figures with their deltas, the
invariants that appear or disappear, the first tick where the two swimlanes differ, and
every differing cell from there. `lines` draws it for the terminal; `Comparison.to_json`
is the same as one JSON document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text

from sim.properties.outcome import Outcome
from sim.properties import ALL_HOLD
from sim.render import swimlane
from sim.render.grid import Grid, Violation, build
from sim.render.text import brief, tick_story
from sim.engine.trace import Event, Trace


@dataclass(frozen=True, slots=True)
class Figure:
    field: str
    label: str
    a: Any
    b: Any
    shown_a: str
    shown_b: str
    delta: str

    @property
    def changed(self) -> bool:
        return bool(self.a != self.b)

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "a": self.a, "b": self.b, "delta": self.delta}


@dataclass(frozen=True, slots=True)
class Side:
    title: str
    trace: Trace
    outcome: Outcome
    grid: Grid


@dataclass(frozen=True, slots=True)
class Comparison:
    a: Side
    b: Side
    figures: tuple[Figure, ...]
    #: first tick where the two swimlanes differ (None: identical)
    divergence: int | None
    #: first tick where the two event logs differ; earlier than `divergence` when only a
    #: record differs (a pin, a key) without changing what happens
    records_diverge: int | None
    #: (row key, tick, text in A, text in B) for every differing cell
    cells: tuple[tuple[str, int, str, str], ...]
    appeared: tuple[Violation, ...]
    disappeared: tuple[Violation, ...]
    both: tuple[tuple[Violation, Violation], ...]

    def to_json(self) -> dict[str, Any]:
        def side(s: Side) -> dict[str, Any]:
            return {"title": s.title, "switches": s.trace.switches.as_dict(), "outcome": s.outcome.to_json()}

        return {
            "a": side(self.a),
            "b": side(self.b),
            "figures": [f.to_json() for f in self.figures],
            "first_divergence": self.divergence,
            "records_diverge": self.records_diverge,
            "invariants": {
                "appeared": [{"invariant": v.invariant, "tick": v.tick, "event": v.event_text} for v in self.appeared],
                "disappeared": [{"invariant": v.invariant, "tick": v.tick} for v in self.disappeared],
                "both": [{"invariant": a.invariant, "tick_a": a.tick, "tick_b": b.tick} for a, b in self.both],
            },
            "cells": [{"row": r, "tick": t, "a": a, "b": b} for r, t, a, b in self.cells],
        }


def _tick(t: int | None) -> str:
    return "-" if t is None else f"t{t}"


def _figures(a: Outcome, b: Outcome) -> tuple[Figure, ...]:
    def number(field: str, label: str, x: int, y: int) -> Figure:
        return Figure(field, label, x, y, str(x), str(y), "" if x == y else f"{y - x:+d}")

    def tick(field: str, label: str, x: int | None, y: int | None) -> Figure:
        if x == y:
            delta = ""
        elif x is None or y is None:
            delta = "changed"
        else:
            delta = f"{y - x:+d} tick" + ("s" if abs(y - x) > 1 else "")
        return Figure(field, label, x, y, _tick(x), _tick(y), delta)

    def text(field: str, label: str, x: Any, y: Any, sx: str, sy: str) -> Figure:
        return Figure(field, label, x, y, sx, sy, "" if x == y else "changed")

    def calls(o: Outcome) -> str:
        return ", ".join(str(n) for n in o.model_calls_by_attempt)

    def yes(v: bool) -> str:
        return "yes" if v else "no"

    def quote(o: Outcome) -> str:
        return o.newsletter.quoted_revenue or "-"

    return (
        number("model_calls", "model calls", a.model_calls, b.model_calls),
        text(
            "model_calls_by_attempt", "  by attempt",
            list(a.model_calls_by_attempt), list(b.model_calls_by_attempt), calls(a), calls(b),
        ),
        number("steps_restored", "steps restored", a.steps_restored, b.steps_restored),
        number("stale_writes_rejected", "stale writes rejected", a.stale_writes_rejected, b.stale_writes_rejected),
        number("stale_writes_applied", "stale writes applied", a.stale_writes_applied, b.stale_writes_applied),
        number("posts_applied", "posts applied", a.posts_applied, b.posts_applied),
        tick("first_accepted_tick", "first acceptance", a.first_accepted_tick, b.first_accepted_tick),
        tick("confirmed_tick", "confirmed", a.confirmed_tick, b.confirmed_tick),
        tick("newsletter.start_tick", "newsletter starts", a.newsletter.start_tick, b.newsletter.start_tick),
        text(
            "newsletter.quoted_revenue", "newsletter quotes",
            a.newsletter.quoted_revenue, b.newsletter.quoted_revenue, quote(a), quote(b),
        ),
        text("finished", "finished", a.finished, b.finished, yes(a.finished), yes(b.finished)),
        tick("last_tick", "last tick", a.last_tick, b.last_tick),
        number("violations", "invariants broken", len(a.violations), len(b.violations)),
    )


def row_keys(*grids: Grid) -> list[str]:
    """The rows of both grids, in swimlane order (attempts merged by number)."""
    order = {"report": 0, "attempts": 1, "controller": 2, "journal": 3, "digest": 4, "feed": 5, "newsletter": 6}
    keys: dict[str, tuple[int, int]] = {}
    for g in grids:
        for row in g.rows:
            tail = row.key.split(":", 1)[1] if ":" in row.key else ""
            number = int(tail) if tail.isdigit() else len(keys)  # a named row (a workflow's effect) in order
            keys.setdefault(row.key, (order[row.group], number))
    return sorted(keys, key=lambda k: keys[k])


def compare(a: Side, b: Side) -> Comparison:
    ticks = range(max(a.grid.ticks[-1], b.grid.ticks[-1]) + 1)
    cells = []
    for key in row_keys(a.grid, b.grid):
        for t in ticks:
            ta, tb = a.grid.cell(key, t).text, b.grid.cell(key, t).text
            if ta != tb:
                cells.append((key, t, ta, tb))
    divergence = min((t for _, t, _, _ in cells), default=None)
    ea, eb = _by_tick(a.trace), _by_tick(b.trace)
    records = next((t for t in ticks if ea.get(t, []) != eb.get(t, [])), None)
    va = {v.invariant: v for v in a.grid.violations}
    vb = {v.invariant: v for v in b.grid.violations}
    return Comparison(
        a=a,
        b=b,
        figures=_figures(a.outcome, b.outcome),
        divergence=divergence,
        records_diverge=records,
        cells=tuple(cells),
        appeared=tuple(vb[n] for n in sorted(vb) if n not in va),
        disappeared=tuple(va[n] for n in sorted(va) if n not in vb),
        both=tuple((va[n], vb[n]) for n in sorted(va) if n in vb),
    )


def _by_tick(trace: Trace) -> dict[int, list[Event]]:
    """The run's events, grouped by tick."""
    out: dict[int, list[Event]] = {}
    for e in trace.events:
        out.setdefault(e.tick, []).append(e)
    return out


def side(title: str, trace: Trace, outcome: Outcome) -> Side:
    return Side(title, trace, outcome, build(trace))


# -- drawing ---------------------------------------------------------------------------------


def lines(c: Comparison, width: int) -> list[Text]:
    out = swimlane.wrap("A", c.a.title, width, indent=3, style=swimlane.TITLE_STYLE)
    out += swimlane.wrap("B", c.b.title, width, indent=3, style=swimlane.TITLE_STYLE)
    out.append(Text())
    out += figure_lines(c)
    out.append(Text())
    out += invariant_lines(c, width)
    out.append(Text())
    out += divergence_lines(c, width)
    return out


def figure_lines(c: Comparison) -> list[Text]:
    label = max(len(f.label) for f in c.figures)
    wa = max([len(f.shown_a) for f in c.figures] + [1])
    wb = max([len(f.shown_b) for f in c.figures] + [1])
    out = [Text(" " * (label + 2) + "A".ljust(wa + 2) + "B".ljust(wb + 2) + "B - A", style=swimlane.HEADER_STYLE)]
    for f in c.figures:
        line = Text(f.label.ljust(label + 2), style="bold" if f.changed else "")
        line.append(f.shown_a.ljust(wa + 2))
        line.append(f.shown_b.ljust(wb + 2), style="bold" if f.changed else "")
        line.append(f.delta, style="yellow")
        line.rstrip()
        out.append(line)
    return out


def invariant_lines(c: Comparison, width: int) -> list[Text]:
    if not (c.appeared or c.disappeared or c.both):
        return [Text(f"Invariants: {ALL_HOLD} in both runs", style=swimlane.STYLES["done"])]
    out = [Text("Invariants", style=swimlane.TITLE_STYLE)]
    for v in c.appeared:
        broke = f"{v.invariant} breaks at t{v.tick}: {v.event_text}"
        out += swimlane.wrap("  + in B", broke, width, indent=11, style="bold red")
        out += swimlane.wrap("", v.why, width, indent=11)
    for v in c.disappeared:
        held = f"{v.invariant} (broke at t{v.tick} in A) holds"
        out += swimlane.wrap("  - in B", held, width, indent=11, style="bold green")
    for va, vb in c.both:
        when = f"at t{va.tick}" if va.tick == vb.tick else f"at t{va.tick} in A, t{vb.tick} in B"
        out += swimlane.wrap("  = both", f"{va.invariant} breaks {when}", width, indent=11)
    return out


def _first_difference(c: Comparison, tick: int) -> str:
    """The first pair of events of `tick` that differ, in the story's short words."""
    ea = [e for e in c.a.trace.events if e.tick == tick]
    eb = [e for e in c.b.trace.events if e.tick == tick]
    pair = next(((x, y) for x, y in zip(ea, eb) if x != y), None)
    if pair is None:
        return ""
    (who, pa), (_, pb) = brief(pair[0], c.a.trace), brief(pair[1], c.b.trace)
    return f" ({who} {pa} / {pb})".replace("( ", "(")


def divergence_lines(c: Comparison, width: int) -> list[Text]:
    d = c.divergence
    if d is None:
        if c.records_diverge is None:
            return [Text("The two runs are identical, tick by tick.")]
        return [Text(f"The swimlanes are identical; the records first differ at t{c.records_diverge}.")]
    out = [Text(f"First divergence at t{d}", style="bold yellow")]
    story_a = dict(tick_story(c.a.trace))
    story_b = dict(tick_story(c.b.trace))
    out += swimlane.wrap("  A", story_a.get(d, "(nothing happens)"), width, indent=5)
    out += swimlane.wrap("  B", story_b.get(d, "(nothing happens)"), width, indent=5)
    r = c.records_diverge
    if r is not None and r < d:
        out += swimlane.wrap(
            "  note", f"the records already differ from t{r}{_first_difference(c, r)}, without changing what happens",
            width, indent=8, style="dim",
        )  # fmt: skip
    out.append(Text())
    ticks = list(range(d, max(c.a.grid.ticks[-1], c.b.grid.ticks[-1]) + 1))
    highlight = frozenset((key, t) for key, t, _, _ in c.cells)
    lay = swimlane.layout([c.a.grid, c.b.grid], ticks, highlight)
    n_cells = len(c.cells)
    out += swimlane.wrap(
        "", f"Both swimlanes from t{d}; the {n_cells} differing cell{'s' if n_cells != 1 else ''} "
        "in [brackets]:", width, indent=0, style="dim",
    )  # fmt: skip
    for page in swimlane.pages(lay, ticks, width):
        for name, s in (("A", c.a), ("B", c.b)):
            out.append(Text())
            out += swimlane.wrap(f"{name} ", s.title, width, indent=2, style=swimlane.TITLE_STYLE)
            out += swimlane.grid_lines(s.grid, lay, page, highlight=highlight)
    return out
