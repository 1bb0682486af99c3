"""The sweep's reports: JSON, CSV and markdown, each rendered from the sweep's JSON document.

A report is a `ReportWriter`: a file name and a function from the document to the file's
text. `WRITERS` is what `sim sweep` writes, in order; a new report is one more writer
appended there. A writer that draws runs (the explainer page) also takes each run's
swimlane: it is marked `grids=True` and called as `render(doc, grids)`. Every writer is deterministic to the byte: fixed order,
no timestamps, no absolute paths. `write_reports` replaces each file atomically through
`sim.base.files` (a temporary file in the same folder, fsynced, then renamed over the old one), so a
reader, or a kill, never leaves half a report.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.base.files import Head, OutError, atomic_write_many
from sim.properties.outcome import FIELDS as OUTCOME_FIELDS
from sim.render.explainer import render_explainer
from sim.render.grid import Grid
from sim.render.overview import ROW_SWITCHES, COLUMN_SWITCHES, render_map
from sim.scenario import NEWSLETTER_KEYS
from sim.model.switches import Switches

Document = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ReportWriter:
    filename: str
    #: `render(doc)`, or `render(doc, grids)` for a writer with `grids`
    render: Callable[..., str]
    description: str = ""
    #: also needs each run's swimlane (`sim.render.grid.Grid`, in run order)
    grids: bool = False


# -- JSON ----------------------------------------------------------------------------------
#: `json.dumps(value, separators=(", ", ": "))` with one encoder made once (`json.dumps` makes
#: one per call for any but its default settings, and sweep.json has a line per run)
_compact: Callable[[Any], str] = json.JSONEncoder(separators=(", ", ": ")).encode


def _pretty(value: Any, indent: int) -> str:
    """Indented JSON, but short values and lists of scalars on one line."""
    flat = _compact(value)
    pad = " " * indent
    if not isinstance(value, (dict, list)) or len(flat) + indent <= 96 or not value:
        return flat
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {_pretty(v, indent + 2)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    items = [f"{inner}{_pretty(v, indent + 2)}" for v in value]
    return "[\n" + ",\n".join(items) + "\n" + pad + "]"


def render_json(doc: Document) -> str:
    """`{"runs": [...], "summary": {...}}`: one run per line, the summary indented."""
    runs = ",\n".join(f"    {_compact(run)}" for run in doc["runs"])
    rest = [f'  {json.dumps(k)}: {_pretty(v, 2)}' for k, v in doc.items() if k != "runs"]
    return "{\n" + '  "runs": [\n' + runs + "\n  ],\n" + ",\n".join(rest) + "\n}\n"


# -- CSV -----------------------------------------------------------------------------------
OUTCOME_COLUMNS = tuple(
    column
    for name in OUTCOME_FIELDS
    if name != "violations"  # one column per invariant instead
    for column in ([f"newsletter_{k}" for k in NEWSLETTER_KEYS] if name == "newsletter" else [name])
)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def render_csv(doc: Document) -> str:
    """One row per run: id, one column per switch, per outcome figure, the first tick of
    each invariant it broke (empty: held), the protections it needed, and for each broken
    invariant the single protections that would have prevented it."""
    runs = doc["runs"]
    invariants = list(doc["summary"]["invariants"])
    switches = list(runs[0]["switches"])
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["id", *switches, *OUTCOME_COLUMNS, *invariants, "needed", "prevented_by"])
    for run in runs:
        outcome = dict(run["outcome"])
        letter = outcome.pop("newsletter")
        for key, value in letter.items():
            outcome[f"newsletter_{key}"] = value
        broken = {v["invariant"]: v["tick"] for v in outcome["violations"]}
        needed = run["needed"]
        writer.writerow([
            run["id"],
            *(run["switches"][name] for name in switches),
            *(_cell(outcome[name]) for name in OUTCOME_COLUMNS),
            *(_cell(broken.get(name)) for name in invariants),
            " ".join(p for p, n in needed["protections"].items() if n["needed"]),
            " ".join(
                f"{inv}:{'+'.join(p['protection'] for p in by) or '-'}"
                for inv, by in needed["prevented_by"].items()
            ),
        ])  # fmt: skip
    return buffer.getvalue()


# -- markdown ------------------------------------------------------------------------------
def _table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> str:
    from tabulate import tabulate  # type: ignore[import-untyped]

    return str(tabulate(rows, headers=headers, tablefmt="github"))


def reproduce(switches: dict[str, str], workflow: str | None = None) -> str:
    """The `sim trace` command that replays a run with these switches (on a workflow: with it)."""
    args = Switches().with_values(switches).set_args()
    return f"{trace_main(workflow)} {args}".rstrip()


def trace_main(workflow: str | None) -> str:
    """`sim trace main`, on the sweep's workflow when it has one (`summary["workflow_reference"]`)."""
    return "sim trace main" + (f" --workflow {workflow}" if workflow else "")


def _folder(s: dict[str, Any]) -> str:
    """Where the sweep's reports are: reports/, or reports/workflows/NAME/ for a workflow's."""
    return f"reports/workflows/{s['workflow']}/" if s.get("workflow") else "reports/"


def _sets(sets: list[list[str]]) -> str:
    return " or ".join("{" + ", ".join(s) + "}" if s else "{} (none)" for s in sets)


def _calls(c: dict[str, Any]) -> str:
    return f"{c['min']} / {c['max']} / {c['mean']}"


def _extra(e: dict[str, Any]) -> str:
    return f"{e['total']:+d} ({e['min']:+d}..{e['max']:+d})"


#: a run id -> "id: `sim trace ...`", the command that reproduces it ("-" for none)
Example = Callable[[int | None], str]


def _section(title: str, words: str, table: str) -> list[str]:
    """A `##` section: its heading, a paragraph and a table."""
    return [f"## {title}", "", words, "", table, ""]


def _intro(s: dict[str, Any], example: Example) -> list[str]:
    """The title and what the report is."""
    wf, here = s.get("workflow_reference"), _folder(s)
    return [
        "# The 864-run sweep" + (f" of the workflow {s['workflow']}" if wf else ""),
        "",
        ("Generated by `sim sweep`; do not edit by hand. Every run of the worked example under " if not wf else
         f"Generated by `sim sweep --workflow {wf}`; do not edit by hand. Every run of the workflow's worked example "
         f"({wf if wf.endswith('.toml') else f'workflows/{wf}.toml'}, docs/workflows.md) under ")
        + f"each of the {s['totals']['runs']} combinations of the eight switches, checked against every "
        f"invariant, with the protections each run needed. `{here}sweep.json` holds every run "
        f"with its outcome and `needed`; `{here}sweep.csv` has one row per run.",
        "",
        "![All runs at a glance: one cell per run, coloured by the invariants it breaks](sweep-map.svg)",
        "",
        f"**The map** (`sweep-map.svg`): one cell per run. Rows are what happens to the work and the "
        f"cost lever ({', '.join(ROW_SWITCHES)}), columns the protections ({', '.join(COLUMN_SWITCHES)}); "
        "the headings name each switch's values, and neighbouring rows or columns differ in one switch "
        "(Gray order), so a block that lights up across a heading is one flip away. A cell's colour is "
        "the invariant its run breaks, stripes when it breaks several, pale grey when all hold; a dot "
        "marks a run that does not finish. Each cell's tooltip names the run and its broken invariants "
        + ("with their ticks; `reports/explainer.html` opens with the same map, where a click opens the run."
           if not wf else "with their ticks."),
        "",
    ]  # fmt: skip


def _definitions(s: dict[str, Any], example: Example) -> list[str]:
    """The words the tables use: run id, event combination, protections, needed, minimal sets."""
    return [
        "## Definitions",
        "",
        "- **Run id**: 1..864 in the order of the product of the switches "
        f"({', '.join(s['order'])}), each switch's values in the order of docs/model.md §8, first value first. "
        "Run 1 is the worked example with every protection on. Every run has `gate=fail-open`.",
        "- **Event combination**: (" + ", ".join(s["events"]) + "), 12 in all: what happens to "
        "the work. Checkpoints are a cost lever, reported as cost, not as a protection.",
        "- **Protections**: " + ", ".join(f"{k}={v}" for k, v in s["protections"].items())
        + ". A protection is on at that value; key and rule have two weaker values each.",
        "- **needed** (per run): for each protection that is on, the runs that weaken it alone "
        "(everything else equal; for key and rule each weaker value separately) and the "
        "invariants they break that this run does not; the protection was needed if any does. "
        "For each invariant the run breaks, `prevented_by` lists the protections that, switched on "
        "alone, give a run that does not break it.",
        "- **Minimal protection sets**: for an event combination and checkpoint mode, a set S is "
        "sufficient when every run of that cell with all of S on (the other protections at any "
        "value) breaks no invariant; the table lists the sufficient sets none of whose proper "
        "subsets is sufficient.",
        f"- **Reproduce a run**: `{trace_main(s.get('workflow_reference'))} --set NAME=VALUE ...` with the run's switches that "
        "differ from the worked example (the `example` columns give the full command).",
        "",
    ]  # fmt: skip


def _invariants(s: dict[str, Any], example: Example) -> list[str]:
    """Per invariant: what it holds, the runs that break it, the first of them; then the totals."""
    total = s["totals"]
    return _section(
        "Invariants",
        "What each run is checked against, how many of the 864 runs break it, and the first run "
        "that does (reproduce it with the command shown).",
        _table(
            [[n, s["invariants"][n], total["invariants"][n]["runs"], example(total["invariants"][n]["first"])]
             for n in s["invariants"]],
            ["invariant", "holds when", "runs broken", "first run"],
        ),
    ) + [
        f"In all: {total['broken']} of {total['runs']} runs break at least one invariant, "
        f"{total['finished']} finish (an accepted digest of the final report with its announcement "
        f"confirmed), {total['horizon_reached']} reach the horizon.",
        "",
    ]  # fmt: skip


def _all_on(s: dict[str, Any], example: Example) -> list[str]:
    """The event combinations with every protection on, per checkpoint mode."""
    return _section(
        "All four protections on",
        "The 12 event combinations with every protection on, per checkpoint mode: how many runs "
        "break an invariant, how many finish, and what they cost in model calls (the minimum is "
        + ("the sum of the steps' own model calls" if s.get("workflow") else "4")
        + "). Reproduce the first run of a row with the command in `example`.",
        _table(
            [[r["checkpoints"], r["runs"], r["broken"], r["finished"], _calls(r["model_calls"]), example(r["example"])]
             for r in s["all_on"]],
            ["checkpoints", "runs", "broken", "finished", "model calls min / max / mean", "example"],
        ),
    )  # fmt: skip


def _weakened(s: dict[str, Any], example: Example) -> list[str]:
    """Per checkpoint mode: each protection weakened alone, against the all-on runs."""
    names = list(s["invariants"])
    out: list[str] = []
    for mode, rows in s["weakened"].items():
        out += _section(
            f"One protection weakened ({mode} checkpoints)",
            f"Each row weakens exactly one protection of the all-on runs ({mode}) over the 12 event "
            "combinations: runs broken per invariant, runs that did not finish, and extra model "
            "calls against the all-on run of the same event combination (total, and the range per "
            "run). `example` is the first run of the row that breaks something.",
            _table(
                [[r["weakened"], r["runs"], r["broken"], *(r["invariants"][n] for n in names),
                  r["unfinished"], _extra(r["extra_model_calls"]), example(r["example"])]
                 for r in rows],
                ["weakened", "runs", "broken", *names, "unfinished", "extra model calls", "example"],
            ),
        )  # fmt: skip
    return out


def _minimal_sets(s: dict[str, Any], example: Example) -> list[str]:
    """Per event combination and checkpoint mode: the smallest sufficient protection sets."""
    cells: dict[tuple[str, ...], dict[str, dict[str, Any]]] = {}
    for row in s["minimal_sets"]:
        cells.setdefault(tuple(row[e] for e in s["events"]), {})[row["checkpoints"]] = row
    modes = list(s["weakened"])
    return _section(
        "Minimal protection sets",
        "For each event combination and checkpoint mode (36 runs each), the smallest sets of "
        "protections under which no run of the cell breaks an invariant; `broken` counts the "
        f"cell's runs that break something. Reproduce a run of a cell with `{trace_main(s.get('workflow_reference'))} --set "
        "silent=... --set change=... --set post_death=... --set checkpoints=...` plus the "
        "protections to switch off.",
        _table(
            [[*events, *(f"{_sets(by[m]['minimal_sets'])} ({by[m]['broken']} broken)" for m in modes)]
             for events, by in cells.items()],
            [*s["events"], *modes],
        ),
    )  # fmt: skip


def _gate(s: dict[str, Any], example: Example) -> list[str]:
    """The newsletter gate failing open (the sweep's runs) against failing closed."""
    gate = s["gate"]
    subset = ", ".join(f"{k}={v}" for k, v in gate["subset"].items())
    return _section(
        "Fail-open or fail-closed",
        f"The {gate['fail-open']['runs']} runs with {subset}, once with the newsletter gate "
        "failing open (the sweep's runs, as in the article) and once failing closed: how often the "
        "newsletter used a wrong digest (misused-dependant), was never admitted, and how often a "
        "wrong digest was accepted upstream (wrong-acceptance). Reproduce a run with its sweep "
        "command plus `--set gate=fail-closed`.",
        _table(
            [[g, gate[g]["runs"], gate[g]["misused_dependant"], gate[g]["never_admitted"],
              gate[g]["wrong_acceptance"], gate[g]["broken"], gate[g]["finished"]]
             for g in ("fail-open", "fail-closed")],
            ["gate", "runs", "used a wrong digest", "never admitted", "wrong digest accepted",
             "broken", "finished"],
        ),
    )  # fmt: skip


def _needed(s: dict[str, Any], example: Example) -> list[str]:
    """Per protection: the runs it was on in, and those of them that needed it."""
    return _section(
        "How often each protection was needed",
        "Over the 864 runs: in how many a protection was on, and in how many of those turning it "
        "off alone (any weaker value) breaks an invariant the run does not break (the `needed` "
        f"column of `{_folder(s)}sweep.csv`).",
        _table(
            [[p, s["protections"][p], c["on"], c["needed"]] for p, c in s["totals"]["protections"].items()],
            ["protection", "on value", "runs on", "runs that needed it"],
        ),
    )  # fmt: skip


#: the sections of `sweep.md`, in order: each a function of the summary and `Example`
SECTIONS: tuple[Callable[[dict[str, Any], Example], list[str]], ...] = (
    _intro, _definitions, _invariants, _all_on, _weakened, _minimal_sets, _gate, _needed,
)  # fmt: skip


def render_markdown(doc: Document) -> str:
    """The human report, `sweep.md`: the summary's tables, each run cited with the command
    that reproduces it."""
    by_id = {run["id"]: run for run in doc["runs"]}

    def example(rid: int | None) -> str:
        return "-" if rid is None else f"{rid}: `{reproduce(by_id[rid]['switches'], doc['summary'].get('workflow_reference'))}`"

    out: list[str] = []
    for section in SECTIONS:
        out += section(doc["summary"], example)
    return "\n".join(out)


WRITERS: list[ReportWriter] = [
    ReportWriter("sweep.json", render_json, "every run and the summary (the --json document)"),
    ReportWriter("sweep.csv", render_csv, "one row per run"),
    ReportWriter("sweep-map.svg", render_map, "the overview map: one cell per run (sweep.md shows it)"),
    ReportWriter("sweep.md", render_markdown, "the human report"),
    ReportWriter("explainer.html", render_explainer, "the interactive explainer page", grids=True),
]


# -- writing -------------------------------------------------------------------------------
def render_all(
    doc: Document, writers: Sequence[ReportWriter] | None = None, grids: Sequence[Grid] | None = None
) -> dict[str, str]:
    """File name -> text for every writer, in order. Writers that draw runs need `grids`
    (each run's swimlane, in run order: `Sweep.grids` of a sweep run with `grids=True`);
    without them those writers are left out."""
    out = {}
    for w in WRITERS if writers is None else writers:
        if not w.grids:
            out[w.filename] = w.render(doc)
        elif grids is not None:
            out[w.filename] = w.render(doc, grids)
    return out


def report_names() -> list[str]:
    """The file names `sim sweep` writes, in order."""
    return [w.filename for w in WRITERS]


def write_reports(texts: dict[str, str], out: Path, heads: Mapping[str, Head] | None = None) -> list[Path]:
    """Write rendered reports into `out` (already prepared): all staged, then renamed in a row;
    a report named in `heads` only over a file that starts with its head (one sim wrote)."""
    try:
        atomic_write_many(out, texts, heads)
    except OSError as exc:
        raise OutError(f"--out {out}: cannot write the reports ({exc.strerror or exc})") from None
    return [out / name for name in texts]


__all__ = [
    "WRITERS",
    "ReportWriter",
    "render_all",
    "render_csv",
    "render_json",
    "render_markdown",
    "report_names",
    "reproduce",
    "write_reports",
]
