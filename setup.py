"""Install `sim`; where a C compiler is at hand, compile the checker's hot modules with mypyc
(docs/compiled.md). The modules and the stamp are declared in `sim/base/compiled.py`. Without
a compiler, or if compiling fails, `sim` is installed as it is and runs interpreted, with the
same output; `sim --version` says which. `SIM_BUILD=interpreted` skips compiling."""

from __future__ import annotations

import os
import runpy
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
declared: dict[str, Any] = runpy.run_path(str(HERE / "sim" / "base" / "compiled.py"))


def not_built(error: BaseException) -> None:
    print(f"sim: the compiled modules were not built ({error}); sim runs interpreted", flush=True)


class OptionalBuild(build_ext):  # type: ignore[misc]
    """Build the compiled modules, then stamp them with the listing of the sources they were
    compiled from (each module's digest); a failed build leaves no stamp, so the interpreted modules run."""

    def run(self) -> None:
        stamp = Path(self.get_ext_fullpath(declared["GROUP"] + "__mypyc")).parent / declared["STAMP"]
        stamp.unlink(missing_ok=True)
        sources = declared["listing"](HERE / "sim")
        try:
            super().run()
        except Exception as error:  # noqa: BLE001 (no compiler, or it failed: sim runs interpreted)
            not_built(error)
            return
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(sources)


def extensions() -> list[Any]:
    """mypyc's extensions for `MODULES` (none where mypyc is missing or cannot compile them).
    The stamp of an earlier build in place goes first: only a build that succeeds stamps."""
    (HERE / "sim" / declared["STAMP"]).unlink(missing_ok=True)
    if os.environ.get("SIM_BUILD") == "interpreted":
        return []
    try:
        from mypyc.build import mypycify

        return list(mypycify(list(declared["MODULES"]), group_name=declared["GROUP"]))
    except (Exception, SystemExit) as error:  # noqa: BLE001 (mypyc's type check failed, or it is missing)
        not_built(error)
        return []


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuild})
