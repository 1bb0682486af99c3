"""One module per command. `COMMANDS` is what `sim` offers, in help order: each command's
name and its module, imported only when that command runs (or `sim --help` lists them), so
`sim sweep` does not pay for the checker, the explorer or the diff at start-up."""

from __future__ import annotations

import importlib

import click

#: command name -> the module under sim.commands that defines it (a click command of that name)
COMMANDS: dict[str, str] = {
    "scenarios": "scenarios",
    "workflows": "workflows",
    "trace": "trace",
    "sweep": "sweep",
    "diff": "diff",
    "explore": "explore",
    "check": "check",
    "profiles": "profiles",
    "conform": "conform",
    "schema": "schema",
}


def command(name: str) -> click.Command:
    """The click command `name`, its module imported now."""
    module = importlib.import_module(f"sim.commands.{COMMANDS[name]}")
    found: click.Command = getattr(module, name)
    return found
