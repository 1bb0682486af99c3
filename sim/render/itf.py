"""A trace as Apalache's Informal Trace Format (ITF), one state per tick.

ITF (https://apalache-mc.org/docs/adr/015adr-trace.html) is the JSON trace format of
Apalache and Quint, so ITF viewers and Quint tooling can open a `sim` run. The document is

    {"#meta": {...}, "vars": [names], "states": [{"#meta": {"index": i}, name: value, ...}]}

State i is the engine's state at the end of tick i (after its input, workers and controller;
`Trace.state_at`), as `sim.render.shown` maps it, so `states[0]` is t0 and `states[-1]` is the
run's last tick. Values use ITF's encodings:
integers as {"#bigint": "n"} (as Quint writes them), sequences as JSON arrays, records as
JSON objects, maps as {"#map": [[key, value], ...]}, tuples as {"#tup": [...]}, sets as
{"#set": [...]}. ITF has no null: an absent number is 0 (versions and attempts count from
1), an absent string is "". `docs/trace.md` documents every variable.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from sim.render.shown import VARIABLES, At, Map, ticks
from sim.render.text import describe
from sim.engine.trace import Trace

FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"

#: the state variables, in the order every state lists them: what `sim.render.shown` reads
#: from the engine's state, then what the tick broke and did.
VARS = (*VARIABLES, "violations", "events")


def big(n: int) -> dict[str, str]:
    return {"#bigint": str(n)}


def itf_map(pairs: list[tuple[Any, Any]]) -> dict[str, list[list[Any]]]:
    return {"#map": [[k, v] for k, v in pairs]}


def _meta(trace: Trace, source: str, description: str) -> dict[str, Any]:
    return {
        "format": "ITF",
        "format-description": FORMAT_DESCRIPTION,
        "source": source,
        "description": description or "sim trace: one state per tick, the world at the end of the tick",
        "switches": trace.switches.as_dict(),
    }


def document(trace: Trace, *, source: str = "", description: str = "") -> dict[str, Any]:
    """The ITF document of `trace`: one state per tick t0..t(last)."""
    return {"#meta": _meta(trace, source, description), "vars": list(VARS), "states": states(trace)}


def write(trace: Trace, out: TextIO, *, source: str = "", description: str = "") -> None:
    """Write `document(trace)` to `out` as `json.dumps(..., indent=2)` and a newline would,
    byte for byte, but one state at a time: memory stays that of one state, however long the
    run (a 1,000-tick run with a large journal is over 100 MB of JSON)."""
    head = json.dumps({"#meta": _meta(trace, source, description), "vars": list(VARS)}, indent=2)
    out.write(head[: -len("\n}")] + ',\n  "states": [')
    for i, at in enumerate(ticks(trace)):
        text = json.dumps(_state(at), indent=2)
        out.write(("\n" if i == 0 else ",\n") + "    " + text.replace("\n", "\n    "))
    out.write("\n  ]\n}\n")


def states(trace: Trace) -> list[dict[str, Any]]:
    """One ITF state per tick t0..t(last): the engine's state at the end of that tick, as
    `sim.render.shown` maps it (the one mapping the run page reads too)."""
    return [_state(at) for at in ticks(trace)]


def _state(at: At) -> dict[str, Any]:
    """The ITF state at the end of `at.tick`, its variables in `VARS` order."""
    out: dict[str, Any] = {"#meta": {"index": at.tick}}
    for name, shown in VARIABLES.items():
        out[name] = _value(shown(at))
    out["violations"] = {"#set": list(at.broken)}
    out["events"] = [describe(e) for e in at.events]
    return out


def _key(key: Any) -> Any:
    if isinstance(key, tuple):
        return {"#tup": [big(k) for k in key]}
    return _value(key)


def _value(v: Any) -> Any:
    kind = type(v)  # exact types first: this runs for every value of every tick
    if kind is int:
        return {"#bigint": str(v)}
    if kind is str or kind is bool:
        return v
    if kind is dict:
        return {name: _value(x) for name, x in v.items()}
    if kind is list:
        return [_value(x) for x in v]
    if kind is Map:
        return itf_map([(_key(k), _value(x)) for k, x in v.pairs])
    raise TypeError(f"no ITF encoding for {v!r}")


# -- checking --------------------------------------------------------------------------

SPECIAL = ("#bigint", "#tup", "#set", "#map", "#unserializable")


def problems(doc: Any) -> list[str]:
    """What makes `doc` not an ITF trace (empty when it is one). Checks ADR-015's structure."""
    out: list[str] = []
    if not isinstance(doc, dict):
        return ["the document is not a JSON object"]
    if "#meta" in doc and not isinstance(doc["#meta"], dict):
        out.append("#meta is not an object")
    variables = doc.get("vars")
    if not isinstance(variables, list) or not all(isinstance(v, str) for v in variables):
        out.append("vars is not a list of names")
        variables = []
    states = doc.get("states")
    if not isinstance(states, list):
        return out + ["states is not a list"]
    for i, state in enumerate(states):
        if not isinstance(state, dict):
            out.append(f"states[{i}] is not an object")
            continue
        meta = state.get("#meta", {})
        if not isinstance(meta, dict) or meta.get("index", i) != i:
            out.append(f"states[{i}]: #meta.index is not {i}")
        names = [k for k in state if k != "#meta"]
        if sorted(names) != sorted(variables):
            out.append(f"states[{i}]: its variables {sorted(names)} are not vars {sorted(variables)}")
        for name in names:
            out.extend(f"states[{i}].{name}: {p}" for p in _value_problems(state[name]))
    if "loop" in doc and not (isinstance(doc["loop"], int) and 0 <= doc["loop"] < len(states)):
        out.append("loop is not a state index")
    return out


def _value_problems(v: Any) -> list[str]:
    """What makes `v` not an ITF value (empty when it is one)."""
    if isinstance(v, (bool, str)):
        return []
    if isinstance(v, int):
        return [] if -(2**53) < v < 2**53 else [f"integer {v} out of JSON range: use #bigint"]
    if isinstance(v, float):
        return [f"{v} is not an integer"]
    if isinstance(v, list):
        return [p for x in v for p in _value_problems(x)]
    if not isinstance(v, dict):
        return [f"{v!r} is not an ITF value"]
    special = [k for k in v if k in SPECIAL]
    if special:
        if len(v) != 1:
            return [f"{special[0]} object has other fields"]
        return _special_problems(special[0], v[special[0]])
    if any(k.startswith("#") for k in v):
        return [f"unknown special field in {sorted(v)}"]
    return [p for x in v.values() for p in _value_problems(x)]


def _special_problems(tag: str, body: Any) -> list[str]:
    """What makes the body of a special ITF object (`{"#tag": body}`) wrong."""
    if tag == "#bigint":
        ok = isinstance(body, str) and body.lstrip("-").isdigit()
        return [] if ok else [f"bad #bigint {body!r}"]
    if tag == "#unserializable":
        return [] if isinstance(body, str) else ["#unserializable is not a string"]
    if not isinstance(body, list):
        return [f"{tag} is not a list"]
    if tag == "#map":
        if not all(isinstance(p, list) and len(p) == 2 for p in body):
            return ["#map entry is not a [key, value] pair"]
        return [p for pair in body for x in pair for p in _value_problems(x)]
    return [p for x in body for p in _value_problems(x)]
