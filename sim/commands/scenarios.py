"""`sim scenarios`: the named scenarios and what each one shows."""

from __future__ import annotations

import textwrap

import click

from sim import scenario as scenarios_mod
from sim.commands.common import emit_json


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option("--check", "check", is_flag=True,
              help="Run every named scenario and compare it with its [expect] table (sim trace NAME --check "
              "for each); exit 1 if any differs.")  # fmt: skip
def scenarios(as_json: bool, check: bool) -> int:
    """List the named scenarios with their descriptions (or check them all)."""
    # the listing does not check [expect] (--check and the tests do): it needs no properties
    loaded = [scenarios_mod.load(name, check_expect=check) for name in scenarios_mod.names()]
    if check:
        return _check_all(loaded, as_json)
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


def _check_all(loaded: list[scenarios_mod.Scenario], as_json: bool) -> int:
    """Each scenario's run against its [expect] table: one line each, then a count."""
    from sim.run import run_scenario

    results: list[tuple[str, int, list[str]]] = []  # (name, expected figures, differences)
    for s in loaded:
        _, outcome = run_scenario(s)
        diffs = scenarios_mod.differences(s.expect, outcome.to_json()) if s.expect else []
        results.append((s.name, scenarios_mod.expected_figures(s.expect), diffs))
    # a scenario with no [expect] compares nothing: it fails, as `sim trace FILE --check` does
    failed = [r for r in results if r[2] or not r[1]]
    if as_json:
        emit_json({
            "scenarios": [{"name": n, "expected": e, "differences": d} for n, e, d in results],
            "failed": len(failed),
        })  # fmt: skip
    else:
        width = max(len(name) for name, _, _ in results)
        for name, expected, diffs in results:
            verdict = "FAILED" if diffs else (f"ok ({expected} figures)" if expected else "FAILED: no [expect] table")
            click.echo(f"{name:<{width}}  {verdict}")
            for line in diffs:
                click.echo(f"{'':<{width}}    {line}")
        click.echo(f"{len(results) - len(failed)} of {len(results)} scenarios match their [expect] tables")
    return 1 if failed else 0
