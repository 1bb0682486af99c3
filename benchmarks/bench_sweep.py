"""Time the sweep: run by hand, `python benchmarks/bench_sweep.py [--repeat N]`.

Measures, each as the median of several repetitions:

- in-process CPU time (time.process_time, one core) of simulating the 864 runs alone,
  of the whole library sweep (864 runs, the 144 fail-closed reruns, `needed` and the
  aggregates), and of rendering the three reports; runs per second of the first;
- wall time of the whole `sim sweep` command in a subprocess (start-up, sweep, reports
  written to a temporary folder, summary printed to a pipe), with --workers 1 and 2;
- peak memory (ru_maxrss) of those subprocesses;
- two reference loops (below), in this process, and `sim sweep`'s wall time as a multiple
  of each: the machine is shared and its speed varies from hour to hour, so the sweep is
  judged by that ratio, measured in one run, more than by seconds.

The SimPy-free reference loop (issue 12's "reference loop", the one the 3x target is
about) runs the sweep's 1,008 runs (864 combinations and the 144 fail-closed reruns) with
the engine's own step functions (`sim.engine.rules`) called by a plain Python loop instead
of SimPy's actors: per run it builds the switches and the worked example's schedule, then
each tick the input phase (at a scheduled change), every attempt whose state says it acts
then (in attempt order) and the controller, until the state says the run is over. That is
the same-tick order of `sim.engine.order`, and before the clock starts the benchmark checks
that every run logs exactly the engine's events (it stops if not: the reference must do the
same work). `World` supplies the initial state and the fault schedule as the engine
consults it; its SimPy environment is made but never run. No outcome, swimlane, `needed`,
aggregate or report is made in it, and nothing is imported in it.

The event-walk floor is lighter still (no rules at all): per run the switches and the
schedule, then a walk over a fixed list of events (the 33 of run 1, simulated once before
the clock starts), each recorded as a new `Event` with its own copy of the detail, with the
figures the outcome counts tallied on the way. It is what any sweep of 1,008 runs of this
size pays before deciding anything.

Targets: issue 3, on the 2-core machine: 864 runs <= 0.3 s CPU; `sim sweep` <= 1.5 s wall;
peak memory <= 200 MB. Issue 12: `sim sweep` <= 0.6 s wall on a quiet machine and at most
3x the reference loop measured in the same run. The figures are recorded in docs/sweep.md.
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
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def cpu(func: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        func()
        times.append(time.process_time() - start)
    return statistics.median(times)


#: the environment the timed commands run in: this one without PYTHONDONTWRITEBYTECODE, so that
#: they run as a user's second `sim sweep` does, from the bytecode Python caches (with it set, every
#: module changed since its bytecode was last written is compiled again on every run: 0.03-0.07 s)
COMMAND_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def command(args: list[str], repeat: int) -> tuple[float, float, str]:
    """Median wall seconds, peak resident MB and the range of wall seconds of
    `python -m sim ARGS` in a subprocess, after one untimed run (it writes the bytecode
    caches of a fresh checkout, as a user's first run does)."""
    times = []
    peak = 0.0
    with tempfile.TemporaryDirectory() as out:
        for i in range(repeat + 1):
            start = time.perf_counter()
            pid = subprocess.Popen(
                [sys.executable, "-m", "sim", *args, "--out", out],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=ROOT,
                env=COMMAND_ENV,
            ).pid
            _, status, usage = os.wait4(pid, 0)
            if status != 0:
                raise SystemExit(f"sim {' '.join(args)} failed with status {status}")
            if i == 0:  # the warm-up
                continue
            times.append(time.perf_counter() - start)
            # ru_maxrss of the command itself (KiB on Linux); worker children are counted
            # through RUSAGE_CHILDREN below
            peak = max(peak, usage.ru_maxrss / 1024)
    return statistics.median(times), peak, f"{min(times):.2f}-{max(times):.2f} s"


def wall(func: Callable[[], object], repeat: int) -> float:
    """Median wall seconds of `func()`."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _stepped(world: Any) -> tuple[Any, ...]:
    """The run's events, its step functions called by a plain loop (no SimPy)."""
    from sim.engine import rules

    state = world.state
    inputs = set(world.input_ticks)
    events: list[Any] = []
    while not state.finished:
        t = state.tick
        if t in inputs:
            state, logged = rules.input_phase(state, t, world)
            events += logged
        for n in range(1, len(state.attempts) + 1):
            if state.attempts[n - 1].next_tick == t:
                state, logged = rules.act(state, n, t, world)
                events += logged
        state, logged = rules.controller(state, t, world)
        events += logged
    return tuple(events)


def _runs() -> list[tuple[Any, Any]]:
    """The sweep's 1,008 runs as (switches of the combination, gate to run it with)."""
    from sim.analysis.sweep import gate_subset_ids
    from sim.model.switches import COMBINATIONS, Gate

    return [(s, s.gate) for s in COMBINATIONS] + [(COMBINATIONS[i - 1], Gate.FAIL_CLOSED) for i in gate_subset_ids()]


def _inputs(switches: Any, gate: Any) -> tuple[Any, Any]:
    """A run's switches and schedule, the schedule made afresh for the run: the table of
    schedules `worked_example` keeps (one per combination of the event switches) is emptied
    first, so the reference does the work a plain loop does and stays comparable with the
    figures measured before the sweep kept that table."""
    from sim.model import schedule

    if gate is not switches.gate:
        switches = replace(switches, gate=gate)
    schedule._EXAMPLES.clear()
    return switches, schedule.worked_example(switches)


def reference_loop() -> Callable[[], object]:
    """The SimPy-free reference loop (module docstring), checked against the engine first."""
    from sim.engine.run import run as run_engine
    from sim.engine.world import World

    runs = _runs()
    for switches, gate in runs:
        switches, schedule = _inputs(switches, gate)
        if _stepped(World(switches, schedule)) != run_engine(switches, schedule).events:
            raise SystemExit(f"the reference loop no longer logs the engine's events: {switches}")

    def loop() -> list[tuple[Any, ...]]:
        return [_stepped(World(*_inputs(switches, gate))) for switches, gate in runs]

    return loop


def event_walk() -> Callable[[], object]:
    """The event-walk floor (module docstring)."""
    from sim.engine.run import run as run_engine
    from sim.model.schedule import worked_example
    from sim.model.switches import COMBINATIONS
    from sim.engine.trace import Event, Kind

    example = run_engine(COMBINATIONS[0], worked_example(COMBINATIONS[0])).events
    runs = _runs()

    def loop() -> list[tuple[Any, ...]]:
        out = []
        for switches, gate in runs:
            switches, schedule = _inputs(switches, gate)
            events = []
            calls: dict[int, int] = {}
            restored = stale = posts = 0
            letter = None
            for tick, kind, attempt, detail in example:
                e = Event(tick, kind, attempt, dict(detail))
                events.append(e)
                if kind is Kind.COMPUTED:
                    calls[attempt or 0] = calls.get(attempt or 0, 0) + 1
                elif kind is Kind.RESTORED:
                    restored += 1
                elif kind is Kind.WRITE and e.detail["token"] < e.detail["epoch"]:
                    stale += 1
                elif kind is Kind.FEED and e.detail["answer"] == "applied":
                    posts += 1
                elif kind is Kind.NEWSLETTER:
                    letter = (tick, e.detail["digest"])
            out.append((switches, schedule, tuple(events), calls, restored, stale, posts, letter))
        return out

    return loop


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="repetitions per figure (median)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))  # this checkout's sim, in process as in the commands' subprocesses

    from sim.analysis import sweep
    from sim.render.report import render_all

    tasks = [(i, "fail-open") for i in range(1, sweep.RUNS + 1)]
    sweep._simulate_tasks(tasks[:10])  # warm up imports and caches
    runs_cpu = cpu(lambda: sweep._simulate_tasks(tasks), args.repeat)
    sweep_cpu = cpu(sweep.sweep, args.repeat)
    result = sweep.sweep()
    doc = result.document()
    render_cpu = cpu(lambda: render_all(result.document()), args.repeat)
    size = sum(len(t) for t in render_all(doc).values())
    reference, walk = reference_loop(), event_walk()
    reference(), walk()  # warm up
    reference_wall, walk_wall = wall(reference, args.repeat), wall(walk, args.repeat)
    one_wall, one_peak, one_range = command(["sweep"], args.repeat)
    two_wall, two_peak, two_range = command(["sweep", "--workers", "2"], args.repeat)
    children_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    # the machine may have changed meanwhile: the references again, after the commands
    reference_after, walk_after = wall(reference, args.repeat), wall(walk, args.repeat)

    rows = [
        ("864 runs simulated, in-process CPU", f"{runs_cpu:.3f} s", f"{sweep.RUNS / runs_cpu:,.0f} runs/s"),
        ("library sweep (864 + 144 reruns, needed, aggregates) CPU", f"{sweep_cpu:.3f} s",
         f"{(sweep.RUNS + 144) / sweep_cpu:,.0f} runs/s"),
        ("document + three reports rendered, CPU", f"{render_cpu:.3f} s", f"{size / 1e6:.2f} MB of text"),
        ("`sim sweep` end to end, wall (--workers 1)", f"{one_wall:.3f} s", f"{one_range}, peak {one_peak:.0f} MB"),
        ("`sim sweep --workers 2` end to end, wall", f"{two_wall:.3f} s",
         f"{two_range}, peak {two_peak:.0f} MB (parent)"),
        ("largest resident set of any child process", f"{children_peak:.0f} MB", ""),
        ("SimPy-free reference loop (1,008 runs), wall, before / after the commands",
         f"{reference_wall:.3f} s", f"{reference_after:.3f} s"),
        ("event-walk floor (1,008 runs), wall, before / after the commands",
         f"{walk_wall:.3f} s", f"{walk_after:.3f} s"),
        ("`sim sweep` end to end / SimPy-free reference loop", f"{one_wall / reference_wall:.2f}x",
         f"{one_wall / reference_after:.2f}x against the later one (target <= 3x)"),
        ("`sim sweep` end to end / event-walk floor", f"{one_wall / walk_wall:.2f}x",
         f"{one_wall / walk_after:.2f}x against the later one"),
        ("library sweep CPU / SimPy-free reference loop", f"{sweep_cpu / reference_wall:.2f}x", ""),
    ]  # fmt: skip
    # with PYTHONDONTWRITEBYTECODE set (as on the shared machine) every start-up compiles sim's sources
    bytecode = "off" if sys.dont_write_bytecode else "on"
    print(f"median of {args.repeat} (python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, bytecode cache {bytecode})")  # fmt: skip
    width = max(len(r[0]) for r in rows)
    for name, value, extra in rows:
        print(f"{name:<{width}}  {value:>9}  {extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
