"""One module per command; `COMMANDS` is what `sim` offers, in help order."""

from __future__ import annotations

import click

from sim.commands.scenarios import scenarios
from sim.commands.trace import trace

COMMANDS: list[click.Command] = [scenarios, trace]

for _optional in ("sweep", "diff", "explore", "check"):
    try:
        _module = __import__(f"sim.commands.{_optional}", fromlist=[_optional])
    except ModuleNotFoundError as _exc:  # a command not built yet
        if _exc.name != f"sim.commands.{_optional}":
            raise
    else:
        COMMANDS.append(getattr(_module, _optional))
