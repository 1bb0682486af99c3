"""Scenario files: switches, schedule overrides, a description and expected figures.

A scenario is TOML:

    description = "one paragraph"
    [switches]            # any of the nine switches; unnamed ones take the worked example's value
    [schedule]            # optional: overrides of the schedule the switches build
    [expect]              # optional: outcome fields `sim trace --check` compares
                          # (TOML has no null: write the string "null")

Named scenarios live in the `scenarios/` folder of the project (installed as the package
`sim.scenarios`); `load` takes a name from there or a path to any file.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from sim.errors import ScenarioError, ScheduleError, SimError
from sim.faults import KINDS, by_key
from sim.outcome import FIELDS as OUTCOME_FIELDS
from sim.schedule import Schedule, worked_example
from sim.switches import SWITCHES, Switches, parse_value

TOP_KEYS = ("description", "switches", "schedule", "expect")
SCALARS = ("sections", "first_token", "heartbeat_limit", "newsletter_ready", "horizon")
EXPECT_KEYS = tuple(name for name in OUTCOME_FIELDS if name != "horizon_reached")
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

    @property
    def schedule(self) -> Schedule:
        return build_schedule(self.switches, self.overrides, self.source)

    def with_switches(self, values: dict[str, str]) -> Scenario:
        """The same scenario with some switches set (`--set`); expectations no longer apply."""
        if not values:
            return self
        switches = self.switches.with_values(values)
        return dataclasses.replace(self, switches=switches, expect={})


def scenarios_dir() -> Path:
    return Path(str(resources.files("sim.scenarios")))


def names() -> list[str]:
    return sorted(p.stem for p in scenarios_dir().glob("*.toml"))


def load(name_or_path: str) -> Scenario:
    """A named scenario, or a scenario file by path."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists() or "/" in name_or_path:
        if not path.is_file():
            raise ScenarioError(f"{name_or_path}: no such scenario file")
        return parse(path.read_text(encoding="utf-8"), str(path), path.stem)
    candidate = scenarios_dir() / f"{name_or_path}.toml"
    if not candidate.is_file():
        raise ScenarioError(
            f"unknown scenario {name_or_path!r}; named scenarios: {', '.join(names())} "
            "(or give a path to a .toml file)"
        )
    return parse(candidate.read_text(encoding="utf-8"), f"scenarios/{candidate.name}", name_or_path)


def parse(text: str, source: str, name: str) -> Scenario:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{source}: not valid TOML: {exc}") from None
    _only(data, TOP_KEYS, source, "")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ScenarioError(f"{source}: description: expected a string")
    raw_switches = _table(data, "switches", source)
    values: dict[str, Any] = {}
    for key, value in raw_switches.items():
        if key not in SWITCHES:
            raise ScenarioError(
                f"{source}: switches.{key}: unknown switch; switches are: {', '.join(SWITCHES)}"
            )
        try:
            values[key] = parse_value(key, value, f"{source}: switches.{key}")
        except SimError as exc:
            raise ScenarioError(str(exc)) from None
    switches = Switches(**values)
    overrides = _table(data, "schedule", source)
    build_schedule(switches, overrides, source)  # validate now, with the file's name
    expect = _table(data, "expect", source)
    _check_expect(expect, source)
    return Scenario(name, description.strip(), switches, overrides, expect, source)


def build_schedule(switches: Switches, overrides: dict[str, Any], source: str) -> Schedule:
    """The worked example's schedule for these switches, with the file's overrides applied:
    a scalar replaces the constant, a fault kind's list replaces that kind's faults."""
    _only(overrides, SCALARS + tuple(kind.key for kind in KINDS), source, "schedule.")
    base = worked_example(switches)
    changes: dict[str, Any] = {}
    for key in SCALARS:
        if key in overrides:
            value = overrides[key]
            if not isinstance(value, int) or isinstance(value, bool):
                raise ScenarioError(f"{source}: schedule.{key}: expected an integer, got {value!r}")
            changes[key] = value
    faults = list(base.faults)
    for key, items in overrides.items():
        kind = by_key(key)
        if kind is None:
            continue
        if not isinstance(items, list):
            raise ScenarioError(f"{source}: schedule.{key}: expected a list of tables")
        faults = [f for f in faults if type(f) is not kind]
        for i, item in enumerate(items):
            where = f"schedule.{key}[{i}]"
            if not isinstance(item, dict):
                raise ScenarioError(f"{source}: {where}: expected a table like {{{', '.join(kind.fields)}}}")
            _only(item, kind.fields, source, where + ".")
            faults.append(kind.parse(item, f"{source}: {where}"))
    try:
        return dataclasses.replace(base, faults=tuple(faults), **changes)
    except ScheduleError as exc:
        raise ScheduleError(f"{source}: schedule.{exc}") from None
    except TypeError as exc:
        raise ScenarioError(f"{source}: schedule: {exc}") from None


def _check_expect(expect: dict[str, Any], source: str) -> None:
    _only(expect, EXPECT_KEYS, source, "expect.")
    letter = expect.get("newsletter")
    if letter is not None:
        if not isinstance(letter, dict):
            raise ScenarioError(f"{source}: expect.newsletter: expected a table")
        _only(letter, NEWSLETTER_KEYS, source, "expect.newsletter.")
    for item in expect.get("violations", []):
        if not isinstance(item, dict) or set(item) != {"invariant", "tick"}:
            raise ScenarioError(
                f"{source}: expect.violations: each entry must be {{invariant = name, tick = N}}"
            )


def _table(data: dict[str, Any], key: str, source: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ScenarioError(f"{source}: {key}: expected a table [{key}]")
    return value


def _only(data: dict[str, Any], allowed: tuple[str, ...], source: str, prefix: str) -> None:
    for key in data:
        if key not in allowed:
            raise ScenarioError(f"{source}: {prefix}{key}: unknown key; allowed: {', '.join(allowed)}")


# -- comparing an outcome with [expect] ---------------------------------------------------
def _null(value: Any) -> Any:
    """TOML has no null: the string "null" in [expect] stands for it."""
    if value == "null":
        return None
    if isinstance(value, dict):
        return {k: _null(v) for k, v in value.items()}
    return value


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
def dump(description: str, switches: Switches, schedule: Schedule, expect: dict[str, Any] | None = None) -> str:
    """A scenario file that replays `schedule` under `switches` exactly (every field written)."""
    lines = [f"description = {_toml_string(description)}", "", "[switches]"]
    lines += [f'{name} = "{value}"' for name, value in switches.as_dict().items()]
    lines += ["", "[schedule]"]
    lines += [f"{key} = {getattr(schedule, key)}" for key in SCALARS]
    for kind in KINDS:
        lines.append(f"{kind.key} = [" + ", ".join(f.dump() for f in schedule.of(kind)) + "]")
    if expect:
        lines += ["", "[expect]"]
        for key, value in expect.items():
            lines.append(f"{key} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


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
