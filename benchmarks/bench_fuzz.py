"""Fuzz the command line with 10,000 inputs (issue 11) and report the rate and every failure.

    .venv/bin/python benchmarks/bench_fuzz.py                     # 10,000 inputs, seed 1
    .venv/bin/python benchmarks/bench_fuzz.py --inputs 2000 --seed 7 --subprocess 50

Inputs come from tests/fuzz_cases.py (the same mutators as tests/test_fuzz.py), drawn from a
seeded `random.Random`, so a seed gives the same inputs: mutated scenario files (half byte-,
half TOML-level) and mutated argument lists, half each, run in-process by `sim.cli.main`
(each in a fresh folder, under a 10 s alarm and a memory cap), then issue 11's fixed hostile
inputs, then `--subprocess N` of the inputs again as real processes of the venv's `sim`.

Prints inputs per second (in-process and subprocess, with the machine's load average: other
work on the machine slows both), the count of each exit code, and the count of each failure
kind: tracebacks or uncaught exceptions, exit codes outside {0, 1, 2}, exit-2 messages that are
not one line, `--json` output that is not one JSON document, runs over 10 s. Then the distinct
failures (the exception type and where it was raised, or the kind of message), each with its
count and its shortest reproducer. Exits 1 if any input failed, 0 otherwise.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import fuzz_cases as fc  # noqa: E402


def distinct(problem: str, result: fc.Result) -> str:
    """A key that groups one defect's failures: the exception and where, or the message kind."""
    kind, _, detail = problem.partition(": ")
    if kind == "exception":
        return "exception: " + detail.split(": ", 1)[0]
    if kind == "traceback":
        return "traceback: " + detail.split(":", 1)[0]
    if kind == "exit-2-lines":
        first = result.err.strip().splitlines()[:1]
        return "exit-2-lines: " + ("click usage block" if first and first[0].startswith("Usage:") else detail)
    if kind == "slow":
        return f"slow: {result.case.args[0]}"
    return kind


class Tally:
    """Exit codes, failure kinds, distinct failures and the shortest reproducer of each."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.codes: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()
        self.groups: Counter[str] = Counter()
        self.shortest: dict[str, fc.Result] = {}
        self.inputs = 0
        self.failed = 0

    def add(self, result: fc.Result) -> None:
        self.inputs += 1
        self.codes[str(result.code) if result.exception is None else "none (exception)"] += 1
        found = fc.problems(result, self.limit)
        self.failed += bool(found)
        for problem in found:
            self.kinds[problem.split(":", 1)[0]] += 1
            key = distinct(problem, result)
            self.groups[key] += 1
            size = len(result.case.describe(10_000))
            if key not in self.shortest or size < len(self.shortest[key].case.describe(10_000)):
                self.shortest[key] = result

    def report(self) -> None:
        print("exit codes: " + ", ".join(f"{code}: {n:,}" for code, n in sorted(self.codes.items())))
        names = {
            "exception": "uncaught exceptions (in-process tracebacks)",
            "traceback": "tracebacks printed",
            "exit-code": "exit codes outside 0, 1, 2",
            "exit-2-lines": "exit 2 without exactly one line on stderr",
            "json": "--json output not one JSON document",
            "slow": f"runs over {self.limit:.0f} s",
        }
        for kind, label in names.items():
            print(f"{label}: {self.kinds.get(kind, 0):,}")
        print(f"inputs failing: {self.failed:,} of {self.inputs:,}")
        if self.groups:
            print()
            print("distinct failures (count, shortest reproducer):")
        for key, count in self.groups.most_common():
            print(f"- {key}  x{count:,}")
            print("    " + self.shortest[key].case.describe(200).replace("\n", "\n    "))


def make_cases(seed: int, inputs: int, fx: fc.Fixtures) -> list[fc.Case]:
    """Half argument lists, a quarter byte-level and a quarter TOML-level scenario files."""
    chooser = fc.RandomChooser(random.Random(seed))
    cases = []
    for i in range(inputs):
        if i % 2:
            cases.append(fc.argument_case(chooser, fx))
        else:
            cases.append(fc.scenario_case(chooser, "bytes" if i % 4 == 0 else "toml"))
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=10_000, help="fuzzed inputs run in-process")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--subprocess", type=int, default=30, help="inputs also run as real processes")
    parser.add_argument("--limit", type=float, default=fc.LIMIT_SECONDS, help="seconds before a case fails")
    args = parser.parse_args()
    fx = fc.make_fixtures(Path(tempfile.mkdtemp(prefix="sim-fuzz-fixtures-")))
    cases = make_cases(args.seed, args.inputs, fx)
    specials = fc.special_cases(fx)
    tally = Tally(args.limit)
    load = os.getloadavg()[0]
    started = time.perf_counter()
    for n, case in enumerate(cases, 1):
        tally.add(fc.run_case(case, args.limit))
        if n % 1000 == 0:
            print(f"  {n:>6,}/{len(cases):,} in {time.perf_counter() - started:.1f} s, {tally.failed:,} failed",
                  file=sys.stderr)  # fmt: skip
    in_process = time.perf_counter() - started
    for case in specials:
        tally.add(fc.run_case(case, args.limit))
    rng = random.Random(args.seed)
    sample = [cases[i] for i in sorted(rng.sample(range(len(cases)), min(args.subprocess, len(cases))))]
    started = time.perf_counter()
    for case in sample:
        tally.add(fc.run_subprocess(case, args.limit))
    by_process = time.perf_counter() - started

    print(f"sim fuzz: seed {args.seed}, {tally.inputs:,} inputs: {len(cases):,} fuzzed in-process, "
          f"{len(specials)} fixed hostile inputs, {len(sample)} as subprocesses; load average {load:.2f} at start, "
          f"{os.getloadavg()[0]:.2f} at the end, {len(os.sched_getaffinity(0))} cores")  # fmt: skip
    print()
    print("| run | inputs | seconds | inputs/s |")
    print("|---|---:|---:|---:|")
    print(f"| in-process | {len(cases):,} | {in_process:.1f} | {len(cases) / max(in_process, 1e-9):,.0f} |")
    if sample:
        print(f"| subprocess | {len(sample):,} | {by_process:.1f} | {len(sample) / max(by_process, 1e-9):,.1f} |")
    print()
    tally.report()
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
