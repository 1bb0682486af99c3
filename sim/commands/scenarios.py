"""`sim scenarios`: the named scenarios and what each one shows."""

from __future__ import annotations

import textwrap

import click

from sim import scenario as scenarios_mod
from sim.commands.common import emit_json


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def scenarios(as_json: bool) -> int:
    """List the named scenarios with their descriptions."""
    loaded = [scenarios_mod.load(name) for name in scenarios_mod.names()]
    if as_json:
        emit_json([
            {"name": s.name, "description": s.description, "switches": s.switches.as_dict()}
            for s in loaded
        ])  # fmt: skip
        return 0
    for s in loaded:
        click.echo(click.style(s.name, bold=True) + (f"   ({s.switches.label()})" if s.switches.label() else ""))
        click.echo(textwrap.fill(s.description, width=88, initial_indent="    ", subsequent_indent="    "))
        click.echo()
    return 0
