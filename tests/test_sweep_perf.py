"""What makes `sim sweep` fast must not change what it computes (issue 12's sweep items).

The byte-for-byte check of the reports is tests/test_reports.py; these check each shortcut
on its own: one outcome per distinct run, the swimlane and story caches, the explainer's
one encoding per distinct swimlane, the start-up imports, and the collector.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from sim.analysis import sweep as sweep_mod
from sim.engine.run import run as run_engine
from sim.properties.outcome import outcome, what_happened
from sim.render import grid as grid_mod
from sim.render.explainer import encode
from sim.render.text import tick_story
from sim.model.schedule import worked_example
from sim.model.switches import COMBINATIONS, Gate
from sim.engine.trace import Event, Kind, Trace

ROOT = Path(__file__).resolve().parent.parent


def _traces() -> list[Trace]:
    """The traces of the sweep's 1,008 runs, in its task order."""
    tasks = [s for s in COMBINATIONS]
    tasks += [dataclasses.replace(COMBINATIONS[i - 1], gate=Gate.FAIL_CLOSED) for i in sweep_mod.gate_subset_ids()]
    return [run_engine(s, worked_example(s)) for s in tasks]


@pytest.fixture(scope="module")
def traces() -> list[Trace]:
    return _traces()


# -- one outcome per distinct run ------------------------------------------------------------------
def test_every_run_gets_the_outcome_of_its_own_trace(traces: list[Trace]) -> None:
    tasks = [(i, Gate.FAIL_OPEN.value) for i in range(1, sweep_mod.RUNS + 1)]
    tasks += [(i, Gate.FAIL_CLOSED.value) for i in sweep_mod.gate_subset_ids()]
    shared = sweep_mod._simulate_tasks(tasks)
    assert [result for result, _ in shared] == [outcome(t) for t in traces]


def test_runs_share_a_value_only_when_the_same_things_happened(traces: list[Trace]) -> None:
    by_value: dict[Any, Trace] = {}
    for t in traces:
        first = by_value.setdefault(what_happened(t), t)
        assert (first.events, first.versions, first.schedule, first.last_tick, first.horizon_reached) == (
            t.events, t.versions, t.schedule, t.last_tick, t.horizon_reached)  # fmt: skip
    assert len(by_value) == 384  # of 1,008 runs (docs/sweep.md)
    assert len({what_happened(t) for t in traces[: sweep_mod.RUNS]}) == 276  # the 864 fail-open runs


def test_equal_but_differently_typed_details_are_not_the_same(traces: list[Trace]) -> None:
    trace = traces[0]
    i, e = next((i, e) for i, e in enumerate(trace.events) if e.kind is Kind.WRITE)
    assert e.detail["applied"] is True
    changed = Event(e.tick, e.kind, e.attempt, {**e.detail, "applied": 1})  # == True, but not the same
    other = dataclasses.replace(trace, events=trace.events[:i] + (changed,) + trace.events[i + 1 :])
    assert other.events == trace.events  # Python calls them equal...
    assert what_happened(other) != what_happened(trace)  # ...the sweep does not
    assert what_happened(dataclasses.replace(trace, last_tick=trace.last_tick + 1)) != what_happened(trace)
    assert what_happened(dataclasses.replace(trace, switches=COMBINATIONS[5])) == what_happened(trace)


# -- swimlanes: built once per distinct run, story lines worded once per distinct tick ------------
def test_story_lines_from_the_table_are_the_lines_worded_afresh(traces: list[Trace]) -> None:
    lines: dict[Any, str] = {}
    for t in traces:
        assert tick_story(t, None, lines) == tick_story(t)
    assert len(lines) == 365  # distinct ticks of the 1,008 runs (331 of the 864 fail-open ones)


def test_a_shared_cache_builds_each_distinct_swimlane_once(traces: list[Trace]) -> None:
    cache = grid_mod.Shared()
    grids = [grid_mod.build_shared(t, cache) for t in traces[: sweep_mod.RUNS]]
    assert len(cache.grids) == 276
    assert len({id(g.rows) for g in grids}) == 276
    for t, g in list(zip(traces, grids))[::37]:
        assert g == grid_mod.build(t)


# -- the explainer: one encoding per distinct swimlane ---------------------------------------------
def test_the_explainer_encodes_shared_and_separately_built_swimlanes_alike() -> None:
    result = sweep_mod.sweep(view=grid_mod.shared)
    doc = result.document()
    assert result.views is not None
    # every grid rebuilt on its own: no two runs share any part, so each is encoded afresh
    separate = [grid_mod.build(run_engine(r.switches, worked_example(r.switches))) for r in result.runs]
    assert len({id(g.rows) for g in separate}) == sweep_mod.RUNS
    assert encode(doc, result.views) == encode(doc, separate)


# -- start-up --------------------------------------------------------------------------------------
def _python(code: str, cwd: Path = ROOT) -> Any:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_worked_example_made_once_per_event_switches_is_each_runs_own() -> None:
    """`worked_example` keeps a schedule per (silent, change, post_death, workflow): every
    run's schedule, served from the table filled by the other runs, equals the one made for
    it alone (with the table emptied first); and runs that differ in an event switch get
    different schedules, so the table is not serving one schedule to all."""
    from sim.model import schedule as schedule_mod
    from sim.model.switches import Switches

    fresh = []
    for switches in COMBINATIONS:
        for gate in Gate:
            run = dataclasses.replace(switches, gate=gate)
            schedule_mod._EXAMPLES.clear()
            fresh.append((run, worked_example(run)))
    for run, alone in fresh:
        assert worked_example(run) == alone, run.label()
    assert len({alone for _, alone in fresh}) == 12
    switches = Switches()
    assert worked_example(switches) != worked_example(dataclasses.replace(switches, post_death=next(
        v for v in type(switches.post_death) if v is not switches.post_death)))


def test_sim_sweep_imports_nothing_it_does_not_use() -> None:
    loaded = _python("""
        import json, sys
        from sim.commands import command
        command("sweep")
        print(json.dumps(sorted(sys.modules)))
    """)
    for unused in ("rich", "sim.analysis.check.check", "sim.analysis.explore", "sim.render.diff", "multiprocessing",
                   "concurrent.futures", "importlib.metadata", "email"):  # fmt: skip
        assert unused not in loaded, unused
    assert {"simpy", "tabulate", "sim.analysis.sweep"} <= set(loaded)


def test_simpy_and_tabulate_keep_their_versions_and_importlib_metadata_works_after() -> None:
    seen = _python("""
        import json, sys
        import sim.commands.sweep
        import simpy, tabulate
        before = "importlib.metadata" in sys.modules
        import importlib.metadata as metadata
        print(json.dumps([before, simpy.__version__, metadata.version("simpy"),
                          tabulate.__version__, metadata.version("tabulate"),
                          hasattr(metadata, "distributions")]))
    """)
    assert seen[0] is False
    assert seen[1] == seen[2] and seen[3] == seen[4]
    assert seen[5] is True  # the real module, not the stand-in


def test_lean_import_leaves_a_package_it_cannot_handle_to_the_ordinary_import(tmp_path: Path) -> None:
    """A package that asks the stand-in for anything else fails to load through it, and
    nothing of the stand-in is left behind."""
    package = tmp_path / "site" / "other"
    package.mkdir(parents=True)
    (tmp_path / "site" / "other-1.0.dist-info").mkdir()
    (package / "__init__.py").write_text("import importlib.metadata\n__version__ = importlib.metadata.version('x')\n")
    seen = _python(f"""
        import json, sys
        sys.path.insert(0, {str(tmp_path / "site")!r})
        from sim.base import lean_import
        loaded = lean_import.load("other")
        left = "importlib.metadata" in sys.modules or "other" in sys.modules
        import sim.engine.order
        print(json.dumps([loaded, left, lean_import.dist_version("other"), lean_import.load("simpy")]))
    """)
    assert seen == [False, False, "1.0", False]  # SimPy: already loaded by the engine (order.py)


# -- the collector -----------------------------------------------------------------------------
def test_sim_sweep_leaves_the_collector_on_and_the_sweep_frozen(tmp_path: Path) -> None:
    seen = _python(f"""
        import contextlib, gc, io, json
        from sim.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["sweep", "--out", {str(tmp_path / "r")!r}])
        print(json.dumps([code, gc.isenabled(), gc.get_freeze_count()]))
    """)
    assert seen[0] == 0 and seen[1] is True and seen[2] > 100_000
