"""One run drawn on a page: the swimlane, its legend and story, the outcome figures.

The pieces every HTML page of `sim` shares to draw a run, so that the explainer
(`sim.render.explainer`, all 864 runs of the sweep) and the page of one run
(`sim.render.page`, `sim trace --html`) draw it with the same code:

- the encoding of a `Grid` into interned tables (`LaneEncoder`: texts, marks, cells, rows,
  legend entries and swimlanes, each distinct value stored once and referred to by its
  index; docs/explainer.md describes the format);
- the CSS of the swimlane and its legend, of the fact tables (outcome, verdicts) and of the
  tick-by-tick story (`LANE_CSS`, `STORY_CSS`), and the style of each grid class
  (`CLASS_STYLE`, `class_css`);
- the JavaScript that draws them (`LANE_HELPERS_JS`: `$`, `el`, `clear`, `glyphs`, `tick`;
  `LANE_DRAW_JS`: `laneTable`, `drawLegend`, `fact`, `val`, `drawOutcome`). Each is a run of
  function declarations, embedded inside the page's own script, whose scope must define
  `D` (the decoded data, holding the tables above), `INV` (invariant names by index) and
  `MEANING` (legend key -> meaning); `drawLegend` fills the elements `#legend` and `#story`,
  `drawOutcome` the table `#outcome`.

The constants hold whole lines without a final newline, so that a page embeds one on a line
of its own.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from typing import Any

from sim.render.grid import CLASSES, EMPTY, Cell, Grid, Mark


def json_for_script(value: Any) -> str:
    """`value` as compact JSON to embed in a `<script type="application/json">` element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # nothing inside may close the script element or open a comment
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


class Table:
    """Interned values: each distinct value stored once, referred to by its index."""

    def __init__(self) -> None:
        self.index: dict[Hashable, int] = {}
        self.values: list[Any] = []

    def __call__(self, value: Hashable) -> int:
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.values)
            self.values.append(value)
        return found


class LaneEncoder:
    """Swimlanes encoded into interning tables: texts, marks, cells, rows, legend entries and
    the swimlanes themselves; invariants by their index in `inv`."""

    def __init__(self, inv: dict[str, int]) -> None:
        self.inv = inv
        self.texts, self.marks, self.cells, self.rows, self.legend, self.lanes = (Table() for _ in range(6))
        # by the identity of a Mark object (the encoded grids, kept in `encoded`, keep their
        # marks alive): skips re-interning, and a dataclass's hash, a Python call
        self.mark_index: dict[int, int] = {}
        self.empty = self.cells(((),))  # most cells of a swimlane are empty
        # a swimlane's index by the identity of its parts, and the grids those parts belong
        # to (kept, so that no identity is reused while the encoder lives)
        self.lane_index: dict[tuple[int, int, int, int], int] = {}
        self.encoded: list[Grid] = []

    def grid(self, grid: Grid) -> int:
        """A swimlane's index in the grids table, each encoded once: the sweep's runs share
        one built swimlane per distinct one (`sim.render.grid.build_shared`), whose copies
        differ only in their switches, which the lane does not hold, and keep the very
        rows, legend, story and violations. A swimlane met in other objects is encoded
        again and interned to the same index."""
        key = (id(grid.rows), id(grid.legend), id(grid.story), id(grid.violations))
        found = self.lane_index.get(key)
        if found is None:
            found = self.lane_index[key] = self.lanes(self.lane(grid))
            self.encoded.append(grid)
        return found

    def lane(self, grid: Grid) -> tuple[Any, ...]:
        """A swimlane: its rows, legend, story and violations."""
        cell, empty = self.cell, self.empty  # most cells are the one empty cell
        return (
            tuple(self.rows((row.key, row.label, row.group, tuple([empty if c is EMPTY else cell(c) for c in row.cells])))
                  for row in grid.rows),
            tuple(self.legend((e.key, e.group, e.symbol, e.cls, e.meaning)) for e in grid.legend),
            tuple((t, self.texts(line)) for t, line in grid.story),
            tuple((self.inv[v.invariant], v.tick, self.texts(v.event_text), self.texts(v.why), v.row)
                  for v in grid.violations),
        )  # fmt: skip

    def cell(self, cell: Cell) -> int:
        """A cell: its marks and the invariants that broke there."""
        if not cell.marks and not cell.broke:
            return self.empty
        mark = self.mark
        key: tuple[Any, ...] = (tuple([mark(m) for m in cell.marks]),)
        if cell.broke:
            key += (tuple(self.inv[n] for n in cell.broke),)
        return self.cells(key)

    def mark(self, mark: Mark) -> int:
        found = self.mark_index.get(id(mark))
        if found is None:
            found = self.mark_index[id(mark)] = self.marks((mark.text, mark.cls, mark.legend))
        return found

    def lane_tables(self) -> dict[str, Any]:
        """The interned values of the swimlanes, each table in the order its values were
        first met (the page's data holds them under these names)."""
        return {
            "texts": self.texts.values,
            "marks": [list(m) for m in self.marks.values],
            "cells": [[list(part) for part in c] for c in self.cells.values],
            "rows": [[k, label, group, list(c)] for k, label, group, c in self.rows.values],
            "legend": [list(e) for e in self.legend.values],
            "grids": self.lanes.values,  # tuples, which JSON writes as arrays too
        }


#: grid class -> CSS (the terminal's colours, for a light page; colour repeats the text).
CLASS_STYLE: dict[str, str] = {
    "input": "font-weight:700",
    "changed": "font-weight:700;color:#9c1b8c",
    "admitted": "font-weight:700;color:#006d7a",
    "running": "color:#1b1b1b",
    "waiting": "color:#8a8a8a",
    "silent": "color:#7a7a7a;font-style:italic",
    "unknown": "font-weight:700;color:#6b5200;background:#ffe98a",
    "stale": "color:#9c1b8c;background:#f7e3f4",
    "rejected": "font-weight:700;color:#b3001b",
    "refused": "color:#d0142c",
    "died": "color:#d0142c;font-weight:700",
    "done": "font-weight:700;color:#11703a",
    "written": "color:#1c7a3c",
    "restored": "font-weight:700;color:#0d6b30;background:#d9f2de",
    "candidate": "color:#1651c4",
    "accepted": "font-weight:700;color:#11703a",
    "intent": "color:#8a5a00",
    "posted": "font-weight:700",
    "repeat": "font-weight:700;color:#006d7a;background:#d8f3f6",
    "confirmed": "color:#11703a",
    "started": "font-weight:700;color:#11703a",
    "violation": "font-weight:700;color:#fff;background:#c0182b",
}


def class_css() -> str:
    """A CSS rule per grid class (`.k-CLASS`)."""
    missing = [c for c in CLASSES if c not in CLASS_STYLE]
    if missing:
        raise ValueError(f"lane: no style for grid classes {missing}")
    return "\n".join(f".k-{c}{{{CLASS_STYLE[c]}}}" for c in CLASSES)


#: the swimlane (its box, scroll hint, table and legend) and the fact tables (outcome, verdicts).
LANE_CSS = """.lane-head{display:flex;flex-wrap:wrap;align-items:baseline;justify-content:space-between;gap:0 1rem}
.scroll-hint{font-size:.82rem;font-weight:600;color:var(--accent)}
.scroll-hint[hidden]{display:none}
.grid-wrap{position:relative;width:fit-content;max-width:100%}
.grid-wrap::after{content:"";position:absolute;top:1px;right:1px;bottom:1px;width:2.6rem;pointer-events:none;border-radius:0 5px 5px 0;background:linear-gradient(to right,rgba(255,255,255,0),rgba(40,40,30,.2));opacity:0;transition:opacity .15s}
.grid-wrap.more-right::after{opacity:1}
.grid-box{overflow-x:auto;width:fit-content;max-width:100%;border:1px solid var(--line);border-radius:6px;background:#fff;-webkit-overflow-scrolling:touch}
table.lane{border-collapse:separate;border-spacing:0;font-size:15px;line-height:1.35}
table.lane th,table.lane td{padding:.28rem .55rem;white-space:nowrap;text-align:left;border-bottom:1px solid #eeede8}
table.lane thead th{font-weight:400;color:var(--muted);border-bottom:1px solid var(--line);background:#fff}
table.lane tbody th{position:sticky;left:0;z-index:1;background:var(--panel);font-weight:600;border-right:1px solid var(--line)}
table.lane thead th.corner{position:sticky;left:0;z-index:2;background:var(--panel);border-right:1px solid var(--line)}
table.lane tr.group-start>*{border-top:1px solid #c9c8bf}
table.lane td .m{padding:0 .12rem;border-radius:3px}
.g{font-size:1.2em;line-height:1;font-family:"DejaVu Sans","Segoe UI Symbol","Apple Symbols",sans-serif}
.legend{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;font-size:.9rem;margin:.6rem 0}
.legend dt{font-weight:600}
.legend dd{margin:0;display:flex;flex-wrap:wrap;gap:.15rem 1.1rem}
.legend .sym{font-weight:600;margin-right:.35rem}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(24rem,100%),1fr));gap:0 2rem}
table.facts{border-collapse:collapse;width:100%;font-size:.95rem}
table.facts th,table.facts td{text-align:left;vertical-align:top;padding:.3rem .5rem;border-bottom:1px solid #eeede8}
table.facts th{font-weight:600;white-space:nowrap;width:1%}
#invariants th{white-space:normal;min-width:7.5rem}
.verdict{font-weight:700;white-space:nowrap}
.verdict.ok{color:var(--good)}
.verdict.bad{color:var(--bad)}
.why{display:block;color:var(--muted);font-size:.88rem}"""

#: the tick-by-tick story under a swimlane.
STORY_CSS = """ol.story{list-style:none;padding:0;margin:0;font-size:.92rem}
ol.story li{display:grid;grid-template-columns:3rem 1fr;padding:.12rem 0}
ol.story .t{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;color:var(--muted)}"""

#: the helpers: `$` (by id), `el` (an element with attributes and children), `clear`,
#: `glyphs` (the small symbols in a larger glyph) and `tick` ("t7", or "none").
LANE_HELPERS_JS = r"""  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, kids) {
    var n = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (attrs[k] === null || attrs[k] === undefined) continue;
      if (k === "class") n.className = attrs[k]; else n.setAttribute(k, attrs[k]);
    }
    (kids || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      n.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    });
    return n;
  }
  function clear(n) { while (n.firstChild) n.removeChild(n.firstChild); return n; }
  // the symbols that are small in most monospace fonts get a slightly larger glyph
  function glyphs(text) {
    return text.split(/([\u21ba\u2713\u2717\u25c7])/).filter(function (p) { return p; }).map(function (p) {
      return /^[\u21ba\u2713\u2717\u25c7]$/.test(p) ? el("span", {"class": "g"}, [p]) : p;
    });
  }
  function tick(t) { return t === null ? "none" : "t" + t; }"""

#: the drawing: `laneTable(grid, caption, tableId)` (a swimlane as a table),
#: `drawLegend(grid)` (its legend and story), `fact`, `val` and `drawOutcome(o, sections)`.
LANE_DRAW_JS = r"""  function laneTable(grid, caption, tableId) {
    var rows = grid[0].map(function (r) { return D.rows[r]; });
    var story = {};
    grid[2].forEach(function (s) { story[s[0]] = D.texts[s[1]]; });
    var ticks = rows.length ? rows[0][3].length : 0;
    var head = el("tr", null, [el("th", {scope: "col", "class": "corner"}, [el("span", {"class": "sr-only"}, ["record"])])]);
    for (var t = 0; t < ticks; t++) head.appendChild(el("th", {scope: "col", title: story[t] || null}, ["t" + t]));
    var body = el("tbody");
    var group = null;
    rows.forEach(function (r) {
      var tr = el("tr", {"data-row": r[0], "class": r[2] !== group ? "group-start g-" + r[2] : "g-" + r[2]});
      group = r[2];
      tr.appendChild(el("th", {scope: "row"}, [r[1]]));
      r[3].forEach(function (ci, t) {
        var cell = D.cells[ci], kids = [], titles = [];
        cell[0].forEach(function (mi, k) {
          var m = D.marks[mi];
          if (k) kids.push(" ");  // marks are separated as in the terminal: "i P1"
          kids.push(el("span", {"class": "m k-" + m[1]}, glyphs(m[0])));
          titles.push(m[0] + ": " + (MEANING[m[2]] || m[2]));
        });
        if (cell[1]) titles.push("broke " + cell[1].map(function (k) { return INV[k]; }).join(", "));
        tr.appendChild(el("td", {title: titles.length ? titles.join("; ") : null}, kids));
      });
      body.appendChild(tr);
    });
    return el("table", {"class": "lane", id: tableId}, [
      el("caption", {"class": "sr-only"}, [caption + ": one row per kind of record, one column per tick"]),
      el("thead", null, [head]), body]);
  }
  function drawLegend(grid) {
    var legend = clear($("legend")), groups = [], byGroup = {};
    grid[1].forEach(function (li) {
      var e = D.legend[li];
      if (!byGroup[e[1]]) { byGroup[e[1]] = []; groups.push(e[1]); }
      byGroup[e[1]].push(e);
    });
    groups.forEach(function (g) {
      legend.appendChild(el("dt", null, [g]));
      legend.appendChild(el("dd", null, byGroup[g].map(function (e) {
        return el("span", {"data-legend": e[0]}, [el("span", {"class": "sym k-" + e[3]}, glyphs(e[2])), e[4]]);
      })));
    });

    var ol = clear($("story"));
    grid[2].forEach(function (s) {
      ol.appendChild(el("li", null, [el("span", {"class": "t"}, ["t" + s[0]]), el("span", null, [D.texts[s[1]]])]));
    });
  }

  // -- figures ------------------------------------------------------------------------
  function fact(name, kids) { return el("tr", null, [el("th", {scope: "row"}, [name]), el("td", null, kids)]); }
  function val(field, text) { return el("span", {"data-field": field}, [String(text)]); }

  function drawOutcome(o, sections) {
    var by = o.model_calls_by_attempt.map(function (n, k) { return "#" + (k + 1) + " " + n; }).join(", ");
    var nl = o.newsletter, letter;
    if (nl.start_tick === null) letter = [val("newsletter.start_tick", "never"), " started"];
    else letter = ["started ", val("newsletter.start_tick", tick(nl.start_tick)), " on ",
                   val("newsletter.digest", nl.digest), ", quoting ",
                   val("newsletter.quoted_revenue", nl.quoted_revenue), " million"];
    var t = clear($("outcome"));
    [
      fact("model calls", [val("model_calls", o.model_calls), " (", val("model_calls_by_attempt", by),
                           "; minimum " + sections + ")"]),
      fact("steps restored", [val("steps_restored", o.steps_restored)]),
      fact("stale writes", [val("stale_writes_rejected", o.stale_writes_rejected), " rejected, ",
                            val("stale_writes_applied", o.stale_writes_applied), " applied"]),
      fact("posts applied", [val("posts_applied", o.posts_applied)]),
      fact("first acceptance", [val("first_accepted_tick", tick(o.first_accepted_tick)),
                                el("span", {"class": "why"}, ["of a digest built from the final report"])]),
      fact("confirmed", [val("confirmed_tick", tick(o.confirmed_tick)),
                         el("span", {"class": "why"}, ["its announcement confirmed"])]),
      fact("newsletter", letter),
      fact("finished", [val("finished", o.finished ? "yes" : "no"),
                        el("span", {"class": "why"}, ["an accepted digest of the final report, announcement confirmed"])]),
      fact("last tick", [val("last_tick", tick(o.last_tick)), o.horizon_reached ? " (horizon reached)" : ""])
    ].forEach(function (r) { t.appendChild(r); });
  }"""
