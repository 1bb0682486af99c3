"""The `sim` command line. Commands only: parse, call the library, render, map errors.

Each command lives in `sim/commands/`; this module registers them and is the only place
that turns errors into messages and exit codes: 0 success, 1 a check failed, 2 bad input.
"""

from __future__ import annotations

import sys

import click

from sim.errors import SimError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """sim: a tick-based simulator and model checker for durable agent work."""


def _register() -> None:
    from sim.commands import COMMANDS

    for command in COMMANDS:
        cli.add_command(command)


_register()


def main(argv: list[str] | None = None) -> int:
    try:
        result = cli.main(args=argv, prog_name="sim", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return 2
    except click.Abort:
        click.echo("sim: interrupted", err=True)
        return 130
    except SimError as exc:
        click.echo(f"sim: error: {exc}", err=True)
        return 2
    except BrokenPipeError:
        return 0
    return result if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
