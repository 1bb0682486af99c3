"""Fuzzed inputs for the command line (issue 11), shared by tests/test_fuzz.py and
benchmarks/bench_fuzz.py.

Two kinds of input, each drawn through a `Chooser` (Hypothesis' `data.draw` in the tests,
so failures shrink; a seeded `random.Random` in the benchmark, so runs repeat):

- a mutated scenario file (`scenario_case`): a named scenario or the README's TOML example,
  mutated at the byte level (bit flips, inserted/deleted bytes, invalid UTF-8, truncation,
  duplicated lines) or at the TOML level (values replaced by other types, huge or negative
  numbers, empty/huge lists, ~500-deep arrays and inline tables, unknown keys, `[expect]`
  values of the wrong type), run by `sim trace FILE` (plain, `--check`, `--json`,
  `--format itf`) or `sim diff main FILE`;
- a mutated argument list (`argument_case`): a valid, bounded command with arguments dropped,
  duplicated, swapped, or replaced by junk (huge/negative/non-numeric numbers, unknown
  options, `--set` junk, names over 255 characters, folders, a FIFO, /dev/null,
  /proc/self/mem, `--out` under a regular file...).

Every valid command is bounded (`-k 0 -t 2 -j 1`, `--examples 5`, ...) so that no valid
case runs long; `sim sweep` appears only with arguments that are refused before any work.
`run_case` runs one case in-process (`sim.cli.main`) in a fresh folder with a 10 s alarm;
`run_subprocess` runs it with the venv's `sim`; `problems` lists what breaks the README's
contract: an exit code outside {0, 1, 2}, a traceback or uncaught exception, an exit 2
whose stderr is not exactly one non-empty line, a `--json`/ITF output that is not one JSON
document, a case over 10 s.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from sim.base.limits import MAX_CHECK_FAULTS

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[1]
#: a case that takes more CPU time than this (its own and its waited-for children's) is a
#: failure, and is stopped there. CPU time, not the clock: a loaded machine (CI runs the suite
#: on both cores at once) stretches the clock, not the work, so the verdict does not flake
LIMIT_SECONDS = 10.0
#: a case still running after this many times its limit on the clock is stopped too: the
#: backstop for a case that hangs without working (waiting on a socket or a child)
WALL_FACTOR = 12


# -- choosing ---------------------------------------------------------------------------------
class Chooser(Protocol):
    def integer(self, lo: int, hi: int) -> int: ...

    def choice(self, items: Sequence[T]) -> T: ...


class RandomChooser:
    """Choices from a seeded `random.Random` (the benchmark)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, items: Sequence[T]) -> T:
        return items[self.rng.randrange(len(items))]


class DataChooser:
    """Choices drawn from Hypothesis' `st.data()` (the tests: failures shrink)."""

    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self.data = data
        self.st = st

    def integer(self, lo: int, hi: int) -> int:
        return int(self.data.draw(self.st.integers(lo, hi)))

    def choice(self, items: Sequence[T]) -> T:
        return items[self.integer(0, len(items) - 1)]


# -- the fixtures every case may point at ------------------------------------------------------
@dataclass(frozen=True)
class Fixtures:
    """Special files made once per process: a regular file, a folder, a FIFO, a symlink loop."""

    root: Path

    @property
    def afile(self) -> str:
        return str(self.root / "afile")

    @property
    def folder(self) -> str:
        return str(self.root / "folder.toml")

    @property
    def fifo(self) -> str:
        return str(self.root / "fifo.toml")

    @property
    def loop(self) -> str:
        return str(self.root / "loop.toml")

    @property
    def binary(self) -> str:
        return str(self.root / "binary.toml")

    @property
    def empty(self) -> str:
        return str(self.root / "empty.toml")

    @property
    def valid(self) -> str:
        return str(self.root / "valid.toml")


def make_fixtures(root: Path) -> Fixtures:
    root.mkdir(parents=True, exist_ok=True)
    fx = Fixtures(root)
    Path(fx.afile).write_text("a regular file\n")
    Path(fx.folder).mkdir(exist_ok=True)
    if not os.path.exists(fx.fifo):
        os.mkfifo(fx.fifo)
    if not os.path.lexists(fx.loop):
        os.symlink(fx.loop, fx.loop)
    Path(fx.binary).write_bytes(bytes(range(256)) * 4)
    Path(fx.empty).write_bytes(b"")
    Path(fx.valid).write_text('description = "valid"\n[switches]\nfencing = "off"\n')
    return fx


# -- scenario files -----------------------------------------------------------------------------
def readme_example() -> str:
    """The README's TOML example (the fenced ```toml block), or a copy of it."""
    try:
        match = re.search(r"```toml\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    except OSError:
        match = None
    if match:
        return match.group(1)
    return (
        'description = "What this scenario shows."\n[switches]\nfencing = "off"\n[schedule]\nheartbeat_limit = 2\n'
        "silences = [{attempt = 1, at = 3, wake = 8}, {attempt = 2, at = 7}]\n"
        "changes = [{at = 4, sections = [2]}, {at = 6, sections = [1, 3]}]\n"
        'poster_deaths = [{point = "after-send", nth = 1}]\nduplicate_deliveries = [{nth = 1}]\n'
        '[expect]\nmodel_calls = 6\nviolations = [{invariant = "stale-write", tick = 8}]\n'
        'newsletter = {start_tick = 12, quoted_revenue = "4.7"}\n'
    )


def base_texts() -> list[tuple[str, str]]:
    """(label, text) of every named scenario and the README's example, in a fixed order."""
    out = [(p.stem, p.read_text(encoding="utf-8")) for p in sorted((ROOT / "scenarios").glob("*.toml"))]
    out.append(("README", readme_example()))
    return out


BASES = base_texts()

INVALID_UTF8 = [b"\xff", b"\xfe\xff", b"\xc3", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x80"]
INSERTS = [b"\x00", b"[", b"]", b"{", b"}", b'"', b"'", b"=", b"\n", b"\r", b"\t", b",", b"#", b".", b"[[", b"\\",
           b'"""', b"\xef\xbb\xbf", b"1e999", b"-", b"inf", b"nan", b"0x", b"\\u0000", b"\\uD800"]  # fmt: skip


def mutate_bytes(c: Chooser, data: bytes) -> tuple[bytes, str]:
    """One byte-level mutation; returns the new bytes and what was done."""
    op = c.choice(["flip", "insert", "delete", "utf8", "truncate", "duplicate-line", "swap-lines", "repeat-line"])
    n = len(data)
    if op == "flip":
        if not n:
            return data, op
        i = c.integer(0, n - 1)
        bit = 1 << c.integer(0, 7)
        return data[:i] + bytes([data[i] ^ bit]) + data[i + 1 :], f"flip bit {bit:#x} of byte {i}"
    if op == "insert":
        i = c.integer(0, n)
        piece = c.choice(INSERTS)
        return data[:i] + piece + data[i:], f"insert {piece!r} at {i}"
    if op == "delete":
        if not n:
            return data, op
        i = c.integer(0, n - 1)
        j = min(n, i + c.choice([1, 1, 2, 8, 64]))
        return data[:i] + data[j:], f"delete {i}:{j}"
    if op == "utf8":
        i = c.integer(0, n)
        piece = c.choice(INVALID_UTF8)
        return data[:i] + piece + data[i:], f"insert invalid UTF-8 {piece!r} at {i}"
    if op == "truncate":
        i = c.integer(0, n)
        return data[:i], f"truncate at {i}"
    lines = data.split(b"\n")
    i = c.integer(0, len(lines) - 1)
    if op == "duplicate-line":
        lines.insert(i, lines[i])
        return b"\n".join(lines), f"duplicate line {i}"
    if op == "repeat-line":
        times = c.choice([10, 1000])
        lines[i:i] = [lines[i]] * times
        return b"\n".join(lines), f"repeat line {i} x{times}"
    j = c.integer(0, len(lines) - 1)
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines), f"swap lines {i} and {j}"


class Raw(str):
    """TOML text written as is (deeply nested values are built as text, not recursively)."""


FAULT_FIELDS = ["attempt", "at", "wake", "sections", "point", "nth"]
SCHEDULE_KEYS = ["sections", "first_token", "heartbeat_limit", "newsletter_ready", "horizon",
                 "silences", "changes", "poster_deaths", "duplicate_deliveries"]  # fmt: skip
EXPECT_KEYS = ["model_calls", "model_calls_by_attempt", "steps_restored", "stale_writes_rejected",
               "stale_writes_applied", "posts_applied", "first_accepted_tick", "confirmed_tick",
               "violations", "finished", "newsletter"]  # fmt: skip
SWITCH_KEYS = ["silent", "fencing", "checkpoints", "change", "pins", "rule", "post_death", "key", "gate"]


def junk_value(c: Chooser, small: bool = False) -> Any:
    """A value of any TOML type, valid or not where it lands (`small`: no long lists, for
    values inside a list that may itself be repeated)."""
    kinds = ["int", "int", "str", "float", "bool", "list", "table", "deep", "date", "fault-list"]
    kind = c.choice(kinds[:-1] if small else kinds)
    if kind == "int":
        return c.choice([0, 1, -1, 2, 5, 8, 12, 41, 99, -(10**18), 10**18, 2**63 - 1, -(2**63), 10**6, 10**5, 3])
    if kind == "str":
        return c.choice(["", "six", "null", "on", "off", "paused", "fail-closed", "after-send", "4.7", "x" * 10_000,
                         "\u00e9\u4e2d\U0001f600", "\\", "a\nb", "d1"])  # fmt: skip
    if kind == "float":
        return c.choice([1.5, -0.0, float("inf"), float("-inf"), float("nan"), 1e308, 6.0])
    if kind == "bool":
        return c.choice([True, False])
    if kind == "list":
        size = c.choice([0, 1, 3] if small else [0, 1, 3, 1000, 0, 1, 3, 100_000])
        item = c.choice([1, "x", True, {"attempt": 1, "at": 3}, [], {}])
        return [item] * size
    if kind == "table":
        return c.choice([{}, {"x": 1}, {"attempt": 1, "at": 3, "wake": 8}, {"invariant": "stale-write", "tick": 8},
                         {"start_tick": "twelve"}, {"at": 4, "sections": [True]}])  # fmt: skip
    if kind == "deep":
        depth = c.choice([50, 340, 500, 1000])
        if c.choice([True, False]):
            return Raw("[" * depth + "1" + "]" * depth)
        return Raw("{a = " * depth + "1" + "}" * depth)
    if kind == "date":
        return Raw(c.choice(["1979-05-27T07:32:00Z", "1979-05-27", "07:32:00"]))
    return [fault_item(c)] * c.choice([1, 2, 1000])


def fault_item(c: Chooser) -> dict[str, Any]:
    """A fault-like table with some of the fault fields, each valid-looking or junk."""
    item: dict[str, Any] = {}
    for name in FAULT_FIELDS:
        if c.integer(0, 2) == 0:
            continue
        if c.integer(0, 3) == 0:
            item[name] = junk_value(c, small=True)
        elif name == "point":
            item[name] = c.choice(["before-intent", "after-intent", "after-send", "never"])
        elif name == "sections":
            item[name] = c.choice([[1], [2], [1, 3], [], [0], [9], [True]])
        else:
            item[name] = c.choice([0, 1, 2, 3, 4, 7, 8, 12, 20, 10**18, -1])
    return item


def brief(value: Any, limit: int = 40) -> str:
    """A short description of a value (without writing out a long list)."""
    if isinstance(value, Raw):
        return str(value) if len(value) <= limit else f"{value[:12]}...({len(value)} chars of TOML)"
    if isinstance(value, list) and len(value) > 3:
        return f"[{len(value)} x {brief(value[0], limit)}]"
    if isinstance(value, str) and len(value) > limit:
        return f"<string of {len(value)} chars>"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {brief(v, limit)}" for k, v in value.items()) + "}"
    return toml_value(value)[:limit]


def toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def toml_value(value: Any) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON strings are TOML basic strings for these characters
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))


def dump_toml(doc: dict[str, Any]) -> str:
    """A document of top-level values and tables (values inline)."""
    head = [f"{toml_key(k)} = {toml_value(v)}" for k, v in doc.items() if not isinstance(v, dict)]
    body = []
    for k, v in doc.items():
        if isinstance(v, dict):
            body.append(f"\n[{toml_key(k)}]")
            body += [f"{toml_key(sk)} = {toml_value(sv)}" for sk, sv in v.items()]
    return "\n".join(head + body) + "\n"


def mutate_toml(c: Chooser, doc: dict[str, Any]) -> str:
    """One TOML-level mutation of `doc` (in place); returns what was done."""
    op = c.choice(["switch", "schedule", "schedule", "fault", "expect", "expect", "expect-type", "unknown",
                   "table-scalar", "delete", "description"])  # fmt: skip
    if op == "switch":
        key = c.choice(SWITCH_KEYS)
        value = c.choice(["on", "off", "ON", "", "maybe", True, 1]) if c.integer(0, 1) else junk_value(c)
        _table(doc, "switches")[key] = value
        return f"switches.{key} = {brief(value)}"
    if op == "schedule":
        key = c.choice(SCHEDULE_KEYS)
        value = junk_value(c)
        _table(doc, "schedule")[key] = value
        return f"schedule.{key} = {brief(value)}"
    if op == "fault":
        key = c.choice(SCHEDULE_KEYS[5:])
        items = [fault_item(c) for _ in range(c.choice([1, 1, 2, 3]))]
        _table(doc, "schedule")[key] = items
        return f"schedule.{key} = {brief(items)}"
    if op == "expect":
        key = c.choice(EXPECT_KEYS)
        value = junk_value(c)
        _table(doc, "expect")[key] = value
        return f"expect.{key} = {brief(value)}"
    if op == "expect-type":
        key, value = c.choice([("violations", 5), ("model_calls", "six"), ("violations", "none"), ("newsletter", 3),
                               ("violations", [1, 2]), ("finished", "yes"), ("newsletter", {"start_tick": []}),
                               ("model_calls_by_attempt", 3), ("violations", [{"invariant": 5, "tick": "t8"}]),
                               ("confirmed_tick", 1.5), ("newsletter", {"quoted_revenue": 4.7})])  # fmt: skip
        _table(doc, "expect")[key] = value
        return f"expect.{key} = {brief(value)}"
    if op == "unknown":
        where = c.choice(["", "switches", "schedule", "expect"])
        table = doc if not where else _table(doc, where)
        key = c.choice(["bogus", "x" * 300, "Fencing", "horizon_reached", "é"])
        table[key] = junk_value(c)
        return f"unknown key {where}.{key[:20]}"
    if op == "table-scalar":
        key = c.choice(["switches", "schedule", "expect"])
        doc[key] = junk_value(c)
        return f"{key} = {brief(doc[key])}"
    if op == "delete":
        keys = list(doc)
        if keys:
            key = c.choice(keys)
            del doc[key]
            return f"delete {key}"
        return "delete nothing"
    value = junk_value(c)
    doc["description"] = value
    return f"description = {brief(value)}"


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    if not isinstance(doc.get(key), dict):
        doc[key] = {}
    table: dict[str, Any] = doc[key]
    return table


SCENARIO_COMMANDS: list[list[str]] = [
    ["trace", "{F}"],
    ["trace", "{F}", "--check"],
    ["trace", "{F}", "--json"],
    ["trace", "{F}", "--check", "--json"],
    ["trace", "{F}", "--format", "itf"],
    ["diff", "main", "{F}"],
]


@dataclass
class Case:
    """One input: the argument list and the files to write in the case's folder first."""

    args: list[str]
    files: dict[str, bytes] = field(default_factory=dict)
    what: str = ""
    stdin: str = "q\n"
    #: environment variables set for the case (shell completion reads _SIM_COMPLETE, COMP_*)
    env: dict[str, str] = field(default_factory=dict)

    def describe(self, limit: int = 300) -> str:
        parts = [f"sim {' '.join(_shell(a) for a in self.args)}"]
        for name, data in self.files.items():
            shown = data if len(data) <= limit else data[:limit] + b"...(%d bytes)" % len(data)
            parts.append(f"  {name}: {shown!r}")
        if self.env:
            parts.insert(0, " ".join(f"{k}={v[:80]!r}" for k, v in self.env.items()))
        if self.what:
            parts.append(f"  ({self.what})")
        return "\n".join(parts)


def _shell(arg: str) -> str:
    if len(arg) > 60:
        arg = f"{arg[:20]}...({len(arg)} chars)"
    return arg if re.fullmatch(r"[\w@%+=:,./-]+", arg) else repr(arg)


def mutated(c: Chooser, text: str, level: str | None) -> tuple[bytes, list[str]]:
    """A TOML file's text mutated as bytes or as TOML (`level`; None: either), and the steps."""
    level = level or c.choice(["bytes", "toml"])
    steps = []
    if level == "toml":
        doc = tomllib.loads(text)
        for _ in range(c.integer(1, 3)):
            steps.append(mutate_toml(c, doc))
        return dump_toml(doc).encode("utf-8", "surrogatepass"), steps
    data = text.encode("utf-8")
    for _ in range(c.integer(1, 4)):
        data, step = mutate_bytes(c, data)
        steps.append(step)
    return data, steps


def scenario_case(c: Chooser, level: str | None = None) -> Case:
    """A mutated scenario file and a command that reads it. `level`: bytes, toml or None (either)."""
    label, text = c.choice(BASES)
    data, steps = mutated(c, text, level)
    command = [a.replace("{F}", "case.toml") for a in c.choice(SCENARIO_COMMANDS)]
    return Case(command, {"case.toml": data}, f"{label}: " + "; ".join(steps))


#: every shipped workflow (docs/workflows.md), the bases of the workflow-file cases
WORKFLOW_BASES = [(p.stem, p.read_text(encoding="utf-8")) for p in sorted((ROOT / "workflows").glob("*.toml"))]
#: the commands that read a workflow file ({F}); a scenario naming it ({S}) is written beside it
WORKFLOW_COMMANDS = [["workflows", "{F}"], ["workflows", "{F}", "--json"], ["trace", "main", "--workflow", "{F}"],
                     ["trace", "main", "--workflow", "{F}", "--json"], ["sweep", "--workflow", "{F}", "--json"],
                     ["trace", "{S}"], ["schema", "workflow"]]  # fmt: skip


def workflow_case(c: Chooser, level: str | None = None) -> Case:
    """A mutated workflow file (bytes or TOML, as `scenario_case`) and a command that reads it:
    `sim workflows`, `--workflow`, or a scenario file that names it."""
    label, text = c.choice(WORKFLOW_BASES)
    data, steps = mutated(c, text, level)
    command = [a.replace("{F}", "wf.toml").replace("{S}", "uses.toml") for a in c.choice(WORKFLOW_COMMANDS)]
    files = {"wf.toml": data, "uses.toml": b'workflow = "wf.toml"\n'}
    return Case(command, files, f"workflow {label}: " + "; ".join(steps))


# -- argument lists -------------------------------------------------------------------------------
NAMES = ["main", "superseded", "versions-off", "stale-write", "lost-announcement"]
HUGE = ["1" + "0" * 30, "1000000000", "99", "-1", "-0", "abc", "", "1.5", "0x10", " 5", "1e3", "-99999999999999999999"]
SETS = ["fencing=off", "pins=off", "key=none", "rule=any-accepted", "gate=fail-closed", "checkpoints=end-only",
        "fencing=", "=on", "fencing==on", "FENCING=ON", "fencing=on=off", "silent=crashed", "change=never",
        "post_death=no", "x" * 300 + "=on", "pins=off,fencing=off", "fencing", "", "=", "fencing=\u00e9"]  # fmt: skip


def junk_tokens(fx: Fixtures) -> list[str]:
    return [
        "", "-", "--", "-x", "--bogus", "--json", "--set", "--out", "--check", "--help", "-h", "nosuch",
        "x" * 300, "x" * 300 + ".toml", "a/" * 150 + "x.toml", "/dev/null", "/dev/zero", "/proc/self/mem",
        "/sys/kernel/notes", "/", ".", "..", fx.folder, fx.fifo, fx.loop, fx.binary, fx.empty, fx.afile,
        fx.afile + "/sub", fx.afile + "/sub.toml", "\udcff.toml", "main.toml", "MAIN", "main ", *HUGE,
        *SETS[:6],
    ]  # fmt: skip


def out_paths(fx: Fixtures) -> list[str]:
    """--out values that cannot be written (never "/" or a real system folder: the case runs as root)."""
    return [fx.afile, fx.afile + "/sub", "/dev/null", "/proc/self/mem", "/proc/nonexistent/x", fx.fifo, fx.loop,
            fx.loop + "/sub", "x" * 300, "out/" + "y" * 300, ""]  # fmt: skip


def base_command(c: Chooser, fx: Fixtures) -> list[str]:
    """A valid, bounded command (each runs in well under a second)."""
    kind = c.choice(["trace", "trace", "trace", "diff", "diff", "check", "explore", "scenarios", "schema"])
    if kind == "scenarios":
        return ["scenarios"] + c.choice([[], ["--json"]])
    if kind == "schema":
        return ["schema"] + c.choice([[], ["scenario"], ["--out", "out"], ["scenario", "--out", "out"]])
    if kind == "trace":
        args = ["trace", c.choice(NAMES + [fx.valid])]
        for option in c.choice([[], ["--json"], ["--check"], ["--format", "itf"], ["--format", "text"],
                                ["--until", "5"], ["--no-color", "--width", "80"], ["--step"],
                                ["--check", "--json"], ["--until", "3", "--format", "itf"]]):  # fmt: skip
            args.append(option)
        if c.integer(0, 2) == 0:
            args += ["--set", c.choice(SETS[:6])]
        return args
    if kind == "diff":
        if c.integer(0, 1):
            args = ["diff", c.choice(NAMES), c.choice(NAMES + [fx.valid])]
        else:
            args = ["diff", c.choice(NAMES), "--set", c.choice(SETS[:6])]
        return args + c.choice([[], ["--json"], ["--no-color", "--width", "100"]])
    if kind == "check":
        args = ["check", "-k", "0", "-t", "2", "-j", "1", "--out", "out"]
        args += c.choice([[], ["--json"], ["-p", "each"], ["-p", "all-on,fencing=off"], ["--set", "pins=off"],
                          ["--set", "checkpoints=end-only"]])  # fmt: skip
        return args
    args = ["explore", "--examples", "5", "--seed", str(c.integer(0, 9)), "--max-faults", "2", "--out", "out"]
    return args + c.choice([[], ["--set", "fencing=off"], ["--set", "pins=off"], ["--set", "key=none"]])


#: option -> junk made for it (in addition to the general junk)
#: --scheduler values that are not an address (a valid one would connect, or start a cluster)
SCHEDULER_JUNK = [
    "x:1:2:3", "[:1", "a" * 300 + ":1", "127.0.0.1:99999", "", ":", ":1", "local:", "local:0", "local:99", "local:-1",
    "tcp://", "tcp://:1", "[::1]:0", "[::1]", "[zz]:1", "host:-1", "host:1x", "\udcff:1", "a..b:1", "-a:1", "a-:1",
    "1.2.3.4.5:1", "999.1.1.1:5", "host:" + "9" * 30, "x" * 64 + ".com:1", "local:1" + "0" * 30, "http://h:1",
]  # fmt: skip

OPTION_JUNK: dict[str, Callable[[Fixtures], list[str]]] = {
    "--scheduler": lambda fx: SCHEDULER_JUNK,
    "-k": lambda fx: HUGE,
    "-t": lambda fx: HUGE,
    "--max-faults": lambda fx: HUGE,
    "--examples": lambda fx: ["-1", "abc", "", "1.5", "0x10", "-0"],  # no huge counts: a valid count runs that long
    "--seed": lambda fx: HUGE,
    "--until": lambda fx: HUGE,
    "--width": lambda fx: HUGE + ["39", "0"],
    "--set": lambda fx: SETS,
    "--out": out_paths,
    "--format": lambda fx: ["json", "", "ITF", "text,itf"],
    "-p": lambda fx: ["none", "", "each,all", "fencing=maybe", "all-on,,", "x" * 300, "fencing=off+fencing=on"],
    "-j": lambda fx: ["0", "-1", "abc", "", "1.5"],
}

SWEEP_BAD = [
    ["sweep", "--workers", "0"], ["sweep", "--workers", "-1"], ["sweep", "--workers", "abc"], ["sweep", "--bogus"],
    ["sweep", "--workers"], ["sweep", "extra"], ["sweep", "--out"], ["sweep", "--out", "{afile}"],
    ["sweep", "--out", "{afile}/sub"], ["sweep", "--out", "/proc/self/mem"], ["sweep", "--out", "/dev/null"],
    ["sweep", "--out", "{loop}"], ["sweep", "--workers", "1" + "0" * 30, "--bogus"],
]  # fmt: skip


def sanitize(args: list[str]) -> list[str]:
    """Keep fuzzed arguments from doing harm in-process: at most 2 workers (issue 11's item 10,
    unbounded workers, is a fork bomb, not something to run on a shared machine), never the
    sweep's real work, and bounded check/explore runs: at most 50 explore examples, a valid
    check fault bound of at most 2 and then a horizon of at most 4 (`-k 5 -t 2` is 32,768
    schedules, about 20 s: real work, not bad input). Junk fault bounds (99, 10**9, 10**30)
    stay: issue 11 asks for them to be refused up front."""
    out = list(args)
    for i, a in enumerate(out[:-1]):
        # (option, largest value kept): a larger valid value would be real work, not bad input
        for names, most in ((("-j", "--workers"), 2), (("--examples", "-n"), 50)):
            if a in names and _int(out[i + 1]) is not None and _int(out[i + 1]) > most:  # type: ignore[operator]
                out[i + 1] = str(most)
    if out and out[0] == "check":
        # a valid fault bound (1..12) with a long horizon is a real, long check: keep it short
        for i, a in enumerate(out[:-1]):
            k = _int(out[i + 1]) if a in ("-k", "--max-faults") else None
            if k is not None and 2 < k <= MAX_CHECK_FAULTS:
                out[i + 1] = "2"
        faults = [_int(out[i + 1]) for i, a in enumerate(out[:-1]) if a in ("-k", "--max-faults")]
        if any(k is not None and 1 <= k <= MAX_CHECK_FAULTS for k in faults):
            for i, a in enumerate(out[:-1]):
                if a in ("-t", "--horizon") and (_int(out[i + 1]) or 0) > 4:
                    out[i + 1] = "2"
            if not {"-t", "--horizon"} & set(out):
                out += ["-t", "2"]
    if out and out[0] == "explore" and "--examples" not in out and "-n" not in out:
        out += ["--examples", "5"]
    if out and out[0] == "check" and not {"-k", "--max-faults"} & set(out):
        out += ["-k", "0"]
    return out


def _int(text: str) -> int | None:
    """The integer click would read from `text`, or None."""
    try:
        return int(text)
    except ValueError:
        return None


def argument_case(c: Chooser, fx: Fixtures) -> Case:
    """A valid bounded command, mutated 1..3 times."""
    if c.integer(0, 19) == 0:
        args = [a.replace("{afile}", fx.afile).replace("{loop}", fx.loop) for a in c.choice(SWEEP_BAD)]
        return Case(args, what="sweep refused before work")
    args = base_command(c, fx)
    steps = []
    junk = junk_tokens(fx)
    for _ in range(c.integer(1, 3)):
        op = c.choice(["drop", "duplicate", "swap", "replace", "insert", "option-junk", "option-junk"])
        if len(args) < 2:
            op = "insert"
        i = c.integer(1, len(args) - 1) if len(args) > 1 else 1
        if op == "drop":
            steps.append(f"drop {args[i]!r}")
            del args[i]
        elif op == "duplicate":
            steps.append(f"duplicate {args[i]!r}")
            args.insert(i, args[i])
        elif op == "swap":
            j = c.integer(0, len(args) - 1)
            args[i], args[j] = args[j], args[i]
            steps.append(f"swap {i} and {j}")
        elif op == "replace":
            args[i] = c.choice(junk)
            steps.append(f"replace {i}")
        elif op == "insert":
            j = c.integer(1, len(args))
            args.insert(j, c.choice(junk))
            steps.append(f"insert at {j}")
        else:
            options = [k for k, a in enumerate(args[:-1]) if a in OPTION_JUNK]
            if options:
                k = c.choice(options)
                args[k + 1] = c.choice(OPTION_JUNK[args[k]](fx))
                steps.append(f"junk for {args[k]}")
            else:
                option = c.choice(sorted(OPTION_JUNK))
                args += [option, c.choice(OPTION_JUNK[option](fx))]
                steps.append(f"add {option}")
    return Case(sanitize(args), what="; ".join(steps))


#: what _SIM_COMPLETE may say: click's six instructions, and others
COMPLETE_INSTRUCTIONS = [
    "bash_complete", "zsh_complete", "fish_complete", "bash_source", "zsh_source", "fish_source", "bogus", "",
    "bash", "complete", "bash_", "_complete", "BASH_COMPLETE", "bash_complete ", "tcsh_complete", "\udcff",
]  # fmt: skip
COMPLETE_WORDS = ["sim", "trace", "tr", "conform", "check", "--set", "fencing=", "--profile", "--", "-", "'", '"',
                  "main", "--out", "x" * 300, "\udcff", "", " "]  # fmt: skip


def completion_case(c: Chooser) -> Case:
    """A shell completion request as a shell (or anything else) might make it: the
    instruction, COMP_WORDS and COMP_CWORD drawn, each possibly missing or junk."""
    env = {"_SIM_COMPLETE": c.choice(COMPLETE_INSTRUCTIONS)}
    if c.integer(0, 5):
        env["COMP_WORDS"] = " ".join(c.choice(COMPLETE_WORDS) for _ in range(c.integer(0, 5)))
    if c.integer(0, 5):
        env["COMP_CWORD"] = c.choice([str(c.integer(0, 6)), "-1", "abc", "", "1.5", "9" * 30, " 2"])
    return Case([], env=env, what="shell completion")


def scheduler_case(c: Chooser) -> Case:
    """`sim check --scheduler` with an address that is not one."""
    return Case(["check", "-k", "0", "-t", "1", "-j", "1", "--scheduler", c.choice(SCHEDULER_JUNK)])


def special_cases(fx: Fixtures) -> list[Case]:
    """Fixed hostile inputs from issue 11 (special files, names, --out targets, bounds)."""
    long = "x" * 300
    return [
        Case(["trace", fx.folder]), Case(["trace", fx.fifo]), Case(["trace", fx.loop]), Case(["trace", "/dev/null"]),
        Case(["trace", "/dev/zero"]), Case(["trace", "/proc/self/mem"]), Case(["trace", "/sys/kernel/notes"]),
        Case(["trace", fx.binary]), Case(["trace", fx.empty]), Case(["trace", long]), Case(["trace", long + ".toml"]),
        Case(["diff", "main", long]), Case(["trace", "/"]), Case(["trace", fx.afile + "/sub.toml"]),
        Case(["check", "-k", "1", "-t", "4", "-j", "1", "--out", fx.afile + "/sub"]),
        Case(["check", "-k", "0", "-t", "2", "-j", "1", "--out", fx.afile]),
        Case(["check", "-k", "0", "-t", "2", "-j", "1", "--out", "/proc/self/mem"]),
        Case(["explore", "--examples", "50", "--seed", "1", "--set", "fencing=off", "--out", fx.afile + "/sub"]),
        Case(["check", "-k", "1" + "0" * 30, "-j", "1"]), Case(["check", "-k", "1000000000", "-j", "1"]),
        Case(["check", "-k", "99", "-t", "8", "-j", "1"]),
        Case(["trace", "case.toml"], {"case.toml": b'description = "\xff"\n'}, "invalid UTF-8"),
        Case(["trace", "case.toml"], {"case.toml": b"[expect]\nviolations = 5\n"}, "expect.violations not a list"),
        Case(["trace", "case.toml"], {"case.toml": b"x = " + b"[" * 500 + b"]" * 500 + b"\n"}, "500-deep array"),
        Case(["trace", "case.toml"], {"case.toml": b"x = " + b"{a = " * 340 + b"1" + b"}" * 340 + b"\n"}, "deep table"),
        Case(["trace", "case.toml"], {"case.toml": b"[schedule]\nhorizon = 1000000000000000000\n"
                                      b"silences = [{attempt = 1, at = 3, wake = 1000000000000000000}]\n"}),
        Case(["trace", "case.toml"], {"case.toml": b"[schedule]\nduplicate_deliveries = [{nth = 0}]\n"}, "nth = 0"),
        Case(["trace", "case.toml"], {"case.toml": b"[schedule]\nduplicate_deliveries = ["
                                      + b", ".join([b"{nth = 1}"] * 100_000) + b"]\n"}, "10**5 entries"),
        Case(["trace", "main", "--colour"]), Case(["trace"]), Case(["nosuch"]), Case(["check", "-k", "abc"]),
        Case(["trace", "main", "--until", "1" + "0" * 30]), Case(["trace", "main", "--width", "1000000000"]),
        Case(["sweep", "--out", fx.afile + "/sub"]), Case(["sweep", "--workers", "0"]),
        # issue 23: shell completion without what a shell sets, and scheduler addresses that are not
        Case([], env={"_SIM_COMPLETE": "bash_complete"}),
        Case([], env={"_SIM_COMPLETE": "bash_complete", "COMP_WORDS": "sim trace ", "COMP_CWORD": "abc"}),
        Case([], env={"_SIM_COMPLETE": "zsh_complete", "COMP_WORDS": "sim conform "}),
        Case([], env={"_SIM_COMPLETE": "bogus"}),
        *[Case(["check", "-k", "0", "-t", "1", "-j", "1", "--scheduler", v])
          for v in ("x:1:2:3", "[:1", "a" * 300 + ":1", "127.0.0.1:99999")],
    ]  # fmt: skip


# -- running a case ----------------------------------------------------------------------------------
class CaseTimeout(BaseException):
    """Raised by a timer when a case runs over its CPU limit or its clock backstop (a
    BaseException: nothing in sim catches it)."""


@dataclass
class Result:
    case: Case
    code: int | None
    out: str
    err: str
    #: CPU seconds the case used (its process's and its waited-for children's)
    seconds: float
    #: an exception that escaped `sim.cli.main` (in-process only): its type and where it was raised
    exception: str | None = None


#: the most address space a case may add to the process (a huge allocation becomes a MemoryError,
#: not the machine's OOM killer: `sim check -k 1000000000` asks for it)
MEMORY_HEADROOM = 3 << 30


@contextlib.contextmanager
def memory_cap(headroom: int = MEMORY_HEADROOM) -> Any:
    """Lower the soft RLIMIT_AS to the current size plus `headroom` while a case runs."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/statm") as statm:
            size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        cap = size + headroom
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft != resource.RLIM_INFINITY:
            cap = min(cap, soft)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, OSError, ValueError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _on_alarm(signum: int, frame: Any) -> None:
    raise CaseTimeout()


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its waited-for children."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + children_cpu_seconds()


def children_cpu_seconds() -> float:
    """CPU seconds used so far by this process's waited-for children."""
    import resource

    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def _write_files(folder: Path, case: Case) -> None:
    for name, data in case.files.items():
        (folder / name).write_bytes(data)


def run_case(case: Case, limit: float = LIMIT_SECONDS) -> Result:
    """Run `case` with `sim.cli.main` in a fresh folder; stdout, stderr and stdin replaced;
    stopped after `limit` seconds of this process's CPU time (SIGPROF), or after WALL_FACTOR
    times that on the clock (SIGALRM: a hang that does no work); main thread only."""
    from sim.cli import main

    folder = Path(tempfile.mkdtemp(prefix="sim-fuzz-"))
    # text streams over bytes, as a process has: click writes some output (a completion
    # script) to the stream's binary buffer
    out, err = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape", write_through=True)
                for _ in range(2))  # fmt: skip
    code: int | None = None
    exception = None
    old_handlers = signal.signal(signal.SIGALRM, _on_alarm), signal.signal(signal.SIGPROF, _on_alarm)
    old_stdin = sys.stdin
    old_env = {k: os.environ.get(k) for k in case.env}
    started = cpu_seconds()
    try:
        _write_files(folder, case)
        os.environ.update(case.env)
        sys.stdin = io.StringIO(case.stdin)
        with memory_cap(), contextlib.chdir(folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            signal.setitimer(signal.ITIMER_PROF, limit)
            signal.setitimer(signal.ITIMER_REAL, limit * WALL_FACTOR)
            try:
                code = main(list(case.args))
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
                signal.setitimer(signal.ITIMER_REAL, 0)
    except CaseTimeout:
        exception = f"over {limit:.0f} s (stopped)"
    except SystemExit as exc:  # click's shell completion ends with sys.exit: its code is the exit code
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as exc:  # an uncaught exception is what the harness looks for
        exception = signature(exc)
    finally:
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        seconds = cpu_seconds() - started
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handlers[0])
        signal.signal(signal.SIGPROF, old_handlers[1])
        sys.stdin = old_stdin
        shutil.rmtree(folder, ignore_errors=True)
    return Result(case, code, _text(out), _text(err), seconds, exception)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    data = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return str(data.decode("utf-8", "replace"))


def signature(exc: BaseException) -> str:
    """`Type at file:line` of the innermost frame inside sim/ (else the innermost frame)."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if f"{os.sep}sim{os.sep}" in f.filename]
    frame = (ours or frames or [None])[-1]
    where = "" if frame is None else f" at {_short(frame.filename)}:{frame.lineno}"
    return f"{type(exc).__name__}{where}: {str(exc)[:120]}"


def _short(filename: str) -> str:
    parts = Path(filename).parts
    for anchor in ("sim", "site-packages"):
        if anchor in parts:
            return "/".join(parts[len(parts) - 1 - parts[::-1].index(anchor) :])
    return filename


def sim_binary() -> list[str]:
    """The venv's `sim` console script (beside this Python), else `python -m sim`."""
    candidate = Path(sys.executable).with_name("sim")
    return [str(candidate)] if candidate.exists() else [sys.executable, "-m", "sim"]


def _limit_child(cpu_limit: float) -> Callable[[], None]:
    """What the child runs before exec: at most MEMORY_HEADROOM plus 1 GB of address space,
    and a CPU limit a second past `cpu_limit` (SIGXCPU stops it there)."""

    def limit() -> None:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_HEADROOM + (1 << 30), hard))
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_limit) + 1, hard))

    return limit


def run_subprocess(case: Case, limit: float = LIMIT_SECONDS) -> Result:
    """Run `case` as a real process (its own session): its CPU time is measured, and it is
    killed with its children past `limit` CPU seconds or WALL_FACTOR times that on the clock."""
    folder = Path(tempfile.mkdtemp(prefix="sim-fuzz-"))
    started = children_cpu_seconds()
    try:
        _write_files(folder, case)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COV_"))} | case.env
        proc = subprocess.Popen(
            sim_binary() + [os.fsencode(a).decode("utf-8", "surrogateescape") for a in case.args],
            cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            start_new_session=True, preexec_fn=_limit_child(limit),
        )  # fmt: skip
        try:
            out, err = proc.communicate(case.stdin.encode(), timeout=limit * WALL_FACTOR)
            code: int | None = proc.returncode
            exception = None if code != -signal.SIGXCPU else f"over {limit:.0f} s (killed)"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            code, exception = None, f"over {limit:.0f} s (killed)"
    finally:
        seconds = children_cpu_seconds() - started
        shutil.rmtree(folder, ignore_errors=True)
    return Result(case, code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), seconds, exception)


# -- judging --------------------------------------------------------------------------------------------
def wants_json(args: Sequence[str]) -> bool:
    """Whether the command asked for a JSON document on stdout (`--json` or `--format itf`)."""
    return args[:1] != ["sweep"] and ("--json" in args or any(
        a == "--format" and b == "itf" for a, b in zip(args, args[1:])))  # fmt: skip


def problems(r: Result, limit: float = LIMIT_SECONDS) -> list[str]:
    """What breaks the README's contract in this result (empty: it holds). Each entry starts
    with its category: exit-code, internal, traceback, exception, exit-2-lines, json, slow."""
    found = []
    if r.exception is not None and r.exception.startswith("over"):
        found.append(f"slow: {r.exception}")
    elif r.exception is not None:
        found.append(f"exception: {r.exception}")
    elif r.code not in (0, 1, 2):
        found.append(f"exit-code: {r.code}")
    if "sim: internal error" in r.err:  # sim.cli caught an exception it did not expect: a bug
        found.append(f"internal: {r.err.strip().splitlines()[-1][:200]}")
    if "Traceback (most recent call last)" in r.err or "Traceback (most recent call last)" in r.out:
        last = [line for line in r.err.strip().splitlines() if line and not line.startswith(" ")][-1:]
        found.append(f"traceback: {last[0][:160] if last else ''}")
    if r.code == 2:
        lines = r.err.strip("\n").splitlines()
        if len(lines) != 1 or not lines[0].strip():
            found.append(f"exit-2-lines: {len(lines)} lines on stderr")
    if r.code in (0, 1) and r.exception is None and wants_json(r.case.args) and "--help" not in r.case.args \
            and "-h" not in r.case.args:  # fmt: skip
        try:
            json.loads(r.out)
        except ValueError:
            found.append("json: stdout is not one JSON document")
    if r.seconds > limit and not found:
        found.append(f"slow: {r.seconds:.1f} s")
    return found
