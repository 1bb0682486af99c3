"""The flake check: the default test run, N times in a row, beside a CPU hog.

    .venv/bin/python benchmarks/flake.py                      # 5 runs of the default test run
    .venv/bin/python benchmarks/flake.py --runs 20 -- -n 0 \\
        tests/test_explainer_browser.py::test_the_map_works_from_the_keyboard

Before the first run it starts the hog: one busy process per CPU this process may use
(`os.sched_getaffinity`), each a plain Python loop that never ends, so every test shares
each core with a process that wants all of it (CI runs the suite with two workers on the
same two cores: this is the machine it meets). The hog is stopped by its process ids when
the check ends, however it ends (normally, on an error or on Ctrl-C).

Each run is `python -m pytest -q` as the README's second command runs it (the project's
`addopts` apply: two xdist workers), with any arguments after `--` appended, with
SIM_REQUIRE_BROWSER=1 where Debian's Chromium is installed and the whole run is asked for (as
`.ci/run` sets it; a chosen subset may hold no browser test), and
with a JUnit XML report in a temporary folder, read back for the tests that failed. Nothing
is retried: a test that fails in any run is reported with the runs it failed in.

Prints one line per run (its number, passed, failed, skipped, seconds, the load average
before and after) and, at the end, every test that failed at least once; `--json` prints one
JSON document instead. Exit status 0 when every run passed, 1 when any test failed in any
run, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sim.base.limits import usable_cpus as cores  # the CPUs this process may use, not the machine's

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
#: the hog's body: a loop that keeps one core busy until it is killed
BUSY = "while True:\n    pass\n"


@dataclass
class Run:
    """One run of the test suite: its counts, its time, and the tests that failed in it."""

    number: int
    exit_code: int
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    load_before: float = 0.0
    load_after: float = 0.0
    failures: list[str] = field(default_factory=list)


@contextmanager
def hog(processes: int) -> Iterator[list[int]]:
    """`processes` busy processes beside the block; each killed by its id when it ends."""
    started = [
        subprocess.Popen([sys.executable, "-c", BUSY], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        for _ in range(processes)
    ]
    try:
        yield [p.pid for p in started]
    finally:
        for p in started:
            p.kill()
        for p in started:
            p.wait()


def failures_in(report: Path) -> tuple[dict[str, int], list[str]]:
    """The counts and the failed tests (`file::name`) of a JUnit XML report."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    failed: list[str] = []
    if not report.exists():
        return counts, failed
    for case in ET.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name', '')}"
        outcome = {child.tag for child in case}
        if outcome & {"failure", "error"}:
            counts["failed"] += 1
            failed.append(name)
        elif "skipped" in outcome:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return counts, failed


def run_once(number: int, extra: Sequence[str], folder: Path) -> Run:
    """One run of the default test run (plus `extra`), timed, its failures read back."""
    report = folder / f"run-{number}.xml"
    env = dict(os.environ)
    if CHROMIUM.exists() and not extra:  # the whole default run, as CI runs it: the browser tests must run
        env["SIM_REQUIRE_BROWSER"] = "1"
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *extra],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    seconds = time.monotonic() - started
    counts, failed = failures_in(report)
    if done.returncode not in (0, 1) or (done.returncode == 1 and not failed):
        # pytest itself failed (a collection error, a crash): its last lines say why
        failed.append("(pytest exit %d) %s" % (done.returncode, " / ".join(done.stdout.strip().splitlines()[-3:])))
    return Run(number, done.returncode, counts["passed"], counts["failed"], counts["skipped"], round(seconds, 1),
               round(load_before, 2), round(os.getloadavg()[0], 2), failed)  # fmt: skip


def summary(runs: list[Run]) -> dict[str, list[int]]:
    """Every test that failed at least once, with the runs it failed in."""
    seen: dict[str, list[int]] = {}
    for run in runs:
        for name in run.failures:
            seen.setdefault(name, []).append(run.number)
    return dict(sorted(seen.items()))


def parse(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    argv = list(argv)
    extra: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1 :]
    parser = argparse.ArgumentParser(description="The default test run N times beside a CPU hog.")
    parser.add_argument("--runs", type=int, default=5, help="how many runs in a row (default 5)")
    parser.add_argument("--hog", type=int, default=None, help="busy processes beside them (default: one per usable CPU)")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs: {args.runs} must be at least 1")
    if args.hog is not None and args.hog < 0:
        parser.error(f"--hog: {args.hog} must be at least 0")
    return args, extra


def main(argv: Sequence[str] | None = None) -> int:
    args, extra = parse(sys.argv[1:] if argv is None else argv)
    processes = cores() if args.hog is None else args.hog
    folder = Path(tempfile.mkdtemp(prefix="sim-flake-"))
    runs: list[Run] = []
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop the hog on SIGTERM too
    try:
        with hog(processes):
            if not args.json:
                print(f"flake check: {args.runs} run(s) of `pytest -q {' '.join(extra)}`".rstrip("` ") + "`"
                      f" beside {processes} busy process(es) on {cores()} CPU(s)", flush=True)  # fmt: skip
            for number in range(1, args.runs + 1):
                run = run_once(number, extra, folder)
                runs.append(run)
                if not args.json:
                    print(f"run {run.number}: {run.passed} passed, {run.failed} failed, {run.skipped} skipped"
                          f" in {run.seconds:.0f} s (load {run.load_before:.1f} -> {run.load_after:.1f})"
                          + ("" if not run.failures else ": " + ", ".join(run.failures)), flush=True)  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    flaky = summary(runs)
    if args.json:
        print(json.dumps({"hog": processes, "cpus": cores(), "extra": extra, "runs": [asdict(r) for r in runs],
                          "failed": flaky}, indent=1))  # fmt: skip
    else:
        seconds = [r.seconds for r in runs]
        print(f"{len(runs)} run(s), {min(seconds):.0f}-{max(seconds):.0f} s each; "
              + ("no test failed" if not flaky else f"{len(flaky)} test(s) failed at least once:"))  # fmt: skip
        for name, where in flaky.items():
            print(f"  {name}: failed in run(s) {', '.join(map(str, where))} of {len(runs)}")
    return 1 if flaky else 0


if __name__ == "__main__":
    sys.exit(main())
