"""`sim explore`: random fault schedules, checked; shrunk counterexamples written as scenarios."""

from __future__ import annotations

import os
import re
import secrets
import shlex
import sys
from pathlib import Path

import click

from sim.commands.common import (
    DRAWN,
    duration_words,
    folder_value,
    gate_long_work,
    note_inert,
    profile_option,
    run_of,
    set_option,
    workflow_option,
    switch_values,
    yes_option,
)
from sim.analysis.explore import (
    TICK_BUCKET,
    TICK_BUCKETS,
    COUNTEREXAMPLE_HEAD,
    DESCRIPTION_HEAD,
    Exploration,
    ExploreBounds,
    for_workflow,
    coverage_kinds,
    estimate,
    longest_name,
    may_write,
    rerun_args,
)
from sim.analysis.explore import (
    explore as run_search,
)
from sim.model.faults import FAULT_SETS
from sim.base.files import Head, OutError, prepare_out, refuse_foreign_in
from sim.base.limits import MAX_EXAMPLES, MAX_EXPLORE_FAULTS
from sim.properties import BY_NAME, judged, not_judged
from sim.render.page import HEAD as PAGE_HEAD
from sim.render.page import page_path
from sim.model.switches import for_own_schedules

DEFAULT_OUT = Path("reports/counterexamples")

#: how `sim explore` knows a counterexample's page it wrote (`sim.base.files.Head`): a run
#: page (`sim.render.page.HEAD`) whose description is a counterexample's of `sim explore`
PAGE_HEAD_OF_EXPLORE = re.compile(re.escape(PAGE_HEAD.encode("utf-8")) + DESCRIPTION_HEAD)


def head_of(name: str) -> Head | None:
    """The head of the file `sim explore` writes under `name` (a counterexample or its page)."""
    return {".toml": COUNTEREXAMPLE_HEAD, ".html": PAGE_HEAD_OF_EXPLORE}.get(Path(name).suffix)


def _refuse_long_names(out: Path, longest: int) -> None:
    """Before the search: a counterexample's name must fit the file system at --out."""
    try:
        most = os.pathconf(out, "PC_NAME_MAX")
    except (OSError, ValueError):
        most = 255
    if longest > most:
        raise OutError(f"--out {out}: a counterexample's file name would be up to {longest} bytes (it names the "
                       f"settings and the seed), more than the {most} this file system allows: set fewer switches "
                       "away from the worked example, or give a shorter --seed")  # fmt: skip


@click.command()
@click.option("--examples", "-n", type=click.IntRange(0, MAX_EXAMPLES), default=10_000, show_default=True,
              help="How many schedules to draw, run and check.")  # fmt: skip
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed of the search (default: a fresh one, printed so the run can be repeated).")  # fmt: skip
@set_option
@profile_option
@click.option("--max-faults", type=click.IntRange(0, MAX_EXPLORE_FAULTS), default=ExploreBounds().max_faults, show_default=True,
              help="At most this many faults per schedule.")  # fmt: skip
@click.option("--faults", type=click.Choice(FAULT_SETS), default="article", show_default=True,
              help="Which fault kinds are drawn: the article's own, or all (with the failures outside its "
              "model, docs/outside.md).")  # fmt: skip
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), callback=folder_value, default=DEFAULT_OUT, show_default=True,
              help="Folder the shrunk counterexamples are written to (each atomically, as found).")  # fmt: skip
@yes_option
@workflow_option
def explore(examples: int, seed: int | None, sets: tuple[str, ...], profile: str | None, max_faults: int, faults: str,
            out: Path, yes: bool, workflow: str | None) -> int:  # fmt: skip
    """Draw random fault schedules, run each and check the invariants.

    Each invariant broken is shrunk to a small schedule and written as a scenario file that
    `sim trace FILE --check` replays. Exit status 1 when an invariant whose protection is on
    broke; 0 otherwise (an invariant broken with its protection switched off is expected, and
    one broken only by a fault beyond the article's model is reported as such).
    """
    bounds = ExploreBounds(max_faults=max_faults, faults=faults)
    own: dict[str, str] = {}
    if workflow is not None:  # its steps fixed, its receiver's and assessor's settings under --set
        from sim.model.workflow import knobs_of, on_workflow
        from sim.workflow import load as load_workflow

        wf = load_workflow(workflow)
        bounds, own = for_workflow(bounds, wf, wf.written_reference), knobs_of(wf)
    switches = for_own_schedules({**own, **switch_values(sets, profile)}, "explore")
    if workflow is not None:
        switches = on_workflow(switches, wf)
    prepare_out(out)  # fail on a bad --out before the search
    if seed is None:
        seed = secrets.randbelow(2**32)
    may = may_write(switches, seed, bounds)  # a folder, FIFO, device, socket or a file of the user's where a file goes
    refuse_foreign_in(out, lambda name: head_of(name) if may(name) else None)
    _refuse_long_names(out, longest_name(switches, seed, bounds))
    note_inert([run_of(switches, bounds.kinds)], DRAWN)
    guess = estimate(switches, seed=seed, examples=examples, bounds=bounds)
    gate_long_work(f"sim explore of {examples:,} schedules", guess.seconds, yes)
    label = switches.label() or "all protections on"
    click.echo(f"sim explore: seed {seed}; {examples} schedules of at most {max_faults} faults; {label}")
    click.echo(f"rerun with: sim explore {rerun_args(switches, seed, examples, bounds)}")
    click.echo(f"  estimated: {duration_words(guess.seconds)} ({guess.sampled} schedules sampled at "
               f"{guess.rate:,.0f}/s)", err=True)  # fmt: skip
    # looked at every 10 % (or every 1,000 schedules if that is sooner); printed at each 10 %
    # and otherwise at most every 5 seconds
    every = max(1, min(1000, examples // 10))
    result = run_search(switches, seed=seed, examples=examples, bounds=bounds, out=out,
                        progress=_ProgressLines(examples), progress_every=every)  # fmt: skip
    for f in result.findings:  # each counterexample's page beside it (sim trace FILE --html)
        if f.path is not None:
            from sim.commands.trace import write_page_beside  # only when there is a page to write

            write_page_beside(f.path, PAGE_HEAD_OF_EXPLORE)  # its head checked again as it is written
    for line in report_lines(result):
        click.echo(line)
    if result.interrupted:
        return 130
    return 1 if result.unexpected else 0


class _ProgressLines:
    """Progress lines on stderr: at each tenth of the search, and every 5 s in between."""

    def __init__(self, examples: int) -> None:
        self.tenth = max(1, examples // 10)
        self.shown_tenths = 0
        self.shown_at = 0.0

    def __call__(self, runs: int, examples: int, seconds: float, findings: int) -> None:
        tenths = runs // self.tenth
        if tenths == self.shown_tenths and seconds - self.shown_at < 5.0:
            return
        self.shown_tenths, self.shown_at = tenths, seconds
        rate = runs / seconds if seconds > 0 else 0.0
        click.echo(
            f"  {runs:>9,}/{examples:,} schedules  {rate:>7,.0f}/s  {findings} invariant(s) broken so far",
            err=True,
        )
        sys.stderr.flush()


def invariant_lines(result: Exploration) -> list[str]:
    """The invariants judged (at risk, broken), the fault kinds drawn, and the verdict line,
    which names the invariants not judged: those a schedule of the kinds drawn cannot break
    under these settings (each property's declaration, `Property.reachable`)."""
    cov = result.coverage
    kinds = result.bounds.kinds
    shown = [prop for prop in judged(result.switches, kinds) if prop.safety]
    left = [prop.name for prop in not_judged(result.switches, kinds)]
    wide = max([18, *(len(prop.name) for prop in shown)])
    lines = ["invariants (at risk: the hazard arose, whether or not a protection stopped it):"]
    lines.append(f"  {'invariant':<{wide}} {'guarded by':<16} {'at risk':>9} {'broken':>9}")
    for prop in shown:
        name = prop.name
        guard = prop.guard
        state = "" if guard is None else f"{guard.switch} ({'on' if guard.is_on(result.switches) else 'OFF'})"
        lines.append(f"  {name:<{wide}} {state:<16} {cov.at_risk.get(name, 0):>9,} {cov.broken.get(name, 0):>9,}")
    lines.append(f"  fault kinds drawn: {', '.join(kind.plural for kind in kinds)}")
    if left:
        lines.append(f"  not judged: {', '.join(left)}: no fault kind drawn can break it here (add --faults all)")
    broken = list(dict.fromkeys(f.invariant for f in result.findings))
    verdict = (f"{len(broken)} invariant(s) broken in {result.runs:,} schedules: {', '.join(broken)}" if broken
               else f"no invariant broken in {result.runs:,} schedules")  # fmt: skip
    return [*lines, "", verdict + (f"; not judged: {', '.join(left)}" if left else "")]


def report_lines(result: Exploration) -> list[str]:
    """The end-of-search report: throughput, the coverage table, one line per broken invariant."""
    cov = result.coverage
    rate = result.runs / result.seconds if result.seconds > 0 else 0.0
    lines = []
    if result.interrupted:
        lines.append(
            f"interrupted after {result.runs:,} of {result.examples:,} schedules; "
            "the counterexamples found so far are kept"
        )
    lines.append(
        f"explored {result.runs:,} schedules in {result.seconds:.1f} s ({rate:,.0f} schedules/s); "
        f"{cov.unfinished:,} did not finish, {cov.horizon_reached:,} reached the horizon"
    )
    lines += ["", "faults that took effect, by kind and tick (count over all runs):"]
    columns = [f"t{i * TICK_BUCKET}-{i * TICK_BUCKET + TICK_BUCKET - 1}" for i in range(TICK_BUCKETS - 1)]
    columns.append(f"t{(TICK_BUCKETS - 1) * TICK_BUCKET}+")
    labels = coverage_kinds(result.bounds.faults)
    width = max(len(k) for k in labels)
    lines.append("  " + "kind".ljust(width) + "".join(c.rjust(9) for c in columns))
    for kind in labels:
        cells = [cov.faults.get((kind, b), 0) for b in range(TICK_BUCKETS)]
        lines.append("  " + kind.ljust(width) + "".join(f"{n:>9,}" for n in cells))
    lines.append(f"  scheduled but never took effect (trimmed from counterexamples): {cov.unfired:,}")
    lines += ["", *invariant_lines(result)]
    for f in result.findings:
        prop = BY_NAME[f.invariant]
        outside = "beyond the article's model, case " + ", ".join(map(str, f.beyond)) + " of docs/outside.md"
        if f.expected:
            why = f"expected: {prop.unguarded_by(result.switches)}" + (f"; {outside}" if f.beyond else "")
        else:
            why = outside if f.beyond else "UNEXPECTED: its protection is on"
        where = f" -> {f.path}" if f.path is not None else ""
        lines.append(
            f"broken: {f.invariant} at t{f.tick} ({why}); first in schedule #{f.found_at}, "
            f"shrunk from {f.faults_before} to {f.schedule.fault_count} fault(s){where}"
        )
        lines.append(f"  {prop.description}")
        if f.path is not None:
            lines.append(f"  replay: sim trace {shlex.quote(str(f.path))} --check (its page: {page_path(f.path)})")
    return lines
