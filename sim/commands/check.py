"""`sim check`: every fault schedule inside a bound, exhaustively (sim/analysis/check/check.py does the work)."""

from __future__ import annotations

import html
import json
import os
import re
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from sim.analysis.check import check as checker
from sim.commands.common import (
    COLUMNS,
    ENUMERATED,
    columns,
    duration_words,
    emit_json,
    folder_value,
    gate_long_work,
    note_inert,
    path_lines,
    profile_option,
    run_of,
    set_option,
    workflow_option,
    shown_path,
    switch_values,
    yes_option,
)
from sim.model.faults import FAULT_SETS
from sim.base.files import Head, prepare_folder, refuse_foreign_in, refuse_uncarried, replace_folder, written_by_sim
from sim.base.limits import MAX_CHECK_FAULTS
from sim.properties import verdict
from sim.render.page import HEAD as PAGE_HEAD
from sim.render.page import page_path
from sim.render.text import column_widths, table_line
from sim.scenario import parse
from sim.analysis.check.search import MERGES
from sim.model.schedule import Schedule
from sim.model.switches import FAULT_SWITCHES, Checkpoints, Switches
from sim.base.memory import default_limit, megabytes, parse_size
from sim.base.limits import usable_cpus
from sim.analysis.workers import MAX_WORKERS, pool

DEFAULT_OUT = Path("reports/counterexamples/check")

#: how `sim check` knows the files it wrote (`sim.base.files.Head`), the only ones it replaces
#: or removes: check.json by its first keys, a counterexample by the first line of its
#: description, a page by its description's start (`sim.render.page.HEAD`)
JSON_HEAD = re.compile(rb'\{\n  "bound": \{\n    "max_faults": ')
COUNTEREXAMPLE_HEAD = ('description = "' + checker.COUNTEREXAMPLE_MARK).encode("utf-8")
COUNTEREXAMPLE_PAGE_HEAD = (PAGE_HEAD + html.escape(checker.COUNTEREXAMPLE_MARK)).encode("utf-8")


def head_of(name: str) -> Head | None:
    """The head of the file `sim check` writes under `name`; None for a name it never writes."""
    if name == "check.json":
        return JSON_HEAD
    return {".toml": COUNTEREXAMPLE_HEAD, ".html": COUNTEREXAMPLE_PAGE_HEAD}.get(Path(name).suffix)


def _scheduler_value(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--scheduler's value, parsed when given: a malformed address is bad input, said before any work."""
    if value is not None:
        from sim.analysis.check.cluster import parse_address

        parse_address(value)
    return value


#: `sim check`'s exit status when it stopped at its memory bound (docs/check.md)
EXIT_MEMORY = 3


def _max_memory_value(ctx: click.Context, param: click.Parameter, value: str | None) -> int:
    """--max-memory as bytes: the default is half the machine's memory (sim.base.memory)."""
    return default_limit() if value is None else parse_size(value)


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
@click.option("--scheduler", metavar="ADDRESS|local:N", default=None, callback=_scheduler_value,
              help="Run the units on a Dask cluster: a scheduler's HOST:PORT, or local:N for a local cluster "
              "of N worker processes (needs pip install -e '.[dask]'). Same output as without.")  # fmt: skip
@click.option("--merge", type=click.Choice(MERGES), default="canonical", show_default=True,
              help="How the search merges runs that meet: by their canonical state, or none: only runs whose "
              "full states are equal (trusts no canonical form; same schedules, verdicts and counterexamples, "
              "more nodes). Reruns a doubtful verdict.")  # fmt: skip
@click.option("--max-memory", metavar="SIZE", default=None, callback=_max_memory_value,
              help="Stop before this process and its workers hold more memory than SIZE (500M, 2G; "
              "default: half the machine's memory): the table so far, rows with work left marked "
              "not exhaustive, exit 3.")  # fmt: skip
@yes_option
@workflow_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), callback=folder_value, default=DEFAULT_OUT,
              show_default=True, help="Where the counterexample scenario files (and check.json) go; "
              "the old set there is replaced as a whole.")  # fmt: skip
def check(max_faults: int, horizon: int, faults: str, sets: tuple[str, ...], profile: str | None, protections: str,
          workers: int | None, split: int, scheduler: str | None, merge: str, max_memory: int, yes: bool,
          workflow: str | None, as_json: bool,
          out: Path) -> int:  # fmt: skip
    """Check every invariant on every fault schedule within a bound.

    The enumerated faults replace the worked example's fixed ones (attempt #1 silent at t3,
    the correction at t4, the first poster's death); its setting stays: 4 sections, first
    token 41, 2 missed heartbeats, the newsletter ready at t12. `--set` changes the other
    switches; unless it sets `checkpoints`, both per-step and end-only are checked. With
    --workflow, the setting is the workflow's (its steps, its figure's step, its dependant's
    ready tick) and its receiver's and assessor's settings apply under --set.
    """
    values = switch_values(sets, profile)
    setting, ref, base = _workflow_setting(workflow, values)
    bound = checker.CheckBound(max_faults=max_faults, horizon=horizon, faults=faults, setting=setting, workflow=ref)
    if profile is not None and protections == "each":  # the engine alone, then each addition
        from sim.model.profiles import get

        protections = ",".join(["all-on", *(c.setting for c in get(profile).missing())])
    modes = [base.checkpoints] if "checkpoints" in values else list(Checkpoints)
    configs = checker.configurations(base, protections, modes)
    notes = note_inert([run_of(c.switches, bound.kinds) for c in configs], ENUMERATED)
    workers = workers or min(usable_cpus(), MAX_WORKERS)
    target = prepare_folder(out)  # fail on a bad --out before the work
    written = checker.file_names(configs)  # and on what is not sim check's where a file goes
    refuse_foreign_in(target, lambda name: head_of(name) if name in written else None)
    refuse_uncarried(target, _not_checks, written)  # and on what the new folder could not keep as it is
    guess = checker.estimate(configs, bound, 1 if scheduler else workers, max_memory)
    gate_long_work(f"sim check of {bound.max_faults} fault(s) by t{bound.horizon} on {len(configs)} row(s)",
                   guess.seconds, yes)  # fmt: skip
    said = _estimate_line(guess, max_memory)
    started = time.perf_counter()
    results = _search(configs, bound, workers, scheduler, split, max_memory, merge, said)
    if isinstance(results, (checker.Interrupted, checker.OutOfMemory)):
        return _stopped(results, bound, notes, as_json, time.perf_counter() - started, workers)
    seconds = time.perf_counter() - started
    files: dict[tuple[str, str, str], Path] = {}
    texts: dict[str, str] = {}
    for r in results:
        for name, example in r.counterexamples.items():
            filename = checker.counterexample_name(r, example)
            files[(r.protections, r.checkpoints, name)] = out / filename
            texts[filename] = checker.counterexample_text(r, example, bound)
            texts[page_path(Path(filename)).name] = _page(filename, texts[filename])
    document = _document(bound, results, files, notes)
    texts["check.json"] = json.dumps(document, indent=2) + "\n"
    # the old counterexamples and check.json give way to the new ones, as a whole; any other
    # file in the folder is kept
    heads = {name: head for name in texts if (head := head_of(name)) is not None}
    replace_folder(target, texts, keep=_not_checks, heads=heads)
    if as_json:
        emit_json(document)
        click.echo(_fill(_bound_line(bound, results, seconds, workers), columns(sys.stderr)), err=True)
    else:
        _render(bound, results, files, seconds, workers)
    all_on_broken = any(r.broken for r in results if r.protections == "all-on")
    return 1 if all_on_broken else 0


def _estimate_line(guess: checker.Estimate, max_memory: int) -> str:
    """The estimate, said before the search (a lower bound when the sample stopped at its cap)."""
    at_least = "at least " if guess.capped else ""
    return (f"sim check: estimated {at_least}{duration_words(guess.seconds).removeprefix(at_least and 'about ')} "
            f"({at_least or 'about '}{guess.transitions:,} transitions"
            + ("" if guess.exact else f", scaled from a sample of {guess.sample[0]} fault(s) by t{guess.sample[1]}")
            + (f" stopped at {checker.SAMPLE_CAP:,} transitions" if guess.capped else "")
            + f"); memory bound {megabytes(max_memory)}")  # fmt: skip


#: a check that stopped before its end: Ctrl-C (exit 130) or the memory bound (exit 3)
_Stopped = checker.Interrupted | checker.OutOfMemory


def _search(configs: list[checker.Config], bound: checker.CheckBound, workers: int, scheduler: str | None,
            split: int, max_memory: int, merge: str, said: str) -> list[checker.Result] | _Stopped:  # fmt: skip
    """The check's results, or how it stopped early. `said` (the estimate) is the first line on
    stderr once the workers are up (a failure to start them is bad input: one line alone)."""
    try:
        with _progress(enabled=sys.stderr.isatty()) as progress, _executor(workers, scheduler) as (executor, used):
            click.echo(textwrap.fill(said, width=columns(sys.stderr), subsequent_indent="    "), err=True)
            return checker.check(configs, bound, executor=executor, workers=used, split=split, progress=progress,
                                 max_memory=max_memory, merge=merge)  # fmt: skip
    except (checker.Interrupted, checker.OutOfMemory) as stop:
        return stop


def _stopped(stop: _Stopped, bound: checker.CheckBound, notes: list[str], as_json: bool, seconds: float,
             workers: int) -> int:  # fmt: skip
    """The table so far, rows with work left marked "not exhaustive", no files written; exit
    130 after Ctrl-C, 3 at the memory bound."""
    why = "interrupted" if isinstance(stop, checker.Interrupted) else (
        f"stopped at the memory bound: {megabytes(stop.held)} held against --max-memory {megabytes(stop.bound)}")
    note = (f"{why}: not exhaustive: {stop.done:,} of {stop.total:,} units of work searched "
            f"in {seconds:.1f} s; no files written")  # fmt: skip
    if as_json:
        emit_json({**_document(bound, stop.results, {}, notes), "interrupted" if why == "interrupted" else "stopped": note})
    else:
        _render(bound, stop.results, None, seconds, workers)
    click.echo(_fill(note, columns(sys.stderr), "    "), err=True)
    return 130 if isinstance(stop, checker.Interrupted) else EXIT_MEMORY


@contextmanager
def _executor(workers: int, scheduler: str | None) -> Iterator[tuple[Executor, int]]:
    """The executor the units run on, and how many it runs at once."""
    if scheduler is not None:
        from sim.analysis.check.cluster import dask_executor

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
    from sim.commands.trace import scenario_page  # here: a check that finds nothing needs no renderer

    return scenario_page(parse(text, filename, Path(filename).stem))


def _not_checks(path: Path) -> bool:
    """What the new folder keeps of the old: all but the files `sim check` wrote."""
    head = head_of(path.name)
    return head is None or not written_by_sim(path, head)


def _document(bound: checker.CheckBound, results: list[checker.Result],
              files: dict[tuple[str, str, str], Path], notes: list[str]) -> dict[str, Any]:  # fmt: skip
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
                # what the verdict covers: the properties judged (the keys of `violations`)
                # and the invariants the enumerated fault kinds cannot break here
                "judged": list(r.violations),
                "not_judged": [p.name for p in bound.not_judged(r.switches)],
                "violations": dict(r.violations),
                "verdict": verdict(r.broken) if r.complete or r.broken else "not exhaustive",
                "counterexamples": {
                    name: str(files[(r.protections, r.checkpoints, name)]) for name in r.counterexamples
                    if (r.protections, r.checkpoints, name) in files
                },
            }
            for r in results
        ],
        # knobs set away from their defaults that no row lets act (`sim.model.knobs.inert_notes`)
        "notes": notes,
    }


#: the widest protections label the table keeps in its column (the table fits 80 columns)
LABEL_WIDTH = 24


def _fill(text: str, width: int, indent: str = "") -> str:
    """`text` wrapped at `width`, never cut at a hyphen (`key=per-attempt`)."""
    return textwrap.fill(text, width=width, subsequent_indent=indent, break_on_hyphens=False)


def _render(bound: checker.CheckBound, results: list[checker.Result],
            files: dict[tuple[str, str, str], Path] | None, seconds: float, workers: int) -> None:  # fmt: skip
    """The result table; `files` None: an interrupted check (nothing written, no bound line).
    Every line fits the terminal (`columns`: 80 when the output is not one)."""
    width = columns()
    _render_rows(bound, results, width)
    _render_judged(bound, results, width)
    if files is None:
        return
    broken = [r for r in results if r.broken]
    if broken:
        _render_counterexamples(broken, files, width)
    hits = sum(r.horizon_reached for r in results)
    if hits:
        click.echo(f"warning: {hits} run(s) reached the engine's {checker.SETTING.horizon}-tick horizon guard")
    click.echo()
    click.echo(_fill(_bound_line(bound, results, seconds, workers), width))


def _render_rows(bound: checker.CheckBound, results: list[checker.Result], width: int) -> None:
    """One row per configuration: its verdict, what it did not judge, what broke."""
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
    start = sum(widths[:-1]) + 2 * (len(widths) - 1)  # the column the verdict starts at

    def line(cells: list[str]) -> str:
        return table_line(cells, widths, right)

    click.echo(line(headers))
    click.echo(line(["-" * w for w in widths]))
    for i, (r, cells) in enumerate(zip(results, rows)):
        if i in long:
            click.echo(cells[0])
            cells = ["", *cells[1:]]
        first, *more = _verdict_lines(cells[-1], [p.name for p in bound.not_judged(r.switches)], start, width)
        click.echo(line([*cells[:-1], first]))
        for text in more:
            click.echo(text)
        if r.broken:  # the broken properties, with the schedules that broke each, on the next lines
            names = [f"{name} {count:,}" for name, count in r.violations.items() if count]
            click.echo(textwrap.fill("; ".join(names), width=width, initial_indent="    broken: ",
                                     subsequent_indent="            ", break_on_hyphens=False))  # fmt: skip


def _render_judged(bound: checker.CheckBound, results: list[checker.Result], width: int) -> None:
    """The invariants judged, and those no row judged."""
    judged = list(dict.fromkeys(name for r in results for name in r.violations))
    click.echo(_fill("judged: " + ", ".join(judged) + " (a count is the schedules that broke it)", width, "    "))
    left = list(dict.fromkeys(p.name for r in results for p in bound.not_judged(r.switches)))
    if left:
        click.echo(_fill(
            f"not judged: {', '.join(left)}: these settings let a fault kind break it, but no kind enumerated "
            f"({', '.join(k.plural for k in bound.kinds)}) can; --faults all enumerates every kind",
            width, "    "))  # fmt: skip


def _render_counterexamples(broken: list[checker.Result], files: dict[tuple[str, str, str], Path], width: int) -> None:
    """Each broken row's counterexamples: what broke, and the file, named once with its folder
    (shown relative to the current folder when that is shorter) and then by its name alone,
    so that no line passes `width` (a path too long for it goes on, cut after a `/`)."""
    click.echo()
    click.echo("shortest counterexamples (sim trace FILE --check replays each):")
    click.echo("  (beside each, its page: the same name, .html)")
    (folder,) = {path.parent for path in files.values()}  # --out
    click.echo("\n".join(path_lines(shown_path(folder) + os.sep, width, "  in ", "    ")))
    for r in broken:
        for name, example in r.counterexamples.items():
            click.echo(textwrap.fill(
                f"{r.protections} {r.checkpoints}: {name} at t{example.tick} <- {example.describe()}",
                width=width, initial_indent="  ", subsequent_indent="      ", break_on_hyphens=False))  # fmt: skip
            path = files[(r.protections, r.checkpoints, name)]
            click.echo("\n".join(path_lines(path.name, width, "      ", "        ")))


def _verdict_lines(text: str, left: list[str], start: int, width: int = COLUMNS) -> list[str]:
    """A row's verdict and, on the same line as far as `width` allows, the invariants it
    did not judge (`CheckBound.not_judged`); what does not fit goes on under the verdict.
    The first item is the verdict cell's text, the others whole lines."""
    if not left:
        return [text]
    names = [f"{name}," for name in left[:-1]] + [left[-1]]
    words = [f"{text};", f"not judged: {names[0]}", *names[1:]]
    indent = start if start <= width - 24 else 4
    lines = [words[0]]
    for word in words[1:]:
        room = width - (start if len(lines) == 1 else indent)
        if len(lines[-1]) + 1 + len(word) <= room:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return [lines[0], *(" " * indent + rest for rest in lines[1:])]


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


def _workflow_setting(name: str | None, values: dict[str, str]) -> tuple[Schedule, str | None, Switches]:
    """The check's setting, the workflow as a counterexample file names it (a shipped name, or
    the file's absolute path), and the switches (`--set` over the workflow's own settings, and
    its effects and dependants); the article's without one."""
    if name is None:
        return checker.SETTING, None, checker.base_switches(values)
    from sim.model.workflow import knobs_of, on_workflow
    from sim.workflow import load

    wf = load(name)
    return checker.workflow_setting(wf), wf.written_reference, on_workflow(checker.base_switches({**knobs_of(wf), **values}), wf)
