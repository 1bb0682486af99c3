"""`sim check`: every fault schedule inside a bound, exhaustively (sim/check.py does the work)."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from sim import check as checker
from sim.commands.common import emit_json, folder_value, profile_option, set_option, switch_values
from sim.commands.trace import scenario_page
from sim.faults import FAULT_SETS
from sim.files import prepare_folder, replace_folder
from sim.limits import MAX_CHECK_FAULTS
from sim.properties import verdict
from sim.render.page import is_page_of, page_path
from sim.render.text import column_widths, table_line
from sim.scenario import parse
from sim.search import MERGES
from sim.switches import FAULT_SWITCHES, Checkpoints
from sim.workers import MAX_WORKERS, cpus, pool

DEFAULT_OUT = Path("reports/counterexamples/check")


@click.command()
@click.option("--max-faults", "-k", type=click.IntRange(0, MAX_CHECK_FAULTS), default=checker.DEFAULT_MAX_FAULTS,
              show_default=True, help=f"The most faults in one schedule (0..{MAX_CHECK_FAULTS}).")  # fmt: skip
@click.option("--horizon", "-t", type=click.IntRange(1, checker.SETTING.horizon - 1),
              default=checker.DEFAULT_HORIZON, show_default=True,
              help="Every fault takes effect (and every pause wakes) at a tick <= this.")  # fmt: skip
@click.option("--faults", type=click.Choice(FAULT_SETS), default="article", show_default=True,
              help="Which fault kinds are enumerated: the article's own, or all (with the failures outside its "
              "model, docs/outside.md).")  # fmt: skip
@set_option
@profile_option
@click.option("--protections", "-p", default="all", show_default=True, metavar="all|each|SET",
              help="all: all protections on; each: all-on and each single weakening (the sweep's six); "
              "SET: a comma list such as all-on,fencing=off,key=none+rule=any-accepted. With --profile, "
              "all is the engine alone and each adds each protection the application must add.")  # fmt: skip
@click.option("--workers", "-j", type=click.IntRange(1, MAX_WORKERS), default=None,
              help=f"Worker processes (default: the CPUs this process may use; at most {MAX_WORKERS}, "
              "4 x the CPU count). Results do not depend on it.")  # fmt: skip
@click.option("--split", type=click.IntRange(1, checker.MAX_SPLIT), default=1, show_default=True,
              help="Cut each configuration's search into up to N units of work (subtrees), so that one "
              "configuration can use several workers. Changes the node and transition counts, never the "
              "schedules, verdicts or counterexamples; the output does not depend on the workers.")  # fmt: skip
@click.option("--scheduler", metavar="ADDRESS|local:N", default=None,
              help="Run the units on a Dask cluster: a scheduler's HOST:PORT, or local:N for a local cluster "
              "of N worker processes (needs pip install -e '.[dask]'). Same output as without.")  # fmt: skip
@click.option("--merge", type=click.Choice(MERGES), default="canonical", show_default=True,
              help="How the search merges runs that meet: by their canonical state, or none: only runs whose "
              "full states are equal (trusts no canonical form; same schedules, verdicts and counterexamples, "
              "more nodes). Reruns a doubtful verdict.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), callback=folder_value, default=DEFAULT_OUT,
              show_default=True, help="Where the counterexample scenario files (and check.json) go; "
              "the old set there is replaced as a whole.")  # fmt: skip
def check(max_faults: int, horizon: int, faults: str, sets: tuple[str, ...], profile: str | None, protections: str,
          workers: int | None, split: int, scheduler: str | None, merge: str, as_json: bool,
          out: Path) -> int:  # fmt: skip
    """Check every invariant on every fault schedule within a bound.

    The enumerated faults replace the worked example's fixed ones (attempt #1 silent at t3,
    the correction at t4, the first poster's death); its setting stays: 4 sections, first
    token 41, 2 missed heartbeats, the newsletter ready at t12. `--set` changes the other
    switches; unless it sets `checkpoints`, both per-step and end-only are checked.
    """
    bound = checker.CheckBound(max_faults=max_faults, horizon=horizon, faults=faults)
    values = switch_values(sets, profile)
    base = checker.base_switches(values)
    if profile is not None and protections == "each":  # the engine alone, then each addition
        from sim.profiles import get

        protections = ",".join(["all-on", *(c.setting for c in get(profile).missing())])
    modes = [base.checkpoints] if "checkpoints" in values else list(Checkpoints)
    configs = checker.configurations(base, protections, modes)
    workers = workers or min(cpus(), MAX_WORKERS)
    target = prepare_folder(out)  # fail on a bad --out before the work
    started = time.perf_counter()
    try:
        with _progress(enabled=sys.stderr.isatty()) as progress, _executor(workers, scheduler) as (executor, workers):
            results = checker.check(configs, bound, executor=executor, workers=workers, split=split, progress=progress,
                                    merge=merge)  # fmt: skip
    except checker.Interrupted as stop:  # Ctrl-C: what was checked so far, no files written
        seconds = time.perf_counter() - started
        note = (f"interrupted: not exhaustive: {stop.done:,} of {stop.total:,} units of work searched "
                f"in {seconds:.1f} s; no files written")  # fmt: skip
        if as_json:
            emit_json({**_document(bound, stop.results, {}), "interrupted": note})
        else:
            _render(bound, stop.results, None, seconds, workers)
        click.echo(note, err=True)
        return 130
    seconds = time.perf_counter() - started
    files: dict[tuple[str, str, str], Path] = {}
    texts: dict[str, str] = {}
    for r in results:
        for name, example in r.counterexamples.items():
            filename = checker.counterexample_name(r, example)
            files[(r.protections, r.checkpoints, name)] = out / filename
            texts[filename] = checker.counterexample_text(r, example)
            texts[page_path(Path(filename)).name] = _page(filename, texts[filename])
    document = _document(bound, results, files)
    texts["check.json"] = json.dumps(document, indent=2) + "\n"
    # the old counterexamples and check.json give way to the new ones, as a whole; any other
    # file in the folder is kept
    replace_folder(target, texts, keep=lambda path: not _written_by_check(path))
    if as_json:
        emit_json(document)
        click.echo(_bound_line(bound, results, seconds, workers), err=True)
    else:
        _render(bound, results, files, seconds, workers)
    all_on_broken = any(r.broken for r in results if r.protections == "all-on")
    return 1 if all_on_broken else 0


@contextmanager
def _executor(workers: int, scheduler: str | None) -> Iterator[tuple[Executor, int]]:
    """The executor the units run on, and how many it runs at once."""
    if scheduler is not None:
        from sim.cluster import dask_executor

        with dask_executor(scheduler) as (executor, threads):
            yield executor, threads
        return
    if workers == 1:
        yield checker.InlineExecutor(), 1
        return
    with pool(workers) as executor:
        yield executor, workers


def _page(filename: str, text: str) -> str:
    """A counterexample's page (`sim trace FILE --html`), from its scenario text."""
    return scenario_page(parse(text, filename, Path(filename).stem))


def _written_by_check(path: Path) -> bool:
    """A counterexample file `sim check` wrote, or its page."""
    return checker.is_counterexample_file(path) or is_page_of(path, checker.COUNTEREXAMPLE_MARK)


def _document(bound: checker.CheckBound, results: list[checker.Result],
              files: dict[tuple[str, str, str], Path]) -> dict[str, Any]:  # fmt: skip
    return {
        "bound": {
            **bound.to_json(),
            # the base switches (the fault switches are replaced by the enumeration; each
            # row names its own protections and checkpoints)
            "switches": {
                name: value
                for name, value in (results[0].switches.as_dict() if results else {}).items()
                if name not in FAULT_SWITCHES and name != "checkpoints"
            },
            "checkpoints": sorted({r.checkpoints for r in results}, key=[c.value for c in Checkpoints].index),
        },
        "results": [
            {
                "protections": r.protections,
                "checkpoints": r.checkpoints,
                "schedules": r.schedules,
                "nodes": r.nodes,
                "transitions": r.transitions,
                "depth": r.depth,
                "violations": dict(r.violations),
                "verdict": verdict(r.broken) if r.complete or r.broken else "not exhaustive",
                "counterexamples": {
                    name: str(files[(r.protections, r.checkpoints, name)]) for name in r.counterexamples
                    if (r.protections, r.checkpoints, name) in files
                },
            }
            for r in results
        ],
    }


#: the widest protections label the table keeps in its column (the table fits 80 columns)
LABEL_WIDTH = 24


def _render(bound: checker.CheckBound, results: list[checker.Result],
            files: dict[tuple[str, str, str], Path] | None, seconds: float, workers: int) -> None:  # fmt: skip
    """The result table; `files` None: an interrupted check (nothing written, no bound line)."""
    rows = [
        [r.protections, r.checkpoints, f"{r.schedules:,}", f"{r.nodes:,}",
         verdict(r.broken, bounded=True) if r.complete or r.broken else "not exhaustive"]
        for r in results
    ]  # fmt: skip
    headers = ["protections", "checkpoints", "schedules", "nodes", "verdict"]
    # a label too long for its column (a profile's, say) gets a line of its own
    long = {i for i, cells in enumerate(rows) if len(cells[0]) > LABEL_WIDTH}
    widths = column_widths([headers, *(c for i, c in enumerate(rows) if i not in long)])
    right = (False, False, True, True, False)

    def line(cells: list[str]) -> str:
        return table_line(cells, widths, right)

    click.echo(line(headers))
    click.echo(line(["-" * w for w in widths]))
    for i, (r, cells) in enumerate(zip(results, rows)):
        if i in long:
            click.echo(cells[0])
            cells = ["", *cells[1:]]
        click.echo(line(cells))
        if r.broken:  # the broken properties, with the schedules that broke each, on the next lines
            names = [f"{name} {count:,}" for name, count in r.violations.items() if count]
            click.echo(textwrap.fill("; ".join(names), width=80, initial_indent="    broken: ",
                                     subsequent_indent="            ", break_on_hyphens=False))  # fmt: skip
    judged = [p.name for p in bound.judged]
    click.echo(textwrap.fill("judged: " + ", ".join(judged) + " (a count is the schedules that broke it)",
                             width=80, subsequent_indent="    ", break_on_hyphens=False))  # fmt: skip
    broken = [r for r in results if r.broken]
    if files is None:
        return
    if broken:
        click.echo()
        click.echo("shortest counterexamples (sim trace FILE --check replays each):")
        click.echo("  (beside each, its page: the same name, .html)")
        for r in broken:
            for name, example in r.counterexamples.items():
                click.echo(textwrap.fill(
                    f"{r.protections} {r.checkpoints}: {name} at t{example.tick} <- {example.describe()}",
                    width=80, initial_indent="  ", subsequent_indent="      ", break_on_hyphens=False))  # fmt: skip
                click.echo(f"      {files[(r.protections, r.checkpoints, name)]}")
    hits = sum(r.horizon_reached for r in results)
    if hits:
        click.echo(f"warning: {hits} run(s) reached the engine's {checker.SETTING.horizon}-tick horizon guard")
    click.echo()
    click.echo(textwrap.fill(_bound_line(bound, results, seconds, workers), width=80, break_on_hyphens=False))


def _bound_line(bound: checker.CheckBound, results: list[checker.Result], seconds: float, workers: int) -> str:
    total = sum(r.schedules for r in results)
    nodes = sum(r.nodes for r in results)
    transitions = sum(r.transitions for r in results)
    depth = max((r.depth for r in results), default=0)
    return (
        f"bound checked: {bound.describe()}, under {len(results)} configuration(s): {total:,} schedules "
        f"searched as {nodes:,} nodes and {transitions:,} transitions to depth t{depth} in {seconds:.1f} s "
        f"({transitions / max(seconds, 1e-9):,.0f} transitions/s, {workers} worker(s))"
    )


class _progress:
    """A progress bar on the terminal (stderr) with rate and ETA; nothing when not a TTY."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> checker.CheckProgress | None:
        if not self.enabled:
            return None
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
        )

        self.bar = Progress(
            TextColumn("checking"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("units of work"),
            TextColumn("{task.fields[nodes]} nodes"),
            TextColumn("ETA {task.fields[eta]}"),
            console=Console(stderr=True),
            transient=True,
        )
        self.bar.__enter__()
        self.task = self.bar.add_task("check", total=None, nodes="0", eta="-")
        started = time.perf_counter()

        def update(done: int, total: int, nodes: int) -> None:
            # units differ in size, so the ETA is only the rate of units so far
            spent = time.perf_counter() - started
            left = spent / done * (total - done) if done else 0.0
            eta = f"{int(left // 60)}:{int(left % 60):02d}" if done else "-"
            self.bar.update(self.task, completed=done, total=total, nodes=f"{nodes:,}", eta=eta)

        return update

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
