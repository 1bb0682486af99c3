"""Pieces shared by the commands: the --set option, loading a scenario, writing JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable, TypeVar

import click

from sim.scenario import Scenario, load
from sim.switches import parse_assignments

F = TypeVar("F", bound=Callable[..., Any])


def set_option(func: F) -> F:
    return click.option(
        "--set",
        "sets",
        multiple=True,
        metavar="NAME=VALUE",
        help="Set a switch, e.g. --set fencing=off (repeatable).",
    )(func)


def folder_value(ctx: click.Context, param: click.Parameter, value: Path) -> Path:
    """A folder option's value, refused when it looks like another option (`--out --json`
    most likely forgot the folder, so the next option was taken as its value)."""
    if str(value).startswith("-"):
        raise click.BadParameter(f"expected a folder, got {str(value)!r}, which looks like an option", ctx, param)
    return value


def load_scenario(name: str, sets: tuple[str, ...]) -> Scenario:
    scenario = load(name)
    return scenario.with_switches(parse_assignments(sets))


def emit_json(document: Any) -> None:
    """One JSON document on stdout, nothing else; keys in a fixed order."""
    sys.stdout.write(json.dumps(document, indent=2) + "\n")
