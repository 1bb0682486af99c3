"""SimPy and tabulate imported without `importlib.metadata` (one of issue 12's `sim sweep`
start-up items).

Both packages set their `__version__` at import with `importlib.metadata.version(NAME)`:
importing `importlib.metadata` (email, zipfile, csv, ...) and searching the installed
distributions costs about 20 ms of every start-up (55 ms on the slow shared machine), more
than the rest of SimPy. Importing only a submodule (`simpy.core`) does not help: Python runs
a package's `__init__` before any of its submodules.

`load(name)` imports the package with a stand-in for `importlib.metadata` that offers what
those two `__init__`s use: `version(name)`, read from the name of the package's
`NAME-VERSION.dist-info` folder beside it (the name the wheel format gives it), so
`__version__` is what it would have been, and `PackageNotFoundError`. Asked for another
package's version (one imported meanwhile), it raises an error no package expects, so that
the import fails and is left to the ordinary way. The stand-in is
removed as soon as the package is imported: a later `import importlib.metadata` gets the
real module. Whenever this cannot be done as described (the package or `importlib.metadata`
already imported, no single dist-info folder, the package's `__init__` asking the stand-in
for anything else), `load` leaves the package to the ordinary import of its first user.

Importing this module loads nothing: the engine package (`sim/engine/__init__.py`) loads
SimPy, before any engine module imports it; `sim sweep` loads tabulate (its summary and
sweep.md are tables). `installed_version` reads an installed distribution's version from
the same folder name, for `sim --version`.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
import types

_METADATA = "importlib.metadata"


class PackageNotFoundError(ModuleNotFoundError):
    """The stand-in's, for `from importlib.metadata import PackageNotFoundError`; never raised."""


def dist_version(name: str) -> str | None:
    """The version in the name of the one `NAME-VERSION.dist-info` folder beside the installed
    package `name`, or None."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    prefix, suffix = f"{name}-", ".dist-info"
    found: set[str] = set()
    for folder in spec.submodule_search_locations:
        try:
            entries = os.listdir(os.path.dirname(folder))
        except OSError:
            continue
        found |= {e[len(prefix) : -len(suffix)] for e in entries if e.startswith(prefix) and e.endswith(suffix)}
    return found.pop() if len(found) == 1 else None


def installed_version(name: str) -> str | None:
    """The version of the installed distribution `name` as `importlib.metadata.version` finds
    it (its metadata folder in the first entry of `sys.path` that holds one), when that folder
    is the only one there and a `NAME-VERSION.dist-info` (the version is in its name); None
    otherwise (an `.egg-info`, say, whose version is only inside it), left to
    `importlib.metadata`."""
    pattern = re.compile(rf"{re.escape(name)}(?:-(\d[^-]*))?\.(?:dist|egg)-info", re.IGNORECASE)
    for folder in sys.path:
        try:
            found = [m for m in map(pattern.fullmatch, os.listdir(folder or ".")) if m]
        except OSError:
            continue
        if found:
            only = found[0] if len(found) == 1 else None
            return only[1] if only and only[1] and only[0].endswith(".dist-info") else None
    return None


def _stand_in(package: str, version: str) -> types.ModuleType:
    def stand_in_version(name: str) -> str:
        if name != package:  # another package imported meanwhile: let its import fail, and ours
            raise LookupError(f"the stand-in for importlib.metadata knows only {package}, not {name}")
        return version

    stub = types.ModuleType(_METADATA)
    setattr(stub, "version", stand_in_version)
    setattr(stub, "PackageNotFoundError", PackageNotFoundError)
    return stub


def load(name: str) -> bool:
    """Import the package `name` without `importlib.metadata` if it can be (see the module);
    whether it was."""
    if name in sys.modules or _METADATA in sys.modules:
        return False
    version = dist_version(name)
    if version is None:
        return False
    sys.modules[_METADATA] = stub = _stand_in(name, version)
    setattr(importlib, "metadata", stub)
    try:
        importlib.import_module(name)
    except Exception:  # noqa: BLE001 (anything else it wants: its ordinary import will do it)
        return False
    finally:
        del sys.modules[_METADATA]
        delattr(importlib, "metadata")
    return True
