"""Which modules of `sim` are compiled with mypyc, and whether this process uses them
(docs/compiled.md).

Where a C compiler is at hand, installing `sim` compiles the modules of `MODULES` (the
engine's rules, their working copies, the canonical form and the search) from the very
files that run interpreted elsewhere: `setup.py` reads this module's declarations, builds
them as one shared library (`GROUP`) and writes a stamp beside it (`STAMP`): a digest of every
module of `sim` as it was compiled. There is one source; compiling changes no output.

A compiled module is used only while it is the compilation of the sources beside it: the
finder that `sim/__init__.py` puts first on `sys.meta_path` (`Finder`) imports the
interpreted module instead of its compiled one when the stamp is missing or a module it lists
differs from the one it lists, or is gone (an edit since the build: compiled code reads a record's fields by positions
fixed at build time, so a stale build must never run), when a compiled file is missing, or
when the environment sets `SIM_COMPILED=0`. The choice is made once per process, for all the
modules together, and `sim --version` says which it is (`mode`).

This module imports nothing of `sim` (`setup.py` runs it before `sim` is installed).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from hashlib import blake2b
from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec
from importlib.util import spec_from_file_location
from pathlib import Path
from types import ModuleType

#: the modules compiled, as paths from the repository's root (each type-checks under
#: `mypy --strict`, and every class in them may be extended by interpreted code only where
#: it says so: `mypyc_attr(allow_interpreted_subclasses=True)`)
MODULES = (
    "sim/engine/primitives.py",
    "sim/engine/setup.py",
    "sim/engine/working.py",
    "sim/engine/rules.py",
    "sim/engine/keep.py",
    "sim/analysis/check/canon.py",
    "sim/analysis/check/search.py",
    "sim/properties/stale_write.py",
    "sim/properties/effects_confirmed.py",
    "sim/properties/duplicate_effect.py",
    "sim/properties/misused_dependant.py",
    "sim/properties/two_acceptances.py",
    "sim/properties/wrong_acceptance.py",
)
#: the compiled modules' shared library, a module of the package `sim`
GROUP = "sim.native"
#: the build's stamp, beside `sim/__init__.py`: the `listing` of the sources it compiled
STAMP = "native.stamp"
#: `SIM_COMPILED=0` in the environment: run interpreted though a fresh build is there
SWITCH = "SIM_COMPILED"

#: the compiled modules by name (`sim.engine.rules`)
NAMES = frozenset(path[: -len(".py")].replace("/", ".") for path in MODULES)

_decided: str | None = None


def digest(data: bytes) -> str:
    """The digest the stamp and the written-out forms (`sim.analysis.check.canon`) are checked by."""
    return blake2b(data, digest_size=16).hexdigest()


def fingerprint(path: Path) -> str:
    return digest(path.read_bytes())


def listing(package: Path) -> str:
    """The stamp of a build: one line per module of the package as it is compiled (its
    `.py` files, each "<digest> <path>"); the compiled code depends on the layout of records
    defined outside `MODULES` too, so every module counts. A data package installed into
    `sim` later (the scenarios' and workflows' folders) is not in it, and does not count."""
    return "".join(f"{fingerprint(path)} {path.relative_to(package).as_posix()}\n"
                   for path in sorted(package.rglob("*.py")))  # fmt: skip


def changed(package: Path, stamp: str) -> bool:
    """Whether a module the stamp lists is missing or differs from the one it lists."""
    lines = stamp.splitlines()
    for line in lines:
        print_, _, name = line.partition(" ")
        path = package / name
        if not name or not path.is_file() or fingerprint(path) != print_:
            return True
    return not lines


def decide(package: Path, environ: Mapping[str, str] = os.environ) -> str:
    """"compiled", or why this process runs interpreted (a phrase)."""
    if environ.get(SWITCH) == "0":
        return f"interpreted ({SWITCH}=0)"
    stamp = package / STAMP
    if not stamp.is_file():
        return "interpreted (no compiled build)"
    suffix = EXTENSION_SUFFIXES[0]
    names = [*MODULES, GROUP.replace(".", "/") + "__mypyc.py"]  # mypyc's name for the shared library
    leaves = [package.parent / (path[: -len(".py")] + suffix) for path in names]
    if any(not leaf.is_file() for leaf in leaves):
        return "interpreted (the compiled build is incomplete or for another Python)"
    if changed(package, stamp.read_text()):
        return "interpreted (the sources changed since the compiled build: install again to compile them)"
    return "compiled"


def mode() -> str:
    """How this process runs `MODULES`: "compiled", or "interpreted (why)"."""
    global _decided
    if _decided is None:
        _decided = decide(Path(__file__).resolve().parent.parent)
    return _decided


class Finder:
    """Imports each module of `NAMES` from its source unless `mode()` is "compiled" (then the
    ordinary finders find the compiled file first, as they always do). Any other module of
    `sim` with a compiled file beside its source (left by a build whose `MODULES` named it:
    another commit's) is imported from its source too, never from that file.

    A meta path finder is any object with `find_spec`; not deriving from `importlib.abc`'s
    base class spares every command importing `importlib.resources` and `tempfile` (10 ms)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        if not path or not fullname.startswith("sim."):
            return None
        leaf = os.path.join(path[0], fullname.rpartition(".")[2])
        source = leaf + ".py"
        if fullname in NAMES:
            return None if mode() == "compiled" else spec_from_file_location(fullname, source)
        if any(os.path.isfile(leaf + suffix) for suffix in EXTENSION_SUFFIXES):
            return spec_from_file_location(fullname, source) if os.path.isfile(source) else None
        return None


def install() -> None:
    """Put the finder first on `sys.meta_path` (once)."""
    if not any(isinstance(f, Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, Finder())
