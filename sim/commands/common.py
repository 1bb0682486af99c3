"""Pieces shared by the commands: the --set option, loading a scenario, the notes on inert
knobs, writing JSON, fitting lines to the terminal."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Callable, TypeVar

import click

from sim.base.limits import ascii_number
from sim.model.faults import Effect, Fault, effects_of
from sim.model.knobs import Scope, inert_notes
from sim.scenario import Scenario, load
from sim.model.schedule import Schedule
from sim.model.switches import Switches, parse_assignments

F = TypeVar("F", bound=Callable[..., Any])


# -- shell completion (`eval "$(_SIM_COMPLETE=bash_source sim)"`) ---------------------------------
def complete_scenarios(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """The named scenarios starting with what was typed (a path is the shell's to complete)."""
    from sim.scenario import names

    return [n for n in names() if n.startswith(incomplete)]


def complete_settings(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """`NAME=` for each switch and knob, then, after `NAME=`, each of its values."""
    from sim.model.knobs import KNOBS
    from sim.model.switches import SWITCHES

    values = {name: [m.value for m in enum] for name, enum in SWITCHES.items()}
    values.update({name: list(k.values) for name, k in KNOBS.items()})
    name, sep, typed = incomplete.partition("=")
    if not sep:
        return [f"{n}=" for n in values if n.startswith(name)]
    return [f"{name}={v}" for v in values.get(name, []) if v.startswith(typed)]


def complete_profiles(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    from sim.model.profiles import NAMES

    return [n for n in NAMES if n.startswith(incomplete)]


def set_option(func: F) -> F:
    return click.option(
        "--set",
        "sets",
        multiple=True,
        metavar="NAME=VALUE",
        shell_complete=complete_settings,
        help="Set a switch or knob, e.g. --set fencing=off (repeatable; sim trace --help lists them).",
    )(func)


def profile_option(func: F) -> F:
    return click.option(
        "--profile",
        metavar="NAME",
        default=None,
        shell_complete=complete_profiles,
        help="Start from what an engine gives by itself (sim profiles lists them); --set overrides it.",
    )(func)


def switch_values(sets: tuple[str, ...], profile: str | None = None) -> dict[str, str]:
    """The switch and knob values to apply: the profile's engine settings, then `--set`."""
    values = parse_assignments(sets)
    if profile is None:
        return values
    from sim.model.profiles import get

    return {**get(profile).settings(), **values}


def folder_value(ctx: click.Context, param: click.Parameter, value: Path) -> Path:
    """A folder option's value, refused when it looks like another option (`--out --json`
    most likely forgot the folder, so the next option was taken as its value)."""
    if str(value).startswith("-"):
        raise click.BadParameter(f"expected a folder, got {str(value)!r}, which looks like an option", ctx, param)
    return value


def file_value(ctx: click.Context, param: click.Parameter, value: str | Path | None) -> Path | None:
    """An output file option's value (as typed: a `click.Path` without `path_type`, whose
    trailing `/` is kept), as a Path: refused when it looks like another option (`--html
    --json` forgot the file), when it ends in a slash (a folder's name: `--html newdir/` wrote
    a file `newdir`), and, before any work, when something other than a regular file or a
    symlink is there (a folder, a FIFO, a device, a socket: never written over)."""
    if value is None:
        return None
    text = str(value)
    if not text.strip() or text == ".":  # Path("") is "."
        raise click.BadParameter("expected a file, got an empty name", ctx, param)
    if text.startswith("-"):
        raise click.BadParameter(f"expected a file, got {text!r}, which looks like an option", ctx, param)
    if text.endswith(("/", os.sep)):
        raise click.BadParameter(f"expected a file, got {text[-60:]!r}, which ends in a slash (a folder's name); "
                                 "give a file name such as page.html", ctx, param)  # fmt: skip
    from sim.base.files import refuse_special

    path = Path(text)
    refuse_special(path, max(param.opts, key=len))
    return path


def load_scenario(name: str, sets: tuple[str, ...], profile: str | None = None, workflow: str | None = None) -> Scenario:
    scenario = load(name)
    if workflow is not None:
        from sim.workflow import load as load_workflow

        scenario = scenario.with_workflow(load_workflow(workflow))
    return scenario.with_switches(switch_values(sets, profile))


def complete_workflows(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    from sim.workflow import names

    return [n for n in names() if n.startswith(incomplete)]


def workflow_option(func: F) -> F:
    return click.option(
        "--workflow",
        metavar="NAME|FILE",
        default=None,
        shell_complete=complete_workflows,
        help="Run the scenario on this workflow (sim workflows lists them; default: the article's, digest).",
    )(func)


#: where each command's runs take their faults from, for the notes on inert knobs
ENUMERATED = Scope("enumerated", "add --faults all")
DRAWN = Scope("drawn", "add --faults all")
IN_THE_SCHEDULE = Scope("in the schedule")
IN_THE_SWEEP = Scope("in the sweep's runs (the worked example's faults)")


def run_of(switches: Switches, kinds: Iterable[type[Fault]]) -> tuple[dict[str, str], frozenset[Effect]]:
    """A run as `sim.model.knobs.inert_notes` reads it: its settings' spellings and the effects of
    the fault kinds it may have."""
    return switches.as_dict(), effects_of(kinds)


def schedule_kinds(schedule: Schedule) -> frozenset[type[Fault]]:
    """The fault kinds a schedule has faults of."""
    return frozenset(type(fault) for fault in schedule.faults)


def note_inert(runs: Sequence[tuple[Mapping[str, str], frozenset[Effect]]], scope: Scope, echo: bool = True) -> list[str]:
    """A note on stderr for each knob set away from its default that the other settings
    make inert in every one of these runs (`sim.model.knobs.inert_notes`), wrapped to fit the
    terminal (`columns`); returns the notes, for a JSON document's `notes` field. Without
    `echo` nothing is printed yet (`echo_notes` prints them once the output is written)."""
    notes = inert_notes(runs, scope)
    if echo:
        echo_notes(notes)
    return notes


def echo_notes(notes: Sequence[str]) -> None:
    """The notes on stderr, each wrapped to fit the terminal."""
    import textwrap

    width = columns(sys.stderr)
    for note in notes:
        click.echo(textwrap.fill(f"sim: note: {note}", width=width, subsequent_indent="    ", break_on_hyphens=False,
                                 break_long_words=False), err=True)  # fmt: skip


def emit_json(document: Any) -> None:
    """One JSON document on stdout, nothing else; keys in a fixed order."""
    sys.stdout.write(json.dumps(document, indent=2) + "\n")


# -- lines that fit the terminal ------------------------------------------------------------------
#: the columns a line may take when the output is not a terminal (a file, a pipe)
COLUMNS = 80


def columns(stream: IO[str] | None = None) -> int:
    """The columns a line printed on `stream` (stdout) may take: the terminal's width when it
    is a terminal (the variable COLUMNS, when set, says it, as for `shutil.get_terminal_size`),
    else COLUMNS."""
    stream = sys.stdout if stream is None else stream
    try:
        if not stream.isatty():
            return COLUMNS
        said = os.environ.get("COLUMNS", "")
        number = ascii_number(said, 6)
        return number if number else os.get_terminal_size(stream.fileno()).columns  # not 0
    except (AttributeError, ValueError, OSError):  # no real stream (a test's), or no size
        return COLUMNS


def shown_path(path: Path) -> str:
    """A path as short as it can be shown: relative to the current folder when that is
    shorter (`reports/x`, `../x`), else absolute."""
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute)
    except ValueError:  # another drive (Windows)
        return absolute
    return relative if len(relative) <= len(absolute) else absolute


def path_lines(path: str, width: int, first: str, more: str) -> list[str]:
    """`path` after the prefix `first`, in lines of at most `width` columns: cut after a `/`
    or a `.` where it must be, going on after the prefix `more` (mid-name only when one part
    is too long by itself)."""
    lines, line, filled = [], first, False
    for part in _path_parts(path):
        if filled and len(line) + len(part) > width:
            lines.append(line)
            line = more
        while len(line) + len(part) > width > len(line):
            cut = width - len(line)
            lines.append(line + part[:cut])
            line, part = more, part[cut:]
        line, filled = line + part, True
    return [*lines, line]


def _path_parts(path: str) -> list[str]:
    """`a/b.c/d` -> `a/`, `b.`, `c/`, `d`: the places a path may be cut."""
    parts, start = [], 0
    for i, char in enumerate(path):
        if char in "/.":
            parts.append(path[start : i + 1])
            start = i + 1
    return [*parts, path[start:]] if start < len(path) else parts


# -- work that may run long: said up front, and run past an hour only when the user says so --------
#: an estimate past this many seconds needs --yes (or a yes at the terminal's prompt)
LONG_SECONDS = 3600.0

yes_option = click.option(
    "--yes", "-y", is_flag=True,
    help="Run even when the work is estimated to take more than an hour (without it, such work "
    "is not started: sim asks at a terminal, and refuses elsewhere).",
)  # fmt: skip


def duration_words(seconds: float) -> str:
    """A duration as a person says it: `under a second`, `about 40 s`, `about 12 min`, `about 7 h`,
    `about 3 days`, `more than a year`."""
    if seconds < 1:
        return "under a second"
    for unit, size, most in (("s", 1, 90), ("min", 60, 90), ("h", 3600, 48), ("days", 86400, 365)):
        if seconds < size * most:
            return f"about {seconds / size:,.0f} {unit}"
    return "more than a year"


def gate_long_work(what: str, seconds: float, yes: bool) -> None:
    """Stop before work estimated past LONG_SECONDS unless `yes`: at a terminal, ask; elsewhere
    refuse with one line (exit 2) that says how to run it anyway."""
    if seconds <= LONG_SECONDS or yes:
        return
    from sim.base.errors import SimError

    message = f"{what} is estimated to take {duration_words(seconds)}"
    if sys.stdin.isatty() and sys.stderr.isatty():
        if click.confirm(f"{message}. Run it?", default=False, err=True):
            return
        raise SimError(f"{message}; not run (--yes runs it without asking)")
    raise SimError(f"{message}; rerun with --yes to run it")
