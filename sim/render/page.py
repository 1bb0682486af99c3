"""The page of one run: `sim trace NAME|FILE --html FILE`, and one beside each counterexample.

One self-contained HTML file (inline CSS and JavaScript, no network) that opens from disk:
the run's title and scenario, its swimlane and legend, the outcome, the invariant verdicts
and a tick slider (`<input type=range>`, and the arrow keys, Home and End) showing the state
at that tick: each attempt's, artifact's and effect's lifecycle state
(`sim.render.lifecycle`), with what changed since the previous tick marked (a class, and a
marker in words), and that tick's column highlighted in the swimlane. The swimlane, legend,
story and outcome are drawn by the explainer's own code (`sim.render.lane`).

Data flows one way: the trace gives the grid (`sim.render.grid.build`) and the per-tick
state (`lifecycles`, read from the state the engine reached at the end of each tick), both
embedded as one JSON value; the script only draws them. The page
is deterministic to the byte: fixed order, no timestamps, no paths but the ones given.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from sim.base.files import written_by_sim
from sim.properties.outcome import Outcome
from sim import properties
from sim.render.grid import Grid
from sim.render.lane import (
    LANE_CSS,
    LANE_DRAW_JS,
    LANE_HELPERS_JS,
    STORY_CSS,
    LaneEncoder,
    class_css,
    json_for_script,
)
from sim.render.lifecycle import KINDS, STATES, TickState, lifecycles
from sim.engine.trace import Trace

#: format version of the embedded data (bump when it changes).
FORMAT = 1


def page_path(scenario_file: Path) -> Path:
    """The page written beside a scenario file: the same stem, `.html`."""
    return scenario_file.with_suffix(".html")


def data(trace: Trace, result: Outcome, grid: Grid) -> dict[str, Any]:
    """The page's data: the swimlane (interned as the explainer's), the outcome, the
    invariants, and the three lifecycles at each tick."""
    names = [p.name for p in properties.SAFETY]
    encoder = LaneEncoder({name: i for i, name in enumerate(names)})
    lane = encoder.grid(grid)
    return {
        "format": FORMAT,
        **encoder.lane_tables(),
        "grid": lane,
        "invariants": [[p.name, p.description, p.article] for p in properties.SAFETY],
        "outcome": result.to_json(),
        # the outcome's "minimum" model calls (one a section; a workflow's own counts)
        "sections": trace.schedule.minimum_calls,
        "kinds": [[kind, list(STATES[kind])] for kind in KINDS],
        "states": [_state(s) for s in lifecycles(trace)],
    }


def _state(s: TickState) -> list[Any]:
    return [s.report, s.owner, [[i.to_json() for i in s.items(kind)] for kind in KINDS], list(s.broken)]


def render_page(title: str, description: str, replay: str, trace: Trace, result: Outcome, grid: Grid) -> str:
    """The page's text: `title` (the scenario and its switches), `description` (the
    scenario's), `replay` (the command that replays it), and the run itself."""
    last = trace.last_tick
    broken = len(result.violations)
    badges = (
        f'<span class="badge {"bad" if broken else "ok"}">'
        + (f"{broken} invariant{'s' if broken > 1 else ''} broken" if broken else "all invariants hold")
        + f'</span><span class="badge {"ok" if result.finished else "warn"}">'
        + ("finished" if result.finished else "not finished") + "</span>"
    )  # fmt: skip
    values = {
        "CSS": LANE_CSS + "\n" + STORY_CSS + _CSS + class_css(),
        "TITLE": html.escape(title),
        "DESCRIPTION": html.escape(" ".join(description.split())),
        "REPLAY": html.escape(replay),
        "BADGES": badges,
        "LAST": str(last),
        "JS": _SCRIPT,
        "DATA": json_for_script(data(trace, result, grid)),
    }
    # one pass: nothing put in (a description, the data) is read for a placeholder again
    return re.sub(r"@@([A-Z]+)@@", lambda m: values[m.group(1)], _PAGE)


#: how every page starts, up to its description (what tells a page `sim` wrote from others)
HEAD = '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="description" content="'


def is_page_of(path: Path, mark: str) -> bool:
    """Whether `path` is a run page (a regular file, never followed if a symlink) whose
    description starts with `mark` (as `sim check` marks its counterexamples)."""
    return path.suffix == ".html" and written_by_sim(path, (HEAD + html.escape(mark)).encode("utf-8"))


_CSS = """
:root{--fg:#1b1b1b;--muted:#595959;--bg:#fff;--panel:#f5f5f0;--line:#d9d8d0;--accent:#0b57a4;--bad:#b3001b;--good:#11703a}
*{box-sizing:border-box}
body{margin:0 auto;max-width:86rem;padding:0 1rem 2rem;color:var(--fg);background:var(--bg);font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
h1{font-size:1.45rem;margin:1rem 0 .3rem}
h2{font-size:1.15rem;margin:1.3rem 0 .5rem}
h3{font-size:1rem;margin:.8rem 0 .3rem}
code,.mono,table.lane,.sym,output{font-family:ui-monospace,"SFMono-Regular","DejaVu Sans Mono","Liberation Mono",Menlo,Consolas,monospace}
code{font-size:.92em;background:var(--panel);padding:0 .2em;border-radius:3px;overflow-wrap:anywhere}
.lead{color:var(--muted);max-width:60rem}
.badges{display:flex;flex-wrap:wrap;gap:.4rem;margin:.4rem 0}
.badge{font-size:.85rem;font-weight:600;padding:.1rem .5rem;border-radius:999px;border:1px solid}
.badge.ok{color:var(--good);border-color:#8cc9a0;background:#eaf7ee}
.badge.bad{color:#fff;border-color:var(--bad);background:var(--bad)}
.badge.warn{color:#6b5200;border-color:#e0c25a;background:#fff6cf}
.grid-box:focus-visible,input:focus-visible{outline:3px solid #f0a500;outline-offset:2px}
table.lane .now{background:#fff3c4;box-shadow:inset 2px 0 0 #d9a400,inset -2px 0 0 #d9a400}
table.lane thead th.now{font-weight:700;color:var(--fg)}
table.lane td.later .m{opacity:.35}
.slider{display:flex;flex-wrap:wrap;align-items:center;gap:.4rem 1rem;position:sticky;top:0;z-index:3;background:#fff;padding:.4rem 0;border-bottom:1px solid var(--line)}
.slider input{flex:1;min-width:12rem;max-width:40rem}
.slider output{font-weight:700;font-size:1.1rem;min-width:3.5rem}
.slider .hint{font-size:.8rem;color:var(--muted)}
#tick-story{min-height:1.5em;margin:.4rem 0}
.states{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(18rem,100%),1fr));gap:0 1.5rem}
ul.items{list-style:none;padding:0;margin:.2rem 0}
ul.items li{padding:.3rem .4rem;border-bottom:1px solid #eeede8;border-left:4px solid transparent}
ul.items li.changed{border-left-color:#d9a400;background:#fffaf0}
ul.items .empty{color:var(--muted)}
.key{font-weight:700;margin-right:.4rem}
.state{font-weight:700;padding:0 .3rem;border-radius:3px;border:1px solid #c9c8bf}
.delta{font-size:.78rem;font-weight:700;color:#7a5200;margin-left:.4rem}
.st-UNKNOWN,.st-unconfirmed{background:#ffe98a;color:#6b5200}
.st-fenced,.st-refused{color:#b3001b}
.st-done,.st-accepted,.st-confirmed{color:var(--good)}
.st-superseded,.st-replaced{color:#9c1b8c}
.st-intended,.st-applied,.st-candidate{color:#1651c4}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
details summary{cursor:pointer;font-weight:600;margin:1rem 0 .4rem}
footer{color:var(--muted);font-size:.85rem;margin-top:2rem}
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="description" content="@@DESCRIPTION@@">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@@TITLE@@</title>
<style>@@CSS@@
</style>
</head>
<body>
<header>
<h1 id="title">@@TITLE@@</h1>
<p class="lead" id="description">@@DESCRIPTION@@</p>
<p>Replay it in a terminal: <code id="replay">@@REPLAY@@</code></p>
<div class="badges" id="badges">@@BADGES@@</div>
<noscript><p><strong>This page needs JavaScript to draw the run.</strong> The command above draws it in a terminal.</p></noscript>
</header>
<main>
<div class="lane-head"><h2 id="lane-h">Swimlane</h2><span class="scroll-hint" id="scroll-hint" hidden>scroll sideways &rarr;</span></div>
<div class="grid-wrap" id="grid-wrap"><div class="grid-box" id="grid-box" tabindex="0" role="region" aria-labelledby="lane-h"></div></div>
<dl class="legend" id="legend" aria-label="Legend"></dl>
<section aria-labelledby="state-h">
<h2 id="state-h">The state at each tick</h2>
<div class="slider">
<label for="tick">Tick</label>
<input type="range" id="tick" min="0" max="@@LAST@@" value="@@LAST@@" step="1">
<output id="tick-label" for="tick" aria-live="polite">t@@LAST@@</output>
<span class="hint">&larr; &rarr; one tick, Home / End the first / last</span>
</div>
<p id="tick-story"></p>
<div class="states" id="states"></div>
</section>
<div class="cols" id="results">
<section aria-labelledby="outcome-h">
<h2 id="outcome-h">Outcome</h2>
<table class="facts" id="outcome"></table>
</section>
<section aria-labelledby="invariants-h">
<h2 id="invariants-h">Invariants</h2>
<table class="facts" id="invariants"></table>
</section>
</div>
<details open><summary>Tick by tick</summary><ol class="story" id="story"></ol></details>
</main>
<footer>
<p>Generated by <code>sim trace --html</code>. A state is the world at the end of its tick; a marked item changed
in that tick (new, or its state moved). Counts and ticks are properties of this small construction.</p>
</footer>
<script type="application/json" id="run-data">@@DATA@@</script>
<script>@@JS@@</script>
</body>
</html>
"""

_JS = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("run-data").textContent);
  var INV = D.invariants.map(function (x) { return x[0]; });
  var MEANING = {};
  D.legend.forEach(function (e) { MEANING[e[0]] = e[4]; });
  var GRID = D.grids[D.grid], LAST = D.states.length - 1;
  var KIND_TITLE = {attempts: "Attempts", artifacts: "Artifacts (digests)", effects: "Effects (announcements)"};

@@HELPERS@@

@@DRAW@@

  function drawVerdicts(o) {
    var broke = {}, why = {};
    o.violations.forEach(function (v) { broke[v.invariant] = v.tick; });
    GRID[3].forEach(function (v) { why[INV[v[0]]] = D.texts[v[2]] + " \u2014 " + D.texts[v[3]]; });
    var t = clear($("invariants"));
    D.invariants.forEach(function (x) {
      var name = x[0], b = broke.hasOwnProperty(name);
      if (!x[2] && !b) return;  // beyond the article's model: listed when it breaks
      var kids = [el("span", {"class": "verdict " + (b ? "bad" : "ok"), "data-verdict": b ? "broke" : "holds",
                              "data-tick": b ? String(broke[name]) : null}, [b ? "broke at t" + broke[name] : "holds"]),
                  el("span", {"class": "why"}, [x[1]])];
      if (b && why[name]) kids.push(el("span", {"class": "why"}, ["t" + broke[name] + " " + why[name]]));
      var tr = fact(name, kids);
      tr.setAttribute("data-invariant", name);
      t.appendChild(tr);
    });
  }

  // the state at tick t: each lifecycle's items, the changed ones marked in words as well
  function drawState(t) {
    var s = D.states[t], box = clear($("states")), story = {};
    GRID[2].forEach(function (x) { story[x[0]] = D.texts[x[1]]; });
    $("tick-label").textContent = "t" + t;
    $("tick").setAttribute("aria-valuetext", "t" + t);
    $("tick-story").textContent = "t" + t + ": " + (story[t] || "nothing happens") +
      " (report v" + s[0] + (s[1] ? ", #" + s[1] + " owns the work" : "") + ")";
    D.kinds.forEach(function (k, n) {
      var items = s[2][n], ul = el("ul", {"class": "items", id: k[0], "aria-label": KIND_TITLE[k[0]] + " at t" + t});
      if (!items.length) ul.appendChild(el("li", {"class": "empty"}, ["none yet"]));
      items.forEach(function (i) {
        var changed = i[1] !== i[3];
        var kids = [el("span", {"class": "key"}, [i[0]]), el("span", {"class": "state st-" + i[1]}, [i[1]])];
        if (changed) kids.push(el("span", {"class": "delta"}, [i[3] ? "\u25b2 changed (was " + i[3] + ")" : "\u25b2 new"]));
        kids.push(el("span", {"class": "why"}, [i[2]]));
        ul.appendChild(el("li", {"data-key": i[0], "data-state": i[1], "data-changed": String(changed),
                                 "class": changed ? "changed" : null}, kids));
      });
      box.appendChild(el("section", {"data-kind": k[0]}, [el("h3", null, [KIND_TITLE[k[0]]]), ul]));
    });
    var rows = $("lane").rows;
    for (var r = 0; r < rows.length; r++) {
      var cells = rows[r].cells;
      for (var c = 1; c < cells.length; c++) {
        cells[c].classList.toggle("now", c - 1 === t);
        cells[c].classList.toggle("later", c - 1 > t);
      }
    }
    var now = rows[0].cells[t + 1], box2 = $("grid-box");
    if (now && (now.offsetLeft < box2.scrollLeft || now.offsetLeft + now.offsetWidth > box2.scrollLeft + box2.clientWidth))
      box2.scrollLeft = Math.max(0, now.offsetLeft - box2.clientWidth / 2);
    document.documentElement.setAttribute("data-tick", String(t));
  }

  function show(t) {
    t = Math.max(0, Math.min(LAST, t));
    $("tick").value = String(t);
    drawState(t);
    try { history.replaceState(null, "", "#t" + t); } catch (e) { /* a file: URL may refuse */ }
  }
  $("tick").addEventListener("input", function () { show(+this.value); });
  $("tick").addEventListener("change", function () { show(+this.value); });
  document.addEventListener("keydown", function (e) {
    var target = e.target, tag = target && target.tagName;
    if (target === $("tick") || tag === "INPUT" || tag === "TEXTAREA" || e.altKey || e.ctrlKey || e.metaKey) return;
    var t = +$("tick").value, to = {ArrowLeft: t - 1, ArrowRight: t + 1, Home: 0, End: LAST}[e.key];
    if (to === undefined || target === $("grid-box") && (e.key === "ArrowLeft" || e.key === "ArrowRight")) return;
    e.preventDefault();
    show(to);
  });

  clear($("grid-box")).appendChild(laneTable(GRID, "Swimlane of the run", "lane"));
  drawLegend(GRID);
  drawOutcome(D.outcome, D.sections);
  drawVerdicts(D.outcome);
  var m = /^#t(\d+)$/.exec(location.hash);
  show(m ? +m[1] : LAST);
  function scrollHint() { var b = $("grid-box"); $("scroll-hint").hidden = b.scrollWidth - b.clientWidth <= 1; }
  window.addEventListener("resize", scrollHint);
  scrollHint();
  document.documentElement.setAttribute("data-ready", "true");
})();
"""

_SCRIPT = _JS.replace("@@HELPERS@@", LANE_HELPERS_JS).replace("@@DRAW@@", LANE_DRAW_JS)

__all__ = ["FORMAT", "HEAD", "data", "is_page_of", "page_path", "render_page"]
