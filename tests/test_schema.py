"""The JSON Schema of scenario files (`sim schema`, sim/schema.py) against the loader it is built
from (sim/scenario.py): every shipped scenario validates; a file the loader refuses for a
structural reason (an unknown key, a wrong type, a value outside a switch's set, a number
outside a declared bound, a required field left out) the schema refuses too; a file the loader
accepts the schema accepts (it is never stricter than the loader); the committed
docs/schema/ is what `sim schema --out` writes now."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test extra: pip install -e '.[test]'")

from sim import scenario as scenario_mod  # noqa: E402
from sim.analysis.explore import ExploreBounds  # noqa: E402
from sim.base.errors import SimError  # noqa: E402
from sim.base.limits import MAX_INT, MAX_LIST  # noqa: E402
from sim.cli import main  # noqa: E402
from sim.model.faults import KINDS, Fault  # noqa: E402
from sim.model.knobs import KNOBS  # noqa: E402
from sim.model.switches import SWITCHES  # noqa: E402
from sim.schema import SCHEMAS, scenario as scenario_schema  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "docs" / "schema"
SCHEMA = scenario_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
SHIPPED = {path.stem: tomllib.loads(path.read_text(encoding="utf-8")) for path in sorted((ROOT / "scenarios").glob("*.toml"))}


def loader_accepts(data: dict[str, Any]) -> bool:
    try:
        scenario_mod.from_data(copy.deepcopy(data), "drawn.toml", "drawn")
    except SimError:
        return False
    return True


def schema_accepts(data: dict[str, Any]) -> bool:
    return VALIDATOR.is_valid(data)


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_schema_means_the_same_under_draft_07() -> None:
    """Only keywords that draft-07 and 2020-12 share, with one meaning (an editor whose validator
    predates 2020-12, as Taplo's once did, reads it the same): every file of the mutation test
    gets the same verdict from a draft-07 validator."""
    draft7 = jsonschema.Draft7Validator({k: v for k, v in SCHEMA.items() if k != "$schema"})
    jsonschema.Draft7Validator.check_schema(draft7.schema)
    r = random.Random(7)
    files = list(SHIPPED.values()) + [r.choice(MUTATIONS)(r, copy.deepcopy(r.choice(list(SHIPPED.values()))))[1]
                                      for _ in range(200)]  # fmt: skip
    assert [draft7.is_valid(f) for f in files] == [VALIDATOR.is_valid(f) for f in files]


@pytest.mark.parametrize("name", list(SHIPPED))
def test_every_shipped_scenario_validates(name: str) -> None:
    errors = [e.message for e in VALIDATOR.iter_errors(SHIPPED[name])]
    assert errors == [], f"scenarios/{name}.toml: {errors[:3]}"


def test_the_schema_is_built_from_the_declarations() -> None:
    """Every switch, knob, schedule key, fault field and [expect] key the loader reads, in its
    order, each with a description; a knob or fault kind registered later is in it at once."""
    props = SCHEMA["properties"]
    assert list(props) == list(scenario_mod.TOP_KEYS)
    assert list(props["switches"]["properties"]) == [*SWITCHES, *KNOBS]
    assert list(props["schedule"]["properties"]) == [*scenario_mod.SCALARS, *(k.key for k in KINDS)]
    assert list(props["expect"]["properties"]) == list(scenario_mod.EXPECT_KEYS)
    for kind in KINDS:
        item = props["schedule"]["properties"][kind.key]["items"]
        assert list(item["properties"]) == list(kind.fields) == list(kind.entries)
        assert item["required"] == [name for name, e in kind.entries.items() if e.required]
    for name, enum in SWITCHES.items():
        assert props["switches"]["properties"][name]["enum"] == [m.value for m in enum]
    for table in (props, props["switches"]["properties"], props["schedule"]["properties"], props["expect"]["properties"]):
        for key, sub in table.items():
            assert sub.get("description"), key
    for table in (SCHEMA, props["switches"], props["schedule"], props["expect"]):
        assert table["additionalProperties"] is False


def test_a_wrong_value_fails_the_schema() -> None:
    """The verdict can fail: a switch value outside its set, an unknown key, a negative tick."""
    for wrong in ({"switches": {"fencing": "maybe"}}, {"switches": {"fencng": "on"}}, {"extra": 1},
                  {"schedule": {"changes": [{"at": -1}]}}, {"expect": {"finished": "yes"}}):  # fmt: skip
        assert not schema_accepts(wrong), wrong
        assert not loader_accepts(wrong), wrong
    assert schema_accepts({"switches": {"fencing": "off"}}) and loader_accepts({"switches": {"fencing": "off"}})


# -- each fault field's declared bounds, at both ends, against the loader --------------------------
def _sample(kind: type[Fault]) -> dict[str, Any]:
    """One fault of the kind, as its scenario-file entry (the kind's own `dump`)."""
    fault = next(iter(kind.singles(ExploreBounds(faults="all"), 4)))
    entry: dict[str, Any] = tomllib.loads(f"x = {fault.dump()}")["x"]
    return entry


def _with(kind: type[Fault], entry: dict[str, Any]) -> dict[str, Any]:
    """A file with this one entry, and none of the worked example's faults at the same moment."""
    return {"switches": {"change": "never", "post_death": "no"}, "schedule": {"silences": [], kind.key: [entry]}}


@pytest.mark.parametrize("kind", KINDS, ids=[k.key for k in KINDS])
def test_each_fault_fields_bounds_and_requirement_agree_with_the_loader(kind: type[Fault]) -> None:
    sample = _sample(kind)
    assert loader_accepts(_with(kind, sample)) and schema_accepts(_with(kind, sample)), sample
    for name, entry in kind.entries.items():
        if entry.choices:
            outside = [name + "?"]
        else:
            outside = [entry.lo - 1, entry.hi + 1] if not entry.many else [[entry.lo - 1], [entry.hi + 1], []]
        for value in outside:
            data = _with(kind, {**sample, name: value})
            assert not loader_accepts(data), (name, value)
            assert not schema_accepts(data), (name, value)
        without = _with(kind, {k: v for k, v in sample.items() if k != name})
        assert loader_accepts(without) is not entry.required, name
        assert schema_accepts(without) is not entry.required, name
    assert not schema_accepts({"schedule": {kind.key: [sample] * (min(kind.most, MAX_LIST) + 1)}})


# -- structural mutations drawn at random: the loader refuses each, and so does the schema -----------
Mutation = Callable[[random.Random, dict[str, Any]], tuple[str, dict[str, Any]]]


def _tables(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every table of the file that refuses unknown keys, with its path."""
    out: list[tuple[str, dict[str, Any]]] = [("", data)]
    for key in ("switches", "schedule", "expect"):
        out.append((key, data.setdefault(key, {})))
    for kind in KINDS:
        out += [(f"schedule.{kind.key}[{i}]", e) for i, e in enumerate(data["schedule"].get(kind.key, []))]
    if isinstance(data["expect"].get("newsletter"), dict):
        out.append(("expect.newsletter", data["expect"]["newsletter"]))
    return out


def _unknown_key(r: random.Random, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    path, table = r.choice(_tables(data))
    key = r.choice(["x", "colour", "Fencing", "silence", "at_", "wakes"])
    if key in table or (path == "switches" and key in KNOBS):
        key += "_unknown"
    table[key] = r.choice([1, "on", [1], {"a": 1}, True])
    return f"unknown key {path}.{key}", data


#: values of the wrong type for a field of the given JSON type
WRONG_TYPE: dict[str, list[Any]] = {
    "integer": ["3", 2.5, True, [1], {"a": 1}],
    "string": [3, 2.5, True, ["a"], {"a": 1}],
    "boolean": [1, "true", [True]],
    "array": [1, "a", {"a": 1}],
    "object": [1, "a", [1]],
}


def _leaves(data: dict[str, Any]) -> list[tuple[str, dict[str, Any], str, dict[str, Any]]]:
    """Every (path, table, key, its schema) of a value the file holds, where the schema says
    one type (or one set of spellings)."""
    props = SCHEMA["properties"]
    out: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = []
    if "description" in data:
        out.append(("description", data, "description", props["description"]))
    for table in ("switches", "schedule", "expect"):
        for key in data.get(table, {}):
            out.append((f"{table}.{key}", data[table], key, props[table]["properties"][key]))
    for kind in KINDS:
        item = props["schedule"]["properties"][kind.key]["items"]["properties"]
        for i, entry in enumerate(data.get("schedule", {}).get(kind.key, [])):
            out += [(f"schedule.{kind.key}[{i}].{k}", entry, k, item[k]) for k in entry]
    return out


def _wrong_type(r: random.Random, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    path, table, key, schema = r.choice(_leaves(data))
    if "enum" in schema or "anyOf" in schema:
        table[key] = r.choice([2.5, [1], {"a": 1}, True])
    else:
        table[key] = r.choice(WRONG_TYPE[schema["type"]])
    return f"wrong type at {path}: {table[key]!r}", data


def _outside_set(r: random.Random, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    name = r.choice([*SWITCHES, *(n for n, k in KNOBS.items() if k.integers is None)])
    value = r.choice(["maybe", "ON", "", "per_step", "0"])
    data.setdefault("switches", {})[name] = value
    return f"switches.{name} = {value!r}", data


def _outside_bound(r: random.Random, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A number below or above its declared bound: a schedule constant, a fault field (a
    negative tick...), an [expect] count, a whole-number knob."""
    leaves = [leaf for leaf in _leaves(data) if leaf[3].get("type") == "integer" and leaf[0] != "description"]
    leaves += [leaf for leaf in _leaves(data) if leaf[3].get("type") == "array" and "minimum" in leaf[3]["items"]]
    if not leaves or r.random() < 0.2:
        name = r.choice([n for n, k in KNOBS.items() if k.integers is not None])
        lo, hi = KNOBS[name].integers or (0, 0)
        data.setdefault("switches", {})[name] = r.choice([lo - 1, hi + 1, -5])
        return f"switches.{name} = {data['switches'][name]}", data
    path, table, key, schema = r.choice(leaves)
    bounded = schema if schema.get("type") == "integer" else schema["items"]
    value = r.choice([bounded["minimum"] - 1, bounded["maximum"] + 1, bounded["minimum"] - r.randint(2, 10**7)])
    table[key] = value if schema.get("type") == "integer" else [value]
    return f"{path} = {table[key]!r}", data


def _required_left_out(r: random.Random, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    spots = [(kind, entry, name) for kind in KINDS for entry in data.get("schedule", {}).get(kind.key, [])
             for name, e in kind.entries.items() if e.required and name in entry]  # fmt: skip
    if not spots:
        kind = r.choice([k for k in KINDS if any(e.required for e in k.entries.values())])
        data.setdefault("schedule", {})[kind.key] = [{k: v for k, v in _sample(kind).items() if not kind.entries[k].required}]
        return f"schedule.{kind.key}[0] without its required fields", data
    kind, entry, name = r.choice(spots)
    del entry[name]
    return f"schedule.{kind.key}: an entry without {name}", data


def _too_many(r: random.Random, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    kind = r.choice(KINDS)
    data.setdefault("schedule", {})[kind.key] = [_sample(kind)] * (min(kind.most, MAX_LIST) + 1)
    return f"schedule.{kind.key}: {min(kind.most, MAX_LIST) + 1} entries", data


def _bad_violation(r: random.Random, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    item = r.choice([{"invariant": "no-such-invariant", "tick": 3}, {"invariant": "stale-write"},
                     {"invariant": "stale-write", "tick": -1}, {"invariant": "stale-write", "tick": 3, "x": 1}, 5])  # fmt: skip
    data.setdefault("expect", {})["violations"] = [item]
    return f"expect.violations = [{item!r}]", data


MUTATIONS: tuple[Mutation, ...] = (_unknown_key, _wrong_type, _outside_set, _outside_bound, _required_left_out,
                                   _too_many, _bad_violation)  # fmt: skip


@pytest.mark.parametrize("seed", range(8))
def test_a_structural_mutation_is_refused_by_the_loader_and_by_the_schema(seed: int) -> None:
    r = random.Random(seed)
    for _ in range(60):
        name = r.choice(list(SHIPPED))
        what, data = r.choice(MUTATIONS)(r, copy.deepcopy(SHIPPED[name]))
        assert not loader_accepts(data), f"{name}: {what}: the loader accepts it"
        assert not schema_accepts(data), f"{name}: {what}: the schema accepts it"


# -- values drawn at and across the schema's bounds: whatever the loader accepts, the schema accepts -
def _draw(r: random.Random, schema: dict[str, Any]) -> Any:
    """A value at or just across one of the schema's bounds, now and then of the wrong type (the
    tests' own small generator: enums and a stray spelling, integers at their ends and one past,
    lists up to one entry too many)."""
    if r.random() < 0.05:
        return r.choice([2.5, "x", True, [1], {"a": 1}])
    if "enum" in schema:
        return r.choice([*schema["enum"], "other"])
    if "anyOf" in schema:
        return _draw(r, r.choice(schema["anyOf"]))
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "integer":
        lo, hi = schema["minimum"], schema["maximum"]
        return r.choice([lo - 1, lo, lo + 1, hi, hi + 1, r.randint(lo, min(hi, lo + 30))])
    if kind == "string":
        return str(r.choice([0, 1, 2, 999, 1001])) if "pattern" in schema else "d2"
    if kind == "boolean":
        return r.random() < 0.5
    if kind == "array":
        most = min(schema.get("maxItems", 3), 3)
        items = [_draw(r, schema["items"]) for _ in range(r.randint(schema.get("minItems", 0), most + 1))]
        if schema.get("uniqueItems") and r.random() < 0.8:
            items = [json.loads(text) for text in dict.fromkeys(json.dumps(item) for item in items)]
        return items
    if kind == "object":
        props = schema["properties"]
        keys = [k for k in props if (k in schema.get("required", ()) and r.random() < 0.95) or r.random() < 0.5]
        return {k: _draw(r, props[k]) for k in keys}
    raise AssertionError(schema)


def _nearby(r: random.Random, data: dict[str, Any]) -> str:
    table = r.choice(["switches", "schedule", "expect"])
    key = r.choice(list(SCHEMA["properties"][table]["properties"]))
    data.setdefault(table, {})[key] = _draw(r, SCHEMA["properties"][table]["properties"][key])
    return f"{table}.{key} = {data[table][key]!r}"


@pytest.mark.parametrize("seed", range(6))
def test_the_schema_is_never_stricter_than_the_loader(seed: int) -> None:
    """One to three values drawn at and across the schema's bounds into a shipped file: every
    file the loader accepts, the schema accepts. The schema accepts some the loader refuses
    (a bound that depends on another value, two faults at one moment: its description says
    so), and refuses some the loader refuses too; the draw has all three."""
    r = random.Random(seed)
    verdicts: list[tuple[bool, bool]] = []
    for _ in range(120):
        name = r.choice(list(SHIPPED))
        data = copy.deepcopy(SHIPPED[name])
        whats = [_nearby(r, data) for _ in range(r.randint(1, 3))]
        verdict = (loader_accepts(data), schema_accepts(data))
        assert verdict != (True, False), f"{name}: {whats}: {[e.message for e in VALIDATOR.iter_errors(data)][:2]}"
        verdicts.append(verdict)
    assert {(True, True), (False, True), (False, False)} <= set(verdicts)


# -- the command and the committed copy -------------------------------------------------------------
def test_the_committed_schema_is_up_to_date(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`sim schema --out TMP` against docs/schema/ (regenerate: `sim schema --out docs/schema`)."""
    assert main(["schema", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "".join(f"wrote {tmp_path / f'{name}.schema.json'}\n" for name in SCHEMAS)
    for name in SCHEMAS:
        committed = COMMITTED / f"{name}.schema.json"
        assert committed.is_file(), f"docs/schema/{name}.schema.json is missing: run `sim schema --out docs/schema`"
        assert committed.read_text(encoding="utf-8") == (tmp_path / committed.name).read_text(encoding="utf-8"), (
            f"docs/schema/{name}.schema.json is stale: run `sim schema --out docs/schema`"
        )


def test_sim_schema_prints_one_schema_or_every_schema_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "scenario"]) == 0
    assert json.loads(capsys.readouterr().out) == SCHEMA
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == {name: build() for name, build in SCHEMAS.items()}


def test_a_bad_name_or_out_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "scenarios"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "unknown schema 'scenarios'; schemas: scenario" in err
    assert main(["schema", "--out", "--json"]) == 2  # --out forgot its folder
    out, err = capsys.readouterr()
    assert out == "" and "looks like an option" in err
    (tmp_path / "scenario.schema.json").mkdir()
    assert main(["schema", "--out", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "scenario.schema.json" in err


def test_start_up_does_not_build_the_schema() -> None:
    """`sim --version` and `sim scenarios` never import sim/schema.py (`-X importtime`)."""
    for args in (["--version"], ["scenarios"]):
        done = subprocess.run([sys.executable, "-X", "importtime", "-m", "sim", *args],
                              capture_output=True, text=True, check=True)  # fmt: skip
        imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line}
        assert "sim.scenario" in imported or args == ["--version"]
        assert "sim.schema" not in imported and "sim.commands.schema" not in imported, args
