"""Throughput of `sim explore`, and why its search does not run through Hypothesis.

Run by hand: `.venv/bin/python benchmarks/bench_explore.py [--examples N] [--repeat R]`.
Pins itself to one core and prints a markdown table (best of R repeats) of schedules per
second for: drawing alone, the engine run alone, the whole `sim explore` loop (draw, run,
invariants, at-risk and coverage), and the same draw + run driven by Hypothesis' `@given`.
The figures go in docs/explore.md.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable

from sim.analysis.explore import ExploreBounds, SeededChoices, draw_schedule, explore, schedules
from sim.run import simulate
from sim.model.switches import Switches


def best_rate(label: str, n: int, repeat: int, body: Callable[[], int]) -> tuple[str, float]:
    rates = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = body()
        rates.append(done / (time.perf_counter() - start))
    return label, max(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20_000)
    parser.add_argument("--hypothesis-examples", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    n: int = args.examples
    repeat: int = args.repeat
    bounds = ExploreBounds()
    switches = Switches()
    choices = SeededChoices(random.Random(1))
    drawn = [draw_schedule(choices, bounds) for _ in range(n)]

    def draw_only() -> int:
        c = SeededChoices(random.Random(1))
        for _ in range(n):
            draw_schedule(c, bounds)
        return n

    def run_only() -> int:
        for schedule in drawn:
            simulate(switches, schedule)
        return n

    def explore_loop() -> int:
        return explore(switches, seed=1, examples=n, bounds=bounds).runs

    def explore_fencing_off() -> int:
        return explore(Switches().with_values({"fencing": "off"}), seed=1, examples=n, bounds=bounds).runs

    def with_hypothesis() -> int:
        from hypothesis import given, settings

        count = [0]

        @settings(max_examples=args.hypothesis_examples, derandomize=True, database=None, deadline=None)
        @given(schedules(bounds))
        def prop(schedule: object) -> None:
            count[0] += 1
            simulate(switches, schedule)  # type: ignore[arg-type]

        prop()
        return count[0]

    rows = [
        best_rate("draw a schedule (seeded)", n, repeat, draw_only),
        best_rate("engine run + outcome", n, repeat, run_only),
        best_rate("`sim explore` loop, all on", n, repeat, explore_loop),
        best_rate("`sim explore` loop, fencing off (includes one shrink)", n, repeat, explore_fencing_off),
        best_rate("Hypothesis `@given` draw + run", args.hypothesis_examples, repeat, with_hypothesis),
    ]
    print(f"one core, {n:,} schedules (Hypothesis: {args.hypothesis_examples:,}), best of {repeat}")
    print()
    print("| what | schedules/s |")
    print("|---|---:|")
    for label, rate in rows:
        print(f"| {label} | {rate:,.0f} |")


if __name__ == "__main__":
    main()
