"""Time the sweep: run by hand, `python benchmarks/bench_sweep.py [--repeat N]`.

Measures, each as the median of several repetitions:

- in-process CPU time (time.process_time, one core) of simulating the 864 runs alone,
  of the whole library sweep (864 runs, the 144 fail-closed reruns, `needed` and the
  aggregates), and of rendering the three reports; runs per second of the first;
- wall time of the whole `sim sweep` command in a subprocess (start-up, sweep, reports
  written to a temporary folder, summary printed to a pipe), with --workers 1 and 2;
- peak memory (ru_maxrss) of those subprocesses.

Targets (issue 3, on the 2-core machine): 864 runs <= 0.3 s CPU; `sim sweep` <= 1.5 s wall;
peak memory <= 200 MB. The figures are recorded in docs/sweep.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu(func: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        func()
        times.append(time.process_time() - start)
    return statistics.median(times)


def command(args: list[str], repeat: int) -> tuple[float, float]:
    """Median wall seconds and peak resident MB of `python -m sim ARGS` in a subprocess."""
    times = []
    peak = 0.0
    with tempfile.TemporaryDirectory() as out:
        for _ in range(repeat):
            start = time.perf_counter()
            pid = subprocess.Popen(
                [sys.executable, "-m", "sim", *args, "--out", out],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=ROOT,
            ).pid
            _, status, usage = os.wait4(pid, 0)
            times.append(time.perf_counter() - start)
            if status != 0:
                raise SystemExit(f"sim {' '.join(args)} failed with status {status}")
            # ru_maxrss of the command itself (KiB on Linux); worker children are counted
            # through RUSAGE_CHILDREN below
            peak = max(peak, usage.ru_maxrss / 1024)
    return statistics.median(times), peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="repetitions per figure (median)")
    args = parser.parse_args()

    from sim import sweep
    from sim.render.report import render_all

    tasks = [(i, "fail-open") for i in range(1, sweep.RUNS + 1)]
    sweep._simulate_tasks(tasks[:10])  # warm up imports and caches
    runs_cpu = cpu(lambda: sweep._simulate_tasks(tasks), args.repeat)
    sweep_cpu = cpu(sweep.sweep, args.repeat)
    result = sweep.sweep()
    doc = result.document()
    render_cpu = cpu(lambda: render_all(result.document()), args.repeat)
    size = sum(len(t) for t in render_all(doc).values())
    one_wall, one_peak = command(["sweep"], args.repeat)
    two_wall, two_peak = command(["sweep", "--workers", "2"], args.repeat)
    children_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    rows = [
        ("864 runs simulated, in-process CPU", f"{runs_cpu:.3f} s", f"{sweep.RUNS / runs_cpu:,.0f} runs/s"),
        ("library sweep (864 + 144 reruns, needed, aggregates) CPU", f"{sweep_cpu:.3f} s",
         f"{(sweep.RUNS + 144) / sweep_cpu:,.0f} runs/s"),
        ("document + three reports rendered, CPU", f"{render_cpu:.3f} s", f"{size / 1e6:.2f} MB of text"),
        ("`sim sweep` end to end, wall (--workers 1)", f"{one_wall:.3f} s", f"peak {one_peak:.0f} MB"),
        ("`sim sweep --workers 2` end to end, wall", f"{two_wall:.3f} s", f"peak {two_peak:.0f} MB (parent)"),
        ("largest resident set of any child process", f"{children_peak:.0f} MB", ""),
    ]  # fmt: skip
    print(f"median of {args.repeat} (python {sys.version.split()[0]}, {os.cpu_count()} cores)")
    width = max(len(r[0]) for r in rows)
    for name, value, extra in rows:
        print(f"{name:<{width}}  {value:>9}  {extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
