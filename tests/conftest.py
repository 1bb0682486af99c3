"""Hypothesis profiles for the property tests, the markers left out of the default run
(`slow`, `servers`), and CI's demand that the browser test ran.

- `default`: a modest example count, so the whole default test run stays well under a minute.
- `thorough`: 20x the examples, for long runs: `HYPOTHESIS_PROFILE=thorough pytest`.

Both are deterministic (`derandomize`: examples derive from each test's own source, so CI
reruns are reproducible) and keep no example database, and neither has a deadline (timings on
a shared machine are noisy; `benchmarks/` measures speed instead).

The browser test skips where no Chromium is installed; `.ci/run` sets SIM_REQUIRE_BROWSER=1,
and then a run in which no `browser` test passed fails instead of passing quietly.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import settings

#: max_examples of the default profile; `thorough` multiplies it by THOROUGH_FACTOR
DEFAULT_EXAMPLES = 100
THOROUGH_FACTOR = 20

settings.register_profile(
    "default",
    max_examples=DEFAULT_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
)
settings.register_profile("thorough", settings.get_profile("default"), max_examples=DEFAULT_EXAMPLES * THOROUGH_FACTOR)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `slow` run only when asked for (`pytest -m slow`); so do tests marked
    `servers` (`pytest -m servers`: an engine server, installed by the second documented command)."""
    markexpr = str(config.getoption("markexpr", ""))
    for marker in ("slow", "servers"):
        if marker in markexpr:
            continue
        skip = pytest.mark.skip(reason=f"{marker}: run with -m {marker}")
        for item in items:
            if marker in item.keywords:
                item.add_marker(skip)


def benchmark(name: str) -> ModuleType:
    """benchmarks/NAME.py as a module (registered under NAME, so its dataclasses pickle), for
    the tests of what a benchmark script itself judges."""
    path = Path(__file__).resolve().parent.parent / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts; each one still running is killed by its id on teardown."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


#: how long `until` waits at most: a backstop for a hang, never a timing a test relies on (a
#: test that passes stops waiting as soon as what it waits for is so; only a failing one waits
#: this long, so a loaded machine cannot make a correct program fail)
BACKSTOP = 300.0


def rerun_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment `interpreted` reruns a test in: this one's, interpreted, and without
    CI's demands on a whole run (SIM_REQUIRE_BROWSER, SIM_REQUIRE_COMPILED): the rerun is one
    test of this session, and what a whole run must show is this session's to check."""
    kept = {name: value for name, value in environ.items() if not name.startswith("SIM_REQUIRE_")}
    return {**kept, "SIM_COMPILED": "0"}


def interpreted(request: pytest.FixtureRequest) -> bool:
    """For a test that hands the engine a record of its own making (a `State` with a field
    more): True where this process runs interpreted, so the test goes on here; where it runs
    the compiled modules (docs/compiled.md), which read a `State`'s fields by the positions they
    were compiled for, the test is run again in a process with `SIM_COMPILED=0`, must pass
    there, and this returns False."""
    from sim.base.compiled import mode

    if mode() != "compiled":
        return True
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", request.node.nodeid],
                          capture_output=True, text=True, cwd=request.config.rootpath,
                          env=rerun_environment(os.environ), check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    return False


def until(done: Callable[[], bool]) -> bool:
    """Poll `done` until it is true, or until the backstop (`BACKSTOP`) has passed; its last value."""
    deadline = time.monotonic() + BACKSTOP
    while not done():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def processes() -> Iterator[tuple[int, list[str]]]:
    """(pid, the fields of /proc/PID/stat after the command name) of every live process."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                yield int(entry), fields


def live(pids: list[int]) -> list[int]:
    """Those of `pids` that are still running (a zombie, reaped or not, is not)."""
    alive = {pid for pid, _ in processes()}
    return [pid for pid in pids if pid in alive]


def failed_zombie_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, engine: Any) -> list[int]:
    """Run `engine`'s zombie fault (sim/conform/harness.py) made to fail once w1 is stopped, as
    w2 finishes; the pids of every process the run started, sorted."""
    from sim.conform import harness

    real_finish = harness.finish

    def failing_finish(procs: harness.Processes, label: str) -> None:
        if label == "w2":
            assert harness.stopped(procs.started["w1"].pid)
            raise harness.ConformError("w2 failed (made to fail by the test)")
        real_finish(procs, label)

    monkeypatch.setattr(harness, "finish", failing_finish)
    pids: list[int] = []
    zombie = next(f for f in harness.FAULTS if f.name == "zombie")
    with pytest.raises(harness.ConformError, match="made to fail"):
        harness.observe(engine, zombie, tmp_path, on_start=lambda started: pids.extend(started))
    return sorted(set(pids))


def children_of(pid: int) -> set[int]:
    """Every live descendant of a process, by /proc."""
    parents = {p: int(fields[1]) for p, fields in processes()}
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


_browser_tests_passed = 0


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global _browser_tests_passed
    if report.when == "call" and report.passed and "browser" in report.keywords:
        _browser_tests_passed += 1


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("SIM_REQUIRE_BROWSER") == "1" and exitstatus == 0 and _browser_tests_passed == 0:
        session.exitstatus = 1
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(
                "SIM_REQUIRE_BROWSER=1 but no browser test passed (is /usr/bin/chromium installed?)", red=True
            )
