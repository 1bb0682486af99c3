"""Events are typed: outside `sim/model/events.py` nothing reads an event's `detail` by key.

Every reader goes through the kind's declared payload (`sim.model.events.payload`, `write`), whose
fields mypy checks; `sim/model/events.py` alone knows that a payload is the engine's plain dict.
The scan reads the source with `ast`: a key read of `X.detail` (a subscript, `.get(...)` or
any other method, `key in X.detail`), directly or through a local name bound to `X.detail`.
Passing the whole dict on (`**e.detail`, a digest over the events) is not a key read.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sim.engine.trace import Event, Kind

SIM = Path(__file__).resolve().parent.parent / "sim"
#: the one module that reads details by key
ALLOWED = SIM / "model" / "events.py"


def _is_detail(node: ast.AST, aliases: set[str]) -> bool:
    """`X.detail` (not `self.detail`: a class's own field of that name), or a name bound to one."""
    if isinstance(node, ast.Attribute) and node.attr == "detail":
        return not (isinstance(node.value, ast.Name) and node.value.id == "self")
    return isinstance(node, ast.Name) and node.id in aliases


def _aliases(scope: ast.AST) -> set[str]:
    """The local names a scope binds to `X.detail` (`d = e.detail`)."""
    names = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and _is_detail(node.value, set()):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def key_reads(source: str, filename: str = "<source>") -> Iterator[int]:
    """The lines of `source` that read an event's detail by key."""
    module = ast.parse(source, filename)
    scopes = [n for n in ast.walk(module) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
    seen: set[int] = set()
    for scope in [module, *scopes]:
        aliases = _aliases(scope) if scope is not module else set()
        for node in ast.walk(scope):
            if isinstance(node, (ast.Subscript, ast.Attribute)) and _is_detail(node.value, aliases):
                hit = node.lineno
            elif isinstance(node, ast.Compare) and any(
                isinstance(op, (ast.In, ast.NotIn)) and _is_detail(c, aliases)
                for op, c in zip(node.ops, node.comparators)
            ):
                hit = node.lineno
            else:
                continue
            if hit not in seen:
                seen.add(hit)
                yield hit


def test_no_module_outside_sim_events_reads_a_detail_by_key() -> None:
    found = [
        f"{path.relative_to(SIM.parent)}:{line}"
        for path in sorted(SIM.rglob("*.py"))
        if path != ALLOWED
        for line in key_reads(path.read_text(encoding="utf-8"), str(path))
    ]
    assert found == []


def test_the_scan_would_catch_a_key_read() -> None:
    source = '''
def direct(e):
    return e.detail["digest"], e.detail.get("code"), "truth" in e.detail, e.detail.items()

def aliased(e):
    d = e.detail
    return d["answer"]

def whole(e, self):
    return {**e.detail}, pickle.dumps(e.detail), self.detail, d["x"]
'''
    assert list(key_reads(source)) == [3, 7]


def test_a_payload_is_the_detail_itself_typed() -> None:
    from sim.model.events import EVENT_KINDS, Accepted, Feed, payload, write

    # no copy: a reader on a hot path (a property's monitor) allocates nothing
    e = Event(5, Kind.ACCEPTED, None, {"digest": "d1", "producer": 1, "version": 1, "built_from": [1, 1]})

    p = payload(e, Accepted)
    assert p is e.detail and p["digest"] == "d1"
    # the wrong kind's payload is refused, not misread
    try:
        payload(e, Feed)
    except TypeError as error:
        assert "accepted" in str(error) and "Feed" in str(error)
    else:  # pragma: no cover
        raise AssertionError("payload(accepted event, Feed) did not fail")
    w = Event(6, Kind.WRITE, 1, {"store": "effect", "token": 41, "epoch": 41, "applied": True,
                                 "record": "intent", "digest": "d1"})
    assert write(w) is w.detail
    assert EVENT_KINDS[Kind.WRITE].shape(w.detail).__name__ == "EffectWrite"


def test_mypy_checks_a_payloads_field_names_and_types(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")
    reader = tmp_path / "reader.py"
    reader.write_text(
        "from sim.model.events import Accepted, Feed, payload, write\n"
        "from sim.engine.trace import Event\n"
        "\n"
        "def read(e: Event) -> str:\n"
        "    a = payload(e, Accepted)\n"
        "    misspelt: str = a['digets']\n"  # line 6: no such field
        "    mistyped: str = a['producer']\n"  # line 7: an int
        "    w = write(e)\n"
        "    unnarrowed: str = w['digest']\n"  # line 9: a journal write has no digest
        "    if w['store'] == 'effect':\n"
        "        return w['digest'] + payload(e, Feed)['answer']\n"  # narrowed: fine
        "    return misspelt + mistyped + unnarrowed + (a.get('code') or 0)\n",  # line 12: int | str
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), str(reader)],
        cwd=SIM.parent, capture_output=True, text=True, check=False,
    )  # fmt: skip
    lines = sorted({int(line.split(":")[1]) for line in done.stdout.splitlines() if ": error:" in line})
    assert lines == [6, 7, 9, 12], done.stdout + done.stderr
