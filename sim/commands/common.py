"""Pieces shared by the commands: the --set option, loading a scenario, writing JSON."""

from __future__ import annotations

import json
import sys
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


def load_scenario(name: str, sets: tuple[str, ...]) -> Scenario:
    scenario = load(name)
    return scenario.with_switches(parse_assignments(sets))


def emit_json(document: Any) -> None:
    """One JSON document on stdout, nothing else; keys in a fixed order."""
    sys.stdout.write(json.dumps(document, indent=2) + "\n")
