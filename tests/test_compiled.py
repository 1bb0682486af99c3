"""The compiled modules (docs/compiled.md): one source, the same output, never a stale build.

- `sim/engine/working.py` is what `sim.engine.state.working_source` writes from the fields.
- Where this install compiled them (`sim --version` says "compiled"), the compiled and the
  interpreted modules give the same bytes: `sim sweep`'s reports, `sim check --json`, `sim
  explore`'s summary and counterexample files, `sim trace --json`, and the search on settings drawn
  at random (each mode in its own process: `SIM_COMPILED=0`).
  CI sets `SIM_REQUIRE_COMPILED=1`, so that a build that did not happen fails here rather
  than skipping.
- A build is used only while it is the sources': a stamp that differs from the sources, a
  missing compiled file or `SIM_COMPILED=0` runs the interpreted modules (`decide`), in a real
  process too.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
from conftest import rerun_environment

from sim.base import compiled
from sim.base.compiled import GROUP, MODULES, NAMES, STAMP, Finder, decide, listing
from sim.engine.state import AttemptState, State, working_class_source, working_source

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "sim"
BUILT = compiled.mode() == "compiled"
needs_build = pytest.mark.skipif(
    not BUILT and os.environ.get("SIM_REQUIRE_COMPILED") != "1",
    reason=f"this install runs {compiled.mode()}",
)


# -- the working copies are derived from the fields ------------------------------------------------
def test_the_working_copies_are_what_the_fields_say() -> None:
    assert (PACKAGE / "engine" / "working.py").read_text() == working_source(), (
        "sim/engine/working.py is stale: run `python -m sim.engine.state` to write it again"
    )


def test_the_working_copy_follows_a_field_added_to_the_declaration() -> None:
    """The check above can fail: a field added to `State` changes the source it compares with."""
    source = working_class_source(State)
    assert "    tick: int\n" in source and "self.stale_applied, self.tick," in source
    assert "    results: tuple[Part | None, ...]\n" in working_class_source(AttemptState)  # the declaration left out

    namespace: dict[str, object] = {}
    exec(compile("from typing import Annotated, NamedTuple\n"  # noqa: S102 (a record of our own)
                 "class Grown(NamedTuple):\n    backlog: Annotated[int, 'kept']\n    tick: int = 0\n",
                 "<grown>", "exec"), namespace)  # fmt: skip
    grown = working_class_source(namespace["Grown"])  # type: ignore[arg-type]
    assert "    backlog: int\n" in grown and "(\n            self.backlog, self.tick,\n        ) = r" in grown
    # what the module's head gives the class: `_new`, and each record type by its constant (`_Grown`)
    run: dict[str, object] = {"_new": tuple.__new__, "Grown": namespace["Grown"], "_Grown": namespace["Grown"]}
    exec(compile("from __future__ import annotations\n" + grown, "<working Grown>", "exec"), run)  # noqa: S102
    copy = run["WorkingGrown"](namespace["Grown"](3, 7))  # type: ignore[operator]
    copy.backlog += 1
    assert copy.freeze() == (4, 7) and type(copy.freeze()) is namespace["Grown"]


@pytest.mark.parametrize("other", [
    "class State:\n    _fields = ('setup', 'backlog')\n",  # a field added to State, the file not written again
    "class Part:\n    _fields = ('result', 'content', 'truth', 'cost')\n",  # to a record the rules make
    "from enum import Enum\nStatus = Enum('Status', 'RUNNING UNKNOWN FENCED REFUSED DONE PAUSED')\n",  # a member added
])  # fmt: skip
def test_working_copies_written_for_others_refuse_to_import(other: str) -> None:
    """The guard at the end of sim/engine/working.py: run as written it imports; against a
    record with other fields, or an enum with other members, it refuses."""
    exec(compile(working_source(), "<working>", "exec"), {"__name__": "working"})  # noqa: S102
    marker = "_new: Final = tuple.__new__\n"
    assert marker in working_source()
    stale = working_source().replace(marker, f"{marker}\n{other}", 1)
    with pytest.raises(ImportError, match=r"sim/engine/working\.py is stale"):
        exec(compile(stale, "<stale working>", "exec"), {"__name__": "working"})  # noqa: S102


def test_the_members_and_makers_are_the_enums_and_records() -> None:
    """The rules read `Status.RUNNING` from `StatusMembers` and make a `Part` with `new_Part`:
    every member is the enum's own, every record made equals the NamedTuple's, of its type."""
    from sim.engine import working
    from sim.engine.records import PLAIN, Acceptance, Candidate, JournalRecord, Part, Truth
    from sim.engine.state import Status
    from sim.model.events import Kind
    from sim.model.faults import Moment

    for enum in (Kind, Moment, Status):
        members = getattr(working, f"{enum.__name__}Members")
        assert members.MEMBERS == tuple(enum.__members__)
        assert all(getattr(members, m.name) is m for m in enum)
    truth = working.new_Truth(True, ((1, 2, False),), False, 1)
    made = [(truth, Truth(True, ((1, 2, False),), False, 1)),
            (working.new_Part("s1@2", 3, PLAIN), Part("s1@2", 3)),
            (working.new_JournalRecord("s1@2", 3, 2, truth), JournalRecord("s1@2", 3, 2, truth)),
            (working.new_Candidate("d2", 2, 5, (Part("s1@2", 3),), None, 7), Candidate("d2", 2, 5, (Part("s1@2", 3),), None, 7)),
            (working.new_Acceptance("d2", 1, 8), Acceptance("d2", 1, 8))]  # fmt: skip
    for record, expected in made:
        assert record == expected and type(record) is type(expected)
    assert working.new_Part("s1@2", 3, truth) != Part("s1@2", 3)  # the comparison can fail


def test_a_field_set_by_position_is_the_records_replace() -> None:
    """`rules.with_field` (the rules' compiled `_replace`) sets the fields it names, by their
    positions, and nothing else; the record keeps its type. The comparison can fail."""
    from sim.analysis.check.search import NO_FAULTS
    from sim.engine import rules
    from sim.engine.state import Status, initial_state
    from sim.model.schedule import Schedule
    from sim.model.switches import Switches

    state = initial_state(Switches(), Schedule())
    ended = rules.with_field(state, rules._FINISHED, True, rules._LAST_TICK, 9)
    assert ended == state._replace(finished=True, last_tick=9) and type(ended) is State
    assert rules.with_field(ended, rules._HORIZON_REACHED, True) == state._replace(
        finished=True, last_tick=9, horizon_reached=True)
    assert ended != state._replace(finished=True, last_tick=8)  # the comparison can fail
    attempt = rules.run_tick(state, 0, NO_FAULTS)[0].attempts[0]  # the first attempt, admitted at t0
    unknown = rules.with_field(attempt, rules._STATUS, Status.UNKNOWN)
    assert unknown == attempt._replace(status=Status.UNKNOWN) and type(unknown) is AttemptState


# -- a build is used only while it is the sources' ------------------------------------------------
def fake_build(tmp_path: Path) -> Path:
    """A package with the compiled modules' sources and one module more, a file where each
    compiled one goes (its content is never read by `decide`) and the stamp of the sources."""
    package = tmp_path / "sim"
    for path in (*MODULES, "sim/cli.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(f"# {path}\n")
    for name in (*MODULES, GROUP.replace(".", "/") + "__mypyc.py"):
        (tmp_path / (name[: -len(".py")] + EXTENSION_SUFFIXES[0])).write_bytes(b"")
    (package / STAMP).write_text(listing(package))
    return package


def test_a_build_is_used_only_while_it_is_the_sources(tmp_path: Path) -> None:
    package = fake_build(tmp_path)
    assert decide(package, {}) == "compiled"
    assert decide(package, {"SIM_COMPILED": "0"}) == "interpreted (SIM_COMPILED=0)"
    rules = package / "engine" / "rules.py"
    rules.write_text(rules.read_text() + "# an edit\n")
    assert decide(package, {}).startswith("interpreted (the sources changed since the compiled build")
    (package / STAMP).write_text(listing(package))
    assert decide(package, {}) == "compiled"
    (package / "cli.py").write_text("# a module no compiled one imports\n")  # every module listed counts
    assert decide(package, {}).startswith("interpreted (the sources changed")
    (package / STAMP).write_text(listing(package))
    (package / "cli.py").unlink()  # a module gone
    assert decide(package, {}).startswith("interpreted (the sources changed")
    (package / STAMP).write_text(listing(package))
    (package / "scenarios").mkdir()  # what a regular install adds to the package: not listed, not counted
    (package / "scenarios" / "__init__.py").write_text("")
    assert decide(package, {}) == "compiled"
    (package / STAMP).write_text("")  # a stamp that lists nothing is no stamp of a build
    assert decide(package, {}).startswith("interpreted (the sources changed")
    (package / STAMP).write_text(listing(package))
    (tmp_path / ("sim/engine/keep" + EXTENSION_SUFFIXES[0])).unlink()
    assert decide(package, {}).startswith("interpreted (the compiled build is incomplete")
    (package / STAMP).unlink()
    assert decide(package, {}) == "interpreted (no compiled build)"


def test_the_finder_imports_the_source_unless_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    where = [str(PACKAGE / "engine")]
    monkeypatch.setattr(compiled, "_decided", "interpreted (no compiled build)")
    spec = Finder().find_spec("sim.engine.rules", where)
    assert spec is not None and spec.origin == str(PACKAGE / "engine" / "rules.py")
    assert Finder().find_spec("sim.engine.state", where) is None  # not a compiled module: the usual finders
    assert Finder().find_spec("sim.native__mypyc", [str(PACKAGE)]) is None  # the shared library: no source
    monkeypatch.setattr(compiled, "_decided", "compiled")
    assert Finder().find_spec("sim.engine.rules", where) is None  # the usual finders: the compiled file first
    assert NAMES == {"sim.engine.primitives", "sim.engine.setup", "sim.engine.working", "sim.engine.rules", "sim.engine.keep",
                     "sim.analysis.check.canon", "sim.analysis.check.search", "sim.properties.stale_write",
                     "sim.properties.effects_confirmed", "sim.properties.duplicate_effect",
                     "sim.properties.misused_dependant", "sim.properties.two_acceptances",
                     "sim.properties.wrong_acceptance"}  # fmt: skip


def mode_of(package_parent: Path, env: dict[str, str] | None = None) -> list[str]:
    """What a fresh process importing `sim` from `package_parent` runs: its mode and where
    each compiled module came from."""
    code = ("import sim.analysis.check.search, sim.engine.rules, sim.engine.keep\n"
            "from sim.base.compiled import NAMES, mode\nimport sys\n"
            "print(mode())\nfor name in sorted(NAMES): print(sys.modules[name].__file__)\n"
            "import os, importlib\nif os.environ.get('SIM_SHOW'): print(importlib.import_module(os.environ['SIM_SHOW']).__file__)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, **(env or {}), "PYTHONPATH": str(package_parent)}, cwd=package_parent)  # fmt: skip
    return done.stdout.splitlines()


@needs_build
def test_a_stale_copy_of_the_build_runs_interpreted_in_a_real_process(tmp_path: Path) -> None:
    shutil.copytree(PACKAGE, tmp_path / "sim", ignore=shutil.ignore_patterns("__pycache__"))
    fresh = mode_of(tmp_path)
    assert fresh[0] == "compiled" and all(f.endswith(EXTENSION_SUFFIXES[0]) for f in fresh[1:]), fresh
    off = mode_of(tmp_path, {"SIM_COMPILED": "0"})
    assert off[0] == "interpreted (SIM_COMPILED=0)" and all(f.endswith(".py") for f in off[1:]), off
    # a compiled file another build left beside a module this build does not compile (here not
    # even a module: importing it would fail) is never imported, compiled or not
    stray = tmp_path / "sim" / "engine" / ("records" + EXTENSION_SUFFIXES[0])
    shutil.copyfile(tmp_path / "sim" / "engine" / ("keep" + EXTENSION_SUFFIXES[0]), stray)
    assert mode_of(tmp_path, {"SIM_SHOW": "sim.engine.records"}) == [*fresh, str(tmp_path / "sim" / "engine" / "records.py")]
    state = tmp_path / "sim" / "engine" / "state.py"  # interpreted, but its layout is compiled in
    state.write_text(state.read_text() + "\n# an edit after the build\n")
    stale = mode_of(tmp_path)
    assert stale[0].startswith("interpreted (the sources changed") and all(f.endswith(".py") for f in stale[1:])


# -- the same bytes, compiled and interpreted -----------------------------------------------------------
def sim(args: list[str], cwd: Path, interpreted: bool) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIM_COMPILED": "0" if interpreted else "1"}
    return subprocess.run([sys.executable, "-m", "sim", *args], cwd=cwd, capture_output=True, text=True, env=env,
                          check=False)  # fmt: skip


@needs_build
def test_compiled_and_interpreted_give_the_same_bytes(tmp_path: Path) -> None:
    assert BUILT, f"SIM_REQUIRE_COMPILED=1, but this install runs {compiled.mode()}"
    outputs = {}
    for interpreted in (False, True):
        where = tmp_path / ("interpreted" if interpreted else "compiled")
        where.mkdir()
        version = sim(["--version"], where, interpreted).stdout
        assert version.endswith(", interpreted (SIM_COMPILED=0)\n" if interpreted else ", compiled\n"), version
        swept = sim(["sweep", "--out", "reports"], where, interpreted)
        checked = sim(["check", "-k", "2", "-t", "5", "-p", "each", "--faults", "all", "--json"], where, interpreted)
        explored = sim(["explore", "-n", "200", "--seed", "7", "--faults", "all", "--set", "fencing=off",
                        "--out", "examples"], where, interpreted)  # fmt: skip
        traced = sim(["trace", "main", "--json"], where, interpreted)
        assert swept.returncode == 0 and traced.returncode == 0, swept.stderr + traced.stderr
        assert checked.returncode in (0, 1) and explored.returncode in (0, 1), checked.stderr + explored.stderr
        reports = {p.relative_to(where).as_posix(): p.read_bytes()
                   for p in sorted([*(where / "reports").iterdir(), *(where / "examples").iterdir()]) if p.is_file()}
        timing = re.compile(r"in [0-9.]+ s \([0-9,]+ schedules/s\)")  # the one line that says how fast
        outputs[interpreted] = (swept.stdout, reports, checked.stdout, timing.sub("", explored.stdout), traced.stdout)
    assert outputs[False][1].keys() == outputs[True][1].keys() and len(outputs[False][1]) >= 6
    for name in outputs[False][1]:
        assert outputs[False][1][name] == outputs[True][1][name], name
    for i, what in ((0, "sweep"), (2, "check --json"), (3, "explore"), (4, "trace --json")):
        assert outputs[False][i] == outputs[True][i], what
        assert outputs[False][i].strip(), what


#: the search on settings drawn at random (tests/test_differential.py's `drawn`), in a fresh
#: process: each setting's figures (schedules, violations, counterexamples, horizon hits)
DRAWN = """
import sys
sys.path.insert(0, {tests!r})
from random import Random
import test_differential as d
from sim.base.compiled import mode
print(mode())
for seed in range({count}):
    rng = Random(seed)
    values = {{}}
    for switch, choices in sorted(d.PROTECTION_SWITCHES.items()):
        if rng.random() < 0.5:
            values[switch] = rng.choice(choices)
    for knob, choices in sorted(d.KNOB_VALUES.items()):
        if rng.random() < 0.25:
            values[knob] = rng.choice(choices)
    kinds = tuple(k for k in d.KIND_KEYS if rng.random() < 0.3)
    setting = d.Setting(rng.choice([None, *d.PROFILES]), values, kinds, rng.randint(0, 2), rng.randint(1, 6))
    print(setting.command(), d.figures(d.searched(setting, "canonical")))
"""


@needs_build
def test_the_search_on_drawn_settings_is_the_same_compiled_and_interpreted() -> None:
    code = DRAWN.format(tests=str(ROOT / "tests"), count=40)
    said = {}
    for interpreted in (False, True):
        env = {**os.environ, "SIM_COMPILED": "0" if interpreted else "1"}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        said[interpreted] = done.stdout.splitlines()
    assert said[False][0] == "compiled" and said[True][0] == "interpreted (SIM_COMPILED=0)"
    assert len(said[False]) == 41
    for mine, theirs in zip(said[False][1:], said[True][1:], strict=True):
        assert mine == theirs


def test_a_test_rerun_interpreted_is_not_held_to_what_ci_asks_of_a_whole_run() -> None:
    """CI (`.ci/run`) asks a whole run for a browser test that passed and a compiled build; a
    single test that `conftest.interpreted` reruns in a process of its own cannot show either,
    and once failed CI for it (the rerun passed, its session did not)."""
    ci = {"PATH": "/usr/bin", "SIM_REQUIRE_BROWSER": "1", "SIM_REQUIRE_COMPILED": "1", "SIM_COMPILED": "1"}
    assert rerun_environment(ci) == {"PATH": "/usr/bin", "SIM_COMPILED": "0"}


# -- the canonical forms written out ---------------------------------------------------------------
def test_the_forms_written_out_are_the_declarations_and_are_the_ones_used() -> None:
    from sim.analysis.check import canon

    assert canon.written_digest(canon.written()) == canon.WRITTEN, (
        "the forms written out in sim/analysis/check/canon.py are stale: run `python -m sim.analysis.check.canon`"
    )
    assert canon.written() in (PACKAGE / "analysis" / "check" / "canon.py").read_text()
    for cls in canon.RECORDS:
        assert canon.PLANS[cls] is getattr(canon, f"form_{cls.__name__}")


def test_the_forms_are_called_by_name_only_while_they_are_the_ones_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """`canon.AS_WRITTEN`: true here, where the written forms are current; the same check is
    false for forms made from the declarations (what a stale copy gives), and the forms called
    by name are then the made ones' equals."""
    from sim.analysis.check import canon

    assert canon.AS_WRITTEN and canon.in_use(canon.PLANS)
    monkeypatch.setattr(canon, "WRITTEN", "0" * 32)
    made = canon.plans()
    assert not canon.in_use(made)
    canon.trim()


def test_the_phases_are_called_by_name_only_in_the_declared_order() -> None:
    """`rules.WRITTEN_ORDER`: true for the order `sim.engine.order` declares, false for any other
    (the declared order then runs through its tuples, `rules.stepped`); and the calls written
    out give what the declared order gives, tick by tick, on sweep runs with their faults."""
    from sim.engine import rules
    from sim.analysis.sweep import COMBINATIONS
    from sim.engine.world import World
    from sim.model.schedule import worked_example

    phases, steps = rules.TICK_PHASES, rules.CONTROLLER_STEPS
    assert rules.WRITTEN_ORDER and rules.as_written(phases, steps)
    assert not rules.as_written(phases[::-1], steps)
    assert not rules.as_written(phases, (steps[1], steps[0], *steps[2:]))
    ticks = 0
    for switches in COMBINATIONS[::97]:
        schedule = worked_example(switches)
        written, declared = World(switches, schedule), World(switches, schedule)
        state = written.state
        while not state.finished:
            t = state.tick
            assert rules.controller(state, t, written) == (
                lambda s, e: (rules.end_of_tick(s, t), e or rules.NO_EVENTS))(*rules.stepped(steps, state, t, declared))
            after, events = rules.run_tick(state, t, written)
            assert (after, events) == rules.stepped(phases, state, t, declared)
            state = after
            ticks += 1
    assert ticks > 100


def test_forms_written_out_that_are_stale_are_never_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were a declaration changed without writing the forms out again, the digest would differ:
    the forms are then made from the declarations at import, the same forms, never the stale ones."""
    from sim.analysis.check import canon
    from sim.analysis.check.search import Space, root
    from sim.model.switches import Switches
    from sim.analysis.check.check import SETTING

    monkeypatch.setattr(canon, "WRITTEN", "0" * 32)
    made = canon.plans()
    state = root(Space(Switches(), 0, 1, SETTING, (), ())).state
    for cls in canon.RECORDS:
        assert made[cls] is not getattr(canon, f"form_{cls.__name__}")
    now = canon.Now(state)
    assert made[State](state, now) == canon.form_State(state, now)
    canon.trim()
