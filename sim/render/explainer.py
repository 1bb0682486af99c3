"""The interactive explainer page: `reports/explainer.html`, written by `sim sweep`.

One self-contained HTML file (inline CSS and JavaScript, no network, no fonts or scripts
from elsewhere) that opens from disk. It embeds all 864 runs of the sweep and lets a reader
flip the eight switches of the worked example: for the chosen combination it draws the
swimlane (the rows, symbols and legend of `sim.render.grid`, exactly what `sim trace` draws
in a terminal), the outcome figures, the invariant verdicts with the tick each broke, the
protections the run needed (the sweep's `needed`), and "one change at a time": what each
single switch flip does, read from the sweep's neighbour runs. The URL hash holds the
combination (`#silent=paused&fencing=on&...`), so a link reproduces a view.

Data comes from the sweep: the JSON document of `sweep.json` (switches, outcome, needed,
summary) and each run's `Grid`, built where the run was simulated
(`sim.analysis.sweep.simulate_all(grids=True)`); nothing of the 864 runs is simulated or derived
again here. The page's last section lists the ten failures beyond the article's model
(`sim.model.cases`), each with the swimlanes of its named scenarios, which `case_views` runs.

The data is embedded as one JSON value (`<script type="application/json">`), compacted by
interning: every distinct string, mark, cell, row, legend entry, outcome and grid is stored
once in a table and referred to by its index (docs/explainer.md describes the format;
`decode` below reads it back, and the tests check it against sweep.json for every run).
The page is deterministic to the byte: fixed order, no timestamps, no paths.
"""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sim import scenario as scenarios
from sim.model.cases import CASES, runs_with
from sim import properties
from sim.properties import BY_NAME, GUARDS
from sim.render import overview
from sim.render.grid import Grid, build
from sim.render.lane import (
    LANE_CSS,
    LANE_DRAW_JS,
    LANE_HELPERS_JS,
    STORY_CSS,
    LaneEncoder,
    class_css,
    json_for_script,
)
from sim.run import run_scenario
from sim.model.schedule import EXAMPLE_CHANGE_TICK, EXAMPLE_SILENCE_TICK, EXAMPLE_WAKE_TICK
from sim.model.switches import PROTECTIONS, SWEPT, SWITCHES, Change, Switches

if TYPE_CHECKING:  # a workflow's module only for a workflow's page
    from sim.model.workflow import Workflow

Document = dict[str, Any]

#: format version of the embedded data (bump when the encoding changes).
FORMAT = 2

#: the named scenarios of the article, offered first among the presets.
ARTICLE = ("main", "main-end-only", "superseded", "versions-off")

#: switch -> (heading, what it does), for the radio groups.
SWITCH_TEXT: dict[str, tuple[str, str]] = {
    "silent": ("Silent worker", f"#1 falls silent at t{EXAMPLE_SILENCE_TICK}; paused wakes at t{EXAMPLE_WAKE_TICK}, "
               "crashed never does."),
    "fencing": ("Fencing", "Stores reject a write whose owner token is below the epoch."),
    "checkpoints": ("Checkpoints", "Journal each step as it is computed, or all at assembly."),
    "change": ("Input change", f"The report moves to v2 at t{EXAMPLE_CHANGE_TICK[Change.DURING]} (outage), never, "
               f"or at t{EXAMPLE_CHANGE_TICK[Change.AFTER]}."),
    "pins": ("Version pins", "Pinned input; section hashes in journal keys and acceptances."),
    "rule": ("Newsletter rule", "Which digest the newsletter may start on."),
    "post_death": ("Posting worker dies", "The first poster dies after sending, before the answer."),
    "key": ("Post key", "The announcement's idempotency key at the feed."),
}  # fmt: skip

def caveat(switches: dict[str, str], invariant: str, workflow: Workflow | None = None) -> str | None:
    """Why `invariant`'s usual guard would not hold it under these switches even switched on
    (None when it would), on the article's pipeline or a workflow: the clause the verdict adds
    (`Property.caveat`)."""
    return BY_NAME[invariant].caveat(_switches(switches, workflow))


def _switches(values: dict[str, str], workflow: Workflow | None) -> Switches:
    """A run's switches from their spellings, on the workflow's settings, effects and dependants."""
    if workflow is None:
        return Switches().with_values(values)
    from sim.model.workflow import workflow_switches

    return workflow_switches(workflow, values)


def switch_text(workflow: Workflow | None) -> dict[str, tuple[str, str]]:
    """The radio groups' headings and words: the article's, or with a workflow's own ticks and
    names for the switches that place its faults (`sim.model.workflow.example_faults`)."""
    if workflow is None:
        return SWITCH_TEXT
    from sim.model.workflow import example_faults

    ex = example_faults(workflow)
    first = workflow.effects[0].name
    return {**SWITCH_TEXT,
            "silent": ("Silent worker", f"#1 falls silent at t{ex.silent_tick} (at {ex.silent_step}); paused wakes at "
                       f"t{ex.wake_tick}, crashed never does."),
            "change": ("Input change", f"{ex.changed} changes at t{ex.change_ticks[0]} (outage), never, or at "
                       f"t{ex.change_ticks[1]}."),
            "rule": ("Dependant rule", "Which artifact a dependant without a rule of its own may start on."),
            "post_death": ("Posting worker dies", f"The first poster of {first} dies after sending, before the answer."),
            "key": ("Effect key", "Each effect's idempotency key at its receiver."),
            }  # fmt: skip


def _guard_of(invariant: str) -> str:
    guard = BY_NAME[invariant].guard
    return guard.switch if guard is not None else ""


# -- encoding ------------------------------------------------------------------------------
#: an encoded outcome's key in the outcomes table: its compact JSON
_OUTCOME_KEY = json.JSONEncoder(separators=(",", ":")).encode


class _Encoder(LaneEncoder):
    """The page's interning tables, and a run's parts encoded into them: invariants and
    protections by their index in the summary, switch values by their index in the order."""

    def __init__(self, summary: dict[str, Any], first_outcome: dict[str, Any], values: dict[str, list[str]],
                 workflow: Workflow | None = None) -> None:  # fmt: skip
        super().__init__({name: i for i, name in enumerate(summary["invariants"])})
        self.workflow = workflow
        self.prot = {name: i for i, name in enumerate(summary["protections"])}
        self.values = values
        self.fields = list(first_outcome)
        self.nested = {k: list(v) for k, v in first_outcome.items() if isinstance(v, dict)}
        #: the distinct outcomes, each by its compact JSON text (the page holds them as that JSON)
        self.outcome_index: dict[str, int] = {}
        self.outcomes: list[list[Any]] = []

    def run(self, run: dict[str, Any], grid: Grid) -> list[Any]:
        """One run: its swimlane and outcome (interned), the protections it needed and, per
        invariant it breaks, the protections that prevent the break."""
        lane = self.grid(grid)  # first: the lane and the caveats intern into one texts table
        outcome = self.outcome(run["outcome"])
        needs = self.needs(run["needed"])
        prevented = self.prevented(run)
        return [lane, self.intern_outcome(outcome), needs, prevented]

    def intern_outcome(self, encoded: list[Any]) -> int:
        """An encoded outcome's index in the outcomes table (two outcomes are one when their
        JSON is: what the page sees of them)."""
        key = _OUTCOME_KEY(encoded)
        found = self.outcome_index.get(key)
        if found is None:
            found = self.outcome_index[key] = len(self.outcomes)
            self.outcomes.append(encoded)
        return found

    def outcome(self, out: dict[str, Any]) -> list[Any]:
        """The outcome's values in field order; violations as [invariant, tick]."""
        encoded: list[Any] = []
        for name in self.fields:
            value = out[name]
            if name == "violations":
                value = [[self.inv[v["invariant"]], v["tick"]] for v in value]
            elif name in self.nested:
                value = [value[k] for k in self.nested[name]]
            encoded.append(value)
        return encoded

    def needs(self, need: dict[str, Any]) -> list[list[Any]]:
        """Per protection that is on: needed, and each weakening's value, run and breaks."""
        return [
            [self.prot[p], int(n["needed"]),
             [[self.values[p].index(w["value"]), w["run"], [self.inv[b] for b in w["breaks"]]] for w in n["weakened"]]]
            for p, n in need["protections"].items()
        ]  # fmt: skip

    def prevented(self, run: dict[str, Any]) -> list[list[Any]]:
        """Per invariant the run breaks: the protections (and their runs) that prevent it, and
        the caveat when its usual guard would not."""
        prevented: list[list[Any]] = []
        broken = run["needed"]["prevented_by"]
        if not broken:
            return prevented
        switches = _switches(run["switches"], self.workflow)  # read once for all its caveats
        for name, by in broken.items():
            entry: list[Any] = [self.inv[name], [[self.prot[b["protection"]], b["run"]] for b in by]]
            why_not = BY_NAME[name].caveat(switches)  # `caveat`, for the switches read above
            if why_not is not None:
                entry.append(self.texts(why_not))
            prevented.append(entry)
        return prevented

    def tables(self) -> dict[str, Any]:
        """The interned values, each table in the order its values were first met."""
        lanes = self.lane_tables()
        grids = lanes.pop("grids")
        return {**lanes, "outcomes": self.outcomes, "grids": grids}


def _check_run(position: int, run: dict[str, Any], order: list[str], fixed: dict[str, str]) -> None:
    """A run is at the position of its id and holds the fixed switches of run 1."""
    if run["id"] != position + 1:
        raise ValueError(f"explainer: run {run['id']} is at position {position + 1}")
    if {k: v for k, v in run["switches"].items() if k not in order} != fixed:
        raise ValueError(f"explainer: run {run['id']} has other fixed switches than run 1")


#: a case's scenario as the page shows it: (name, its switches away from the worked example,
#: the invariants it breaks, its swimlane)
CaseView = tuple[str, str, tuple[str, ...], Grid]


#: a named scenario by its name (`sim.scenario.load`, or a memo of it that the page's parts share)
Loader = Callable[[str], scenarios.Scenario]


def case_views(load: Loader = scenarios.load) -> list[tuple[int, list[CaseView]]]:
    """Each case beyond the article's model with its scenarios run (`sim.model.cases`)."""
    out = []
    for case in CASES:
        views: list[CaseView] = []
        for name in case.scenarios:
            loaded = load(name)
            trace, result = run_scenario(loaded)
            views.append((name, loaded.switches.label(), result.broken, build(trace)))
        out.append((case.number, views))
    return out


def encode(doc: Document, grids: Sequence[Grid], cases: Sequence[tuple[int, list[CaseView]]] = (),
           workflow: Workflow | None = None, load: Loader = scenarios.load) -> dict[str, Any]:  # fmt: skip
    """The page's data: the sweep document and each run's grid, interned into tables, and
    the cases beyond the article's model with their scenarios' grids; for a workflow's sweep,
    its named scenarios as the presets and its effects in each caveat."""
    runs = doc["runs"]
    if len(grids) != len(runs):
        raise ValueError(f"explainer: {len(runs)} runs but {len(grids)} grids")
    summary = doc["summary"]
    order = list(summary["order"])
    values = {name: [m.value for m in SWITCHES[name]] for name in order}
    fixed = {k: v for k, v in runs[0]["switches"].items() if k not in order}
    encoder = _Encoder(summary, runs[0]["outcome"], values, workflow)
    beyond = [name for name in properties.NAMES if name not in encoder.inv]  # invariants beyond the article
    for name in beyond:  # a workflow's runs may break them (its receivers are not the article's feed)
        encoder.inv[name] = len(encoder.inv)
    encoded_runs = []
    for position, (run, grid) in enumerate(zip(runs, grids)):
        _check_run(position, run, order, fixed)
        encoded_runs.append(encoder.run(run, grid))
    encoded_cases = [
        [number, [[name, label, list(broken), encoder.grid(grid)] for name, label, broken, grid in views]]
        for number, views in cases
    ]
    return {
        "format": FORMAT,
        "order": [[name, values[name]] for name in order],
        "fixed": fixed,
        "events": list(summary["events"]),
        "protections": [[p, summary["protections"][p], GUARDS[p].words if p in GUARDS else p]
                        for p in summary["protections"]],
        "invariants": [[n, summary["invariants"][n], _guard_of(n)] for n in summary["invariants"]],
        "totals": {k: summary["totals"][k] for k in ("runs", "broken", "finished")},
        "outcome_fields": encoder.fields,
        "outcome_nested": encoder.nested,
        **encoder.tables(),
        "runs": encoded_runs,
        "presets": presets(workflow, load),
        "profiles": profiles(),
        "invariants_beyond": beyond,
        "cases": encoded_cases,
    }  # fmt: skip


def decode(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The runs as sweep.json holds them (id, switches, outcome, needed), read back from the
    page's data: what the page's script reads, in Python, for the tests."""
    order = data["order"]
    # the article's invariants, then those beyond it (a workflow's runs may break them), as
    # the page's script numbers them
    invariants = [i[0] for i in data["invariants"]] + list(data.get("invariants_beyond", []))
    protections = [p[0] for p in data["protections"]]
    sizes = [len(v) for _, v in order]
    out = []
    for position, (_, outcome_index, needs, prevented) in enumerate(data["runs"]):
        digits = []
        rest = position
        for size in reversed(sizes):
            digits.append(rest % size)
            rest //= size
        switches = {name: vals[d] for (name, vals), d in zip(order, reversed(digits))}
        switches.update(data["fixed"])
        outcome: dict[str, Any] = {}
        for name, value in zip(data["outcome_fields"], data["outcomes"][outcome_index]):
            if name == "violations":
                value = [{"invariant": invariants[i], "tick": t} for i, t in value]
            elif name in data["outcome_nested"]:
                value = dict(zip(data["outcome_nested"][name], value))
            outcome[name] = value
        needed = {
            "protections": {
                protections[p]: {
                    "needed": bool(flag),
                    "weakened": [
                        {"value": dict(order)[protections[p]][v], "run": r, "breaks": [invariants[b] for b in br]}
                        for v, r, br in weakened
                    ],
                }
                for p, flag, weakened in needs
            },
            "prevented_by": {
                invariants[x[0]]: [{"protection": protections[p], "run": r} for p, r in x[1]] for x in prevented
            },
        }
        out.append({"id": position + 1, "switches": switches, "outcome": outcome, "needed": needed})
    return out


def presets(workflow: Workflow | None = None, load: Loader = scenarios.load) -> list[dict[str, Any]]:
    """The named scenarios whose run is one of the 864 (switches only, gate fail-open, the
    worked example's schedule), article scenarios first; the others with the reason. For a
    workflow's page, the named scenarios of that workflow."""
    default = Switches()
    loaded = [load(name) for name in scenarios.names()]
    own: set[tuple[str, str]] = set()  # a workflow's own settings are its page's runs', not beyond them
    if workflow is not None:
        from sim.model.workflow import knobs_of

        loaded = [s for s in loaded if s.workflow is not None and s.workflow.reference == workflow.reference]
        own = set(knobs_of(workflow).items())
    loaded.sort(key=lambda s: (ARTICLE.index(s.name) if s.name in ARTICLE else len(ARTICLE), s.name))
    out = []
    for s in loaded:
        outside = [
            f"{name}={getattr(s.switches, name).value}"
            for name in SWITCHES
            if name not in SWEPT and getattr(s.switches, name) is not getattr(default, name)
        ]
        outside += [f"{name}={value}" for name, value in s.switches.knobs.pairs if (name, value) not in own]  # knobs
        if s.workflow is not None and not s.workflow.is_article and workflow is None:  # another pipeline
            outside.insert(0, f"workflow={s.workflow.name}")
        if s.overrides:
            outside.append("a schedule of its own")
        out.append({
            "name": s.name,
            "description": " ".join(s.description.split()),
            "switches": {name: getattr(s.switches, name).value for name in SWEPT},
            "outside": outside,
        })  # fmt: skip
    return out


def profiles() -> list[dict[str, Any]]:
    """The engine profiles (`sim.model.profiles`): the swept switches each sets, the settings it
    gives outside the 864 runs (knobs), and what the application must add."""
    from sim.model.profiles import PROFILES

    return [
        {
            "name": p.name,
            "system": p.system,
            "switches": {k: v for k, v in p.settings().items() if k in SWEPT},
            "beyond": [f"{k}={v}" for k, v in p.settings().items() if k not in SWEPT],
            "adds": [c.setting for c in p.missing()],
        }
        for p in PROFILES
    ]


def _profiles(data: dict[str, Any]) -> str:
    buttons = "".join(
        f'<button type="button" data-profile="{k}" title="{html.escape(p["system"])}">{html.escape(p["name"])}</button>'
        for k, p in enumerate(data["profiles"])
    )
    return f'<div class="preset-buttons profile-buttons">{buttons}</div><p class="hint" id="profile-note" aria-live="polite"></p>'


# -- the page ------------------------------------------------------------------------------
def _controls(data: dict[str, Any], workflow: Workflow | None = None) -> str:
    parts = []
    words = switch_text(workflow)
    for name, vals in data["order"]:
        heading, what = words.get(name, (name, ""))
        on = PROTECTIONS.get(name)
        tag = ' <span class="tag">protection</span>' if on is not None else ""
        radios = []
        for k, value in enumerate(vals):
            checked = " checked" if k == 0 else ""
            star = (
                ' <span class="on" title="this value turns the protection on">protected</span>'
                if on is not None and on.value == value
                else ""
            )
            radios.append(
                f'<label><input type="radio" name="{name}" value="{html.escape(value)}"{checked}> '
                f"{html.escape(value)}{star}</label>"
            )
        parts.append(
            f'<fieldset data-switch="{name}"><legend>{html.escape(heading)} <code>{name}</code>{tag}</legend>'
            f'<p class="hint" id="hint-{name}">{html.escape(what)}</p>'
            f'<div class="radios">{"".join(radios)}</div></fieldset>'
        )
    return "\n".join(parts)


def _presets(data: dict[str, Any]) -> str:
    buttons = []
    notes = []
    for k, p in enumerate(data["presets"]):
        if p["outside"]:
            notes.append(
                f"<li><code>{html.escape(p['name'])}</code> needs {html.escape(', '.join(p['outside']))}, "
                f"outside the {data['totals']['runs']} runs: replay it with "
                f"<code>sim trace {html.escape(p['name'])}</code>.</li>"
            )
            continue
        buttons.append(
            f'<button type="button" data-preset="{k}" aria-pressed="false" '
            f'title="{html.escape(p["description"])}">{html.escape(p["name"])}</button>'
        )
    note = (
        f'<details class="outside-list"><summary>{len(notes)} more, outside the {data["totals"]["runs"]} runs</summary>'
        f'<ul class="outside">{"".join(notes)}</ul></details>'
        if notes else ""
    )  # fmt: skip
    return f'<div class="preset-buttons">{"".join(buttons)}</div>{note}'


def _cases(data: dict[str, Any]) -> str:
    """The section on the failures beyond the article's model: per case, what breaks and
    what protects, and a place for each scenario's swimlane (drawn by the script)."""
    by_number = {c.number: c for c in CASES}
    parts = []
    for number, views in data["cases"]:
        case = by_number[number]
        figures = []
        for k, (name, label, broken, _) in enumerate(views):
            verdict = "breaks " + ", ".join(broken) if broken else "all invariants hold"
            figures.append(
                f'<figure class="case-run"><figcaption><code>sim trace {html.escape(name)}</code>'
                + (f" ({html.escape(label)})" if label else "")
                + f': {html.escape(verdict)}</figcaption>'
                f'<div class="grid-box case-lane" data-case="{number}" data-view="{k}" tabindex="0" role="region" '
                f'aria-label="Swimlane of the scenario {html.escape(name)}"></div></figure>'
            )
        dl = [f"<dt>Runs with</dt><dd>{', '.join(f'<code>{html.escape(r)}</code>' for r in runs_with(case.number))}</dd>",
              f"<dt>Breaks</dt><dd>{html.escape(case.breaks)}</dd>",
              f"<dt>Protects</dt><dd>{html.escape(case.protects)}</dd>"]  # fmt: skip
        if case.unprotected:
            dl.append(f"<dt>Nothing in the model protects</dt><dd>{html.escape(case.unprotected)}</dd>")
        parts.append(
            f'<article class="case" id="case-{number}"><h3>{number}. {html.escape(case.title)}</h3>'
            f'<dl class="case-facts">{"".join(dl)}</dl>{"".join(figures)}</article>'
        )
    return "\n".join(parts)


def render_explainer(doc: Document, grids: Sequence[Grid]) -> str:
    """The page's text, from the sweep document and each run's grid (in run order), and
    the cases beyond the article's model (their scenarios run here). A workflow's sweep (its
    summary names the workflow) gets the workflow's page: its name and description, its own
    fault ticks in the switches' words, its named scenarios, replay commands with
    `--workflow`, and no cases section (`workflow_page`)."""
    reference = doc["summary"].get("workflow_reference")
    workflow = None
    if reference is not None:
        from sim.workflow import load

        workflow = load(reference)
    scenario = functools.cache(scenarios.load)  # the cases' scenarios are presets too: each read once
    data = encode(doc, grids, case_views(scenario) if workflow is None else (), workflow, scenario)
    totals = data["totals"]
    page, script = (_PAGE, _JS) if workflow is None else workflow_page(workflow, reference)
    for key, value in (
        ("@@CSS@@", _CSS + class_css()),
        ("@@RUNS@@", str(totals["runs"])),
        ("@@BROKEN@@", str(totals["broken"])),
        ("@@FINISHED@@", str(totals["finished"])),
        ("@@PRESETS@@", _presets(data)),
        ("@@PROFILES@@", _profiles(data)),
        ("@@CASES@@", _cases(data)),
        ("@@MAP@@", overview.render_svg(overview.build(doc), standalone=False)),
        ("@@CONTROLS@@", _controls(data, workflow)),
        ("@@JS@@", script),
        ("@@DATA@@", json_for_script(data)),
    ):
        page = page.replace(key, value)
    return page



#: the replay command the page's script builds for a run (a workflow's page names the workflow),
#: and the page's name in the window title it sets
_REPLAY = '["sim trace main"]'
_TITLE = '" \\u2014 One task, three interruptions"'


def workflow_page(workflow: Workflow, reference: str) -> tuple[str, str]:
    """The page and its script for a workflow's sweep: the article's page with the workflow's
    title, lead and replay commands, and without the article's section on the cases beyond
    its model (each replaced piece is checked to be there, so the template cannot drift)."""
    name, words = html.escape(workflow.name), html.escape(" ".join(workflow.description.split()))
    command = f"sim trace main --workflow {reference}"
    pieces = (
        ("<title>One task, three interruptions: the @@RUNS@@ runs of the worked example</title>",
         f"<title>{name}: the @@RUNS@@ runs of its worked example</title>"),
        ("<h1>One task, three interruptions</h1>", f"<h1>Your own workflow: {name}</h1>"),
        ("The worked example of &ldquo;Saved, Accepted, Safe to Use: How Work Survives a Restart&rdquo;,\nrun by",
         f"{words} The worked example&rsquo;s faults placed on this workflow by its rule (docs/workflows.md),\nrun by"),
        ("<code>sim trace main</code> draws a run in a terminal.", f"<code>{html.escape(command)}</code> draws a run "
                                                                   "in a terminal."),
    )  # fmt: skip
    page = _PAGE
    for old, new in pieces:
        if old not in page:
            raise AssertionError(f"explainer template: {old!r} is gone")
        page = page.replace(old, new)
    start, end = page.index('<section class="beyond"'), page.index('<div class="status"')
    if _REPLAY not in _JS or _TITLE not in _JS:
        raise AssertionError("explainer script: the replay command or the title is gone")
    script = _JS.replace(_REPLAY, json.dumps([command])).replace(_TITLE, json.dumps(f" \u2014 {workflow.name}"))
    return page[:start] + page[end:], script


_CSS = """
:root{--fg:#1b1b1b;--muted:#595959;--bg:#fff;--panel:#f5f5f0;--line:#d9d8d0;--accent:#0b57a4;--bad:#b3001b;--good:#11703a}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;color:var(--fg);background:var(--bg);font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
header,.layout,footer{max-width:86rem;margin:0 auto;padding:0 1rem}
.layout{display:grid;grid-template-columns:minmax(0,1fr);gap:0 1.5rem}
header{padding-top:1rem}
h1{font-size:1.5rem;margin:.2rem 0 .4rem}
h2{font-size:1.15rem;margin:1.4rem 0 .5rem}
h3{font-size:1rem;margin:1rem 0 .4rem}
p{margin:.3rem 0 .6rem}
a{color:var(--accent)}
code,.mono,table.lane,.sym{font-family:ui-monospace,"SFMono-Regular","DejaVu Sans Mono","Liberation Mono",Menlo,Consolas,monospace}
code{font-size:.92em;background:var(--panel);padding:0 .2em;border-radius:3px;overflow-wrap:anywhere}
.lead{color:var(--muted);max-width:60rem}
.presets{margin:.6rem 0}
.preset-buttons{display:flex;flex-wrap:wrap;gap:.35rem}
.outside-list{margin:.4rem 0 0;font-size:.8rem;color:var(--muted)}
.outside-list summary{cursor:pointer}
button{font:inherit;font-size:.9rem;padding:.2rem .6rem;border:1px solid #9a9a92;border-radius:5px;background:#fff;color:var(--fg);cursor:pointer}
button:hover{background:var(--panel)}
button[aria-pressed=true]{background:#0b57a4;border-color:#0b57a4;color:#fff}
button:focus-visible,a:focus-visible,.grid-box:focus-visible,input:focus-visible{outline:3px solid #f0a500;outline-offset:2px}
.outside{margin:.4rem 0 0;padding-left:1.1rem;color:var(--muted);font-size:.8rem;line-height:1.3}
form.switches{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(16rem,100%),1fr));gap:.5rem;margin:.6rem 0}
fieldset{border:1px solid var(--line);border-radius:6px;padding:.2rem .65rem .35rem;margin:0;min-width:0;background:#fff}
legend{font-weight:650;padding:0 .3rem}
legend code{font-weight:400;font-size:.8em;color:var(--muted);background:none}
.tag{font-size:.7rem;font-weight:600;text-transform:uppercase;letter-spacing:.04em;color:#0b57a4;border:1px solid #9bb9dc;border-radius:3px;padding:0 .25rem;vertical-align:.1em}
.hint{font-size:.8rem;line-height:1.3;color:var(--muted);margin:0 0 .15rem}
.radios{display:flex;flex-wrap:wrap;gap:.1rem .9rem}
.radios label{display:inline-flex;align-items:center;gap:.3rem;white-space:nowrap;padding:.1rem 0;cursor:pointer}
.radios input{margin:0;width:1.05rem;height:1.05rem}
.on{font-size:.68rem;font-weight:600;line-height:1.25;color:var(--good);border:1px solid #8cc9a0;background:#eaf7ee;border-radius:3px;padding:0 .25rem}
.overview{max-width:86rem;margin:0 auto;padding:0 1rem}
.overview h2{margin:.6rem 0 .3rem}
.map-read{max-width:62rem}
.map-box{margin:.3rem 0 0}
#map{display:block;max-width:100%;height:auto}
#map [data-run]{cursor:pointer}
#map:focus-visible{outline:3px solid #f0a500;outline-offset:2px}
#map [data-run]:hover{opacity:.7}
.map-info{font-size:.9rem;min-height:1.45em;margin:.2rem 0 0;color:var(--fg)}
.starts .presets{margin:.4rem 0}
.starts h3{margin:.5rem 0 .3rem}
.run-head{display:flex;flex-wrap:wrap;align-items:baseline;gap:.3rem 1rem}
.run-head h2{margin-bottom:.2rem}
.badges{display:flex;flex-wrap:wrap;gap:.4rem}
.badge{font-size:.85rem;font-weight:600;padding:.1rem .5rem;border-radius:999px;border:1px solid}
.badge.ok{color:var(--good);border-color:#8cc9a0;background:#eaf7ee}
.badge.bad{color:#fff;border-color:var(--bad);background:var(--bad)}
.badge.warn{color:#6b5200;border-color:#e0c25a;background:#fff6cf}
.scenario{border-left:4px solid #0b57a4;background:#f1f6fc;padding:.4rem .7rem;margin:.4rem 0;font-size:.95rem}
.beyond{max-width:1280px;margin:1.5rem auto 0;padding:0 1rem}
.case{margin:1.2rem 0;padding-top:.6rem;border-top:1px solid var(--line)}
.case h3{margin:.2rem 0 .4rem}
.case-facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.15rem .8rem;margin:0 0 .6rem;font-size:.9rem}
.case-facts dt{font-weight:600;color:var(--muted)}
.case-facts dd{margin:0;overflow-wrap:anywhere}
.case-run{margin:.6rem 0}
.case-run figcaption{font-size:.85rem;margin-bottom:.25rem}
""" + LANE_CSS + """
ul.plain{list-style:none;padding:0;margin:.2rem 0}
ul.plain li{padding:.3rem 0;border-bottom:1px solid #eeede8}
.flip-summary{font-weight:600}
#flips h4{font-size:.9rem;font-weight:600;color:var(--muted);margin:.8rem 0 0}
.prevented{color:var(--fg)}
.status{display:none}
.fix{color:var(--good);font-weight:600}
.brk{color:var(--bad);font-weight:600}
.same{color:var(--muted)}
details summary{cursor:pointer;font-weight:600;margin:1rem 0 .4rem}
""" + STORY_CSS + """
footer{color:var(--muted);font-size:.85rem;padding-bottom:2rem;margin-top:2rem}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
@media (min-width:1000px){
.layout{grid-template-columns:19.5rem minmax(0,1fr)}
.side{position:sticky;top:0;align-self:start;max-height:100vh;overflow-y:auto;padding:0 .3rem .4rem 0}
.side h2{margin:.5rem 0 .25rem}
form.switches{grid-template-columns:minmax(0,1fr);gap:.3rem;margin:0}
.side fieldset{padding:0 .55rem .2rem}
.side legend{font-size:.92rem}
.side .hint{font-size:.74rem;line-height:1.22}
.side .radios{gap:0 .75rem}
.side .radios label{padding:0;font-size:.92rem}
.starts{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:0 1.5rem}
#run .run-head h2{margin-top:.6rem}
table.lane{font-size:13.5px}
table.lane th,table.lane td{padding:.22rem .34rem}
}
@media (max-width:999px){
body{padding-bottom:6rem}
.status{display:flex;position:fixed;left:0;right:0;bottom:0;z-index:10;align-items:center;gap:.6rem;padding:.45rem .8rem;padding-bottom:calc(.45rem + env(safe-area-inset-bottom,0px));background:#1f2328;color:#fff;font-size:.88rem;line-height:1.3;box-shadow:0 -2px 10px rgba(0,0,0,.25)}
#status-text{flex:1;min-width:0}
.status .s-bad{color:#ffb8c1;font-weight:600}
.status .s-ok{color:#a6e6b8;font-weight:600}
.status button{background:transparent;color:#fff;border-color:#8b949e;white-space:nowrap;flex:none;font-size:.82rem;padding:.15rem .45rem}
.status button:hover{background:#333a42}
#run{display:flex;flex-direction:column}
#results{order:1}
#legend{order:2}
#run>.later{order:3}
}
@media (max-width:700px){
body{font-size:15px}
h1{font-size:1.25rem}
table.lane{font-size:13px}
table.lane th,table.lane td{padding:.22rem .4rem}
.legend{grid-template-columns:1fr}
table.facts th{white-space:normal}
}
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>One task, three interruptions: the @@RUNS@@ runs of the worked example</title>
<style>@@CSS@@
</style>
</head>
<body>
<header>
<h1>One task, three interruptions</h1>
<p class="lead">The worked example of &ldquo;Saved, Accepted, Safe to Use: How Work Survives a Restart&rdquo;,
run by <code>sim</code> under every combination of its eight switches: @@RUNS@@ runs, of which @@BROKEN@@ break at
least one invariant and @@FINISHED@@ finish. Flip a switch to see that run: its swimlane, its outcome, which
invariants broke and when, which protections it needed, and what one more change would do.
Generated by <code>sim sweep</code> from the same runs as <code>sweep.json</code>.</p>
<noscript><p><strong>This page needs JavaScript to draw the runs.</strong> The same data is in
<code>sweep.json</code> next to it, and <code>sim trace main</code> draws a run in a terminal.</p></noscript>
</header>
<section class="overview" id="overview" aria-labelledby="overview-h">
<h2 id="overview-h">All @@RUNS@@ runs at a glance</h2>
<p class="hint map-read" id="map-read">One cell per run. Rows: what happens to the work (change, silent, post_death) and the
checkpoints; columns: the four protections (rule, key, fencing, pins). Neighbouring rows or columns differ in one
switch. A cell's colour is the invariant its run breaks (stripes: several; grey: all hold); a dot marks a run that
does not finish. Point at a cell to name its run, click it to open the run below; or Tab to the map, move with
the arrow keys (each step is one switch flip) and press Enter to go to the run. On a narrow screen the map is
scaled to fit: zoom in to read its headings.</p>
<div class="map-box" id="map-box">@@MAP@@</div>
<p class="map-info" id="map-info" aria-live="polite">&nbsp;</p>
</section>
<div class="layout">
<aside class="side" aria-labelledby="controls-h">
<h2 id="controls-h">Switches</h2>
<form class="switches" id="switches" aria-label="The eight switches">
@@CONTROLS@@
</form>
</aside>
<main id="run" aria-labelledby="run-title">
<div class="starts">
<div class="presets" role="group" aria-labelledby="presets-h">
<h3 id="presets-h">Named scenarios</h3>
@@PRESETS@@
</div>
<div class="presets" role="group" aria-labelledby="profiles-h">
<h3 id="profiles-h">Engine profiles</h3>
@@PROFILES@@
</div>
</div>
<div class="run-head" id="run-head"><h2 id="run-title">Run</h2><div class="badges" id="badges" aria-live="polite"></div></div>
<p id="run-switches"></p>
<p class="replay">Replay it in a terminal: <code id="run-command"></code></p>
<div id="scenario"></div>
<div class="lane-head"><h3 id="lane-h">Swimlane</h3><span class="scroll-hint" id="scroll-hint" hidden>scroll sideways &rarr;</span></div>
<div class="grid-wrap" id="grid-wrap"><div class="grid-box" id="grid-box" tabindex="0" role="region" aria-labelledby="lane-h"></div></div>
<dl class="legend" id="legend" aria-label="Legend"></dl>
<div class="cols" id="results">
<section aria-labelledby="outcome-h">
<h3 id="outcome-h">Outcome</h3>
<table class="facts" id="outcome"></table>
</section>
<section aria-labelledby="invariants-h">
<h3 id="invariants-h">Invariants</h3>
<table class="facts" id="invariants"></table>
</section>
</div>
<div class="cols later">
<section aria-labelledby="needed-h">
<h3 id="needed-h">Protections this run needed</h3>
<ul class="plain" id="needed"></ul>
</section>
<section aria-labelledby="flips-h">
<h3 id="flips-h">One change at a time</h3>
<p class="flip-summary" id="flip-summary"></p>
<div id="flips">
<h4 id="flips-p-h">Protections: what a builder can change</h4>
<ul class="plain" id="flips-protections" aria-labelledby="flips-p-h"></ul>
<h4 id="flips-o-h">Events and checkpoints: what happens to the work, and a cost lever</h4>
<ul class="plain" id="flips-other" aria-labelledby="flips-o-h"></ul>
</div>
</section>
</div>
<details open class="later"><summary>Tick by tick</summary><ol class="story" id="story"></ol></details>
</main>
</div>
<section class="beyond" id="beyond" aria-labelledby="beyond-h">
<h2 id="beyond-h">Beyond the article's model</h2>
<p>The article names failures its model leaves out. <code>sim</code> runs them as fault kinds and
knobs that are off by default and outside the @@RUNS@@ runs above (<code>sim explore --faults all</code>,
<code>sim check --faults all</code>, <code>--set KNOB=VALUE</code>); each case below shows its named
scenarios, drawn as the runs above are.</p>
@@CASES@@
</section>
<div class="status" id="status"><span id="status-text"></span><button type="button" id="status-go">result &darr;</button></div>
<footer>
<p>Counts, ticks and model calls are properties of this small construction, not measurements of any engine.
The @@RUNS@@ combinations are exhaustive over these settings, not over arbitrary interleavings or crash points.
The link in the address bar reproduces this view.</p>
</footer>
<script type="application/json" id="sweep-data">@@DATA@@</script>
<script>@@JS@@</script>
</body>
</html>
"""

_JS = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("sweep-data").textContent);
  var ORDER = D.order.map(function (o) { return o[0]; });
  var VALUES = {};
  D.order.forEach(function (o) { VALUES[o[0]] = o[1]; });
  var PLACE = {};
  var place = 1;
  for (var i = ORDER.length - 1; i >= 0; i--) { PLACE[ORDER[i]] = place; place *= VALUES[ORDER[i]].length; }
  var INV = D.invariants.map(function (x) { return x[0]; }).concat(D.invariants_beyond);
  var PROT = D.protections.map(function (x) { return x[0]; });
  var PROT_ON = {}, WORDS = {};
  D.protections.forEach(function (p) { PROT_ON[p[0]] = p[1]; WORDS[p[0]] = p[2]; });
  var MEANING = {};
  D.legend.forEach(function (e) { MEANING[e[0]] = e[4]; });
  var form = document.getElementById("switches");

""" + LANE_HELPERS_JS + r"""

  function defaults() { var c = {}; ORDER.forEach(function (n) { c[n] = VALUES[n][0]; }); return c; }
  function runId(c) { var id = 1; ORDER.forEach(function (n) { id += VALUES[n].indexOf(c[n]) * PLACE[n]; }); return id; }
  function comboOf(id) {
    var c = {}, rest = id - 1;
    for (var i = ORDER.length - 1; i >= 0; i--) {
      var n = ORDER[i], size = VALUES[n].length;
      c[n] = VALUES[n][rest % size]; rest = Math.floor(rest / size);
    }
    return c;
  }
  function hashOf(c) { return "#" + ORDER.map(function (n) { return n + "=" + c[n]; }).join("&"); }
  function parseHash(h) {
    var c = defaults();
    h.replace(/^#/, "").split("&").forEach(function (pair) {
      var at = pair.indexOf("=");
      if (at < 0) return;
      var n, v;
      try { n = decodeURIComponent(pair.slice(0, at)); v = decodeURIComponent(pair.slice(at + 1)); } catch (e) { return; }
      if (VALUES.hasOwnProperty(n) && VALUES[n].indexOf(v) >= 0) c[n] = v;
    });
    return c;
  }
  function linkTo(id, text) { return el("a", {href: hashOf(comboOf(id))}, [text || "run " + id]); }
  function label(c) {
    var d = defaults();
    return ORDER.filter(function (n) { return c[n] !== d[n]; }).map(function (n) { return n + "=" + c[n]; });
  }

  function outcomeOf(id) {
    var arr = D.outcomes[D.runs[id - 1][1]], o = {};
    D.outcome_fields.forEach(function (f, k) {
      var v = arr[k];
      if (f === "violations") v = v.map(function (x) { return {invariant: INV[x[0]], tick: x[1]}; });
      else if (D.outcome_nested.hasOwnProperty(f)) {
        var obj = {}; D.outcome_nested[f].forEach(function (key, j) { obj[key] = v[j]; }); v = obj;
      }
      o[f] = v;
    });
    return o;
  }
  function brokenOf(o) { var b = {}; o.violations.forEach(function (v) { b[v.invariant] = v.tick; }); return b; }

  // -- the swimlane -------------------------------------------------------------------
  function drawGrid(id, grid) {
    clear($("grid-box")).appendChild(laneTable(grid, "Swimlane of run " + id, "lane"));
    drawLegend(grid);
  }
""" + LANE_DRAW_JS + r"""

  // what would have prevented each broken invariant: the run's own needed.prevented_by
  function preventedOf(run) {
    var out = {};
    run[3].forEach(function (x) {
      out[INV[x[0]]] = {by: x[1].map(function (b) { return {p: PROT[b[0]], run: b[1]}; }),
                        caveat: x.length > 2 ? D.texts[x[2]] : null};
    });
    return out;
  }
  function preventedKids(by) {
    if (!by.length) return ["no single protection switched on would have prevented it"];
    var kids = ["would have been prevented by "];
    by.forEach(function (b, k) {
      if (k) kids.push(" or ");
      kids.push(b.p + "=" + PROT_ON[b.p] + " alone (", linkTo(b.run), ")");
    });
    return kids;
  }

  function drawInvariants(o, grid, c, run) {
    var broken = brokenOf(o), why = {}, prevented = preventedOf(run);
    grid[3].forEach(function (v) { why[INV[v[0]]] = {event: D.texts[v[2]], why: D.texts[v[3]]}; });
    var t = clear($("invariants"));
    D.invariants.forEach(function (x) {
      var name = x[0], guard = x[2], b = broken.hasOwnProperty(name);
      var on = c[guard] === PROT_ON[guard];
      var cell = [el("span", {"class": "verdict " + (b ? "bad" : "ok"), "data-verdict": b ? "broke" : "holds",
                              "data-tick": b ? String(broken[name]) : null},
                     [b ? "broke at t" + broken[name] : "holds"]),
                  el("span", {"class": "why"}, [x[1]])];
      var guardText = "usually guarded by " + WORDS[guard];
      if (b) {
        if (why[name]) {
          cell.push(el("span", {"class": "why"}, ["t" + broken[name] + " " + why[name].event]));
          cell.push(el("span", {"class": "why"}, ["why: " + why[name].why]));
        }
        var p = prevented[name] || {by: [], caveat: null};
        cell.push(el("span", {"class": "why prevented", "data-prevented-by": p.by.map(function (q) { return q.p; }).join(" ")},
                     preventedKids(p.by).concat(["."])));
        var alone = p.by.some(function (q) { return q.p === guard; });
        if (on) guardText += p.caveat ? ": on here, but " + p.caveat : " (on here)";
        else guardText += " (off here: " + guard + "=" + c[guard] + ")" +
                          (p.caveat && !alone ? "; switched on alone it would not have helped: " + p.caveat : "");
      } else {
        guardText += on ? " (on here)" : " (off here: " + guard + "=" + c[guard] + ")";
      }
      cell.push(el("span", {"class": "why", "data-guard": guard}, [guardText]));
      var tr = fact(name, cell);
      tr.setAttribute("data-invariant", name);
      t.appendChild(tr);
    });
  }

  function drawNeeded(id, c) {
    var run = D.runs[id - 1], ul = clear($("needed")), seen = {};
    run[2].forEach(function (n) {
      var p = PROT[n[0]], needed = !!n[1];
      seen[p] = true;
      var parts = n[2].map(function (w) {
        var value = VALUES[p][w[0]];
        var more = w[2].map(function (k) { return INV[k]; });
        return [p + "=" + value + " (", linkTo(w[1]), ") " + (more.length ? "breaks " + more.join(", ") : "breaks nothing more")];
      });
      var kids = [el("strong", {"class": needed ? "brk" : "same"}, [needed ? "needed: " : "on, not needed here: "]),
                  WORDS[p] + ". Weakened alone: "];
      parts.forEach(function (part, k) { if (k) kids.push("; "); kids.push.apply(kids, part); });
      ul.appendChild(el("li", {"data-protection": p, "data-needed": String(needed)}, kids));
    });
    PROT.forEach(function (p) {
      if (seen[p]) return;
      ul.appendChild(el("li", {"data-protection": p, "data-needed": "off"},
        [el("strong", {"class": "same"}, ["off here: "]), WORDS[p] + " (" + p + "=" + c[p] + ")."]));
    });
    var prevented = preventedOf(run);
    Object.keys(prevented).forEach(function (name) {
      var kids = [el("strong", {"class": "brk"}, [name + ": "])].concat(preventedKids(prevented[name].by), ["."]);
      ul.appendChild(el("li", {"data-prevented": name}, kids));
    });
  }

  // one change at a time: every single flip; only a protection's flip is offered as a fix
  // (a builder cannot choose the events, and checkpoints change the cost, not the verdicts)
  function kindOf(n) { return PROT_ON.hasOwnProperty(n) ? "protection" : D.events.indexOf(n) >= 0 ? "event" : "cost"; }
  function drawFlips(id, o, c) {
    var broken = brokenOf(o), fixes = [], helps = [], breaks = [];
    var lists = {protection: clear($("flips-protections")), other: clear($("flips-other"))};
    ORDER.forEach(function (n) {
      var here = VALUES[n].indexOf(c[n]), kind = kindOf(n);
      VALUES[n].forEach(function (v, k) {
        if (k === here) return;
        var other = id + (k - here) * PLACE[n], oo = outcomeOf(other), ob = brokenOf(oo);
        var fixed = Object.keys(broken).filter(function (x) { return !ob.hasOwnProperty(x); });
        var added = Object.keys(ob).filter(function (x) { return !broken.hasOwnProperty(x); });
        var kids = [linkTo(other, n + "=" + v), " (run " + other + "): "];
        if (fixed.length) kids.push(el("span", {"class": "fix"}, ["fixes " + fixed.join(", ")]));
        if (fixed.length && added.length) kids.push("; ");
        if (added.length) kids.push(el("span", {"class": "brk"}, ["breaks " + added.map(function (x) { return x + " (t" + ob[x] + ")"; }).join(", ")]));
        if (!fixed.length && !added.length) kids.push(el("span", {"class": "same"}, ["same verdicts"]));
        var notes = [];
        var dc = oo.model_calls - o.model_calls;
        if (dc) notes.push((dc > 0 ? "+" : "") + dc + " model call" + (Math.abs(dc) === 1 ? "" : "s"));
        if (oo.finished !== o.finished) notes.push(oo.finished ? "finishes" : "no longer finishes");
        if (notes.length) kids.push(", " + notes.join(", "));
        var clean = Object.keys(ob).length === 0;
        var li = el("li", {"data-flip": n + "=" + v, "data-run": String(other), "data-kind": kind,
                           "data-effect": fixed.length && clean ? "fixes" : added.length ? "breaks" : fixed.length ? "helps" : "same"}, kids);
        lists[kind === "protection" ? "protection" : "other"].appendChild(li);
        if (kind === "protection" && fixed.length && clean) fixes.push(n + "=" + v);
        else if (kind === "protection" && fixed.length) helps.push(n + "=" + v + " fixes " + fixed.join(", "));
        if (added.length) breaks.push(n + "=" + v);
      });
    });
    var s = $("flip-summary"), text;
    if (Object.keys(broken).length) {
      if (fixes.length) text = "One protection change fixes every broken invariant: " + fixes.join(" or ") + ".";
      else if (helps.length) text = "No single protection change fixes every broken invariant: " + helps.join("; ") + ".";
      else text = "No single protection change fixes any broken invariant here.";
    } else {
      text = breaks.length ? "Every invariant holds. One change that breaks one: " + breaks.join(", ") + "."
                           : "Every invariant holds, and no single change breaks one.";
    }
    s.textContent = text;
    s.setAttribute("data-fixes", fixes.join(" "));
  }

  function drawScenario(c) {
    var box = clear($("scenario"));
    var buttons = document.querySelectorAll("button[data-preset]");
    for (var i = 0; i < buttons.length; i++) {
      var p = D.presets[+buttons[i].getAttribute("data-preset")];
      var match = ORDER.every(function (n) { return p.switches[n] === c[n]; });
      buttons[i].setAttribute("aria-pressed", String(match));
      if (match) box.appendChild(el("p", {"class": "scenario"}, [el("strong", null, ["Scenario " + p.name + ": "]), p.description]));
    }
  }

  // the bar at the foot of a narrow screen: the run and its verdicts, whatever is scrolled into view
  function drawStatus(id, o) {
    var v = o.violations.slice().sort(function (x, y) { return x.tick - y.tick || (x.invariant < y.invariant ? -1 : 1); });
    var box = clear($("status-text"));
    box.appendChild(document.createTextNode("Run " + id + " \u00b7 "));
    box.appendChild(el("span", {"class": v.length ? "s-bad" : "s-ok"},
      [v.length ? "broken: " + v.map(function (x) { return x.invariant + " t" + x.tick; }).join(", ") : "all invariants hold"]));
    box.appendChild(document.createTextNode(" \u00b7 " + (o.finished ? "finished" : "not finished")));
  }
  // the swimlane scrolls sideways in its box: say so, and shade the edge that hides more
  // (measured in the next frame, with the layout the browser does anyway)
  var cuePending = false;
  function scrollCue() {
    if (cuePending) return;
    cuePending = true;
    requestAnimationFrame(function () {
      cuePending = false;
      var b = $("grid-box"), over = b.scrollWidth - b.clientWidth;
      $("scroll-hint").hidden = over <= 1;
      $("grid-wrap").classList.toggle("more-right", over - b.scrollLeft > 1);
      document.documentElement.setAttribute("data-ready", "true");
    });
  }

  // the overview map (drawn by sim.render.overview): a frame on the run shown, its cell's
  // title under the map on hover, a click opens the run
  var map = $("map");
  function cellOf(id) { return map.querySelector("g[data-run='" + id + "']"); }
  function at(g) { return g.getAttribute("transform").match(/-?[\d.]+/g).map(Number); }
  function markMap(id) {
    var xy = at(cellOf(id)), sel = $("map-sel");
    sel.setAttribute("x", String(xy[0] - 1));
    sel.setAttribute("y", String(xy[1] - 1));
    sel.setAttribute("visibility", "visible");
    sel.setAttribute("data-run", String(id));
  }
  function mapCell(e) { var g = e.target.closest && e.target.closest("g[data-run]"); return g && map.contains(g) ? g : null; }
  function nameCell(g) { $("map-info").textContent = g.querySelector("title").textContent; }
  map.addEventListener("mouseover", function (e) { var g = mapCell(e); if (g) nameCell(g); });
  map.addEventListener("click", function (e) {
    var g = mapCell(e);
    if (!g) return;
    nameCell(g);
    show(comboOf(+g.getAttribute("data-run")));
    toRun();
  });
  // the run's heading at the top of the screen (the switches stay beside it on a wide one)
  function toRun() { $("run-head").scrollIntoView({block: "start"}); }
  // the keyboard: the map is one stop of the Tab order; an arrow opens the neighbouring run
  // (one switch flip: the axes are in Gray order), Enter brings the run into view. An arrow
  // steps from the run last asked for (the hash, set at once), not the one last drawn (drawn
  // on hashchange, later): keys pressed faster than the page draws still land where they say
  var mapAt = {}, mapXs = [], mapYs = [];
  Array.prototype.forEach.call(map.querySelectorAll("g[data-run]"), function (g) {
    var xy = at(g);
    mapAt[xy[0] + "," + xy[1]] = +g.getAttribute("data-run");
    if (mapXs.indexOf(xy[0]) < 0) mapXs.push(xy[0]);
    if (mapYs.indexOf(xy[1]) < 0) mapYs.push(xy[1]);
  });
  mapXs.sort(function (a, b) { return a - b; });
  mapYs.sort(function (a, b) { return a - b; });
  var STEP = {ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1]};
  map.addEventListener("keydown", function (e) {
    if (e.key === "Enter") { e.preventDefault(); toRun(); return; }
    var d = STEP[e.key];
    if (!d) return;
    e.preventDefault();
    var xy = at(cellOf(runId(parseHash(location.hash))));
    var i = mapXs.indexOf(xy[0]) + d[0], j = mapYs.indexOf(xy[1]) + d[1];
    if (i < 0 || j < 0 || i >= mapXs.length || j >= mapYs.length) return;
    var id = mapAt[mapXs[i] + "," + mapYs[j]];
    nameCell(cellOf(id));
    show(comboOf(id));
  });

  function render(c) {
    var id = runId(c), run = D.runs[id - 1], grid = D.grids[run[0]], o = outcomeOf(id);
    document.getElementById("run").setAttribute("data-run", String(id));
    markMap(id);
    $("run-title").textContent = "Run " + id + " of " + D.runs.length;
    var l = label(c);
    $("run-switches").textContent = l.length ? "Differs from the worked example in: " + l.join(", ") + "."
                                             : "The worked example: every switch at its first value, all protections on.";
    $("run-command").textContent = ["sim trace main"].concat(l.map(function (x) { return "--set " + x; })).join(" ");
    var badges = clear($("badges")), nb = o.violations.length;
    badges.appendChild(el("span", {"class": "badge " + (nb ? "bad" : "ok")},
      [nb ? nb + " invariant" + (nb > 1 ? "s" : "") + " broken" : "all invariants hold"]));
    badges.appendChild(el("span", {"class": "badge " + (o.finished ? "ok" : "warn")}, [o.finished ? "finished" : "not finished"]));
    var sections = grid[0].filter(function (r) { return D.rows[r][2] === "journal"; }).length;
    drawScenario(c);
    drawGrid(id, grid);
    drawOutcome(o, sections);
    drawInvariants(o, grid, c, run);
    drawNeeded(id, c);
    drawFlips(id, o, c);
    drawStatus(id, o);
    scrollCue();
    document.title = "Run " + id + (l.length ? " (" + l.join(" ") + ")" : " (the worked example)") + " \u2014 One task, three interruptions";
  }

  function readControls() {
    var c = {};
    ORDER.forEach(function (n) {
      var checked = form.querySelector("input[name='" + n + "']:checked");
      c[n] = checked ? checked.value : VALUES[n][0];
    });
    return c;
  }
  function setControls(c) {
    var inputs = form.querySelectorAll("input[type=radio]");
    for (var i = 0; i < inputs.length; i++) inputs[i].checked = c[inputs[i].name] === inputs[i].value;
  }
  function show(c) {
    var h = hashOf(c);
    if (location.hash !== h) location.hash = h;  // hashchange draws it
    else { setControls(c); render(c); }
  }
  form.addEventListener("change", function () { show(readControls()); });
  form.addEventListener("submit", function (e) { e.preventDefault(); });
  document.querySelector(".preset-buttons").addEventListener("click", function (e) {
    var b = e.target.closest("button[data-preset]");
    if (b) show(D.presets[+b.getAttribute("data-preset")].switches);
  });
  document.querySelector(".profile-buttons").addEventListener("click", function (e) {
    var b = e.target.closest("button[data-profile]");
    if (!b) return;
    var p = D.profiles[+b.getAttribute("data-profile")], c = readControls();
    Object.keys(p.switches).forEach(function (n) { c[n] = p.switches[n]; });
    var note = p.system + " by itself; the application adds " + (p.adds.join(", ") || "nothing");
    if (p.beyond.length) note += ". Outside the " + D.totals.runs + " runs it also sets " + p.beyond.join(", ") + " (sim sweep --profile " + p.name + ")";
    $("profile-note").textContent = note + ".";
    show(c);
  });
  $("grid-box").addEventListener("scroll", scrollCue, {passive: true});
  window.addEventListener("resize", scrollCue);
  $("status-go").addEventListener("click", function () { $("run-title").scrollIntoView({block: "start"}); });
  window.addEventListener("hashchange", function () { var c = parseHash(location.hash); setControls(c); render(c); });
  var caseLanes = document.querySelectorAll(".case-lane");
  for (var ci = 0; ci < caseLanes.length; ci++) {
    var box = caseLanes[ci], number = +box.getAttribute("data-case");
    var views = D.cases.filter(function (x) { return x[0] === number; })[0][1];
    var view = views[+box.getAttribute("data-view")];
    box.appendChild(laneTable(D.grids[view[3]], "Swimlane of the scenario " + view[0], null));
  }
  var start = parseHash(location.hash);
  setControls(start);
  render(start);  // data-ready is set once the first view is measured (scrollCue)
  if (location.hash.length > 1) toRun();  // a link to a run opens at the run; without one, at the map
})();
"""


__all__ = ["FORMAT", "decode", "encode", "presets", "render_explainer"]
