"""`sim sweep`: all 864 runs, the protections each needed, the aggregates, the reports."""

from __future__ import annotations

import textwrap
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sim.base import lean_import
from sim.commands.common import (
    IN_THE_SWEEP,
    emit_json,
    folder_value,
    note_inert,
    profile_option,
    run_of,
    schedule_kinds,
    set_option,
    switch_values,
    workflow_option,
)
from sim.base.files import prepare_out, refuse_special
from sim.base.memory import collector_paused
from sim.base.limits import MAX_WORKERS  # not sim.analysis.workers: the pool is imported only when used
from sim.render import grid
from sim.render.report import WRITERS, render_all, report_names, write_reports
from sim.analysis.sweep import SweepProgress
from sim.analysis.sweep import sweep as run_sweep

if TYPE_CHECKING:  # a workflow's module only with --workflow
    from sim.model.workflow import Workflow


lean_import.load("tabulate")  # the summary and sweep.md are its tables: without importlib.metadata

SHORT = {
    "duplicate-effect": "duplicate",
    "misused-dependant": "misused",
    "stale-write": "stale",
    "two-acceptances": "two acc.",
    "wrong-acceptance": "wrong acc.",
}

#: the profile table's column heads (it fits 80 columns, with one invariant beyond the article's at most)
TINY = {
    "duplicate-effect": "dup.",
    "misused-dependant": "misused",
    "stale-write": "stale",
    "two-acceptances": "2 acc.",
    "wrong-acceptance": "wrong",
    # beyond the article's model: a column only when a knob under --set lets one break
    "faithful-digest": "fd",
    "uncorrected-duplicate": "ud",
}


@contextmanager
def _progress(enabled: bool) -> Iterator[SweepProgress | None]:
    """A rich progress bar on stderr when it is a terminal; nothing otherwise."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
    from rich.progress import Progress as Bar

    bar = Bar(
        TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
        console=Console(stderr=True), transient=True,
        auto_refresh=False,  # no refresh thread: worker processes are forked under the bar
    )  # fmt: skip
    task = bar.add_task("runs", total=None)
    with bar:

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)
            bar.refresh()

        yield update


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The terminal summary: a few compact tables."""
    from tabulate import tabulate  # type: ignore[import-untyped]

    names = list(summary["invariants"])
    total = summary["totals"]
    lines: list[str] = []

    def table(title: str, rows: list[list[Any]], headers: list[str]) -> None:
        lines.append(click.style(title, bold=True))
        lines.extend(tabulate(rows, headers=headers, tablefmt="simple").splitlines())
        lines.append("")

    table(
        "All protections on (12 event combinations per checkpoint mode)",
        [[r["checkpoints"], r["runs"], r["broken"], r["finished"],
          f"{r['model_calls']['min']} / {r['model_calls']['max']} / {r['model_calls']['mean']}"]
         for r in summary["all_on"]],
        ["checkpoints", "runs", "broken", "finished", "model calls min/max/mean"],
    )  # fmt: skip
    table(
        "One protection weakened (per-step; calls: extra model calls against all-on)",
        [[r["weakened"], r["broken"],
          ", ".join(f"{SHORT.get(n, n)} {c}" for n, c in r["invariants"].items() if c) or "-",
          r["unfinished"], f"{r['extra_model_calls']['total']:+d}"]
         for r in summary["weakened"]["per-step"][1:]],
        ["weakened", "broken", "runs breaking", "unfinished", "calls"],
    )  # fmt: skip
    gate = summary["gate"]
    table(
        f"Newsletter gate ({gate['fail-open']['runs']} runs with pins=off, rule=current-accepted)",
        [[g, gate[g]["misused_dependant"], gate[g]["never_admitted"], gate[g]["wrong_acceptance"]]
         for g in ("fail-open", "fail-closed")],
        ["gate", "used a wrong digest", "never admitted", "wrong digest accepted"],
    )  # fmt: skip
    table(
        f"All {total['runs']} runs: {total['broken']} break an invariant, {total['finished']} finish",
        [[n, total["invariants"][n]["runs"], total["invariants"][n]["first"] or "-"] for n in names],
        ["invariant", "runs broken", "first run"],
    )  # fmt: skip
    return lines


@click.command()
@click.option("--workers", type=click.IntRange(min=1, max=MAX_WORKERS), default=1, show_default=True,
              help=f"Worker processes (at most {MAX_WORKERS}, 4 x the CPU count); the results are "
              "identical for any number.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the sweep.json document on stdout, nothing else.")
@click.option("--out", "out", type=click.Path(path_type=Path), callback=folder_value, default=Path("reports"), show_default=True,
              help="Folder for sweep.json, sweep.csv, sweep-map.svg, sweep.md and explainer.html (created if missing; "
              "each file replaced atomically, other files left alone).")  # fmt: skip
@profile_option
@set_option
@workflow_option
def sweep(workers: int, as_json: bool, out: Path, profile: str | None, sets: tuple[str, ...], workflow: str | None) -> int:
    """Run all 864 switch combinations, check every invariant, and write the reports.

    With --profile NAME: run the 12 event combinations under what that engine gives by itself,
    then with each protection the application must add, and say which invariants each keeps
    (no reports are written).

    With --workflow NAME|FILE: the 864 runs of that workflow's worked example; its reports go
    to OUT/workflows/NAME/ (sweep.json, sweep.csv, sweep.md, sweep-map.svg and its explainer.html),
    but for digest, the article's own, whose sweep and reports are those of `sim sweep`.
    """
    if profile is not None:
        return _profile_sweep(profile, sets, as_json, _workflow_of(workflow)[0])
    if sets:
        raise click.UsageError("--set needs --profile: the 864-run sweep varies the switches itself")
    shape, names = _workflow_of(workflow)
    if shape is not None:
        out = out / "workflows" / shape.name
    out = prepare_out(out)  # fail on a bad --out before the work
    for name in names:  # and on a folder, FIFO, device or socket where a report goes
        refuse_special(out / name)
    # frozen after: the runs and their grids live until the process ends, the garbage they left
    # (a few thousand objects in cycles) a moment longer; the reports render over a small young generation
    with collector_paused(freeze=True):
        with _progress(sys.stderr.isatty()) as progress:
            result = run_sweep(workers=workers, progress=progress, view=grid.shared, workflow=shape)
    writers = [w for w in WRITERS if w.filename in names]
    texts = render_all(result.document(), writers, grids=result.views)  # the views are the runs' grids
    paths = write_reports(texts, out)
    if as_json:
        sys.stdout.write(texts["sweep.json"])
        return 0
    for line in summary_lines(result.summary):
        click.echo(line)
    click.echo("the minimal protection sets per event combination and each run: see the reports")
    click.echo("wrote:")
    for p in paths:
        click.echo(f"  {p}")
    return 0


#: the reports of a workflow's sweep: the data and its own explainer page
WORKFLOW_REPORTS = ("sweep.json", "sweep.csv", "sweep-map.svg", "sweep.md", "explainer.html")


def _workflow_of(name: str | None) -> tuple[Workflow | None, list[str]]:
    """The workflow a sweep runs (None: the article's, built in) and the reports it writes."""
    if name is None:
        return None, report_names()
    from sim.model.schedule import engine_shape_or_refuse
    from sim.workflow import load

    wf = load(name)
    if wf.is_article:
        return None, report_names()  # the article's pipeline: the built-in runs, every report
    engine_shape_or_refuse(wf)  # before any folder is made
    return wf, [n for n in report_names() if n in WORKFLOW_REPORTS]


def _profile_sweep(name: str, sets: tuple[str, ...], as_json: bool, workflow: Workflow | None = None) -> int:
    """`sim sweep --profile NAME`: the engine alone and with each addition, over the events."""
    from sim.analysis.profile_sweep import EVENTS, credit, engine_keeps, profile_rows, row_adds, run_switches
    from sim.model.schedule import worked_example
    from sim.render.text import column_widths, table_line
    from sim.model.profiles import get
    from sim.model.switches import FAULT_SWITCHES, for_own_schedules

    profile = get(name)
    values = switch_values(sets)
    for_own_schedules(values, "sweep --profile")  # the events are what it varies: refuse them in --set
    notes = note_inert([run_of(switches, schedule_kinds(worked_example(switches, workflow)))
                        for _, adds in row_adds(profile) for switches in run_switches(profile, adds, values)],
                       IN_THE_SWEEP)  # fmt: skip
    rows = profile_rows(profile, values, workflow)
    if as_json:
        emit_json({"profile": profile.name, "system": profile.system, "set": values,
                   **({"workflow": workflow.name} if workflow is not None else {}),
                   "engine": profile.settings(), "events": len(EVENTS), "rows": [r.to_json() for r in rows],
                   "engine_keeps": list(engine_keeps(profile, rows)), "credit": credit(profile, rows),
                   **({"notes": notes} if notes else {})})  # fmt: skip
        return 0
    names = list(rows[0].broken)
    on = f", on the workflow {workflow.name}" if workflow is not None else ""
    click.echo(click.style(f"{profile.system} (--profile {profile.name}{on})", bold=True))
    click.echo(textwrap.fill("engine gives: " + " ".join(f"{k}={v}" for k, v in profile.settings().items()),
                             width=80, subsequent_indent="    ", break_on_hyphens=False))  # fmt: skip
    click.echo(f"each row runs the {len(EVENTS)} event combinations ({', '.join(FAULT_SWITCHES)});")
    click.echo(textwrap.fill("a cell counts the runs that broke the invariant: " + ", ".join(
        k if TINY.get(k, k) == k else f"{TINY[k]} = {k}" for k in names), width=80, break_on_hyphens=False))
    click.echo()
    table = [[r.label, *[str(r.broken[k] or "-") for k in names], str(r.unfinished or "-"), str(r.model_calls)]
             for r in rows]  # fmt: skip
    headers = ["", *[TINY.get(k, k) for k in names], "unfin.", "calls"]
    widths = column_widths([headers, *table])
    right = [False] + [True] * (len(headers) - 1)
    for cells in (headers, ["-" * w for w in widths], *table):
        click.echo(table_line(cells, widths, right))
    click.echo()
    for line in credit(profile, rows):
        click.echo(textwrap.fill(line, width=80, subsequent_indent="    ", break_on_hyphens=False))
    return 0
