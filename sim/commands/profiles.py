"""`sim profiles`: the engine profiles, what each engine gives and what it leaves to the
application (docs/profiles.md)."""

from __future__ import annotations

import textwrap

import click

from sim.model import profiles as profiles_mod
from sim.commands.common import emit_json


def _claim_json(c: profiles_mod.Claim) -> dict[str, str]:
    out = {"setting": c.setting, "why": c.why, "source": c.source}
    if c.application_part:
        out["application_part"] = c.application_part
    return out


@click.command()
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def profiles(name: str | None, as_json: bool) -> int:
    """List the engine profiles, or show one with the reason and source of each claim.

    A profile says which settings an engine gives by itself and which protections the
    application must add. Use it with --profile NAME on trace, diff, sweep, explore and check.
    """
    chosen = [profiles_mod.get(name, source="sim profiles")] if name is not None else list(profiles_mod.PROFILES)
    if as_json:
        emit_json([
            {"name": p.name, "system": p.system, "runnable": p.runnable, "note": p.note,
             "engine": [_claim_json(c) for c in p.engine],
             "application": [_claim_json(c) for c in p.missing()]}
            for p in chosen
        ])  # fmt: skip
        return 0
    if name is None:
        for p in chosen:
            click.echo(click.style(p.name, bold=True) + f"   {p.system}" + ("" if p.runnable else " (docs only)"))
            for label, text in (("engine gives:    ", " ".join(c.setting for c in p.engine)),
                                ("application adds:", " ".join(c.setting for c in p.missing()) or "nothing")):
                click.echo(textwrap.fill(text, width=80, initial_indent=f"    {label} ", subsequent_indent=" " * 22,
                                         break_on_hyphens=False))  # fmt: skip
        click.echo()
        click.echo("sim profiles NAME: why, and the source of each claim")
        click.echo("sim sweep --profile NAME: the event combinations under that engine")
        return 0
    p = chosen[0]
    click.echo(click.style(f"{p.name}: {p.system}", bold=True))
    if p.note:
        click.echo(textwrap.fill(p.note, width=88))
    for title, claims in (("The engine gives by itself", p.engine), ("The application must add", p.missing())):
        click.echo()
        click.echo(click.style(title, bold=True))
        for c in claims:
            click.echo(f"  {c.setting}")
            click.echo(textwrap.fill(c.why, width=88, initial_indent="      ", subsequent_indent="      "))
            if c.application_part:
                click.echo(textwrap.fill("the application's part: " + c.application_part, width=88,
                                         initial_indent="      ", subsequent_indent="      "))  # fmt: skip
            click.echo(textwrap.fill("source: " + c.source, width=88, initial_indent="      ",
                                     subsequent_indent="        "))  # fmt: skip
    return 0
