"""The overview map of the sweep: all 864 runs on one Karnaugh-style grid.

The eight swept switches are folded onto two axes: the rows are what happens to the work
(`change`, `silent`, `post_death`) and the cost lever (`checkpoints`), 24 rows; the columns
are the four protections (`rule`, `key`, `fencing`, `pins`), 36 columns; one cell per run.
Along each axis the values follow a reflected (Gray) order, so two neighbouring rows or
columns differ in exactly one switch, by one value: a block that lights up across a row
boundary is the same run with one flip. The three-valued switches are outermost so that their
headings have room; gaps widen between the outer blocks.

A cell is coloured by the invariants its run breaks: one colour per invariant, a cell that
breaks several is split into stripes (one per invariant, in the summary's order), a run that
breaks none is pale grey; a dot marks a run that does not finish. Every cell carries a
`<title>` naming the run (its id and the switches that differ from the worked example), the
invariants it breaks with their ticks and whether it finishes, so the colour is never the
only carrier.

`build(doc)` computes the geometry once from the sweep document (`sweep.json`); `render_svg`
draws it as `reports/sweep-map.svg` (written by `sim sweep`, shown by `sweep.md`) and, with
`standalone=False`, as the map at the top of the explainer page, whose script adds hover and
click. Deterministic to the byte: fixed order, integer coordinates, no timestamps.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from sim.model.switches import SWITCHES, Switches

Document = dict[str, Any]

#: the row axis, outermost first: the events, then the cost lever
ROW_SWITCHES = ("change", "silent", "post_death", "checkpoints")
#: the column axis, outermost first: the four protections
COLUMN_SWITCHES = ("rule", "key", "fencing", "pins")

#: a cell's side, the extra space before a new block at each axis level (outermost first)
CELL = 20
GAPS = (8, 4, 2, 1)
#: the heading text: size and the advance of one character of the monospace font
FONT = 10
CHAR = 6.1
LINE = 16
MARGIN = 8

#: one colour per invariant (Okabe-Ito, distinguishable with the common colour deficiencies),
#: in the order of the summary's invariants (sorted by name)
COLOURS = ("#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#0A3D91")
HOLDS = "#e6e6df"


@dataclass(frozen=True, slots=True)
class Span:
    """An axis heading: one switch value over `count` consecutive rows or columns."""

    switch: str
    value: str
    start: int
    count: int


@dataclass(frozen=True, slots=True)
class MapCell:
    """One run on the map: where it is and what it broke."""

    run: int
    row: int
    column: int
    #: the switches that differ from the worked example, as `name=value`
    label: tuple[str, ...]
    #: (invariant, tick) per broken invariant, by tick
    broken: tuple[tuple[str, int], ...]
    finished: bool

    def title(self) -> str:
        """What the cell says in words: the run, what it broke and when, whether it finishes."""
        which = f"({' '.join(self.label)})" if self.label else "(the worked example)"
        verdict = "breaks " + ", ".join(f"{name} t{t}" for name, t in self.broken) if self.broken else "all invariants hold"
        return f"Run {self.run} {which}: {verdict}; {'finishes' if self.finished else 'does not finish'}"


@dataclass(frozen=True, slots=True)
class Overview:
    """The map's geometry: each axis (its value tuples and per level the headings), the cells
    in run order, and the invariants in colour order."""

    rows: tuple[tuple[str, ...], ...]
    columns: tuple[tuple[str, ...], ...]
    row_spans: tuple[tuple[Span, ...], ...]
    column_spans: tuple[tuple[Span, ...], ...]
    cells: tuple[MapCell, ...]
    invariants: tuple[str, ...]

    def colour(self, invariant: str) -> str:
        return COLOURS[self.invariants.index(invariant)]


def gray(switches: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Every combination of these switches' values in reflected mixed-radix Gray order:
    neighbours differ in one switch, by one value (the inner order reverses in every other
    block of the outer switch)."""
    if not switches:
        return [()]
    inner = gray(switches[1:])
    out: list[tuple[str, ...]] = []
    for k, member in enumerate(SWITCHES[switches[0]]):
        out += [(member.value, *rest) for rest in (inner if k % 2 == 0 else inner[::-1])]
    return out


def spans(axis: list[tuple[str, ...]], switches: tuple[str, ...]) -> tuple[tuple[Span, ...], ...]:
    """Per level, the headings: consecutive positions sharing that level's value and every
    outer one."""
    levels = []
    for level, name in enumerate(switches):
        found: list[Span] = []
        for k, values in enumerate(axis):
            if found and axis[found[-1].start][: level + 1] == values[: level + 1]:
                last = found[-1]
                found[-1] = Span(name, last.value, last.start, last.count + 1)
            else:
                found.append(Span(name, values[level], k, 1))
        levels.append(tuple(found))
    return tuple(levels)


def build(doc: Document) -> Overview:
    """The map of the sweep document: each run at its row and column."""
    rows = gray(ROW_SWITCHES)
    columns = gray(COLUMN_SWITCHES)
    row_of = {values: k for k, values in enumerate(rows)}
    column_of = {values: k for k, values in enumerate(columns)}
    axes = set(ROW_SWITCHES) | set(COLUMN_SWITCHES)
    if axes != set(doc["summary"]["order"]):
        raise ValueError(f"overview: the axes hold {sorted(axes)}, the sweep varies {doc['summary']['order']}")
    worked = Switches().as_dict()  # a label names what differs from it, as `Switches.label` does
    cells = []
    for run in doc["runs"]:
        s = run["switches"]
        out = run["outcome"]
        broken = sorted(((v["invariant"], v["tick"]) for v in out["violations"]), key=lambda b: (b[1], b[0]))
        cells.append(MapCell(
            run=run["id"],
            row=row_of[tuple(s[n] for n in ROW_SWITCHES)],
            column=column_of[tuple(s[n] for n in COLUMN_SWITCHES)],
            label=tuple(f"{n}={v}" for n, v in s.items() if v != worked.get(n)),
            broken=tuple(broken),
            finished=out["finished"],
        ))  # fmt: skip
    return Overview(
        rows=tuple(rows),
        columns=tuple(columns),
        row_spans=spans(rows, ROW_SWITCHES),
        column_spans=spans(columns, COLUMN_SWITCHES),
        cells=tuple(cells),
        invariants=tuple(doc["summary"]["invariants"]),
    )


# -- drawing -------------------------------------------------------------------------------
def offsets(axis: tuple[tuple[str, ...], ...]) -> list[int]:
    """Each position's offset along an axis: cells of CELL, and a gap before a new block
    (the gap of the outermost level that changes)."""
    out = []
    at = 0
    for k, values in enumerate(axis):
        if k:
            level = next(i for i, (a, b) in enumerate(zip(axis[k - 1], values)) if a != b)
            at += CELL + GAPS[level]
        out.append(at)
    return out


def _width(text: str) -> int:
    return int(len(text) * CHAR + 0.999)


def _text(x: int, y: int, text: str, anchor: str = "start", cls: str = "ov-t") -> str:
    a = "" if anchor == "start" else f' text-anchor="{anchor}"'
    return f'<text x="{x}" y="{y}" class="{cls}"{a}>{html.escape(text)}</text>'


def _cell(ov: Overview, cell: MapCell, x: int, y: int) -> str:
    """A run's square: its stripes (or the pale square), its unfinished dot, its title."""
    parts = [f'<g data-run="{cell.run}" transform="translate({x} {y})"><title>{html.escape(cell.title())}</title>']
    names = [n for n in ov.invariants if any(b[0] == n for b in cell.broken)]
    if not names:
        parts.append(f'<rect width="{CELL}" height="{CELL}" class="ov-h"/>')
    for k, name in enumerate(names):  # stripes of equal width, the last one takes the rest
        left = CELL * k // len(names)
        right = CELL * (k + 1) // len(names)
        parts.append(f'<rect x="{left}" width="{right - left}" height="{CELL}" class="ov-{ov.invariants.index(name)}"/>')
    if not cell.finished:
        parts.append(f'<circle cx="{CELL // 2}" cy="{CELL // 2}" r="3.5" class="ov-u"/>')
    parts.append("</g>")
    return "".join(parts)


def _style(ov: Overview) -> str:
    fills = "".join(f".ov-{k}{{fill:{c}}}" for k, c in enumerate(COLOURS[: len(ov.invariants)]))
    return (
        f'.ov-t{{font:{FONT}px "DejaVu Sans Mono",ui-monospace,Menlo,Consolas,monospace;fill:#3a3a3a}}'
        f'.ov-n{{font:600 {FONT}px "DejaVu Sans Mono",ui-monospace,Menlo,Consolas,monospace;fill:#1b1b1b}}'
        f".ov-l{{stroke:#9a9a92;stroke-width:1}}.ov-h{{fill:{HOLDS}}}{fills}"
        ".ov-u{fill:#1b1b1b;stroke:#fff;stroke-width:1.2}.ov-sel{fill:none;stroke:#1b1b1b;stroke-width:3}"
    )


def _column_headings(ov: Overview, xs: list[int], left: int) -> list[str]:
    """A line per level above the cells, each value centred over its span (ruled under it
    when wider than a cell), the switch's name right-aligned before the line."""
    out = []
    for level, line in enumerate(ov.column_spans):
        y = MARGIN + LINE * (level + 1) - 4
        out.append(_text(left - 6, y, COLUMN_SWITCHES[level], "end", "ov-n"))
        for s in line:
            x0 = left + xs[s.start]
            x1 = left + xs[s.start + s.count - 1] + CELL
            out.append(_text((x0 + x1) // 2, y, s.value, "middle"))
            if s.count > 1:
                out.append(f'<line x1="{x0}" y1="{y + 3}" x2="{x1}" y2="{y + 3}" class="ov-l"/>')
    return out


def _row_headings(ov: Overview, ys: list[int], top: int, widths: list[int]) -> list[str]:
    """A column per level left of the cells, each value at the middle of its span (ruled
    beside it when taller than a cell), the switch's name above the column."""
    out = []
    x = MARGIN
    for level, line in enumerate(ov.row_spans):
        out.append(_text(x, top - 6, ROW_SWITCHES[level], "start", "ov-n"))
        rule = x + widths[level] - 5
        for s in line:
            y0 = top + ys[s.start]
            y1 = top + ys[s.start + s.count - 1] + CELL
            out.append(_text(x, (y0 + y1) // 2 + 4, s.value))
            if s.count > 1:
                out.append(f'<line x1="{rule}" y1="{y0}" x2="{rule}" y2="{y1}" class="ov-l"/>')
        x += widths[level]
    return out


def _legend(ov: Overview, left: int, right: int, y: int) -> tuple[list[str], int]:
    """Under the cells, wrapped at their right edge: a swatch per invariant, the pale
    square, stripes, the dot; and how many lines it took."""
    last = len(ov.invariants) - 1
    items = [(f'<rect width="12" height="12" class="ov-{k}"/>', name) for k, name in enumerate(ov.invariants)]
    items += [
        ('<rect width="12" height="12" class="ov-h"/>', "all invariants hold"),
        (f'<rect width="6" height="12" class="ov-0"/><rect x="6" width="6" height="12" class="ov-{last}"/>',
         "stripes: several broken"),
        ('<rect width="12" height="12" class="ov-h"/><circle cx="6" cy="6" r="3.5" class="ov-u"/>', "does not finish"),
    ]  # fmt: skip
    out = []
    x = left
    lines = 1
    for swatch, words in items:
        step = 18 + _width(words) + 16
        if x + step > right and x > left:
            x = left
            y += LINE + 2
            lines += 1
        out.append(f'<g transform="translate({x} {y})">{swatch}</g>' + _text(x + 18, y + 10, words))
        x += step
    return out, lines


def render_svg(ov: Overview, standalone: bool = True) -> str:
    """The map as SVG: the column headings above, the row headings at the left, the cells,
    and the legend under them. `standalone`: an SVG file with its XML declaration;
    otherwise an element for the explainer page, with a selection frame its script moves."""
    xs = offsets(ov.columns)
    ys = offsets(ov.rows)
    # row heading columns: as wide as the switch's name or its longest value
    widths = [max(_width(n), *(_width(m.value) for m in SWITCHES[n])) + 10 for n in ROW_SWITCHES]
    left = MARGIN + sum(widths)
    top = MARGIN + LINE * (len(COLUMN_SWITCHES) + 1)
    grid_w = xs[-1] + CELL
    grid_h = ys[-1] + CELL
    out = _column_headings(ov, xs, left) + _row_headings(ov, ys, top, widths)
    out.append('<g class="ov-cells">')  # the cells, in run order
    out += [_cell(ov, c, left + xs[c.column], top + ys[c.row]) for c in ov.cells]
    out.append("</g>")
    if not standalone:
        out.append(f'<rect id="map-sel" class="ov-sel" x="0" y="0" width="{CELL + 2}" height="{CELL + 2}" visibility="hidden"/>')
    legend, lines = _legend(ov, left, left + grid_w, top + grid_h + 14)
    out += legend
    width = left + grid_w + MARGIN
    height = top + grid_h + 14 + lines * (LINE + 2) + MARGIN
    label = (
        f"Overview map of the {len(ov.cells)} runs: rows {', '.join(ROW_SWITCHES)}; "
        f"columns {', '.join(COLUMN_SWITCHES)}; each cell coloured by the invariants its run breaks"
    )
    head = (
        "<svg"
        + (' xmlns="http://www.w3.org/2000/svg"' if standalone else ' id="map" tabindex="0" aria-describedby="map-read"')
        + f' viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="group" aria-label="{html.escape(label)}"'
        + f"><style>{_style(ov)}</style>"
    )
    prolog = '<?xml version="1.0" encoding="UTF-8"?>\n' if standalone else ""
    body = "\n".join([head, *out, "</svg>"])
    return prolog + body + ("\n" if standalone else "")


def render_map(doc: Document) -> str:
    """`reports/sweep-map.svg`: the overview map of the sweep document."""
    return render_svg(build(doc))


__all__ = ["COLUMN_SWITCHES", "ROW_SWITCHES", "MapCell", "Overview", "Span", "build", "gray", "render_map", "render_svg"]
