"""The terminal swimlane: `sim.render.grid` drawn with Rich, plus legend, story and outcome.

Everything here returns lists of `rich.text.Text` lines, each no wider than the width it was
given; the caller prints them on a Console. With colour off (piped, --no-color, NO_COLOR)
the same lines print as plain text, and every meaning stays readable from the symbols alone:
colour only repeats what the text already says.

Ticks that do not fit the width are wrapped into pages of columns, each page repeating the
row labels and the tick header.
"""

from __future__ import annotations

import errno
import sys
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from sim.properties.outcome import Outcome
from sim.properties import ALL_HOLD, BY_NAME
from sim.render.grid import Cell, Grid
from sim.render.lifecycle import TickState
from sim.render.text import outcome_lines
from sim.model.switches import Switches
from sim.engine.trace import Trace

#: style class -> Rich style. Colour repeats the text; it never carries meaning alone.
STYLES: dict[str, str] = {
    "input": "bold",
    "changed": "bold magenta",
    "admitted": "bold cyan",
    "running": "",
    "waiting": "dim",
    "silent": "dim italic",
    "unknown": "bold yellow",
    "stale": "magenta",
    "rejected": "bold red",
    "refused": "bright_red",
    "died": "bright_red",
    "done": "bold green",
    "written": "green",
    "restored": "bold green",
    "candidate": "bright_blue",
    "accepted": "bold green",
    "intent": "yellow",
    "posted": "bold",
    "repeat": "bold cyan",
    "confirmed": "green",
    "started": "bold green",
    "violation": "bold white on red",
    "empty": "",
}
DIFF_STYLE = "bold yellow"  # the brackets around a differing cell
HEADER_STYLE = "dim"
CURRENT_STYLE = "bold reverse"
TITLE_STYLE = "bold"
GAP = 2  # spaces between tick columns
LABEL_GAP = 2

#: plain-ASCII stand-ins for terminals that cannot encode the symbols.
ASCII = str.maketrans({"✓": "+", "✗": "x", "◇": "<", "↺": "@", "…": "~", "·": ".", "—": "-", "≠": "#"})

@dataclass(frozen=True, slots=True)
class Layout:
    """Column widths shared by every grid drawn with it (so a diff's grids line up)."""

    label_width: int
    widths: dict[int, int]

    def span(self, ticks: Iterable[int]) -> int:
        return self.label_width + LABEL_GAP + sum(self.widths[t] + GAP for t in ticks) - GAP


def cell_text(cell: Cell, highlighted: bool = False) -> str:
    text = cell.text
    return f"[{text or ' '}]" if highlighted else text


def layout(grids: Iterable[Grid], ticks: Iterable[int], highlight: frozenset[tuple[str, int]] = frozenset()) -> Layout:
    grids = list(grids)
    ticks = list(ticks)
    label = max((cell_len(r.label) for g in grids for r in g.rows), default=6)
    widths = {}
    for t in ticks:
        w = cell_len(f"t{t}")
        for g in grids:
            for row in g.rows:
                w = max(w, cell_len(cell_text(g.cell(row.key, t), (row.key, t) in highlight)))
        widths[t] = w
    return Layout(label, widths)


def pages(lay: Layout, ticks: list[int], width: int) -> list[list[int]]:
    """Ticks in as few pages as fit `width`, balanced in length (at least one tick a page)."""
    greedy: list[list[int]] = []
    page: list[int] = []
    for t in ticks:
        if page and lay.span(page + [t]) > width:
            greedy.append(page)
            page = []
        page.append(t)
    if page:
        greedy.append(page)
    size = -(-len(ticks) // len(greedy)) if greedy else 1
    even = [ticks[i : i + size] for i in range(0, len(ticks), size)]
    if len(even) == len(greedy) and all(lay.span(p) <= width for p in even):
        return even
    return greedy


def grid_lines(
    grid: Grid,
    lay: Layout,
    ticks: list[int],
    *,
    highlight: frozenset[tuple[str, int]] = frozenset(),
    upto: int | None = None,
    current: int | None = None,
    rows: list[str] | None = None,
) -> list[Text]:
    """One page: the tick header and one line per row (cells after `upto` left blank)."""
    header = Text(" " * (lay.label_width + LABEL_GAP))
    for k, t in enumerate(ticks):
        label = f"t{t}".ljust(lay.widths[t])
        header.append(label, style=CURRENT_STYLE if t == current else HEADER_STYLE)
        if k < len(ticks) - 1:
            header.append(" " * GAP)
    header.rstrip()
    lines = [header]
    keys = rows if rows is not None else [r.key for r in grid.rows]
    for key in keys:
        row = grid.row(key)
        label = row.label if row is not None else ""
        line = Text(label.ljust(lay.label_width) + " " * LABEL_GAP)
        for k, t in enumerate(ticks):
            cell = grid.cell(key, t) if upto is None or t <= upto else Cell()
            marked = (key, t) in highlight
            width = lay.widths[t]
            if marked:
                line.append("[", style=DIFF_STYLE)
            for m, mark in enumerate(cell.marks):
                if m:
                    line.append(" ")
                style = STYLES.get(mark.cls, "")
                line.append(mark.text, style=f"{style} underline".strip() if marked else style)
            if marked:
                line.append("]" if cell.marks else " ]", style=DIFF_STYLE)
            line.append(" " * (width - cell_len(cell_text(cell, marked))))
            if k < len(ticks) - 1:
                line.append(" " * GAP)
        line.rstrip()
        lines.append(line)
    return lines


def grid_block(
    grid: Grid,
    width: int,
    *,
    ticks: list[int] | None = None,
    upto: int | None = None,
    current: int | None = None,
) -> list[Text]:
    """The grid, wrapped into pages of ticks separated by a blank line."""
    ticks = list(grid.ticks) if ticks is None else ticks
    lay = layout([grid], ticks)
    out: list[Text] = []
    for n, page in enumerate(pages(lay, ticks, width)):
        if n:
            out.append(Text())
        out.extend(grid_lines(grid, lay, page, upto=upto, current=current))
    return out


def page_of(grid: Grid, width: int, tick: int) -> list[int]:
    """The page of ticks (as `grid_block` wraps them) that holds `tick`."""
    lay = layout([grid], grid.ticks)
    for page in pages(lay, list(grid.ticks), width):
        if tick in page:
            return page
    return [tick]


def wrap(prefix: str, text: str, width: int, indent: int | None = None, style: str = "") -> list[Text]:
    """`prefix` + text wrapped to `width`, continuation lines indented under the text."""
    indent = len(prefix) if indent is None else indent
    body = textwrap.wrap(text, width=max(20, width - indent), break_on_hyphens=False) or [""]
    lines = [Text(prefix.ljust(indent)) + Text(body[0], style=style)]
    lines += [Text(" " * indent) + Text(rest, style=style) for rest in body[1:]]
    return lines


def legend_lines(grid: Grid, width: int) -> list[Text]:
    """The legend entries this grid uses, one group a line (wrapped), symbols in their style."""
    groups: dict[str, list[tuple[str, str, str]]] = {}
    for entry in grid.legend:
        groups.setdefault(entry.group, []).append((entry.symbol, entry.cls, entry.meaning))
    label = max((len(g) for g in groups), default=0)
    indent = label + LABEL_GAP
    out: list[Text] = []
    for group, entries in groups.items():
        line = Text(group.ljust(label) + " " * LABEL_GAP)
        used = indent
        for k, (symbol, cls, meaning) in enumerate(entries):
            piece = cell_len(symbol) + 1 + cell_len(meaning)
            sep = 3 if k else 0
            if k and used + sep + piece > width:
                out.append(line)
                line = Text(" " * indent)
                used = indent
                sep = 0
            if sep:
                line.append(" " * sep)
            line.append(symbol, style=STYLES.get(cls, ""))
            line.append(" " + meaning, style="")
            used += sep + piece
        out.append(line)
    return out


def story_lines(grid: Grid, width: int, ticks: Iterable[int] | None = None) -> list[Text]:
    wanted = None if ticks is None else set(ticks)
    out: list[Text] = []
    for tick, text in grid.story:
        if tick > grid.ticks[-1] or (wanted is not None and tick not in wanted):
            continue
        out.extend(wrap(f"t{tick}", text, width, indent=5))
    return out


def protection_line(name: str, switches: Switches, stoppers: Mapping[str, list[str]] | None) -> str:
    """The "stop" line: the property's guard as these switches have it (`Property.guard_text`),
    then the single protections that, re-run, would have stopped the break."""
    line = BY_NAME[name].guard_text(switches)
    if stoppers is None or name not in stoppers:
        return line
    found = stoppers[name]
    if found:
        return line + f"; {' or '.join(found)} alone would have stopped it"
    return line + "; no single protection would have stopped it in this run"


def outcome_block(
    trace: Trace,
    result: Outcome,
    grid: Grid,
    width: int,
    *,
    stoppers: Mapping[str, list[str]] | None = None,
    so_far: int | None = None,
) -> list[Text]:
    """The outcome figures, then each broken invariant: tick, event, why, protection."""
    switches = trace.switches
    heading = "Outcome" if so_far is None else f"Outcome so far (t0..t{so_far} of t0..t{grid.last_tick})"
    out = [Text(heading, style=TITLE_STYLE)]
    for line in outcome_lines(result, trace, so_far):
        if line.startswith(("BROKEN", "invariants")):
            continue
        out.append(Text("  " + line))
    if not grid.violations:
        out.append(Text(f"  invariants           {ALL_HOLD}", style=STYLES["done"]))
        return out
    names = ", ".join(f"{v.invariant} (t{v.tick})" for v in grid.violations)
    out.extend(wrap("  BROKEN", names, width, indent=23, style="bold red"))
    for v in grid.violations:
        out.append(Text())
        out.append(Text(f"{v.invariant} broke at t{v.tick}", style="bold red"))
        out.extend(wrap("  rule", v.description, width, indent=9))
        out.extend(wrap("  event", f"t{v.tick} {v.event_text}", width, indent=9))
        out.extend(wrap("  why", v.why, width, indent=9))
        out.extend(wrap("  stop", protection_line(v.invariant, switches, stoppers), width, indent=9))
    return out


def screen(
    trace: Trace,
    result: Outcome,
    grid: Grid,
    *,
    title: str,
    width: int,
    stoppers: Mapping[str, list[str]] | None = None,
) -> list[Text]:
    """The whole `sim trace` screen: title, grid, legend, story, outcome and violations."""
    until = grid.ticks[-1] if grid.ticks[-1] < trace.last_tick else None
    span = f"t0..t{grid.ticks[-1]}" + (f" of t0..t{trace.last_tick}" if until is not None else "")
    out = wrap("", f"{title}  ({span})", width, indent=0, style=TITLE_STYLE)
    out.append(Text())
    out.extend(grid_block(grid, width))
    out.append(Text())
    out.extend(legend_lines(grid, width))
    out.append(Text())
    out.extend(story_lines(grid, width))
    out.append(Text())
    out.extend(outcome_block(trace, result, grid, width, stoppers=stoppers, so_far=until))
    return out


def state_lines(state: TickState, width: int) -> list[Text]:
    """The three lifecycles at the end of a tick (`sim.render.lifecycle`), one line each, an
    item that changed in that tick starred with its previous state ("was running", "new")."""
    out = [Text(f"state at the end of t{state.tick} (* changed in this tick)", style="bold")]
    for kind, label in (("attempts", "attempts"), ("artifacts", "digests"), ("effects", "effects")):
        items = [
            f"*{i.key} {i.state} ({'was ' + i.before if i.before else 'new'})" if i.changed else f"{i.key} {i.state}"
            for i in state.items(kind)
        ]
        out.extend(wrap(f"  {label}", ", ".join(items) or "none yet", width, indent=12))
    return out


def step_frame(grid: Grid, tick: int, width: int, title: str, state: TickState | None = None) -> list[Text]:
    """One tick of `--step`: the page of the grid holding `tick`, filled up to it, its story
    and, when given, the state at the end of the tick."""
    page = page_of(grid, width, tick)
    lay = layout([grid], page)
    out = wrap("", f"{title}  (t{tick} of t0..t{grid.ticks[-1]})", width, indent=0, style=TITLE_STYLE)
    out.append(Text())
    rows = [r.key for r in grid.rows if r.group != "attempts" or any(c.marks for c in r.cells[: tick + 1])]
    out.extend(grid_lines(grid, lay, page, upto=tick, current=tick, rows=rows))
    out.append(Text())
    story = story_lines(grid, width, [tick])
    out.extend(story or [Text(f"t{tick}".ljust(5) + "(nothing happens)", style="dim")])
    if state is not None:
        out.append(Text())
        out.extend(state_lines(state, width))
    return out


class _Console(Console):
    """Rich's Console, but a closed pipe is a BrokenPipeError for the command line to handle
    (`sim.cli`: quiet, exit 0) rather than Rich's own exit 1, which means "a check failed"."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "the reader of standard output went away")


def console(*, width: int | None = None, color: bool = True, file: object = None) -> Console:
    """A Console for these lines: plain text when not a terminal or when colour is off. Give
    it a `width` (`sim.commands.trace.make_console` does): without one Rich reads COLUMNS
    itself, even when the output is piped, and prints nothing at COLUMNS=0."""
    return _Console(
        file=file if file is not None else sys.stdout,  # type: ignore[arg-type]
        width=width,
        color_system="auto" if color else None,
        no_color=not color,
        highlight=False,
        markup=False,
        emoji=False,
    )


def needs_ascii(con: Console) -> bool:
    encoding = getattr(con.file, "encoding", None) or "utf-8"
    try:
        "✓✗◇↺…·".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return True
    return False


def emit(con: Console, lines: Iterable[Text]) -> None:
    """Print the lines as they are (they already fit the width)."""
    ascii_only = needs_ascii(con)
    for line in lines:
        if ascii_only:
            line = Text(line.plain.translate(ASCII))
        con.print(line, no_wrap=True, overflow="ignore", crop=False, soft_wrap=True)


def plain(lines: Iterable[Text]) -> str:
    """The lines as plain text (no colour), trailing spaces stripped: what goldens hold."""
    return "".join(line.plain.rstrip() + "\n" for line in lines)
