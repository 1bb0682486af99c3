"""Benchmark `sim check`: schedules/s with 1 and 2 workers, distinct traces/s, peak memory.

    .venv/bin/python benchmarks/bench_check.py                # K = 1, 2, 3 at horizon 8
    .venv/bin/python benchmarks/bench_check.py --horizon 6 --faults 1 2

Each measurement runs in a fresh process (so peak memory is its own), checks the all-on
configuration with per-step checkpoints, and reports wall-clock rates, the CPU seconds the
coordinator and the workers spent, and peak resident memory (coordinator and the largest
worker). The machine's load average is printed with each row: other work on the machine
slows the two-worker run first, so read the speed-up together with it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time


def one(max_faults: int, horizon: int, workers: int) -> dict[str, float]:
    from concurrent.futures import ProcessPoolExecutor

    from sim.check import CheckBound, Config, InlineExecutor, check
    from sim.switches import Switches

    executor = InlineExecutor() if workers == 1 else ProcessPoolExecutor(max_workers=workers)
    load = os.getloadavg()[0]
    before = os.times()
    started = time.perf_counter()
    (result,) = check([Config("all-on", Switches())], CheckBound(max_faults, horizon), executor=executor, workers=workers)
    seconds = time.perf_counter() - started
    executor.shutdown()
    after = os.times()
    return {
        "max_faults": max_faults,
        "horizon": horizon,
        "workers": workers,
        "schedules": result.schedules,
        "distinct_traces": result.distinct_traces,
        "seconds": seconds,
        "schedules_per_s": result.schedules / seconds,
        "distinct_per_s": result.distinct_traces / seconds,
        "cpu_coordinator_s": (after.user - before.user) + (after.system - before.system),
        "cpu_workers_s": (after.children_user - before.children_user)
        + (after.children_system - before.children_system),
        "peak_rss_coordinator_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "peak_rss_worker_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "load_before": load,
        "load_after": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--faults", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--horizon", type=int, default=8)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON document")
    parser.add_argument("--one", nargs=3, type=int, metavar=("K", "T", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    rows = []
    for k in args.faults:
        for n in args.workers:
            done = subprocess.run(
                [sys.executable, __file__, "--one", str(k), str(args.horizon), str(n)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            row = json.loads(done.stdout)
            rows.append(row)
            if not args.json:
                base = next(r for r in rows if r["max_faults"] == k and r["workers"] == args.workers[0])
                print(
                    f"K={k} T={args.horizon} workers={n}: {row['schedules']:>9,} schedules "
                    f"{row['distinct_traces']:>9,} distinct  {row['seconds']:7.1f} s  "
                    f"{row['schedules_per_s']:7,.0f} schedules/s  {row['distinct_per_s']:7,.0f} distinct/s  "
                    f"speed-up x{row['schedules_per_s'] / base['schedules_per_s']:.2f}  "
                    f"cpu {row['cpu_coordinator_s']:.1f}+{row['cpu_workers_s']:.1f} s  "
                    f"peak {row['peak_rss_coordinator_mb']:.0f} MB (+ worker {row['peak_rss_worker_mb']:.0f} MB)  "
                    f"load {row['load_before']:.1f}->{row['load_after']:.1f}",
                    flush=True,
                )
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
