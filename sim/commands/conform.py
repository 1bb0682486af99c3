"""`sim conform ENGINE`: the worked example's faults on a real engine, beside sim's prediction."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import click

from sim.commands.common import duration_words, emit_json, folder_value, gate_long_work, yes_option
from sim.conform import harness, outputs
from sim.conform.engines import ENGINES
from sim.conform.harness import FAULTS, conform as run_conform, require
from sim.conform.report import JSON_HEAD, TITLE, markdown, report_json, text
from sim.base.files import prepare_out
from sim.base.limits import MAX_WORKERS


@click.command()
@click.argument("engine", required=False, type=click.Choice(list(ENGINES)))
@click.option("--all", "every", is_flag=True,
              help=f"Run every engine built ({', '.join(ENGINES)}); each must be installed.")  # fmt: skip
@click.option("--fault", "faults", multiple=True, type=click.Choice([f.name for f in FAULTS]),
              help="Run only this fault (repeatable; default: all five).")  # fmt: skip
@click.option("-j", "--jobs", type=click.IntRange(1, MAX_WORKERS), default=1, show_default=True,
              help="Run this many faults at a time (each with its own feed and workers).")  # fmt: skip
@click.option("--runs", type=click.IntRange(1, 10), default=None,
              help="Run each fault this many times (default 1; 3 with --explore); a figure that differs "
                   "between runs is reported as varying.")  # fmt: skip
@click.option("--explore", type=click.IntRange(1, 1000), default=None, metavar="N",
              help="Draw N fault schedules at random and run each on the engine (--runs times, 3 by default); "
                   "disagreements are shrunk and saved into --out (default: conform-explore).")  # fmt: skip
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True, help="The seed of --explore's draw.")
@click.option("--schedule", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None, metavar="FILE",
              help="Run the schedule of a scenario file (one --explore saved) on the engine.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (with each fault's seconds).")
@click.option("--out", type=click.Path(path_type=Path), callback=folder_value, metavar="DIR",
              help="Write conformance.md and conformance.json (no timings) into DIR (with --explore: the "
                   "disagreements; not with --schedule, which writes no file).")  # fmt: skip
@yes_option
def conform(
    engine: str | None, every: bool, faults: tuple[str, ...], jobs: int, runs: int | None, explore: int | None,
    seed: int, schedule: Path | None, as_json: bool, out: Path | None, yes: bool,
) -> int:
    """Run the worked example on a real engine (real worker processes, real signals) with the
    faults crash, zombie, lost answer (with and without a key) and crash with the report
    changed; show each observed figure beside sim's prediction. Exit 1 on a mismatch: a value
    that is neither the prediction nor one a behaviour the model does not capture explains."""
    names = _engines(engine, every)
    if schedule is not None:
        _one_engine_only(every, faults, explore, schedule)
        if out is not None:
            raise click.UsageError("--schedule writes no file: no --out")
        with harness.watched(RunLines(runs or 1)):
            return replayed(names[0], schedule, runs or 1, as_json)
    if explore is not None and not every:
        _one_engine_only(every, faults, explore, schedule)
        return explored(names[0], explore, seed, runs or 3, jobs, as_json, out, yes)
    if explore is not None and faults:
        raise click.UsageError("--all --explore runs the five faults and the drawn schedules: no --fault")
    return _run(names, every, faults, jobs, runs or (3 if explore is not None else 1),
                None if explore is None else (explore, seed), as_json, out, yes)


def _one_engine_only(every: bool, faults: tuple[str, ...], explore: int | None, schedule: Path | None) -> None:
    if every or faults or (explore is not None and schedule is not None):
        raise click.UsageError("--explore (without --all) and --schedule take one engine, without --fault "
                               "or each other")  # fmt: skip


def _gate(names: list[str], fixed: int, drawn: int, runs: int, jobs: int, yes: bool, said: bool) -> int:
    """Before any engine runs: the work's estimate (said on stderr when `said`: an exploration),
    and, past an hour, a refusal without --yes (as `sim explore` and `sim check` do); the
    engine runs it counts (shrinking aside)."""
    from sim.conform.explore import SHRINK_RUNS, estimate

    guess = estimate(names, fixed, drawn, runs, jobs)
    parts = ([f"{fixed} faults"] if fixed else []) + ([f"{drawn:,} drawn schedules"] if drawn else [])
    what = " and ".join(parts)
    gate_long_work(f"sim conform {'--all' if len(names) > 1 else names[0]} of {what}, {runs} run(s) each "
                   f"({guess.runs:,} engine runs)", guess.seconds, yes)  # fmt: skip
    if said:
        per = ", ".join(f"{n} {ENGINES[n].run_seconds:.0f} s" for n in names)
        click.echo(f"sim conform: {guess.runs:,} engine runs, estimated {duration_words(guess.seconds)} ({per} a run, "
                   f"{guess.at_once} at a time); each disagreement adds at most {SHRINK_RUNS + runs} runs "
                   "(shrunk, then saved)", err=True)  # fmt: skip
    return guess.runs


class RunLines:
    """A line on stderr after each engine run: how many of the runs counted before the start
    (shrinking a disagreement runs more), which, how long it took and the time so far."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.began = time.monotonic()
        self.lock = threading.Lock()  # `-j N` runs faults in threads

    def __call__(self, engine: str, fault: str, seconds: float) -> None:
        with self.lock:
            self.done += 1
            so_far = time.monotonic() - self.began
            which = (f"{self.done:,} of {self.total:,}" if self.done <= self.total
                     else f"{self.done:,} ({self.total:,} planned, the rest shrinking a disagreement)")  # fmt: skip
            elapsed = f"{so_far:.0f} s" if so_far < 90 else f"{so_far / 60:.1f} min"
            click.echo(f"sim conform: run {which}: {engine}, {fault}, {seconds:.0f} s ({elapsed} so far)", err=True)


def _run(names: list[str], every: bool, faults: tuple[str, ...], jobs: int, runs: int,
         explore: tuple[int, int] | None, as_json: bool, out: Path | None, yes: bool) -> int:  # fmt: skip
    """The five faults (and with `--all --explore` the drawn schedules) on each engine. Every
    output folder and path is checked before any engine runs; a folder made for the run and
    left empty (no disagreement) is removed."""
    folders = {name: _explore_folder(out, name) for name in names} if explore is not None else {}
    with outputs.unused_removed(*([out] if out is not None else []), *folders.values()):
        if out is not None:
            _prepare(out)
        for name, folder in folders.items():
            prepare_out(folder)
            outputs.check_explore_out(folder, name, schedules=False)
        fixed = len([f for f in FAULTS if not faults or f.name in faults])
        total = _gate(names, fixed, 0 if explore is None else explore[0], runs, jobs, yes, said=explore is not None)
        docs = []
        with harness.watched(RunLines(total)):
            for name in names:
                doc = _engine_doc(name, faults, jobs, runs, explore, folders.get(name))
                docs.append(doc)
                if not as_json:
                    click.echo(text(doc))
        if as_json:
            emit_json(docs[0] if len(docs) == 1 and not every else {"engines": docs})
        if out is not None:
            _write(out, docs, as_json)
    return 0 if all(d["ok"] for d in docs) else 1


def _explore_folder(out: Path | None, name: str) -> Path:
    """Where `--all --explore` saves an engine's disagreements: OUT/conform-explore/ENGINE."""
    return (out if out is not None else Path(".")) / "conform-explore" / name


def _engine_doc(name: str, faults: tuple[str, ...], jobs: int, runs: int, explore: tuple[int, int] | None,
                folder: Path | None) -> dict[str, Any]:  # fmt: skip
    """One engine's document: the five faults and (with `--all --explore N`) N drawn schedules,
    whose disagreements go into `folder` (OUT/conform-explore/ENGINE, checked already); then
    which of the profile's claims the runs exercised (sim/conform/claims.py)."""
    import tempfile

    from sim.conform import claims
    from sim.conform.explore import explore as run_explore

    doc = run_conform(name, only=faults, jobs=jobs, runs=runs)
    with tempfile.TemporaryDirectory(prefix="sim-conform-schedules-") as scratch:
        if explore is not None and folder is not None:
            doc["explore"] = run_explore(name, explore[0], explore[1], folder, runs=runs, jobs=jobs, scratch=Path(scratch))
            doc["ok"] = doc["ok"] and doc["explore"]["ok"]
        doc["claims"] = claims.for_document(ENGINES[name], doc)
    for item in doc.get("explore", {}).get("schedules", ()):
        item.pop("scenario", None)  # a temporary file, gone
    return doc


def _engines(engine: str | None, every: bool) -> list[str]:
    """The engines to run (one, or all with --all), each installed (else one line, exit 2)."""
    if every == (engine is not None):
        raise click.UsageError(f"name one engine ({', '.join(ENGINES)}) or give --all")
    names = list(ENGINES) if every else [engine or ""]
    for name in names:
        require(ENGINES[name])
    return names


#: the reports `--out` writes, and the first bytes of each as sim writes it: a file there that
#: does not begin with them is not replaced
REPORTS = {"conformance.md": TITLE.encode("utf-8"), "conformance.json": JSON_HEAD.encode("utf-8")}


def _prepare(out: Path) -> None:
    """The `--out` folder, ready before any engine runs: at each report's path nothing, or a
    report sim wrote (else one line, exit 2)."""
    prepare_out(out)
    for name, mark in REPORTS.items():
        outputs.refuse_foreign(out / name, mark)


def _write(out: Path, docs: list[dict[str, Any]], as_json: bool) -> None:
    """The reports, and the line that says where."""
    md, js = (out / name for name in REPORTS)
    outputs.write_owned(md, markdown(docs), REPORTS[md.name])
    outputs.write_owned(js, report_json(docs), REPORTS[js.name])
    click.echo(f"wrote {md} and {js}", err=as_json)


def explored(engine: str, count: int, seed: int, runs: int, jobs: int, as_json: bool, out: Path | None,
             yes: bool) -> int:  # fmt: skip
    """`--explore N`: drawn schedules on the engine; their scenario files into OUT/schedules,
    the disagreements into OUT (default: conform-explore), each path checked before any run."""
    from sim.conform.explore import explore as run_explore

    folder = out if out is not None else Path("conform-explore")
    with outputs.unused_removed(folder):
        prepare_out(folder)
        outputs.check_explore_out(folder, engine, schedules=True)
        total = _gate([engine], 0, count, runs, jobs, yes, said=True)
        with harness.watched(RunLines(total)):
            doc = run_explore(engine, count, seed, folder, runs=runs, jobs=jobs)
    return _print(doc, as_json)


def replayed(engine: str, schedule: Path, runs: int, as_json: bool) -> int:
    """`--schedule FILE`: a saved schedule on the engine, `runs` times (at most 10: never long);
    it writes no file."""
    from sim.conform.explore import replay

    return _print(replay(engine, schedule, runs=runs), as_json)


def _print(doc: dict[str, Any], as_json: bool) -> int:
    from sim.conform.explore import text as explore_text

    if as_json:
        emit_json(doc)
    else:
        click.echo(explore_text(doc))
    return 0 if doc["ok"] else 1
