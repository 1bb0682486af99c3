"""`sim diff A B` or `sim diff NAME --set k=v`: two runs side by side, one change at a time."""

from __future__ import annotations

import click

from sim.commands.common import (
    IN_THE_SCHEDULE,
    complete_scenarios,
    emit_json,
    load_scenario,
    note_inert,
    profile_option,
    workflow_option,
    run_of,
    schedule_kinds,
    set_option,
)
from sim.commands.trace import MIN_WIDTH, WIDTH_HELP, make_console
from sim.render import diff as diffs
from sim.base.limits import printable
from sim.render import swimlane
from sim.run import run_scenario
from sim.model.switches import parse_assignments


@click.command()
@click.argument("a", metavar="A", shell_complete=complete_scenarios)
@click.argument("b", metavar="[B]", required=False, shell_complete=complete_scenarios)
@set_option
@profile_option
@workflow_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (figures, divergence, cells).")
@click.option("--no-color", is_flag=True, help="Plain text, no colour (also NO_COLOR, and whenever output is piped).")
@click.option("--width", type=click.IntRange(min=MIN_WIDTH), metavar="COLS", help=WIDTH_HELP)
def diff(a: str, b: str | None, sets: tuple[str, ...], profile: str | None, workflow: str | None, as_json: bool,
         no_color: bool, width: int | None) -> int:  # fmt: skip
    """Compare two runs side by side, one change at a time.

    `sim diff A B` compares two scenarios; `sim diff NAME --set fencing=off` compares a
    scenario with itself under changed settings (--set and --profile always apply to B). Shows the outcome figures side by side with their deltas, the invariants that appear or
    disappear, the first tick where the two traces diverge, and both swimlanes from there
    with the differing cells highlighted. --workflow runs both A and B on that workflow.
    """
    if b is None and not sets and profile is None:
        raise click.UsageError("give a second scenario B, or --set NAME=VALUE or --profile NAME to change A's settings")
    left = load_scenario(a, (), None, workflow)
    right = load_scenario(b if b is not None else a, sets, profile, workflow)
    # --set and --profile apply to B: a knob they leave inert there is noted
    notes = note_inert([run_of(right.switches, schedule_kinds(right.schedule))], IN_THE_SCHEDULE)
    label = " ".join(([f"--profile {profile}"] if profile else [])
                     + [f"--set {k}={v}" for k, v in parse_assignments(sets).items()])  # fmt: skip
    title_a = printable(left.name) + (f" ({left.switches.label()})" if left.switches.label() else "")
    title_b = printable(right.name) + (f" {label}" if label else "")
    if b is not None and right.switches.label() and not label:
        title_b += f" ({right.switches.label()})"
    trace_a, out_a = run_scenario(left, strict=False)
    trace_b, out_b = run_scenario(right, strict=False)
    comparison = diffs.compare(diffs.side(title_a, trace_a, out_a), diffs.side(title_b, trace_b, out_b))
    if as_json:
        emit_json({**comparison.to_json(), **({"notes": notes} if notes else {})})
        return 0
    con = make_console(no_color, width)
    swimlane.emit(con, diffs.lines(comparison, con.width))
    for name, t in (("A", trace_a), ("B", trace_b)):
        for problem in t.unfired:
            click.echo(f"note: {name}'s schedule: {problem}", err=True)
    return 0
