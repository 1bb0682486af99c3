"""What importing `sim` does: no import circle, and no work a command does not need.

The import graph is read with `ast` from the statements that run when a module is imported:
its top-level imports (inside a top-level `if`, `try` or class body too; not those under
`if TYPE_CHECKING:` and not those inside functions, which run when the function does).
`import a.b` runs the module a.b; `from a import n` reads the name n from a's namespace (so
a's `__init__` must have run, or at least reached n), and n may be the submodule a.n, which
it runs: an edge to a, and to a.n if that is a module. A circle is a module that, through
these edges, needs itself: in a circle each module's import starts while the other's is
half done, and whichever is imported first decides what the other sees. (test_structure.py
checks the graph of every import, functions' included, by the modules they name.)
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_structure import cycles, module_name  # the depth-first search, on this graph

ROOT = Path(__file__).resolve().parent.parent
SIM = ROOT / "sim"


def is_module(name: str) -> bool:
    where = ROOT / name.replace(".", "/")
    return where.with_suffix(".py").exists() or (where / "__init__.py").exists()


def run_at_import(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of `body` that run when the module is imported."""
    for node in body:
        if isinstance(node, ast.If):
            if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING") and not (
                isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING"
            ):
                yield from run_at_import(node.body)
            yield from run_at_import(node.orelse)
        elif isinstance(node, ast.Try):
            for part in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from run_at_import(part)
        elif isinstance(node, ast.ClassDef):
            yield from run_at_import(node.body)
        else:
            yield node


def imported(source: str, top: str = "sim") -> set[str]:
    """The modules of the package `top` a module's source needs at import, as the module
    docstring says."""
    out: set[str] = set()
    for node in run_at_import(ast.parse(source).body):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names if alias.name.split(".")[0] == top}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == top:
                out.add(node.module)
                out |= {f"{node.module}.{a.name}" for a in node.names if is_module(f"{node.module}.{a.name}")}
    return out


def graph() -> dict[str, set[str]]:
    found = {}
    for path in sorted(SIM.rglob("*.py")):
        name = module_name(path)
        found[name] = imported(path.read_text(encoding="utf-8")) - {name}
    return found


def test_no_import_circle_among_sims_modules() -> None:
    assert [" -> ".join(c) for c in cycles(graph())] == []


def test_the_graph_sees_a_circle_through_a_package_namespace() -> None:
    """A package that imports a module which reads a name from the package is a circle
    (what sim and sim.properties.outcome were); a module reading a sibling submodule is not."""
    edges = {
        "p": imported("from p.a import A\n", "p"),
        "p.a": imported("from p import b\nimport p.c\nif TYPE_CHECKING:\n    from p.d import D\n", "p"),
        "p.c": imported("def f():\n    from p import a\n", "p"),
    }
    assert edges["p.a"] == {"p", "p.c"}  # p.b is no module here: a name in p's namespace
    assert cycles(edges) == [["p", "p.a", "p"]]
    assert cycles({"p": set(), "p.a": {"p.c"}, "p.c": set()}) == []


# -- what a command imports ---------------------------------------------------------------------
def loaded_by(code: str, cwd: Path) -> set[str]:
    """The modules loaded in a fresh interpreter after running `code` in the folder `cwd` (not
    the checkout's, whose `sim.egg-info` would be the first metadata `sim --version` finds,
    as it is not for the installed `sim` command)."""
    done = subprocess.run([sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
                          cwd=cwd, capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


#: what none of these needs: Rich, Hypothesis, tabulate, the distribution search of
#: importlib.metadata; and, but for the checker and the explorer, SimPy and the engine (its
#: modules but the run's record, `sim.engine.trace`, which the properties read)
HEAVY = ("rich", "hypothesis", "tabulate", "importlib.metadata")
ENGINE = ("simpy", *(f"sim.engine.{m}" for m in ("actors", "order", "records", "rules", "run", "state", "world")),
          "sim.run", "sim.analysis.sweep")  # fmt: skip


@pytest.mark.parametrize(
    "code, needed, unneeded",
    [
        ("import sim", set(), {*ENGINE, "sim.properties.outcome", "sim.properties", "sim.model.events", "sim.engine.trace"}),
        ("import sim.model.events", {"sim.model.events"}, {*ENGINE, "sim.properties.outcome", "sim.model.faults", "sim.model.knobs", "sim.model.switches"}),
        ("from sim.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass", {"click"},
         {*ENGINE, "sim.scenario", "sim.properties.outcome", "sim.properties", "sim.engine.trace"}),
        # listing the scenarios checks no [expect] table, so it needs no property; and no writer
        ("from sim.cli import main\nmain(['scenarios'])", {"sim.scenario"},
         {*ENGINE, "sim.properties", "sim.base.files", "sim.schema"}),
        ("from sim.commands import command\ncommand('check')\ncommand('explore')", {"sim.commands.check", "simpy"},
         {"sim.commands.trace", "sim.render.swimlane"}),  # the trace's renderers: only to write a page
    ],
    ids=["sim", "sim.model.events", "sim --version", "sim scenarios", "sim check and sim explore, loaded"],
)  # fmt: skip
def test_a_command_imports_only_what_it_uses(code: str, needed: set[str], unneeded: set[str], tmp_path: Path) -> None:
    loaded = loaded_by(code, tmp_path)
    assert needed <= loaded
    assert sorted(m for m in loaded for h in (*HEAVY, *unneeded) if m == h or m.startswith(h + ".")) == []


def test_the_library_surface_is_there_when_asked_for() -> None:
    """`sim`'s public names are imported on first use, and are the modules' own."""
    import sim
    from sim.properties.outcome import Outcome
    from sim.run import simulate
    from sim.engine.trace import Trace

    assert sim.Outcome is Outcome and sim.simulate is simulate and sim.Trace is Trace
    assert sorted(sim.__all__) == sorted(name for name in sim.__all__ if getattr(sim, name) is not None)
    with pytest.raises(AttributeError):
        _ = sim.no_such_name


def test_the_start_up_benchmark_runs() -> None:
    """benchmarks/bench_startup.py, once each: it measures and prints (no timing asserted)."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_startup.py"), "--repeat", "1"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == [
        "python -c pass", "sim --version", "sim scenarios", 'python -c "import sim.model.events"']
    assert all(" ms |" in row for row in rows) and "load (1, 5, 15 min) before:" in done.stdout


def test_sim_version_says_what_importlib_metadata_says(tmp_path: Path) -> None:
    """`sim --version` reads the version from the dist-info folder's name, sparing the import
    of importlib.metadata; it is the version importlib.metadata finds, from anywhere."""
    from importlib.metadata import version

    from sim.base.lean_import import installed_version

    for cwd in (tmp_path, ROOT):  # the checkout's sim.egg-info comes first from ROOT: left to metadata
        done = subprocess.run([sys.executable, "-m", "sim", "--version"], cwd=cwd, capture_output=True, text=True,
                              check=False)  # fmt: skip
        assert done.stdout.startswith(f"sim {version('sim')}, "), done.stderr
    assert installed_version("sim") in (None, version("sim"))
    assert installed_version("no-such-distribution") is None
