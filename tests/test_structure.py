"""The shape of the code: the fault-kind seam, no import circles, small functions.

These read the source with `ast`; they run nothing of `sim` but the fault registry.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from sim.model.faults import KINDS

SIM = Path(__file__).resolve().parent.parent / "sim"
MODULES = sorted(SIM.rglob("*.py"))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SIM.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


# -- the fault-kind seam ---------------------------------------------------------------------
def kind_names() -> set[str]:
    return {kind.__name__ for kind in KINDS} | {kind.key for kind in KINDS}


def mentions(node: ast.AST, names: set[str]) -> Iterator[tuple[int, str]]:
    """Names of a kind's class (as an identifier, attribute or import) and a kind's TOML key
    (as an attribute, keyword or whole string). A local variable that happens to be spelled
    like a key (`changes = ...`) is not a mention; an attribute `.changes` is."""
    classes = {kind.__name__ for kind in KINDS} & names
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in classes:
            yield sub.lineno, sub.id
        elif isinstance(sub, ast.Attribute) and sub.attr in names:
            yield sub.lineno, sub.attr
        elif isinstance(sub, ast.alias) and sub.name.rsplit(".", 1)[-1] in classes:
            yield getattr(sub, "lineno", 0), sub.name
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value in names:
            yield sub.lineno, sub.value
        elif isinstance(sub, ast.keyword) and sub.arg in names:
            yield sub.value.lineno, str(sub.arg)


def test_no_module_outside_the_fault_package_names_a_fault_kind() -> None:
    names = kind_names()
    found = []
    for path in MODULES:
        if path.is_relative_to(SIM / "model" / "faults"):
            continue
        module = tree(path)
        allowed: set[int] = set()
        if path == SIM / "model" / "schedule.py":  # the one function that builds the worked example
            for node in module.body:
                if isinstance(node, ast.FunctionDef) and node.name == "worked_example":
                    allowed |= set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        found += [f"{path.relative_to(SIM.parent)}:{line}: {name}" for line, name in mentions(module, names)
                  if line not in allowed]  # fmt: skip
    assert found == []


def test_the_seam_test_would_catch_a_mention() -> None:
    names = kind_names()
    assert list(mentions(ast.parse("from sim.model.faults import Silence\nx = s.poster_deaths\n"), names)) == [
        (1, "Silence"),
        (2, "poster_deaths"),
    ]


# -- imports ---------------------------------------------------------------------------------
def imports(path: Path) -> set[str]:
    """The `sim` modules a module imports, TYPE_CHECKING imports included."""
    return imports_in(tree(path), module_name(path))


def imports_in(module: ast.Module, here: str = "") -> set[str]:
    """The `sim` modules the code `module` imports (its own name `here` left out)."""
    out: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("sim")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sim"):
            for alias in node.names:  # `from sim import faults` imports the module sim.model.faults
                sub = f"{node.module}.{alias.name}"
                out.add(sub if (SIM.parent / (sub.replace(".", "/") + ".py")).exists()
                        or (SIM.parent / sub.replace(".", "/")).is_dir() else node.module)  # fmt: skip
    out.discard(here)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def package_of(name: str) -> str:
    """Importing `a.b.c` runs `a.b`'s __init__ first: a module depends on its parents."""
    return name.rsplit(".", 1)[0] if "." in name else ""


def test_no_import_circle() -> None:
    graph = {module_name(p): imports(p) for p in MODULES}
    # a package's own __init__ importing its modules is how a package is made, not a circle:
    # drop the edge from a module up to its own package
    for name, deps in graph.items():
        deps -= {d for d in deps if name.startswith(d + ".")}
    assert cycles(graph) == []


#: the floors of the house, from the ground up (README.md, "Layout"): a module imports only
#: from its own floor or a lower one; `sim` itself (the package: its names are imported on
#: first use) stands outside them
FLOORS = (
    ("sim.base",),  # 1 the ground: the writer, the limits, the errors
    ("sim.model",),  # 2 what the example is: switches, knobs, fault kinds, schedules, events
    ("sim.engine",),  # 3 the rules as step functions over the state, and the run's record
    ("sim.properties",),  # 4 what must hold, and what a run came to
    ("sim.workflow", "sim.scenario", "sim.schema"),  # 5 workflow and scenario files, and their JSON Schema
    ("sim.run",),  # 6 one scenario run
    ("sim.analysis", "sim.render", "sim.conform"),  # 7 many runs; how a run is shown; real engines
    ("sim.commands",),  # 8 one module per command
    ("sim.cli",),  # 9 the command line
    ("sim.__main__",),  # 10 `python -m sim`
)


def floor(name: str) -> int:
    """The floor of the module `name` (1 is the ground)."""
    for number, packages in enumerate(FLOORS, 1):
        if any(name == p or name.startswith(p + ".") for p in packages):
            return number
    raise LookupError(f"{name}: on no floor of FLOORS")


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Each import of a `sim` module from a higher floor than the importer's."""
    return [f"{name} (floor {floor(name)}) imports {dep} (floor {floor(dep)})"
            for name, deps in sorted(graph.items()) if name != "sim"
            for dep in sorted(deps) if (dep == "sim" or dep.startswith("sim.")) and dep != "sim"
            and floor(dep) > floor(name)]  # fmt: skip


def test_every_module_stands_on_a_floor_and_imports_only_from_its_floor_or_below() -> None:
    graph = {module_name(p): imports(p) for p in MODULES}
    assert [floor(name) for name in graph if name != "sim"]  # each has a floor (or LookupError)
    assert upward(graph) == []


def test_the_floor_test_would_catch_an_import_up_a_floor() -> None:
    """The model importing the engine, and the ground importing a command, are caught; the
    engine importing the model, and a renderer an analysis (one floor), are not."""
    graph = {
        "sim.model.faults.base": imports_in(ast.parse("from sim.engine.state import State\nimport simpy\n")),
        "sim.base.files": imports_in(ast.parse("def f():\n    from sim.commands import common\n")),
        "sim.engine.rules": imports_in(ast.parse("from sim.model.faults import Fault\n")),
        "sim.render.page": imports_in(ast.parse("from sim.analysis import sweep\n")),
    }
    assert upward(graph) == [
        "sim.base.files (floor 1) imports sim.commands.common (floor 8)",
        "sim.model.faults.base (floor 2) imports sim.engine.state (floor 3)",
    ]


def test_the_library_does_not_import_renderers_or_the_explorer_backwards() -> None:
    assert not any(d.startswith("sim.render") for d in imports(SIM / "analysis" / "sweep.py"))
    assert "sim.analysis.explore" not in imports(SIM / "render" / "explainer.py")
    assert not any(d.startswith("sim.engine.actors") for d in imports(SIM / "engine" / "world.py"))


# -- size and complexity -----------------------------------------------------------------------
BRANCHES = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.IfExp, ast.ExceptHandler, ast.With, ast.Assert,
            ast.comprehension, ast.match_case)  # fmt: skip


def complexity(func: ast.AST) -> int:
    """Cyclomatic complexity as radon counts it (near enough): 1 + decision points."""
    score = 1
    for node in ast.walk(func):
        if isinstance(node, BRANCHES) and not isinstance(node, ast.With):
            score += 1
            if isinstance(node, ast.comprehension):
                score += len(node.ifs)
        elif isinstance(node, ast.BoolOp):
            score += len(node.values) - 1
    return score


def functions() -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for path in MODULES:
        for node in ast.walk(tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{path.relative_to(SIM.parent)}:{node.lineno} {node.name}", node


#: the explainer page's template: one HTML/CSS/JS document, long by nature
LONG_ALLOWED = {"_page", "_script", "_style"}


def test_no_function_over_60_lines() -> None:
    long = [
        f"{where} ({(node.end_lineno or 0) - node.lineno + 1} lines)"
        for where, node in functions()
        if (node.end_lineno or 0) - node.lineno + 1 > 60
        and not (where.startswith("sim/render/explainer.py") and node.name in LONG_ALLOWED)
    ]
    assert long == []


def test_no_function_of_grade_e_or_f() -> None:
    # radon's grades: A 1-5, B 6-10, C 11-20, D 21-30, E 31-40, F 41+
    assert [f"{where} ({complexity(node)})" for where, node in functions() if complexity(node) > 30] == []


@pytest.mark.parametrize("source, expected", [("def f():\n  return 1\n", 1),
                                              ("def f(a, b):\n  if a and b:\n    return [x for x in a if x]\n", 5)])  # fmt: skip
def test_the_complexity_count(source: str, expected: int) -> None:
    (func,) = ast.parse(source).body
    assert complexity(func) == expected


def test_no_module_cites_a_file_outside_the_repository() -> None:
    cited = [f"{p.relative_to(SIM.parent)}:{i}" for p in MODULES
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if "SPEC" in line
             and "SPECIAL" not in line]  # fmt: skip
    assert cited == []


def test_every_package_of_sim_is_listed_for_installation() -> None:
    """A regular (non-editable) install ships only the packages pyproject.toml names."""
    import tomllib

    root = SIM.parent
    listed = set(tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(root).parts) for p in SIM.rglob("__init__.py") if "__pycache__" not in p.parts}
    assert found <= listed, f"not listed in pyproject.toml: {sorted(found - listed)}"


# -- a run is its states: no module outside the engine rebuilds them from the events ---------
#: methods that change a container in place
MUTATORS = frozenset({"add", "append", "extend", "setdefault", "pop", "clear", "update", "discard", "remove", "insert"})
#: where events may be folded: the engine, which publishes the state it reached with each step's
#: events (`Trace.states`), and the declarations of the events
FOLDS_ALLOWED = ("sim/engine/", "sim/model/events.py")
#: (module, function) -> why it may keep memory over a loop on events although it branches on
#: their kinds. Not a state of the run: what the function has listed itself.
FOLD_EXCEPTIONS = {
    ("sim/conform/schedule.py", "model_points"):
        "lists the barriers an attempt reaches, each post point once (it reads its own list); "
        "sim/conform is edited on another branch",
}


def kinds_named(node: ast.AST) -> set[str]:
    """The kinds of event a function branches on: every `Kind.X` the test of an `if` (or of a
    conditional expression) names; a comprehension that filters events by kind does not branch."""
    tests = [n.test for n in ast.walk(node) if isinstance(n, (ast.If, ast.IfExp))]
    return {n.attr for test in tests for n in ast.walk(test)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "Kind"}  # fmt: skip


def root_name(node: ast.expr) -> ast.expr:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node


def updates(loop: ast.For) -> Iterator[tuple[str, ast.Name]]:
    """(how, variable) for each update inside the loop: assignment, `+=`, an item store, a
    mutating method."""
    for n in ast.walk(loop):
        if isinstance(n, ast.AugAssign) and isinstance(root_name(n.target), ast.Name):
            yield "augments", root_name(n.target)  # type: ignore[misc]
        elif isinstance(n, ast.Assign):
            for target in n.targets:
                names = [x for x in ast.walk(target) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)]
                yield from (("rebinds", x) for x in names)
                if isinstance(target, ast.Subscript) and isinstance(root_name(target), ast.Name):
                    yield "stores into", root_name(target)  # type: ignore[misc]
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in MUTATORS:
            if isinstance(root_name(n.func.value), ast.Name):
                yield f"calls .{n.func.attr} on", root_name(n.func.value)  # type: ignore[misc]


def over_events(loop: ast.AST) -> bool:
    """A `for` loop over a trace's events (its iterable names `events`)."""
    return isinstance(loop, ast.For) and any(
        (isinstance(x, ast.Name) and "events" in x.id) or (isinstance(x, ast.Attribute) and "events" in x.attr)
        for x in ast.walk(loop.iter))  # fmt: skip


def self_stores(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[int, str]]:
    for n in ast.walk(fn):
        targets: list[ast.expr] = []
        if isinstance(n, ast.Assign):
            targets = n.targets
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
            targets = [n.target]
        for t in targets:
            r = root_name(t)
            if isinstance(r, ast.Name) and r.id == "self" and t is not r:
                yield t.lineno, "stores into self"
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr":
            yield n.lineno, "calls setattr"


def loop_memory(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[int, str]]:
    for loop in ast.walk(fn):
        if not over_events(loop):
            continue
        assert isinstance(loop, ast.For)
        earlier = {x.id for s in ast.walk(fn) if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                   and s.lineno < loop.lineno for x in ast.walk(s) if isinstance(x, ast.Name)}  # fmt: skip
        earlier |= {a.arg for a in fn.args.args} - {"self"}
        found = [(how, name) for how, name in updates(loop) if name.id in earlier]
        writers = {id(name) for _, name in found}
        reads = {x.id for x in ast.walk(loop)
                 if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load) and id(x) not in writers}  # fmt: skip
        yield from ((name.lineno, f"{how} {name.id}") for how, name in found if name.id in reads)


def folds(source: str) -> Iterator[tuple[str, int, str]]:
    """(function, line, what) for each place a function that branches on two or more kinds of
    event keeps a model of the run updated event by event: it stores into an attribute of
    `self` (or calls setattr), or, in a loop over events, updates a variable bound before the
    loop that the loop also reads (what one event means then depends on the events before)."""
    for fn in ast.walk(ast.parse(source)):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and len(kinds_named(fn)) >= 2:
            for line, what in (*self_stores(fn), *loop_memory(fn)):
                yield fn.name, line, what


def folds_in(root: Path) -> list[str]:
    out = []
    for path in sorted((root / "sim").rglob("*.py")):
        where = str(path.relative_to(root))
        if where.startswith(FOLDS_ALLOWED):
            continue
        out += [f"{where}:{line} {name}: {what}" for name, line, what in folds(path.read_text(encoding="utf-8"))
                if (where, name) not in FOLD_EXCEPTIONS]  # fmt: skip
    return sorted(set(out))


def test_no_module_outside_the_engine_folds_events_into_state() -> None:
    """docs/trace.md, "The state at each tick": what was true at a tick is the engine's state
    (`Trace.state_at`); a reader maps or filters the events (what happened), it does not keep
    a model of the run updated event by event."""
    assert folds_in(SIM.parent) == []


def test_the_fold_scan_would_catch_a_fold() -> None:
    source = '''
def outcome(trace):
    attempts = stale = 0
    for e in trace.events:
        if e.kind is Kind.ADMITTED:
            attempts += 1
        elif e.kind is Kind.WRITE and e.attempt < attempts:
            stale += 1

class Seen:
    def take(self, e):
        if e.kind is Kind.ACCEPTED:
            self.accepted.add(e)
        elif e.kind is Kind.REPORT_CHANGED:
            self.content = e.detail

def marks(trace):
    out = []
    for e in trace.events:
        if e.kind is Kind.SENT:
            out.append("post")
        elif e.kind is Kind.FEED:
            out.append("feed")
    return out
'''
    found = [(name, what) for name, _, what in folds(source)]
    assert found == [("outcome", "augments attempts"), ("take", "stores into self")]
