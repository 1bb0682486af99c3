"""`sim trace NAME|FILE`: run one scenario and show it tick by tick."""

from __future__ import annotations

import click

from sim.commands.common import emit_json, load_scenario, set_option
from sim.render.text import narrative, outcome_lines
from sim.run import run_scenario
from sim.scenario import differences


@click.command()
@click.argument("scenario")
@set_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (outcome and events).")
@click.option("--check", is_flag=True, help="Compare the outcome with the scenario's [expect] table; exit 1 on a difference.")
def trace(scenario: str, sets: tuple[str, ...], as_json: bool, check: bool) -> int:
    """Run one scenario (a name from `sim scenarios`, or a .toml file) and print its trace."""
    loaded = load_scenario(scenario, sets)
    events, result = run_scenario(loaded)
    outcome = result.to_json()
    diffs = differences(loaded.expect, outcome) if check else []
    if as_json:
        emit_json({
            "scenario": loaded.name,
            "switches": loaded.switches.as_dict(),
            "outcome": outcome,
            "events": events.to_json(),
            **({"check": {"ok": not diffs, "differences": diffs}} if check else {}),
        })  # fmt: skip
    else:
        click.echo(f"{loaded.name}: {loaded.switches.label() or 'the worked example, all protections on'}")
        for line in narrative(events):
            click.echo(line)
        click.echo()
        for line in outcome_lines(result, events):
            click.echo(line)
    if check:
        if not loaded.expect:
            click.echo(f"sim: check: {loaded.source} has no [expect] table (or --set cleared it)", err=True)
            return 1
        if diffs:
            click.echo(f"sim: check FAILED for {loaded.name}:", err=True)
            for line in diffs:
                click.echo(f"  {line}", err=True)
            return 1
        click.echo(f"check: ok ({len(loaded.expect)} expected figures match)", err=as_json)
    return 0
