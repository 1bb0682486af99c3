"""docs/extending.md carried out in process: a toy fault kind, a toy knob and a toy property.

Each is declared here as its recipe says (the fault kind's module, the knob's, the
property's), registered around each test by the `toys` fixture (their registry lines) and
unregistered after it, every registry restored, so that no other test sees them (under
pytest-xdist too, and in any order). The tests show that each reaches a scenario file (parsed
from TOML text), `sim trace`, `sim explore` (a short seeded run that draws the toy fault) and
`sim check` (a tiny bound that enumerates it), and what the toys change of the reports
(`sim sweep`, with the toy scenario named).

`RECIPES` declares, for each of the three recipes, every file it makes a maintainer touch and
what in this file stands for it; `test_the_doc_lists_the_files_the_recipes_touched` compares
that with docs/extending.md's lists, file by file and in its stated counts.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import sim.scenario as scenario_module
from sim.model import faults
from sim.model import knobs
from sim import properties
from sim.cli import main
from sim.model.events import Sent, payload
from sim.engine.run import run
from sim.model.faults import Copies, Entry, Fault, Moment, Unheard
from sim.model.faults.base import Bounds, Choices, Observed, RunFacts, Setting, integer_field, lower
from sim.model.knobs import Knob
from sim.properties import ALWAYS, Property
from sim.properties.base import Monitor
from sim.scenario import dump, parse
from sim.model.schedule import Schedule
from sim.model.switches import Switches
from sim.engine.trace import Event, Kind, Trace

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "extending.md"


# -- the fault kind's module (sim/model/faults/three_copies.py) ------------------------------------
#: its directive: one the SEND moment's rule already carries out (`sim.model.faults.Copies`)
THRICE = Copies(3)


@dataclass(frozen=True, slots=True)
class ThreeCopies(Fault):
    """The run's `nth` send reaches the feed as three concurrent copies (a toy: a delivery
    retried twice by a network that had already delivered it)."""

    key = "three_copies"
    entries = {"nth": Entry("which send of the run reaches the feed as three concurrent copies (1: the first)", lo=1)}
    plural = "three-copy deliveries"
    check_name = "three_copies"
    moment = Moment.SEND
    shown_by = "sent"
    coverage_labels = ("three copies",)
    article = False

    nth: int = 1

    @classmethod
    def parse(cls, item: dict[str, Any], where: str) -> ThreeCopies:
        nth = integer_field(item, "nth", where, default=1)
        assert nth is not None
        return cls(nth)

    def dump(self) -> str:
        return f"{{nth = {self.nth}}}"

    def sort_key(self) -> tuple[int]:
        return (self.nth,)

    def describe(self) -> str:
        return f"send {self.nth} reaches the feed three times"

    def where(self) -> tuple[int]:
        return (self.nth,)

    def directive(self) -> Copies:
        return THRICE

    def unfired(self, facts: RunFacts) -> str:
        return f"three copies of send {self.nth}: only {facts.sends} send(s) happened"

    @classmethod
    def draw(cls, c: Choices, bounds: Bounds, sections: int, drawn: Sequence[Fault]) -> ThreeCopies | None:
        nth = c.integer(1, bounds.max_nth)
        return None if cls(nth) in drawn else cls(nth)

    def simpler(self, sections: int) -> Iterator[ThreeCopies]:
        for nth in lower(self.nth, 1):
            yield ThreeCopies(nth)

    def complexity(self) -> tuple[int, int]:
        return 0, self.nth

    @classmethod
    def singles(cls, bounds: Bounds, sections: int) -> Iterator[ThreeCopies]:
        for nth in range(1, bounds.max_nth + 1):
            yield cls(nth)

    @classmethod
    def observe(cls, event: Observed) -> tuple[str, int, int] | None:
        return ("three copies", event.tick, event.tick) if payload(event, Sent)["copies"] == 3 else None

    @classmethod
    def offers(cls, code: Sequence[Fault], tick: int, where: tuple[int, ...], horizon: int,
               schedule: Setting) -> list[Fault]:  # fmt: skip
        return [cls(where[0])]

    @classmethod
    def bound_words(cls, horizon: int, schedule: Setting) -> str:
        return f"any send at a tick <= t{horizon}, three times"


# -- the knob's module (sim/model/knobs/three_strict.py) -------------------------------------------
KNOB = Knob(
    name="three_strict",
    values=("off", "on"),
    words="whether a send that reaches the feed three times is judged (a toy)",
    case=2,
    meanings=("no-three-copies is not judged", "no-three-copies is judged"),
)


# -- the property's module (sim/properties/no_three_copies.py) -------------------------------
def step(memo: Any, e: Event, content: tuple[int, ...], position: int) -> tuple[Any, bool]:
    """A send that reaches the feed three times or more breaks it; no memo."""
    return memo, payload(e, Sent)["copies"] >= 3


def why(trace: Trace, index: int) -> str:
    e = trace.events[index]
    return f"the send at t{e.tick} reached the feed {payload(e, Sent)['copies']} times"


PROPERTY = Property(
    name="no-three-copies",
    temporal=ALWAYS,
    description="no send reached the feed three times",
    monitor=Monitor(frozenset({Kind.SENT}), step),
    why=why,
    article=False,
    applies=lambda switches: switches.knob("three_strict") == "on",
)

#: the named scenario (scenarios/three-copies.toml): send 1 (#2's, at t10) reaches the feed three times
NAME = "three-copies"
SCENARIO = """description = "A toy: the first send reaches the feed three times (tests/test_extending.py)."
[switches]
change = "never"
three_strict = "on"
[schedule]
three_copies = [{nth = 1}]
[expect]
posts_applied = 1
violations = [{invariant = "no-three-copies", tick = 10}]
"""


# -- the registry lines, around each test -----------------------------------------------------
def registries() -> tuple[object, ...]:
    return (tuple(faults.KINDS), dict(knobs.KNOBS), properties.PROPERTIES, dict(properties.BY_NAME), properties.NAMES)


@pytest.fixture
def toys() -> Iterator[None]:
    """Register the toys (sim/model/faults/__init__.py's `register` line, sim/model/knobs/__init__.py's
    and sim/properties/__init__.py's imports), then restore every registry."""
    before = registries()
    faults.register(ThreeCopies)
    knobs.register(KNOB)
    properties.register(PROPERTY)
    try:
        yield
    finally:
        properties.unregister(PROPERTY)
        knobs.unregister(KNOB)
        faults.unregister(ThreeCopies)
        assert registries() == before


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    try:
        code = main(list(args))
    except SystemExit as exit:  # a command that ends with sys.exit
        code = int(exit.code or 0)
    return code, capsys.readouterr().out


# -- they reach a scenario file, sim trace, sim explore and sim check -----------------------
def test_the_toys_reach_a_scenario_file(toys: None) -> None:
    loaded = parse(SCENARIO, f"{NAME}.toml", NAME)
    assert loaded.schedule.faults[-1:] == (ThreeCopies(1),)
    assert loaded.switches.knob("three_strict") == "on"
    written = dump(NAME, loaded.switches, loaded.schedule)
    assert "three_copies = [{nth = 1}]" in written and 'three_strict = "on"' in written
    assert parse(written, "again.toml", "again").schedule == loaded.schedule
    with pytest.raises(Exception, match="no-three-copies"):  # [expect] names the toy property
        parse(SCENARIO.replace("no-three-copies", "no-four-copies"), "bad.toml", "bad")


def test_the_toys_reach_sim_trace(toys: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / f"{NAME}.toml"
    path.write_text(SCENARIO, encoding="utf-8")
    assert cli(capsys, "trace", str(path), "--check")[0] == 0  # its [expect] holds
    code, out = cli(capsys, "trace", str(path), "--json")
    doc = json.loads(out)
    sent = [e for e in doc["events"] if e["kind"] == "sent"]
    assert code == 0 and sent[0]["copies"] == 3 and [e["kind"] for e in doc["events"]].count("feed") == 4
    assert doc["outcome"]["violations"] == [{"invariant": "no-three-copies", "tick": 10}]
    code, out = cli(capsys, "trace", str(path), "--no-color", "--width", "100")
    assert "delivered 3 times, concurrently" in out and "no-three-copies broke at t10" in out
    # the knob reaches the property: off, the property is not judged
    code, out = cli(capsys, "trace", str(path), "--set", "three_strict=off", "--json")
    assert json.loads(out)["outcome"]["violations"] == []


def test_the_toys_reach_sim_explore(toys: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "explore", "--seed", "3", "-n", "60", "--max-faults", "1", "--faults", "all",
                    "--set", "three_strict=on", "--out", str(tmp_path))  # fmt: skip
    (row,) = [line.split()[2:] for line in out.splitlines() if line.startswith("  three copies ")]
    assert sum(map(int, row)) > 0, out  # the coverage table: drawn, and took effect
    assert "fault kinds drawn:" in out and "three-copy deliveries" in out
    (found,) = tmp_path.glob("no-three-copies--*.toml")
    assert "three_copies = [{nth = 1}]" in found.read_text(encoding="utf-8")
    assert cli(capsys, "trace", str(found), "--check")[0] == 0


def check(capsys: pytest.CaptureFixture[str], *more: str) -> dict[str, Any]:
    code, out = cli(capsys, "check", "-k", "1", "-t", "11", "--faults", "all", "--set", "checkpoints=per-step",
                    "-j", "1", "--json", *more)  # fmt: skip
    assert code in (0, 1), out
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_the_toys_reach_sim_check(toys: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)  # its counterexample files
    doc = check(capsys, "--set", "three_strict=on")
    assert "three_copies" in doc["bound"]["fault_kinds"] and "three_copies" in doc["bound"]["faults"]
    (result,) = doc["results"]
    assert "no-three-copies" in result["judged"] and result["violations"]["no-three-copies"] == 1
    counterexample = Path(result["counterexamples"]["no-three-copies"]).read_text(encoding="utf-8")
    assert "three_copies = [{nth = 1}]" in counterexample
    (off,) = check(capsys)["results"]  # the knob at its default: the property is not judged
    assert "no-three-copies" not in off["judged"] and off["schedules"] == result["schedules"]


# -- what the recipes touch ------------------------------------------------------------------
#: every file each recipe makes a maintainer touch, and what in this file stands for it (NAME:
#: the new kind's, knob's or property's name; a file not carried out here says why)
RECIPES: dict[str, dict[str, str]] = {
    "A fault kind": {
        "sim/model/faults/NAME.py": "ThreeCopies, its directive one the SEND moment's rule carries out",
        "sim/model/faults/__init__.py": "the `register` line: `toys`",
        "scenarios/NAME.toml": "SCENARIO, checked by `sim trace --check`",
        "tests/golden/trace-NAME-80.txt": "its screen: test_a_named_toy_scenario_changes_what_the_doc_says",
        "tests/golden/trace-NAME-120.txt": "its screen: test_a_named_toy_scenario_changes_what_the_doc_says",
        "reports/explainer.html": "every named scenario embedded: test_a_named_toy_scenario_changes_what_the_doc_says",
        "docs/outside.md": "the case in words: ThreeCopies's docstring",
        "README.md": "`--faults all` figures: test_a_kind_beyond_the_article_changes_the_faults_all_figures",
        "tests/test_outside.py": "`--faults all` figures: test_a_kind_beyond_the_article_changes_the_faults_all_figures",
        "docs/schema/scenario.schema.json": "its list and entries: test_the_toys_change_the_schema_of_scenario_files",
    },
    "A knob": {
        "sim/model/knobs/NAME.py": "KNOB",
        "sim/model/knobs/__init__.py": "the import line: `toys`",
        "sim/engine/state.py": "not here: the engine reads a knob through `Setup`; the toy is read by PROPERTY",
        "sim/engine/rules.py": "not here: the rule that applies it; the toy acts through PROPERTY's `applies`",
        "scenarios/NAME.toml": "SCENARIO (three_strict = \"on\")",
        "tests/golden/trace-NAME-80.txt": "its screen: test_a_named_toy_scenario_changes_what_the_doc_says",
        "tests/golden/trace-NAME-120.txt": "its screen: test_a_named_toy_scenario_changes_what_the_doc_says",
        "reports/explainer.html": "every knob embedded: test_the_reports_the_toys_change",
        "docs/outside.md": "the case in words: KNOB's words and meanings",
        "docs/schema/scenario.schema.json": "its values: test_the_toys_change_the_schema_of_scenario_files",
    },
    "A property": {
        "sim/properties/NAME.py": "PROPERTY, step, why",
        "sim/properties/__init__.py": "the import line: `toys`",
        "scenarios/NAME.toml": "SCENARIO, which breaks it",
        "tests/golden/trace-NAME-80.txt": "its screen: test_a_named_toy_scenario_changes_what_the_doc_says",
        "tests/golden/trace-NAME-120.txt": "its screen: test_a_named_toy_scenario_changes_what_the_doc_says",
        "reports/explainer.html": "every property embedded: test_the_reports_the_toys_change",
        "docs/outside.md": "the case in words: PROPERTY's description",
    },
}

#: a recipe's list in docs/extending.md: "Files (N; K in `sim/`):" then one "- `path`" a line
FILES = re.compile(r"^\*\*Files \((\d+); (\d+) in `sim/`\)[^\n]*\n((?:- `[^`]+`[^\n]*\n)+)", re.MULTILINE)


def doc_lists() -> dict[str, list[str]]:
    """Each section of docs/extending.md ("## A fault kind ...") with its list of files."""
    lists: dict[str, list[str]] = {}
    for section in DOC.read_text(encoding="utf-8").split("\n## ")[1:]:
        title = section.split("\n", 1)[0].split(" (")[0].split(":")[0].strip()
        match = FILES.search(section)
        if match is None:
            continue
        paths = re.findall(r"^- `([^`]+)`", match.group(3), re.MULTILINE)
        assert int(match.group(1)) == len(paths), f"{title}: says {match.group(1)} files, lists {len(paths)}"
        assert int(match.group(2)) == sum(p.startswith("sim/") for p in paths), f"{title}: files in sim/"
        lists[title] = paths
    return lists


def test_the_doc_lists_the_files_the_recipes_touched() -> None:
    lists = doc_lists()
    for title, files in RECIPES.items():
        assert title in lists, f"docs/extending.md has no list of files for {title!r}"
        assert sorted(lists[title]) == sorted(files), title
    # the other kinds of change are listed too, each file once
    for title in ("A new directive at an existing moment", "A switch", "An event kind", "A state field"):
        assert title in lists, title
    for title, paths in lists.items():
        assert len(set(paths)) == len(paths), title
        for path in paths:
            assert (ROOT / path.replace("NAME", "main")).exists() or "NAME" in path, f"{title}: {path}"


def test_a_fault_kind_takes_at_most_four_files_of_sim() -> None:
    lists = doc_lists()
    assert sum(p.startswith("sim/") for p in lists["A fault kind"]) == 2
    assert sum(p.startswith("sim/") for p in lists["A new directive at an existing moment"]) <= 4


# -- what they change of the reports ------------------------------------------------------
def sweep(capsys: pytest.CaptureFixture[str], out: Path) -> dict[str, bytes]:
    """The reports `sim sweep --out` writes, by file name."""
    assert cli(capsys, "sweep", "--out", str(out))[0] == 0
    return {p.name: p.read_bytes() for p in out.iterdir()}


def differ(written: dict[str, bytes], other: dict[str, bytes]) -> set[str]:
    """The reports of a sweep (`written`) that differ from `other`'s."""
    return {f"reports/{name}" for name in written if written[name] != other.get(name)}


def test_the_reports_the_toys_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fault kind changes no report; a knob and a property each change the explainer
    (which embeds every knob and every property), and only it: as the doc's lists say."""
    committed = {p.name: p.read_bytes() for p in (ROOT / "reports").iterdir() if p.is_file()}
    assert differ(sweep(capsys, tmp_path / "none"), committed) == set()
    faults.register(ThreeCopies)
    try:
        with_kind = sweep(capsys, tmp_path / "kind")
    finally:
        faults.unregister(ThreeCopies)
    knobs.register(KNOB)
    try:
        with_knob = sweep(capsys, tmp_path / "knob")
        properties.register(PROPERTY)  # the toy property reads the toy knob
        try:
            with_property = sweep(capsys, tmp_path / "property")
        finally:
            properties.unregister(PROPERTY)
    finally:
        knobs.unregister(KNOB)
    assert differ(with_kind, committed) == set()
    assert differ(with_knob, committed) == {"reports/explainer.html"} <= set(RECIPES["A knob"])
    assert differ(with_property, with_knob) == {"reports/explainer.html"} <= set(RECIPES["A property"])


def test_the_toys_change_the_schema_of_scenario_files(toys: None, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """A fault kind and a knob are in the JSON Schema of scenario files as they are registered
    (its list with its entries; its values), so the committed docs/schema/scenario.schema.json
    is regenerated with them (`sim schema --out docs/schema`); a property is not in it."""
    assert cli(capsys, "schema", "--out", str(tmp_path))[0] == 0
    written = json.loads((tmp_path / "scenario.schema.json").read_text(encoding="utf-8"))
    assert written != json.loads((ROOT / "docs" / "schema" / "scenario.schema.json").read_text(encoding="utf-8"))
    listed = written["properties"]["schedule"]["properties"]["three_copies"]
    assert listed["items"]["properties"]["nth"]["minimum"] == 1 and listed["items"]["required"] == []
    assert written["properties"]["switches"]["properties"][KNOB.name]["enum"] == list(KNOB.values)


def test_a_named_toy_scenario_changes_what_the_doc_says(toys: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """Named (a file in scenarios/), the toy scenario has a screen at 80 and 120 columns (its
    golden files, tests/test_swimlane.py), passes `sim scenarios --check`, and is embedded in
    reports/explainer.html, the only report it changes."""
    named = tmp_path / "scenarios"
    shutil.copytree(scenario_module.scenarios_dir(), named, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (named / f"{NAME}.toml").write_text(SCENARIO, encoding="utf-8")
    monkeypatch.setattr(scenario_module, "scenarios_dir", lambda: named)
    for width in (80, 120):
        code, out = cli(capsys, "trace", NAME, "--width", str(width), "--no-color")
        assert code == 0 and out.startswith(f"{NAME}: change=never three_strict=on") and max(map(len, out.splitlines())) <= width
    code, out = cli(capsys, "scenarios", "--check")
    assert code == 0, out
    committed = {p.name: p.read_bytes() for p in (ROOT / "reports").iterdir() if p.is_file()}
    assert differ(sweep(capsys, tmp_path / "reports"), committed) == {"reports/explainer.html"}


def test_a_kind_beyond_the_article_changes_the_faults_all_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """A kind beyond the article joins every `--faults all` search: the number of schedules
    `sim check --faults all` runs (README.md and tests/test_outside.py state it for -k 1 -t
    12) grows, and `sim explore --faults all --seed 1` draws other schedules."""
    monkeypatch.chdir(tmp_path)  # the counterexample files
    before = check(capsys)["results"][0]["schedules"]
    faults.register(ThreeCopies)
    try:
        assert check(capsys)["results"][0]["schedules"] > before
    finally:
        faults.unregister(ThreeCopies)


@dataclass(frozen=True, slots=True)
class Misdirected(ThreeCopies):
    """A SEND kind whose directive is an ACT one: no rule of its moment carries it out."""

    key = "misdirected"
    check_name = "misdirected"

    def directive(self) -> Unheard:  # type: ignore[override]
        return Unheard(1)


def test_a_directive_no_rule_of_its_moment_carries_out_is_refused_by_name() -> None:
    """The moments' rules read their directive as its type (`rules.directed`), never by a cast:
    a kind whose directive its moment's rule does not read fails the run, naming itself."""
    faults.register(Misdirected)
    try:
        with pytest.raises(TypeError, match=r"Misdirected: Unheard\(ticks=1\) is no directive of its moment; expected Copies"):
            run(Switches(), Schedule(faults=(Misdirected(1),)))
    finally:
        faults.unregister(Misdirected)
