"""`sim conform ENGINE`: the worked example's faults on a real engine, beside sim's prediction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from sim.commands.common import emit_json, folder_value
from sim.conform.engines import ENGINES
from sim.conform.harness import FAULTS, conform as run_conform, require
from sim.conform.report import markdown, report_json, text
from sim.base.files import prepare_out, refuse_special, write_out
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
              help="Write conformance.md and conformance.json (no timings) into DIR.")  # fmt: skip
def conform(
    engine: str | None, every: bool, faults: tuple[str, ...], jobs: int, runs: int | None, explore: int | None,
    seed: int, schedule: Path | None, as_json: bool, out: Path | None,
) -> int:
    """Run the worked example on a real engine (real worker processes, real signals) with the
    faults crash, zombie, lost answer (with and without a key) and crash with the report
    changed; show each observed figure beside sim's prediction. Exit 1 on a mismatch: a value
    that is neither the prediction nor one a behaviour the model does not capture explains."""
    names = _engines(engine, every)
    if schedule is not None or (explore is not None and not every):
        _one_engine_only(every, faults, explore, schedule)
        return scheduled(names[0], explore, seed, schedule, runs, jobs, as_json, out)
    if explore is not None and faults:
        raise click.UsageError("--all --explore runs the five faults and the drawn schedules: no --fault")
    return _run(names, every, faults, jobs, runs or (3 if explore is not None else 1),
                None if explore is None else (explore, seed), as_json, out)


def _one_engine_only(every: bool, faults: tuple[str, ...], explore: int | None, schedule: Path | None) -> None:
    if every or faults or (explore is not None and schedule is not None):
        raise click.UsageError("--explore (without --all) and --schedule take one engine, without --fault "
                               "or each other")  # fmt: skip


def _run(names: list[str], every: bool, faults: tuple[str, ...], jobs: int, runs: int,
         explore: tuple[int, int] | None, as_json: bool, out: Path | None) -> int:  # fmt: skip
    """The five faults (and with `--all --explore` the drawn schedules) on each engine."""
    if out is not None:
        _prepare(out)
    docs = []
    for name in names:
        doc = _engine_doc(name, faults, jobs, runs, explore, out)
        docs.append(doc)
        if not as_json:
            click.echo(text(doc))
    if as_json:
        emit_json(docs[0] if len(docs) == 1 and not every else {"engines": docs})
    if out is not None:
        _write(out, docs, as_json)
    return 0 if all(d["ok"] for d in docs) else 1


def _engine_doc(name: str, faults: tuple[str, ...], jobs: int, runs: int, explore: tuple[int, int] | None,
                out: Path | None) -> dict[str, Any]:  # fmt: skip
    """One engine's document: the five faults and (with `--all --explore N`) N drawn schedules,
    whose disagreements go into OUT/conform-explore/ENGINE; then which of the profile's claims
    the runs exercised (sim/conform/claims.py)."""
    import tempfile

    from sim.conform import claims
    from sim.conform.explore import explore as run_explore

    doc = run_conform(name, only=faults, jobs=jobs, runs=runs)
    with tempfile.TemporaryDirectory(prefix="sim-conform-schedules-") as scratch:
        if explore is not None:
            folder = (out if out is not None else Path(".")) / "conform-explore" / name
            prepare_out(folder)
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


#: the reports `--out` writes
REPORTS = ("conformance.md", "conformance.json")


def _prepare(out: Path) -> None:
    """The `--out` folder, ready before any engine runs (a report path that is not a regular
    file is refused)."""
    prepare_out(out)
    for name in REPORTS:
        refuse_special(out / name)


def _write(out: Path, docs: list[dict[str, Any]], as_json: bool) -> None:
    """The reports, and the line that says where."""
    md, js = (out / name for name in REPORTS)
    write_out(md, markdown(docs))
    write_out(js, report_json(docs))
    click.echo(f"wrote {md} and {js}", err=as_json)


def scheduled(engine: str, explore: int | None, seed: int, schedule: Path | None, runs: int | None, jobs: int,
              as_json: bool, out: Path | None) -> int:  # fmt: skip
    """`--explore N` or `--schedule FILE`: drawn schedules (or a saved one) on the engine."""
    from sim.conform.explore import explore as run_explore, replay, text as explore_text

    folder = out if out is not None else Path("conform-explore")
    prepare_out(folder)
    if explore is not None:
        doc = run_explore(engine, explore, seed, folder, runs=runs or 3, jobs=jobs)
    else:
        doc = replay(engine, schedule or Path(), folder, runs=runs or 1)
    if as_json:
        emit_json(doc)
    else:
        click.echo(explore_text(doc))
    return 0 if doc["ok"] else 1
