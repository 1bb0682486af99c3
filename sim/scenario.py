"""Scenario files: switches, schedule overrides, a description and expected figures.

A scenario is TOML:

    description = "one paragraph"
    [switches]            # any of the nine switches or the knobs (sim.model.knobs); unnamed ones
                          # take the worked example's value
    [schedule]            # optional: overrides of the schedule the switches build
    [expect]              # optional: outcome fields `sim trace --check` compares
                          # (TOML has no null: write the string "null")

Named scenarios live in the `scenarios/` folder of the project (installed as the package
`sim.scenarios`); `load` takes a name from there or a path to any file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
import importlib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.base.errors import ScenarioError, ScheduleError, SimError
from sim.base.inputs import exists, is_path, longest_dotted_key, read_text
from sim.model.faults import KINDS, by_key
from sim.model.knobs import KNOBS
from sim.base.limits import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_HORIZON,
    MAX_INT,
    MAX_LIST,
    MAX_NAME,
    MAX_SECTIONS,
    MAX_TEXT,
    quote,
    unreadable_number,
)
from sim.model.schedule import Schedule, worked_example
from sim.model.switches import FAULT_SWITCHES, SWITCHES, Switches, parse_value

if TYPE_CHECKING:  # a workflow is loaded only when a scenario names one (`sim scenarios` stays light)
    from sim.model.workflow import Workflow

TOP_KEYS = ("description", "workflow", "switches", "schedule", "expect")
SCALARS = ("sections", "first_token", "heartbeat_limit", "newsletter_ready", "horizon")
#: the values each of the setting's constants may take (docs/limits.md)
SCALAR_RANGES = {
    "sections": (2, MAX_SECTIONS),
    "first_token": (0, MAX_INT),
    "heartbeat_limit": (1, MAX_INT),
    "newsletter_ready": (0, MAX_INT),
    "horizon": (1, MAX_HORIZON),
}
NEWSLETTER_KEYS = ("start_tick", "digest", "quoted_revenue")



@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    description: str
    switches: Switches
    #: schedule overrides as written in the file (the `[schedule]` table)
    overrides: dict[str, Any] = field(default_factory=dict)
    expect: dict[str, Any] = field(default_factory=dict)
    source: str = "<built-in>"
    #: the workflow the scenario runs (`sim.model.workflow`; None: the article's, built in)
    workflow: Workflow | None = None
    #: the workflow was given on the command line (`--workflow`), not named by the file
    workflow_given: bool = False
    #: the switches and knobs the file itself sets (its [switches]), over any workflow's own
    own_switches: dict[str, Any] = field(default_factory=dict)

    @property
    def schedule(self) -> Schedule:
        return build_schedule(self.switches, self.overrides, self.source, self.workflow)

    def with_workflow(self, workflow: Workflow) -> Scenario:
        """The same scenario on another workflow (`--workflow`): its faults placed by the
        workflow's rule, the workflow's receiver and assessor settings under the switches the
        scenario sets; expectations no longer apply."""
        from sim.model.workflow import workflow_switches

        # the new workflow's settings under what the file itself sets (never a former workflow's)
        switches = workflow_switches(workflow, self.own_switches)
        build_schedule(switches, self.overrides, self.source, workflow)  # a workflow the engine cannot run
        return dataclasses.replace(self, switches=switches, workflow=workflow, workflow_given=True, expect={})

    def with_switches(self, values: dict[str, str]) -> Scenario:
        """The same scenario with some switches set (`--set`); expectations no longer apply."""
        if not values:
            return self
        switches = self.switches.with_values(values)
        return dataclasses.replace(self, switches=switches, expect={}, own_switches={**self.own_switches, **values})


def scenarios_dir() -> Path:
    """The folder of the package `sim.scenarios` (the project's scenarios/, installed beside
    its `__init__.py` as package data; no `importlib.resources`, which imports zipfile)."""
    package = importlib.import_module("sim.scenarios")
    assert package.__file__ is not None  # a regular package (pyproject.toml)
    return Path(package.__file__).parent


def names() -> list[str]:
    return sorted(p.stem for p in scenarios_dir().glob("*.toml"))


def __getattr__(name: str) -> tuple[str, ...]:
    """`EXPECT_KEYS`: the outcome's fields an [expect] table may name, computed when first asked
    for (it imports the properties, which `sim scenarios` listing the scenarios does not need)."""
    if name != "EXPECT_KEYS":
        raise AttributeError(f"module 'sim.scenario' has no attribute {name!r}")
    from sim.properties.outcome import FIELDS

    keys = globals()["EXPECT_KEYS"] = tuple(field for field in FIELDS if field != "horizon_reached")
    return keys


#: the outcome's fields an [expect] table may name (`__getattr__`: built when first asked for)
EXPECT_KEYS: tuple[str, ...]


def load(name_or_path: str, check_expect: bool = True) -> Scenario:
    """A named scenario, or a scenario file by path (`is_path` says which). Without
    `check_expect` its [expect] table is kept unchecked (`sim scenarios` listing the named
    ones, which tests check whole)."""
    if not name_or_path.strip():
        raise ScenarioError(f"scenario {quote(name_or_path)}: empty; allowed: a name `sim scenarios` lists, or a path")
    if len(name_or_path) > MAX_NAME or "\x00" in name_or_path:
        raise ScenarioError(f"scenario {quote(name_or_path)}: not a scenario name or path (at most {MAX_NAME} characters, no NUL)")
    path = Path(name_or_path)
    candidate = scenarios_dir() / f"{name_or_path}.toml"
    if not is_path(name_or_path) and _is_file(candidate):
        shown = f"scenarios/{candidate.name}"
        return parse(read_text(candidate, shown), shown, name_or_path, check_expect)
    if is_path(name_or_path) or exists(path):
        return parse(read_text(path, name_or_path), name_or_path, path.stem, check_expect)
    import difflib

    close = difflib.get_close_matches(name_or_path, names(), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise ScenarioError(
        f"unknown scenario {quote(name_or_path)}; {hint}named scenarios: {', '.join(names())} "
        "(or give a path to a .toml file)"
    )


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def parse(text: str, source: str, name: str, check_expect: bool = True) -> Scenario:
    """A scenario from its TOML text; every problem is a ScenarioError naming `source` and the key."""
    if longest_dotted_key(text) >= MAX_DEPTH:  # before the parser, whose cost grows with its square
        raise ScenarioError(f"{source}: tables or arrays nested too deeply (at most {MAX_DEPTH} levels)")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{source}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ScenarioError(f"{source}: tables or arrays nested too deeply (at most {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # an integer of more digits than Python reads
        raise ScenarioError(f"{source}: {unreadable_number(text, exc)}") from None
    return from_data(data, source, name, check_expect)


def from_data(data: dict[str, Any], source: str, name: str, check_expect: bool = True) -> Scenario:
    """A scenario from a scenario file's parsed TOML (what `parse` reads from the text); every
    problem is a ScenarioError naming `source` and the key."""
    _check_depth(data, source)
    _only(data, TOP_KEYS, source, "")
    description = data.get("description", "")
    if not isinstance(description, str) or len(description) > MAX_TEXT:
        raise ScenarioError(f"{source}: description: expected a string of at most {MAX_TEXT:,} characters, got {quote(description)}")
    raw_switches = _table(data, "switches", source)
    for key, value in raw_switches.items():
        if key not in SWITCHES and key not in KNOBS:
            knobs = f"; knobs: {', '.join(KNOBS)}" if KNOBS else ""
            raise ScenarioError(f"{source}: switches.{key}: unknown switch; switches are: {', '.join(SWITCHES)}{knobs}")
        try:
            parse_value(key, value, f"{source}: switches.{key}")
        except SimError as exc:
            raise ScenarioError(str(exc)) from None
    workflow = _workflow(data, source)
    if workflow is None:
        switches = Switches().with_values(raw_switches)
    else:
        from sim.model.workflow import workflow_switches  # only for a file that names a workflow

        switches = workflow_switches(workflow, raw_switches)
    overrides = _table(data, "schedule", source)
    build_schedule(switches, overrides, source, workflow)  # validate now, with the file's name
    expect = _table(data, "expect", source)
    if check_expect:
        _check_expect(expect, source)
    return Scenario(name, description.strip(), switches, overrides, expect, source, workflow,
                    own_switches=dict(raw_switches))  # fmt: skip


def _workflow(data: dict[str, Any], source: str) -> Workflow | None:
    """The workflow a scenario file names (`workflow = "NAME"` or a path, relative to the
    file's folder), loaded; None for the article's. Every problem names the file and the key."""
    ref = data.get("workflow")
    if ref is None:
        return None
    if not isinstance(ref, str):
        raise ScenarioError(f"{source}: workflow: found {quote(ref)}; allowed: a shipped workflow's name or a path")
    from sim import workflow
    from sim.model.workflow import WorkflowError

    folder = Path(source).parent
    if (is_path(ref) or ref not in workflow.names()) and _same_file(folder / ref, Path(source)):
        raise ScenarioError(f"{source}: workflow: found {quote(ref)}, this scenario file itself; allowed: a shipped "
                            "workflow's name or the path of a workflow file")  # fmt: skip
    try:
        return workflow.load(ref, folder)
    except WorkflowError as exc:
        raise ScenarioError(f"{source}: workflow: {exc}") from None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except (OSError, ValueError):
        return False


def _check_depth(data: Any, source: str) -> None:
    """Tables and arrays nest at most MAX_DEPTH levels, and a list holds at most MAX_LIST
    entries (checked without recursion); an error names the key (`schedule.silences`,
    `expect.violations[0].x`)."""
    stack: list[tuple[Any, int, str]] = [(data, 0, "")]
    while stack:
        value, depth, key = stack.pop()
        if depth > MAX_DEPTH:
            raise ScenarioError(f"{source}: {key[:80]}: tables or arrays nested too deeply (at most {MAX_DEPTH} levels)")
        if isinstance(value, dict):
            stack.extend((v, depth + 1, f"{key}.{k}" if key else str(k)) for k, v in value.items())
        elif isinstance(value, list):
            if len(value) > MAX_LIST:
                raise ScenarioError(f"{source}: {key[:80]}: a list of {len(value):,} entries; at most {MAX_LIST} are allowed")
            stack.extend((v, depth + 1, f"{key}[{i}]") for i, v in enumerate(value))


def build_schedule(switches: Switches, overrides: dict[str, Any], source: str, workflow: Workflow | None = None) -> Schedule:
    """The worked example's schedule for these switches, with the file's overrides applied:
    a scalar replaces the constant, a fault kind's list replaces that kind's faults."""
    _only(overrides, SCALARS + tuple(kind.key for kind in KINDS), source, "schedule.")
    base = worked_example(switches, workflow)
    if workflow is not None and "sections" in overrides and overrides["sections"] != base.sections:
        raise ScenarioError(f"{source}: schedule.sections: found {quote(overrides['sections'])}; the workflow "
                            f"{workflow.name} has {base.sections} steps, which it sets itself (leave it out)")  # fmt: skip
    changes: dict[str, Any] = {}
    for key in SCALARS:
        if key in overrides:
            value = overrides[key]
            lo, hi = SCALAR_RANGES[key]
            if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                raise ScenarioError(f"{source}: schedule.{key}: found {quote(value)}; allowed: an integer {lo}..{hi:,}")
            changes[key] = value
    faults = list(base.faults)
    for key, items in overrides.items():
        kind = by_key(key)
        if kind is None:
            continue
        if not isinstance(items, list):
            raise ScenarioError(f"{source}: schedule.{key}: expected a list of tables, found {quote(items)}")
        faults = [f for f in faults if type(f) is not kind]
        for i, item in enumerate(items):
            where = f"schedule.{key}[{i}]"
            if not isinstance(item, dict):
                raise ScenarioError(
                    f"{source}: {where}: expected a table like {{{', '.join(kind.fields)}}}, found {quote(item)}"
                )
            _only(item, kind.fields, source, where + ".")
            faults.append(kind.parse(item, f"{source}: {where}"))
    try:
        return dataclasses.replace(base, faults=tuple(faults), **changes)
    except ScheduleError as exc:
        raise ScheduleError(f"{source}: schedule.{exc}") from None
    except TypeError as exc:
        raise ScenarioError(f"{source}: schedule: {exc}") from None


# -- the [expect] table's schema: each outcome field's allowed values ----------------------
def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_INT


def _is_tick(v: Any) -> bool:
    return v == "null" or _is_count(v)


def _is_text(v: Any) -> bool:
    return isinstance(v, str) and len(v) <= MAX_TEXT


@dataclass(frozen=True, slots=True)
class Form:
    """What an `[expect]` value may be: in words (the loader's message), as the loader's check,
    and as a JSON Schema (`sim schema`: the schema of scenario files, built from these)."""

    words: str
    check: Callable[[Any], bool]
    schema: dict[str, Any]


#: the forms, each declared once (tests/test_schema.py draws values of each and checks that
#: the loader's check and the JSON Schema agree)
COUNT = Form("a whole number", _is_count, {"type": "integer", "minimum": 0, "maximum": MAX_INT})
TICK = Form('a tick or "null"', _is_tick, {"anyOf": [COUNT.schema, {"const": "null"}]})
TEXT = Form("a string", _is_text, {"type": "string", "maxLength": MAX_TEXT})
COUNTS = Form(
    "a list of whole numbers",
    lambda v: isinstance(v, list) and all(map(_is_count, v)),
    {"type": "array", "items": COUNT.schema, "maxItems": MAX_LIST},
)
FLAG = Form("true or false", lambda v: isinstance(v, bool), {"type": "boolean"})
#: not empty: an empty table would compare nothing, and a check of it could not fail
NEWSLETTER = Form("a table of one or more of {start_tick, digest, quoted_revenue}",
                  lambda v: isinstance(v, dict) and len(v) > 0, {"type": "object", "minProperties": 1})  # fmt: skip
VIOLATIONS = Form("a list of {invariant = name, tick = N}", lambda v: isinstance(v, list), {"type": "array"})


@dataclass(frozen=True, slots=True)
class Expected:
    """An `[expect]` field: its form and what it is, in words (docs/model.md §8, Outcome)."""

    form: Form
    doc: str

    @property
    def words(self) -> str:
        return self.form.words


#: outcome field -> what it allows, and what it is
EXPECT_SCHEMA: dict[str, Expected] = {
    "model_calls": Expected(COUNT, "all model calls of the run"),
    "model_calls_by_attempt": Expected(COUNTS, "model calls by attempt, starting with attempt #1"),
    "steps_restored": Expected(COUNT, "steps restored from the journal rather than recomputed"),
    "stale_writes_rejected": Expected(COUNT, "writes carrying a superseded owner token that a store refused"),
    "stale_writes_applied": Expected(COUNT, "writes carrying a superseded owner token that a store took"),
    "posts_applied": Expected(COUNT, "posts the feed applied (a resend it recognised is not counted)"),
    "first_accepted_tick": Expected(
        TICK, 'tick at which a digest with the final report\'s content was first accepted; "null" if never'
    ),
    "confirmed_tick": Expected(TICK, 'tick at which that digest\'s announcement was confirmed; "null" if never'),
    "newsletter": Expected(NEWSLETTER, "what the newsletter started with, and when"),
    "violations": Expected(VIOLATIONS, "each invariant that broke and the first tick it broke, ordered by name; [] if none"),
    "finished": Expected(FLAG, "whether the run finished (the progress property)"),
    "last_tick": Expected(COUNT, "the tick the run ended"),
}
NEWSLETTER_SCHEMA: dict[str, Expected] = {
    "start_tick": Expected(TICK, 'the tick the newsletter started, or "null"'),
    "digest": Expected(dataclasses.replace(TEXT, words='a digest id such as "d2", or "null"'),
                       'the digest it took, such as "d2", or "null"'),  # fmt: skip
    "quoted_revenue": Expected(dataclasses.replace(TEXT, words='a figure such as "4.7", or "null"'),
                               'the revenue figure it quoted, such as "4.7", or "null"'),  # fmt: skip
}
#: an entry of `violations`: exactly these keys
VIOLATION_KEYS = ("invariant", "tick")


def _check_expect(expect: dict[str, Any], source: str) -> None:
    from sim import properties

    _only(expect, globals().get("EXPECT_KEYS") or __getattr__("EXPECT_KEYS"), source, "expect.")
    _check_schema(expect, EXPECT_SCHEMA, source, "expect.")
    letter = expect.get("newsletter")
    if letter is not None:
        _only(letter, NEWSLETTER_KEYS, source, "expect.newsletter.")
        _check_schema(letter, NEWSLETTER_SCHEMA, source, "expect.newsletter.")
    for i, item in enumerate(expect.get("violations", [])):
        if (
            not isinstance(item, dict)
            or set(item) != set(VIOLATION_KEYS)
            or item["invariant"] not in properties.NAMES
            or not _is_count(item["tick"])
        ):
            raise ScenarioError(
                f"{source}: expect.violations[{i}]: found {quote(item)}; each entry must be "
                f"{{invariant = name, tick = N}} with name one of {', '.join(properties.NAMES)}"
            )


def _check_schema(table: dict[str, Any], schema: dict[str, Expected], source: str, prefix: str) -> None:
    for key, value in table.items():
        expected = schema[key]
        if not expected.form.check(value):
            raise ScenarioError(f"{source}: {prefix}{key}: found {quote(value)}; allowed: {expected.words}")


def _table(data: dict[str, Any], key: str, source: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ScenarioError(f"{source}: {key}: expected a table [{key}], found {quote(value)}")
    return value


def _only(data: dict[str, Any], allowed: tuple[str, ...], source: str, prefix: str) -> None:
    for key in data:
        if key not in allowed:
            raise ScenarioError(f"{source}: {prefix}{quote(key)[1:-1]}: unknown key; allowed: {', '.join(allowed)}")


# -- comparing an outcome with [expect] ---------------------------------------------------
def _null(value: Any) -> Any:
    """TOML has no null: the string "null" in [expect] stands for it."""
    if value == "null":
        return None
    if isinstance(value, dict):
        return {k: _null(v) for k, v in value.items()}
    return value


def expected_figures(expect: dict[str, Any]) -> int:
    """How many figures an [expect] table compares (each of the newsletter's fields is one)."""
    return sum(len(want) if key == "newsletter" else 1 for key, want in expect.items())


def differences(expect: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """One line per expected field that the outcome does not match."""
    out = []
    for key, want in _null(expect).items():
        got = actual.get(key)
        if key == "newsletter":
            for sub, sub_want in want.items():
                sub_got = got.get(sub) if isinstance(got, dict) else None
                if sub_got != sub_want:
                    out.append(f"newsletter.{sub}: expected {sub_want!r}, got {sub_got!r}")
        elif got != want:
            out.append(f"{key}: expected {want!r}, got {got!r}")
    return out


# -- writing scenario files (counterexamples) -------------------------------------------------
def dump(description: str, switches: Switches, schedule: Schedule, expect: dict[str, Any] | None = None,
         workflow: str | None = None) -> str:  # fmt: skip
    """A scenario file that replays `schedule` under `switches` exactly (every field written;
    the list of a kind beyond the article's model only when the schedule has one: its
    absence means none, as the loader reads it)."""
    lines = [f"description = {_toml_string(description)}"]
    lines += [f"workflow = {_toml_string(workflow)}"] if workflow is not None else []
    lines += ["", "[switches]"]
    # silent, change and post_death only shape the worked example's faults, which the
    # [schedule] below replaces kind by kind: they are not written, so the file says only
    # what runs
    written = {name: value for name, value in switches.as_dict().items() if name not in FAULT_SWITCHES}
    if workflow is not None:  # a knob the workflow sets itself, set back to the article's default
        from sim import workflow as files
        from sim.model.workflow import knobs_of

        own = knobs_of(files.load(workflow))
        written.update({name: switches.knob(name) for name, value in own.items() if switches.knob(name) != value})
    lines += [f'{name} = "{value}"' for name, value in written.items()]
    lines += ["", "[schedule]"]
    lines += [f"{key} = {getattr(schedule, key)}" for key in SCALARS]
    for kind in KINDS:
        faults = schedule.of(kind)
        if faults or kind.article:  # a kind beyond the article's model only when it has faults
            lines.append(f"{kind.key} = [" + ", ".join(f.dump() for f in faults) + "]")
    if expect:
        lines += ["", "[expect]"]
        for key, value in expect.items():
            lines.append(f"{key} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


#: what a TOML basic string cannot hold as itself: the quote, the backslash, the control
#: characters (U+0000-U+001F, U+007F) and lone surrogates (no UTF-8 has them)
_TOML_UNSAFE = re.compile('["\\\\\x00-\x1f\x7f\ud800-\udfff]')
_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_string(text: str) -> str:
    """`text` as a TOML basic string that reads back as `text` (a workflow's path with a newline
    or an escape character in it too); a lone surrogate, which no TOML file can hold, is
    written as U+FFFD (`sim.workflow.load` refuses a path that is not UTF-8 before)."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if char in _TOML_ESCAPES:
            return _TOML_ESCAPES[char]
        return "\\uFFFD" if ord(char) >= 0xD800 else f"\\u{ord(char):04X}"

    return '"' + _TOML_UNSAFE.sub(escape, text) + '"'


def _toml_value(value: Any) -> str:
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {value!r} as TOML")
