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

from sim.engine.records import JournalKey, journal_key
from sim.events import (
    EVENT_KINDS,
    Accepted,
    Admitted,
    CandidateWrite,
    Computed,
    EffectWrite,
    Feed,
    JournalWrite,
    Newsletter,
    Payload,
    Refused,
    ReportChanged,
    Write,
    read,
)
from sim.properties import violations
from sim.render.text import describe
from sim.trace import Event, Trace, revenue

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
    """One ITF state per tick t0..t(last): the world after that tick's events."""
    broke_at = dict(violations(trace))
    by_tick: dict[int, list[Event]] = {}
    for e in trace.events:
        by_tick.setdefault(e.tick, []).append(e)
    world = _World(trace)
    out = []
    for tick in range(trace.last_tick + 1):
        events = by_tick.get(tick, [])
        for e in events:
            world.apply(e)
        if tick >= trace.schedule.newsletter_ready:
            world.letter["ready"] = True
        broken = sorted(name for name, at in broke_at.items() if at <= tick)
        out.append(world.state(tick, broken, [describe(e) for e in events]))
    return out


class _World:
    """The state variables, folded event by event from each event's declared payload."""

    def __init__(self, trace: Trace) -> None:
        self.pins = trace.switches.pins.value == "on"
        # beyond the article's model: a receiver with no idempotency remembers no key
        self.remembers = trace.switches.knob("receiver") == "idempotent"
        self.version = 1
        self.content: tuple[int, ...] = trace.versions[0]
        self.epoch = 0
        self.owner = 0
        self.attempts: dict[int, dict[str, Any]] = {}
        self.journal: dict[JournalKey, dict[str, Any]] = {}
        self.candidates: list[dict[str, Any]] = []
        self.acceptances: list[dict[str, Any]] = []
        self.refusals: list[dict[str, Any]] = []
        self.effects: dict[str, str] = {}
        self.posts: list[dict[str, str]] = []
        self.keys: dict[str, str] = {}
        self.letter: dict[str, Any] = {"ready": False, "started": False, "tick": -1, "digest": "", "quote": ""}
        self.calls = 0

    def apply(self, e: Event) -> None:
        """Fold one event: its records first, then what its kind does to its attempt."""
        n = e.attempt or 0
        self._records(read(e), n, e.tick)
        kind = EVENT_KINDS[e.kind]
        if kind.status is not None:
            self.attempts[n]["status"] = kind.status
        if kind.silent is not None:
            self.attempts[n]["silent"] = kind.silent

    def _records(self, p: Payload, n: int, tick: int) -> None:
        match p:
            case ReportChanged():
                self.version, self.content = p.version, tuple(p.content)
            case Admitted():
                self.epoch, self.owner = p.token, n
                self.attempts[n] = {
                    "token": p.token, "pin": p.pin or 0, "status": "running",
                    "silent": False, "model_calls": 0, "reconcile": p.reconcile or "",
                }  # fmt: skip
            case Computed():
                self.attempts[n]["model_calls"] += 1
                self.calls += 1
            case Write(applied=True):
                self._write(p, n)
            case Accepted():
                self.acceptances.append({"digest": p.digest, "version": p.version or 0, "tick": tick})
            case Refused():
                self.refusals.append({"digest": p.digest, "reason": p.reason, "tick": tick})
            case Feed(answer="applied", post=str(post)):
                self.posts.append({"post": post, "digest": p.digest})
                if p.key is not None and self.remembers:
                    self.keys[p.key] = post
            case Newsletter():
                self.letter = {"ready": True, "started": True, "tick": tick, "digest": p.digest, "quote": p.quote}

    def _write(self, w: Write, n: int) -> None:
        """An applied protected write: its step records, its candidate or its effect record."""
        if isinstance(w, (JournalWrite, CandidateWrite)):
            for step, result, rev in w.steps:
                key = journal_key(step, rev if self.pins else None)
                self.journal[key] = {"result": result, "content": rev, "by": n}
        if isinstance(w, CandidateWrite):
            self.candidates.append({
                "digest": w.digest, "attempt": n, "token": w.token, "pin": w.pin or 0,
                "parts": [p[0] for p in w.parts], "built_from": [p[1] for p in w.parts],
            })  # fmt: skip
        elif isinstance(w, EffectWrite):
            self.effects[w.digest] = w.record

    def state(self, tick: int, broken: list[str], events: list[str]) -> dict[str, Any]:
        """The ITF state at the end of `tick`, its variables in `VARS` order."""
        content = self.content
        return {
            "#meta": {"index": tick},
            "tick": big(tick),
            "report": {"version": big(self.version), "content": [big(c) for c in content],
                       "revenue": revenue(content[1]) if len(content) > 1 else ""},
            "epoch": big(self.epoch),
            "owner": big(self.owner),
            "attempts": itf_map([(big(n), _record(a)) for n, a in sorted(self.attempts.items())]),
            "journal": itf_map([(_key(key), _record(r)) for key, r in sorted(self.journal.items(), key=_order)]),
            "candidates": [_record(c) for c in self.candidates],
            "acceptances": [_record(a) for a in self.acceptances],
            "refusals": [_record(r) for r in self.refusals],
            "effects": itf_map(sorted(self.effects.items())),
            "feed": {"posts": [dict(p) for p in self.posts], "keys": itf_map(sorted(self.keys.items()))},
            "newsletter": _record(self.letter),
            "model_calls": big(self.calls),
            "violations": {"#set": broken},
            "events": events,
        }  # fmt: skip


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
