"""One module per command; `COMMANDS` is what `sim` offers, in help order."""

from __future__ import annotations

import click

from sim.commands.check import check
from sim.commands.diff import diff
from sim.commands.explore import explore
from sim.commands.scenarios import scenarios
from sim.commands.sweep import sweep
from sim.commands.trace import trace

COMMANDS: list[click.Command] = [scenarios, trace, sweep, diff, explore, check]
