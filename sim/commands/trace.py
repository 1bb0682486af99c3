"""`sim trace NAME|FILE`: run one scenario and show it tick by tick, as a swimlane."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import TextIO

import click
from rich.console import Console
from rich.text import Text

from sim.commands.common import (
    IN_THE_SCHEDULE,
    columns,
    complete_scenarios,
    echo_notes,
    emit_json,
    file_value,
    load_scenario,
    note_inert,
    profile_option,
    run_of,
    workflow_option,
    schedule_kinds,
    set_option,
)
from sim.properties.outcome import Outcome, outcome
from sim.properties import BY_NAME
from sim.render import grid as grids
from sim.base.files import Head, refuse_foreign, write_out
from sim.base.limits import printable
from sim.render import itf, page, swimlane
from sim.render.lifecycle import lifecycles
from sim.run import run_scenario
from sim.scenario import Scenario, differences, expected_figures, load
from sim.model.switches import PROTECTIONS
from sim.engine.trace import Trace


def title_of(scenario: Scenario) -> str:
    on = f" (workflow {scenario.workflow.name})" if scenario.workflow is not None else ""
    return f"{scenario.name}{on}: {scenario.switches.label() or 'the worked example, all protections on'}"


def stopping_protections(scenario: Scenario, result: Outcome) -> dict[str, list[str]]:
    """Broken invariant -> the protections (`name=value`) that, each turned on alone, stop it.

    Each candidate is a re-run of the same scenario with one more protection on, plus the
    changes a broken property's guard needs to hold here (`Property.remedies`: with pins
    off and a fail-open gate, misused-dependant's rule needs the fail-closed gate or pins).
    """
    broken = result.broken
    if not broken:
        return {}
    switches = scenario.switches
    tries = [f"{name}={on.value}" for name, on in PROTECTIONS.items() if getattr(switches, name) is not on]
    for invariant in broken:
        tries += [r for r in BY_NAME[invariant].remedies(switches) if r not in tries]
    out: dict[str, list[str]] = {name: [] for name in broken}
    for setting in tries:
        name, value = setting.split("=", 1)
        _, other = run_scenario(scenario.with_switches({name: value}), strict=False)
        for invariant in broken:
            if invariant not in other.broken:
                out[invariant].append(setting)
    return out


def replay_command(scenario: Scenario) -> str:
    """The command that replays `scenario`: by name, or by its file's name (no folder, so
    that a page does not depend on where it was written)."""
    named = scenario.source in ("<built-in>", f"scenarios/{scenario.name}.toml")
    name = scenario.name if named else Path(scenario.source).name
    from sim.model.workflow import set_pairs

    sets = " ".join(f"--set {pair}" for pair in set_pairs(scenario.switches, scenario.workflow))
    wf = scenario.workflow
    given = f" --workflow {wf.reference}" if wf is not None and scenario.workflow_given else ""
    return f"sim trace {name}{given}{' ' + sets if sets else ''}"


def page_text(scenario: Scenario, events: Trace, result: Outcome, until: int | None = None) -> str:
    """The run's page (`sim.render.page`), up to tick `until` when given."""
    events, result = _so_far(events, result, until)
    return page.render_page(title_of(scenario), scenario.description, replay_command(scenario),
                            events, result, grids.build(events))  # fmt: skip


def write_page(path: Path, scenario: Scenario, events: Trace, result: Outcome, until: int | None = None) -> int:
    """Write the run's page to `path` (one line naming --html and the file if it cannot be
    written); returns the last tick it shows."""
    write_out(path, page_text(scenario, events, result, until), option="--html", head=PAGE_HEAD)
    return events.last_tick if until is None else min(until, events.last_tick)


def scenario_page(loaded: Scenario) -> str:
    """The page of a scenario run whole, as `sim trace FILE --html` writes it (a counterexample
    file is run without its [expect] table being enforced)."""
    events, result = run_scenario(loaded, strict=False)
    return page_text(loaded, events, result)


def write_page_beside(scenario_file: Path, head: Head | None = None) -> Path:
    """Write the page of a scenario file beside it (same stem, `.html`), with `head` only over a
    page that starts with it (`sim.base.files.refuse_foreign`); returns its path."""
    return write_out(page.page_path(scenario_file), scenario_page(load(str(scenario_file))), option="--out", head=head)


#: the narrowest width the swimlane is drawn for (`--width`, and the terminal's or COLUMNS below it)
MIN_WIDTH = 40


def make_console(no_color: bool, width: int | None) -> Console:
    """The console a swimlane is printed on, `width` columns wide (`--width`; by default the
    terminal's, as COLUMNS says it when set, 80 when stdout is not a terminal: `columns`), never
    narrower than MIN_WIDTH. Rich is not left to read COLUMNS itself: at 0 it printed nothing,
    and it applied to piped output too."""
    color = not (no_color or os.environ.get("NO_COLOR"))
    return swimlane.console(width=width if width is not None else max(MIN_WIDTH, columns()), color=color)


WIDTH_HELP = f"Render for this many columns, at least {MIN_WIDTH} (default: the terminal's; 80 when not a terminal)."


def _settings_epilog() -> str:
    """What --set takes, for `sim trace --help`: each switch and knob with its values."""
    from sim.model.knobs import KNOBS
    from sim.model.switches import SWITCHES

    switches = "; ".join(f"{name}={'|'.join(m.value for m in enum)}" for name, enum in SWITCHES.items())
    knobs = "; ".join(f"{name}={'|'.join(k.values)}{'|N' if k.integers else ''}" for name, k in KNOBS.items())
    return f"Switches (first value: the worked example's): {switches}.\n\nKnobs (off the sweep): {knobs}."


@click.command(epilog=_settings_epilog())
@click.argument("scenario", shell_complete=complete_scenarios)
@set_option
@profile_option
@workflow_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (outcome and events).")
@click.option("--check", is_flag=True, help="Compare the outcome with the scenario's [expect] table; exit 1 on a difference.")
@click.option("--step", is_flag=True, help="Replay one tick at a time: Enter advances, b goes back, a number jumps, q quits.")
@click.option("--until", type=click.IntRange(min=0), metavar="T", help="Stop the replay at tick T (outcome so far).")
@click.option("--format", "fmt", type=click.Choice(["text", "itf"]), default="text", show_default=True,
              help="text: the swimlane; itf: Apalache's Informal Trace Format (JSON, one state per tick).")  # fmt: skip
@click.option("--html", "html_out", type=click.Path(dir_okay=False), callback=file_value, metavar="FILE",
              help="Write the run's page: one self-contained HTML file (swimlane, outcome, verdicts, a tick slider "
                   "showing each attempt, artifact and effect at that tick).")  # fmt: skip
@click.option("--no-color", is_flag=True, help="Plain text, no colour (also NO_COLOR, and whenever output is piped).")
@click.option("--width", type=click.IntRange(min=MIN_WIDTH), metavar="COLS", help=WIDTH_HELP)
def trace(
    scenario: str, sets: tuple[str, ...], profile: str | None, workflow: str | None, as_json: bool, check: bool,
    step: bool, until: int | None, fmt: str, html_out: Path | None, no_color: bool, width: int | None,
) -> int:  # fmt: skip
    """Run one scenario (a name from `sim scenarios`, or a path: a .toml file, or any argument
    with a /) and draw its trace. A name is never hidden by a file of that name here."""
    _refuse_combinations(as_json, fmt, step, html_out)
    if html_out is not None:
        refuse_foreign(html_out, PAGE_HEAD, "--html")
    loaded = load_scenario(scenario, sets, profile, workflow)
    events, result = run_scenario(loaded)  # a fault that never took effect is bad input: before any note
    # the notes go to stderr after the output, so that an output that cannot be written stays one line
    notes = note_inert([run_of(loaded.switches, schedule_kinds(loaded.schedule))], IN_THE_SCHEDULE, echo=False)
    diffs = differences(loaded.expect, result.to_json()) if check else []
    machine = as_json or fmt == "itf"
    if as_json:
        cut, so_far = _so_far(events, result, until)
        emit_json({
            "scenario": loaded.name,
            "switches": loaded.switches.as_dict(),
            "outcome": so_far.to_json(),
            "events": cut.to_json(),
            **({"until": until} if until is not None else {}),
            **({"check": {"ok": not diffs, "differences": diffs}} if check else {}),
            **({"notes": notes} if notes else {}),
        })  # fmt: skip
    elif fmt == "itf":
        states = events if until is None else grids.truncated(events, until)
        itf.write(states, sys.stdout, source=loaded.source, description=f"sim trace {title_of(loaded)}")  # a stream
    elif html_out is not None:
        last = write_page(html_out, loaded, events, result, until)
        click.echo(printable(f"wrote {html_out}: the page of {title_of(loaded)} (t0..t{last})"))
    else:
        code = _draw(loaded, events, result, until, step, make_console(no_color, width))
        if code is not None:
            echo_notes(notes)
            return code
    echo_notes(notes)
    return _checked(loaded, diffs, machine) if check else 0


def _draw(loaded: Scenario, events: Trace, result: Outcome, until: int | None, step: bool, con: Console) -> int | None:
    """The swimlane on the terminal, whole or (`--step`) a tick at a time; an exit code when
    `--step` was quit."""
    grid = grids.build(events, until)
    stoppers = stopping_protections(loaded, result)
    title = printable(title_of(loaded))  # a file's name may hold a terminal's escapes
    if step:
        stdin = sys.stdin if sys.stdin is not None else io.StringIO()  # closed (`<&-`): end of input
        return step_through(con, events, result, grid, title, stoppers, stdin)
    shown = _so_far(events, result, until)[1]
    swimlane.emit(con, swimlane.screen(events, shown, grid, title=title, width=con.width, stoppers=stoppers))
    return None


def _so_far(events: Trace, result: Outcome, until: int | None) -> tuple[Trace, Outcome]:
    """The run up to the end of tick `until` and its outcome so far, as every view shows it
    with `--until` (the whole run when `until` is None or past its end; `--check` still
    compares the whole run with its [expect] table)."""
    if until is None or until >= events.last_tick:
        return events, result
    cut = grids.truncated(events, until)
    return cut, outcome(cut)


#: how `sim trace --html` knows a page it wrote (`sim.base.files.Head`), the only file it replaces:
#: a regular file there that is not one (the scenario file itself, a workflow file, a README) is
#: left alone, one line, exit 2; a symlink is replaced itself, never followed
PAGE_HEAD = page.HEAD.encode("utf-8")


def _refuse_combinations(as_json: bool, fmt: str, step: bool, html_out: Path | None) -> None:
    """The options that do not combine (a usage error, exit 2)."""
    if as_json and fmt == "itf":
        raise click.UsageError("--json and --format itf are two different documents: choose one")
    if step and (as_json or fmt == "itf"):
        raise click.UsageError("--step replays the swimlane; it does not combine with --json or --format itf")
    if html_out is not None and (as_json or fmt == "itf" or step):
        raise click.UsageError("--html writes a page; it does not combine with --json, --format itf or --step")


def _checked(loaded: Scenario, diffs: list[str], machine: bool) -> int:
    """`--check`: the exit code, with the differences from the scenario's [expect] table on
    stderr (the ok line on stdout, or on stderr when stdout is a machine-read document)."""
    if not loaded.expect:
        click.echo(f"sim: check: {loaded.source} has no [expect] table (or --set, --profile or --workflow "
                   "cleared it: its figures are those of the file's own run)", err=True)  # fmt: skip
        return 1
    if diffs:
        click.echo(f"sim: check FAILED for {loaded.name}:", err=True)
        for line in diffs:
            click.echo(f"  {line}", err=True)
        return 1
    click.echo(f"check: ok ({expected_figures(loaded.expect)} expected figures match)", err=machine)
    return 0


def _step_command(con: Console, stdin: TextIO, tick: int, final: int, last: bool) -> str:
    """One command of `--step`: "next", "back", a tick number, "end" (past the last tick:
    the outcome) or "quit". An unknown line is answered with the commands, and asked again."""
    nxt = "the outcome" if last else "next"
    prompt = f"t{tick}/t{final}{' (last)' if last else ''}  Enter: {nxt}  b: back  N: jump to tN  q: quit > "
    while True:
        con.print(Text(prompt, style="dim"), end="")
        line = stdin.readline()
        if not line:  # end of input: quit, or at the last tick show the outcome as Enter would
            con.print()
            return "end" if last else "quit"
        command = line.strip().lower()
        if command in ("q", "quit", "exit"):
            return "quit"
        if command == "":
            return "end" if last else "next"
        if command == "b":
            return "back"
        digits = command.lstrip("t")
        if digits.isascii() and digits.isdigit():  # not "²" or "①", which int() does not read
            return digits if len(digits) <= 9 else str(final)  # far past the last tick: the last
        con.print()
        con.print(Text(f"{command!r} is not a command: Enter, b, a tick number (or tN), or q", style="dim"))


def step_through(
    con: Console,
    events: Trace,
    result: Outcome,
    grid: grids.Grid,
    title: str,
    stoppers: dict[str, list[str]],
    stdin: TextIO,
) -> int | None:
    """`--step`: one frame per tick, read a line after each. Returns 0 on quit, None at the end.

    Lines, not keys: Enter (an empty line) advances (at the last tick: to the outcome), `b`
    goes back, a tick number (or tN) jumps, `q` quits; anything else is answered with the
    commands; end of input quits (at the last tick it shows the outcome). No raw mode, so it
    works in any terminal, under tmux, and with a script on stdin.
    """
    ticks = list(grid.ticks)
    states = lifecycles(events)  # the state at the end of each tick, as the run page shows it
    at = 0
    first = True
    while True:
        tick = ticks[at]
        if con.is_terminal:
            con.clear()
        elif not first:
            con.print()  # the prompt's line ends here when stdin is not echoed
        first = False
        swimlane.emit(con, swimlane.step_frame(grid, tick, con.width, title, states[tick]))
        last = at == len(ticks) - 1
        con.print()
        move = _step_command(con, stdin, tick, ticks[-1], last)
        if move == "quit":
            return 0
        if move == "end":
            break
        at = max(0, at - 1) if move == "back" else (at + 1 if move == "next" else min(len(ticks) - 1, int(move)))
    con.print()
    swimlane.emit(con, swimlane.legend_lines(grid, con.width))
    con.print()
    so_far = grid.ticks[-1] if grid.ticks[-1] < events.last_tick else None
    shown = result if so_far is None else outcome(grids.truncated(events, so_far))
    swimlane.emit(con, swimlane.outcome_block(events, shown, grid, con.width, stoppers=stoppers, so_far=so_far))
    return None
