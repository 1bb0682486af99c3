"""A trace as Apalache's Informal Trace Format (ITF), one state per tick.

ITF (https://apalache-mc.org/docs/adr/015adr-trace.html) is the JSON trace format of
Apalache and Quint, so ITF viewers and Quint tooling can open a `sim` run. The document is

    {"#meta": {...}, "vars": [names], "states": [{"#meta": {"index": i}, name: value, ...}]}

State i is the world at the end of tick i (after its input, workers and controller), so
`states[0]` is t0 and `states[-1]` is the run's last tick. Values use ITF's encodings:
integers as {"#bigint": "n"} (as Quint writes them), sequences as JSON arrays, records as
JSON objects, maps as {"#map": [[key, value], ...]}, tuples as {"#tup": [...]}, sets as
{"#set": [...]}. ITF has no null: an absent number is 0 (versions and attempts count from
1), an absent string is "". `docs/trace.md` documents every variable.
"""

from __future__ import annotations

from typing import Any

from sim.engine.records import journal_key
from sim.properties import violations
from sim.render.text import describe
from sim.trace import Event, Kind, Trace, revenue

FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"

#: the state variables, in the order every state lists them.
VARS = (
    "tick",
    "report",
    "epoch",
    "owner",
    "attempts",
    "journal",
    "candidates",
    "acceptances",
    "refusals",
    "effects",
    "feed",
    "newsletter",
    "model_calls",
    "violations",
    "events",
)


def big(n: int) -> dict[str, str]:
    return {"#bigint": str(n)}


def itf_map(pairs: list[tuple[Any, Any]]) -> dict[str, list[list[Any]]]:
    return {"#map": [[k, v] for k, v in pairs]}


def document(trace: Trace, *, source: str = "", description: str = "") -> dict[str, Any]:
    """The ITF document of `trace`: one state per tick t0..t(last)."""
    meta = {
        "format": "ITF",
        "format-description": FORMAT_DESCRIPTION,
        "source": source,
        "description": description or "sim trace: one state per tick, the world at the end of the tick",
        "switches": trace.switches.as_dict(),
    }
    return {"#meta": meta, "vars": list(VARS), "states": states(trace)}


def states(trace: Trace) -> list[dict[str, Any]]:
    broke_at = dict(violations(trace))
    by_tick: dict[int, list[Event]] = {}
    for e in trace.events:
        by_tick.setdefault(e.tick, []).append(e)
    pins = trace.switches.pins.value == "on"
    # the fold
    version = 1
    content: tuple[int, ...] = trace.versions[0]
    epoch = 0
    owner = 0
    attempts: dict[int, dict[str, Any]] = {}
    journal: dict[Any, dict[str, Any]] = {}
    candidates: list[dict[str, Any]] = []
    acceptances: list[dict[str, Any]] = []
    refusals: list[dict[str, Any]] = []
    effects: dict[str, str] = {}
    posts: list[dict[str, str]] = []
    keys: dict[str, str] = {}
    letter = {"ready": False, "started": False, "tick": -1, "digest": "", "quote": ""}
    calls = 0
    out = []
    for tick in range(trace.last_tick + 1):
        events = by_tick.get(tick, [])
        for e in events:
            d = e.detail
            n = e.attempt or 0
            k = e.kind
            if k is Kind.REPORT_CHANGED:
                version = d["version"]
                content = tuple(d["content"])
            elif k is Kind.ADMITTED:
                epoch = d["token"]
                owner = n
                attempts[n] = {
                    "token": d["token"], "pin": d["pin"] or 0, "status": "running",
                    "silent": False, "model_calls": 0, "reconcile": d["reconcile"] or "",
                }  # fmt: skip
            elif k in (Kind.SILENT, Kind.DIED):
                attempts[n]["silent"] = True
            elif k is Kind.WOKE:
                attempts[n]["silent"] = False
            elif k is Kind.COMPUTED:
                attempts[n]["model_calls"] += 1
                calls += 1
            elif k is Kind.UNKNOWN:
                attempts[n]["status"] = "UNKNOWN"
            elif k is Kind.FENCED:
                attempts[n]["status"] = "fenced"
            elif k is Kind.STOPPED:
                attempts[n]["status"] = "refused"
            elif k is Kind.DONE:
                attempts[n]["status"] = "done"
            elif k is Kind.WRITE and d["applied"]:
                for step, result, rev in d.get("steps", []):
                    journal[journal_key(step, rev if pins else None)] = {"result": result, "content": rev, "by": n}
                if d["record"] == "candidate":
                    candidates.append({
                        "digest": d["digest"], "attempt": n, "token": d["token"], "pin": d["pin"] or 0,
                        "parts": [p[0] for p in d["parts"]], "built_from": [p[1] for p in d["parts"]],
                    })  # fmt: skip
                elif d["record"] in ("intent", "confirmed"):
                    effects[d["digest"]] = d["record"]
            elif k is Kind.ACCEPTED:
                acceptances.append({"digest": d["digest"], "version": d["version"] or 0, "tick": tick})
            elif k is Kind.REFUSED:
                refusals.append({"digest": d["digest"], "reason": d["reason"], "tick": tick})
            elif k is Kind.FEED and d["answer"] == "applied":
                posts.append({"post": d["post"], "digest": d["digest"]})
                if d["key"] is not None:
                    keys[d["key"]] = d["post"]
            elif k is Kind.NEWSLETTER:
                letter = {"ready": True, "started": True, "tick": tick, "digest": d["digest"], "quote": d["quote"]}
        if tick >= trace.schedule.newsletter_ready:
            letter["ready"] = True
        out.append({
            "#meta": {"index": tick},
            "tick": big(tick),
            "report": {"version": big(version), "content": [big(c) for c in content],
                       "revenue": revenue(content[1]) if len(content) > 1 else ""},
            "epoch": big(epoch),
            "owner": big(owner),
            "attempts": itf_map([(big(n), _record(a)) for n, a in sorted(attempts.items())]),
            "journal": itf_map([(_key(key), _record(r)) for key, r in sorted(journal.items(), key=_order)]),
            "candidates": [_record(c) for c in candidates],
            "acceptances": [_record(a) for a in acceptances],
            "refusals": [_record(r) for r in refusals],
            "effects": itf_map(sorted(effects.items())),
            "feed": {"posts": [dict(p) for p in posts], "keys": itf_map(sorted(keys.items()))},
            "newsletter": _record(letter),
            "model_calls": big(calls),
            "violations": {"#set": sorted(name for name, at in broke_at.items() if at <= tick)},
            "events": [describe(e) for e in events],
        })  # fmt: skip
    return out


def _order(item: tuple[Any, Any]) -> tuple[int, int]:
    key = item[0]
    return (key[0], key[1]) if isinstance(key, tuple) else (key, -1)


def _key(key: Any) -> Any:
    if isinstance(key, tuple):
        return {"#tup": [big(k) for k in key]}
    return big(key)


def _record(fields: dict[str, Any]) -> dict[str, Any]:
    return {name: _value(v) for name, v in fields.items()}


def _value(v: Any) -> Any:
    if isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return big(v)
    if isinstance(v, list):
        return [_value(x) for x in v]
    if isinstance(v, dict):
        return _record(v)
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
        tag, body = special[0], v[special[0]]
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
    if any(k.startswith("#") for k in v):
        return [f"unknown special field in {sorted(v)}"]
    return [p for x in v.values() for p in _value_problems(x)]
