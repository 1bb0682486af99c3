"""`sim schema`: the JSON Schema of scenario files (and of any other input format registered in
`sim.schema.SCHEMAS`), for an editor's TOML language server (docs/limits.md, "Editor setup")."""

from __future__ import annotations

import json
from pathlib import Path

import click

from sim.base.errors import SimError
from sim.commands.common import folder_value
from sim.base.limits import quote


def head() -> bytes:
    """How `sim schema --out` knows a schema file it wrote (`sim.base.files.Head`), the only
    kind it replaces: its first lines, the draft and a title that starts with "sim "."""
    from sim.schema import DRAFT

    return ('{\n  "$schema": ' + json.dumps(DRAFT) + ',\n  "title": "sim ').encode("utf-8")


def _names() -> list[str]:
    from sim.schema import SCHEMAS

    return list(SCHEMAS)


def _complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    return [name for name in _names() if name.startswith(incomplete)]


@click.command()
@click.argument("name", required=False, shell_complete=_complete)
@click.option("--out", type=click.Path(path_type=Path), default=None, metavar="DIR", callback=folder_value,
              help="Write each schema to DIR/NAME.schema.json instead of printing it.")  # fmt: skip
def schema(name: str | None, out: Path | None) -> int:
    """Print the JSON Schema of scenario files, for an editor that validates TOML as you type.

    With NAME, that schema alone (one JSON Schema document); without, one JSON document with
    every schema by name. With --out DIR, each is written to DIR/NAME.schema.json instead.
    """
    from sim.schema import every, text

    names = _names()
    if name is not None and name not in names:
        raise SimError(f"sim schema: unknown schema {quote(name)}; schemas: {', '.join(names)}")
    chosen = [name] if name is not None else names
    if out is not None:
        from sim.base.files import prepare_out, refuse_foreign, write_out

        prepare_out(out)
        targets = {n: out / f"{n}.schema.json" for n in chosen}
        for path in targets.values():  # each replaces only a schema sim wrote
            refuse_foreign(path, head())
        for n, path in targets.items():
            click.echo(f"wrote {write_out(path, text(n), head=head())}")
        return 0
    click.echo(text(name) if name is not None else every(), nl=False)
    return 0
