"""Workflow files: the shipped ones (workflows/*.toml, installed as the package
`sim.workflows`) and any path (docs/workflows.md).

`load` reads a file like a scenario file (a regular file of at most 1 MiB, UTF-8 TOML, the
bounds of docs/limits.md), checks every key against the declaration of
`sim.model.workflow.TABLES`, builds the `Workflow` and applies the rules across keys
(`sim.model.workflow.check`). Every problem is one line naming the file and the key, with what
is allowed: exit 2.
"""

from __future__ import annotations

import dataclasses
import importlib
import tomllib
from pathlib import Path
from typing import Any

from sim.base.errors import ScenarioError
from sim.base.limits import MAX_DEPTH, MAX_NAME, MAX_TEXT, quote, unreadable_number
from sim.model.workflow import (
    NAME,
    TABLE,
    Artifact,
    Dependant,
    Effect,
    Input,
    Key,
    Step,
    Table,
    Workflow,
    WorkflowError,
    check,
)
from sim.base.inputs import exists, is_path, longest_dotted_key, read_text

#: the workflow a command runs when none is named: the article's pipeline
DEFAULT = "digest"


def workflows_dir() -> Path:
    """The folder of the package `sim.workflows` (the project's workflows/)."""
    package = importlib.import_module("sim.workflows")
    assert package.__file__ is not None
    return Path(package.__file__).parent


def names() -> list[str]:
    return sorted(p.stem for p in workflows_dir().glob("*.toml"))


def load(name_or_path: str, folder: Path | None = None) -> Workflow:
    """A shipped workflow by name, or a workflow file by path (relative to `folder` when given:
    the folder of the scenario file that names it). As for a scenario (`sim.base.inputs.is_path`):
    an argument with a `/` or ending in `.toml` is a path; any other is a shipped name when
    there is one, else a path when a file is there."""
    if len(name_or_path) > MAX_NAME or "\x00" in name_or_path:
        raise WorkflowError(f"workflow {quote(name_or_path)}: not a workflow name or path (at most {MAX_NAME} "
                            "characters, no NUL)")  # fmt: skip
    path = Path(name_or_path) if folder is None else folder / name_or_path
    shown = name_or_path if folder is None else str(path)
    if not _utf8(shown):  # its name would be written in pages and counterexample files
        raise WorkflowError(f"workflow {quote(shown)}: the path is not valid UTF-8; allowed: a file whose name is "
                            "UTF-8 text (rename or link it)")  # fmt: skip
    if not is_path(name_or_path) and name_or_path in names():
        shipped = f"workflows/{name_or_path}.toml"
        return dataclasses.replace(parse(_read(workflows_dir() / f"{name_or_path}.toml", shipped), shipped), shipped=True)
    if is_path(name_or_path) or exists(path):
        return parse(_read(path, shown), shown)
    raise WorkflowError(f"unknown workflow {quote(name_or_path)}; shipped workflows: {', '.join(names())} "
                        "(or give a path to a .toml file)")  # fmt: skip


def _utf8(text: str) -> bool:
    """Whether `text` is valid UTF-8 (a path's undecodable bytes are lone surrogates in Python)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: `sim.load_workflow`: the library's name for `load`
load_workflow = load


def _read(path: Path, shown: str) -> str:
    try:
        return read_text(path, shown, "workflow file")
    except ScenarioError as exc:
        raise WorkflowError(str(exc)) from None


def parse(text: str, source: str) -> Workflow:
    """A workflow from its TOML text."""
    if longest_dotted_key(text) >= MAX_DEPTH:  # before the parser, whose cost grows with its square
        raise WorkflowError(f"{source}: tables or arrays nested too deeply")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise WorkflowError(f"{source}: not valid TOML: {exc}") from None
    except RecursionError:
        raise WorkflowError(f"{source}: tables or arrays nested too deeply") from None
    except ValueError as exc:  # an integer of more digits than Python reads
        raise WorkflowError(f"{source}: {unreadable_number(text, exc)}") from None
    top = _table(data, TABLE[""], source, "", tables=[t for t in TABLE if t])
    inputs = [_table(x, TABLE["inputs"], source, f"inputs[{n}].") for n, x in enumerate(_array(data, "inputs", source))]
    steps = [_table(x, TABLE["steps"], source, f"steps[{n}].") for n, x in enumerate(_array(data, "steps", source))]
    if not isinstance(data.get("artifact"), dict):
        raise WorkflowError(f"{source}: artifact: expected a table [artifact], found {quote(data.get('artifact'))}")
    artifact = _table(data["artifact"], TABLE["artifact"], source, "artifact.")
    effects = [_table(x, TABLE["effects"], source, f"effects[{n}].") for n, x in enumerate(_array(data, "effects", source))]
    dependants = [_table(x, TABLE["dependants"], source, f"dependants[{n}].")
                  for n, x in enumerate(_array(data, "dependants", source))]  # fmt: skip
    wf = Workflow(
        name=top["name"], description=top["description"],
        inputs=tuple(Input(i["name"], tuple(i["parts"])) for i in inputs),
        steps=tuple(Step(s["name"], tuple(s["reads"]), s["calls"]) for s in steps),
        artifact=Artifact(artifact["name"], tuple(artifact["assembles"]), artifact["figure"][0], artifact["assessor"]),
        effects=tuple(Effect(e["name"], e["receiver"], e["retention"], e["correction"], e["after"]) for e in effects),
        dependants=tuple(Dependant(d["name"], d["ready"], d["rule"], d["gate"]) for d in dependants),
        source=source,
    )  # fmt: skip
    check(wf)
    return wf


def _array(data: dict[str, Any], name: str, source: str) -> list[Any]:
    table = TABLE[name]
    items = data.get(name, [])
    if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
        raise WorkflowError(f"{source}: {name}: expected an array of tables [[{name}]], found {quote(items)}")
    lo, hi = table.count
    if not lo <= len(items) <= hi:
        raise WorkflowError(f"{source}: {name}: {len(items)} declared; allowed: {lo} to {hi} [[{name}]] tables")
    return items


def _table(data: dict[str, Any], table: Table, source: str, prefix: str, tables: list[str] | None = None) -> dict[str, Any]:
    """The table's values, each checked against its declared key; absent keys get their default."""
    allowed = [k.name for k in table.keys] + (tables or [])
    for written in data:
        if written not in allowed:
            raise WorkflowError(f"{source}: {prefix}{quote(written)[1:-1]}: unknown key; allowed: {', '.join(allowed)}")
    out: dict[str, Any] = {}
    for key in table.keys:
        if key.name not in data:
            if key.required:
                raise WorkflowError(f"{source}: {prefix}{key.name}: missing; {key.words}")
            out[key.name] = key.default
            continue
        out[key.name] = _value(data[key.name], key, source, prefix)
    return out


def _value(value: Any, key: Key, source: str, prefix: str) -> Any:
    where = f"{source}: {prefix}{key.name}"
    if key.kind == "text":
        if not isinstance(value, str) or len(value) > MAX_TEXT:
            raise WorkflowError(f"{where}: found {quote(value)}; allowed: a string of at most {MAX_TEXT:,} characters")
    elif key.kind == "name":
        if not isinstance(value, str) or not NAME.match(value):
            raise WorkflowError(f"{where}: found {quote(value)}; allowed: a name (a lowercase letter, then letters, "
                                "digits, '-' or '_', at most 40 characters)")  # fmt: skip
    elif key.kind in ("names", "reads"):
        _names(value, key, where)
    elif key.kind == "integer":
        lo, hi = key.bounds or (0, 0)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise WorkflowError(f"{where}: found {quote(value)}; allowed: an integer {lo}..{hi}")
    elif key.kind == "boolean":
        if not isinstance(value, bool):
            raise WorkflowError(f"{where}: found {quote(value)}; allowed: true or false")
    elif value not in key.choices:  # "choice"
        raise WorkflowError(f"{where}: found {quote(value)}; allowed: {', '.join(key.choices)}")
    return value


def _names(value: Any, key: Key, where: str) -> None:
    lo, hi = key.bounds or (1, 1)
    dotted = key.kind == "reads"
    ok = isinstance(value, list) and lo <= len(value) <= hi and all(
        isinstance(v, str) and all(NAME.match(piece) for piece in v.split(".", 1 if dotted else 0)) for v in value
    )
    if not ok or len(set(value)) != len(value):
        what = "names or INPUT.PART references" if dotted else "names"
        raise WorkflowError(f"{where}: found {quote(value)}; allowed: a list of {lo} to {hi} distinct {what}")
