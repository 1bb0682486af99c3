"""JSON Schemas of sim's input files, built from the declarations their loaders read (`sim schema`).

An editor with a TOML language server (Taplo, Even Better TOML) validates and completes a
file against a JSON Schema as the user types (docs/limits.md, "Editor setup"). `SCHEMAS` maps
each schema's name to the function that builds it (draft 2020-12); `sim schema NAME` prints
one, `sim schema --out DIR` writes each as `DIR/NAME.schema.json`, and the committed
docs/schema/ holds them (tests/test_schema.py fails when a committed one is stale).

The scenario schema is built from what sim/scenario.py itself reads: its top-level keys
(`TOP_KEYS`), the switches (`SWITCHES`, each Enum's docstring and values), the knobs (`KNOBS`:
words, values, default, whole numbers), the `[schedule]` constants (`SCALARS`,
`SCALAR_RANGES`, the `Schedule` fields' defaults and docs), each fault kind's list (`KINDS`:
key, docstring, `entries`, `most`) and the `[expect]` fields (`EXPECT_KEYS`,
`EXPECT_SCHEMA`). Nothing of it is typed out here but the words that join them.

What the loader checks and a JSON Schema cannot express is said in the schema's own top-level
description (`LOADER_ONLY`), so a file the schema accepts may still be refused by
`sim trace FILE`, never the other way round (tests/test_schema.py checks both directions on
files drawn at random).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from enum import Enum
from typing import Any

from sim import properties
from sim import scenario as scenario_mod
from sim.base.limits import MAX_DEPTH, MAX_FILE_BYTES, MAX_LIST, MAX_TEXT
from sim.model.faults import KINDS, Entry, Fault
from sim.model.knobs import KNOBS, Knob
from sim.model.schedule import Schedule
from sim.model.switches import SWITCHES

DRAFT = "https://json-schema.org/draft/2020-12/schema"

#: what the scenario loader refuses that the schema cannot say (its top-level description)
LOADER_ONLY = (
    "a bound that depends on another value: a silence's wake after its own tick and by the "
    "horizon, an attempt acting from tick #n on, a section or step within `sections`, a pause, "
    "delay or restart ending by the horizon",
    "two faults at one moment: two silences of one attempt that overlap, two report changes (or "
    "losses, mutations, code changes) at one tick, two deaths or pauses of one post, two faults "
    "of different kinds at the same moment",
    "a knob's whole number written as a string (\"2\") is checked against its range by the loader only",
    "a float with no fraction (3.0) is an integer to JSON Schema, not to the loader",
    f"the file's size (at most {MAX_FILE_BYTES:,} bytes) and nesting (at most {MAX_DEPTH} levels)",
)


def _words(text: str | None) -> str:
    """A docstring as one line."""
    return " ".join((text or "").split())


def _first_sentence(text: str | None) -> str:
    words = _words(text)
    head, dot, _ = words.partition(". ")
    return head + "." if dot else words


def _sentence(text: str) -> str:
    """Words as a sentence: a capital first letter, a full stop ("" stays "")."""
    text = text.strip()
    if not text:
        return ""
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _default(value: Any) -> Any:
    """A declared default as JSON (an Enum by its spelling, a tuple as a list)."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return list(value)
    return value


# -- [switches] ---------------------------------------------------------------------------------
def _switch(enum: type[Enum]) -> dict[str, Any]:
    values = [m.value for m in enum]
    return {
        "description": f"{_words(enum.__doc__)} Values: {', '.join(values)} (the first is the worked example's).",
        "enum": values,
        "default": values[0],
    }


def _knob(knob: Knob) -> dict[str, Any]:
    meanings = dict(zip(knob.values, knob.meanings, strict=False))
    values = [f"{v} ({meanings[v]})" if v in meanings else v for v in knob.values]
    if knob.integers is not None:
        values.append(f"a whole number {knob.integers[0]}..{knob.integers[1]:,}")
    described = f"{knob.words} (a knob beyond the article's model; the first value is the article's). Values: "
    described += "; ".join(values)
    named: dict[str, Any] = {"enum": list(knob.values)}
    out: dict[str, Any] = {"description": _sentence(described)}
    if knob.integers is None:
        out.update(named)
    else:
        lo, hi = knob.integers
        out["anyOf"] = [named, {"type": "integer", "minimum": lo, "maximum": hi},
                        {"type": "string", "pattern": "^[0-9]{1,12}$"}]  # fmt: skip
    out["default"] = knob.default
    return out


def _switches() -> dict[str, Any]:
    table = {name: _switch(enum) for name, enum in SWITCHES.items()}
    table.update({name: _knob(knob) for name, knob in KNOBS.items()})
    return {
        "description": "The switches and knobs this scenario sets; each one left out takes the worked "
        "example's value (the first of its values).",
        "type": "object",
        "properties": table,
        "additionalProperties": False,
    }


# -- [schedule] ---------------------------------------------------------------------------------
def _scalar(name: str) -> dict[str, Any]:
    declared = {f.name: f for f in dataclasses.fields(Schedule)}[name]
    lo, hi = scenario_mod.SCALAR_RANGES[name]
    return {"description": _sentence(f"{declared.metadata['doc']}: {lo}..{hi:,}"),
            "type": "integer", "minimum": lo, "maximum": hi, "default": declared.default}  # fmt: skip


def _number(lo: int, hi: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": lo, "maximum": hi}


def _field(entry: Entry, default: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"description": _sentence(entry.doc)} if entry.doc else {}
    if entry.choices:
        out["enum"] = list(entry.choices)
    elif entry.many:
        out.update(type="array", items=_number(entry.lo, entry.hi), minItems=1, maxItems=MAX_LIST, uniqueItems=True)
    else:
        out.update(_number(entry.lo, entry.hi))
    if not entry.required and default is not dataclasses.MISSING and default is not None:
        out["default"] = _default(default)
    return out


def _kind(kind: type[Fault]) -> dict[str, Any]:
    defaults = {f.name: f.default for f in dataclasses.fields(kind)}  # type: ignore[arg-type]
    entries = {name: kind.entries.get(name, Entry("")) for name in kind.fields}
    where = "one of the article's faults" if kind.article else f"beyond the article's model (docs/outside.md, case {kind.case})"
    return {
        "description": f"{_first_sentence(kind.__doc__)} A list of {kind.plural}, {where}; it replaces the "
        "ones the switches would schedule (an empty list: none).",
        "type": "array",
        "maxItems": min(kind.most, MAX_LIST),
        "items": {
            "type": "object",
            "properties": {name: _field(entry, defaults.get(name)) for name, entry in entries.items()},
            "required": [name for name, entry in entries.items() if entry.required],
            "additionalProperties": False,
        },
    }


def _schedule() -> dict[str, Any]:
    table = {name: _scalar(name) for name in scenario_mod.SCALARS}
    table.update({kind.key: _kind(kind) for kind in KINDS})
    return {
        "description": "Overrides of the schedule the switches build: a constant replaces the worked "
        "example's, a fault kind's list replaces that kind's faults.",
        "type": "object",
        "properties": table,
        "additionalProperties": False,
    }


# -- [expect] -----------------------------------------------------------------------------------
def _expected(field: scenario_mod.Expected) -> dict[str, Any]:
    return {"description": _sentence(field.doc), **field.form.schema}


def _expect_field(name: str) -> dict[str, Any]:
    out = _expected(scenario_mod.EXPECT_SCHEMA[name])
    if name == "newsletter":
        table = scenario_mod.NEWSLETTER_SCHEMA
        out.update(properties={key: _expected(table[key]) for key in scenario_mod.NEWSLETTER_KEYS},
                   additionalProperties=False)  # fmt: skip
    elif name == "violations":
        item = {"invariant": {"description": "the invariant's name", "enum": list(properties.NAMES)},
                "tick": {"description": "the first tick it broke", **scenario_mod.COUNT.schema}}  # fmt: skip
        out.update(maxItems=MAX_LIST, items={"type": "object", "properties": item,
                                             "required": list(scenario_mod.VIOLATION_KEYS),
                                             "additionalProperties": False})  # fmt: skip
    return out


def _expect() -> dict[str, Any]:
    return {
        "description": "What `sim trace FILE --check` compares with the run's outcome (TOML has no null: "
        'write the string "null").',
        "type": "object",
        "properties": {name: _expect_field(name) for name in scenario_mod.EXPECT_KEYS},
        "additionalProperties": False,
    }


def scenario() -> dict[str, Any]:
    """The JSON Schema of a scenario file (sim/scenario.py)."""
    parts: dict[str, Callable[[], dict[str, Any]]] = {
        "description": lambda: {"description": "What this scenario shows, in one paragraph.", "type": "string",
                                "maxLength": MAX_TEXT},  # fmt: skip
        "workflow": lambda: {"description": "The workflow the scenario runs: a shipped workflow's name (sim workflows) "
                             "or a path relative to this file; absent: the article's (digest).", "type": "string"},
        "switches": _switches,
        "schedule": _schedule,
        "expect": _expect,
    }
    return {
        "$schema": DRAFT,
        "title": "sim scenario file",
        "description": "A scenario for `sim trace FILE` (docs/trace.md), generated by `sim schema` from the "
        "declarations sim's loader reads. The loader also refuses what this schema cannot express: "
        + "; ".join(LOADER_ONLY) + ".",
        "type": "object",
        "properties": {key: parts[key]() for key in scenario_mod.TOP_KEYS},
        "additionalProperties": False,
    }


def _workflow_key(key: Any) -> dict[str, Any]:
    """One declared key of a workflow table (`sim.model.workflow.Key`) as JSON Schema."""
    from sim.model.workflow import NAME

    name = {"type": "string", "pattern": "^" + NAME.pattern.removesuffix("\\Z") + "$"}
    reference = {"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,39}(\\.[a-z][a-z0-9_-]{0,39})?$"}
    lo, hi = key.bounds or (0, 0)
    kinds: dict[str, dict[str, Any]] = {
        "text": {"type": "string", "maxLength": MAX_TEXT},
        "name": name,
        "names": {"type": "array", "items": name, "minItems": lo, "maxItems": hi, "uniqueItems": True},
        "reads": {"type": "array", "items": reference, "minItems": lo, "maxItems": hi, "uniqueItems": True},
        "integer": {"type": "integer", "minimum": lo, "maximum": hi},
        "boolean": {"type": "boolean"},
        "choice": {"enum": list(key.choices)},
    }
    out = {"description": key.words, **kinds[key.kind]}
    if key.default is not None:
        out["default"] = key.default
    return out


def _workflow_table(table: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "object",
        "properties": {k.name: _workflow_key(k) for k in table.keys},
        "required": [k.name for k in table.keys if k.required],
        "additionalProperties": False,
    }
    if not table.array:
        return {"description": table.words, **body}
    lo, hi = table.count
    return {"description": table.words, "type": "array", "items": body, "minItems": lo, "maxItems": hi}


def workflow() -> dict[str, Any]:
    """The JSON Schema of a workflow file (sim/workflow.py), from `sim.model.workflow.TABLES`."""
    from sim.model.workflow import TABLES

    top, *tables = TABLES
    doc = _workflow_table(top)
    doc["properties"].update({t.name: _workflow_table(t) for t in tables})
    doc["required"] += [t.name for t in tables if not t.array or t.count[0] > 0]
    return {
        "$schema": DRAFT,
        "title": "sim workflow file",
        "description": "A workflow for `sim workflows FILE` and `--workflow FILE` (docs/workflows.md), generated by "
        "`sim schema` from the declaration sim's loader reads. The loader also refuses what this schema cannot "
        "express: a read of an undeclared part or step, a cycle in the steps, a step nothing reads, a name used "
        "twice, an effect after a step, a retention on a receiver that is not dedup.",
        **{k: v for k, v in doc.items() if k != "description"},
    }


#: schema name -> the function that builds it (another input format registers its own here)
SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {
    "scenario": scenario,
    "workflow": workflow,
}


def text(name: str) -> str:
    """The schema `name` as the JSON text `sim schema NAME` prints and `--out` writes."""
    return json.dumps(SCHEMAS[name](), indent=2, ensure_ascii=False) + "\n"


def every() -> str:
    """Every schema, in one JSON document keyed by name (what a bare `sim schema` prints)."""
    return json.dumps({name: build() for name, build in SCHEMAS.items()}, indent=2, ensure_ascii=False) + "\n"
