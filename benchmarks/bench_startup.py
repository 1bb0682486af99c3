"""What starting `sim` costs: run by hand, `.venv/bin/python benchmarks/bench_startup.py
[--repeat N] [--no-bytecode-cache]`.

Measures, in one run and taking turns (so that a change in the machine's load falls on all of
them alike), the CPU time (user + system of the child, from `os.wait4`) of

- `python -c pass` (the reference: this interpreter, its site-packages, nothing of sim),
- `sim --version`,
- `sim scenarios`,
- `python -c "import sim.model.events"` (for the record: what the trace's payloads cost),

each `--repeat` times (10), and prints each one's median and its excess over the reference's
median, the target (`sim --version` and `sim scenarios` at most 100 ms above the reference)
and the machine's load before and after.

By default the children may cache bytecode, as an installed `sim` does: in a temporary folder
(`PYTHONPYCACHEPREFIX`), so nothing is written beside the sources, filled by one run of each
command before the measured ones. `--no-bytecode-cache` measures what a process that may not
cache bytecode (`PYTHONDONTWRITEBYTECODE`, set on this project's machine) pays: every module
of sim compiled at every start.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SIM = str(Path(sys.executable).with_name("sim"))
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "sim --version": [SIM, "--version"],
    "sim scenarios": [SIM, "scenarios"],
    'python -c "import sim.model.events"': [sys.executable, "-c", "import sim.model.events"],
}
REFERENCE = "python -c pass"
#: the commands with a target, and the most CPU time each may take above the reference
TARGETS = {"sim --version": 0.100, "sim scenarios": 0.100}


def cpu_seconds(args: list[str], env: dict[str, str], cwd: str) -> float:
    """User + system CPU time of one run of `args` (its output discarded)."""
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            env=env, cwd=cwd)  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(args)} failed: exit {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime


def environment(cache: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache
    return env


def measure(repeat: int, bytecode_cache: bool) -> dict[str, list[float]]:
    """Each command's CPU seconds, `repeat` runs each, taking turns."""
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    with tempfile.TemporaryDirectory(prefix="sim-startup-") as folder:
        env = environment(str(Path(folder) / "pycache") if bytecode_cache else None)
        if bytecode_cache:
            for args in COMMANDS.values():  # fills the cache
                cpu_seconds(args, env, folder)
        for _ in range(repeat):
            for name, args in COMMANDS.items():
                times[name].append(cpu_seconds(args, env, folder))
    return times


def report(times: dict[str, list[float]], load: tuple[tuple[float, ...], tuple[float, ...]], bytecode_cache: bool) -> str:
    reference = statistics.median(times[REFERENCE])
    repeat = len(times[REFERENCE])
    lines = [
        f"CPU time at start-up, median of {repeat} runs each, taking turns; "
        f"bytecode {'cached (PYTHONPYCACHEPREFIX)' if bytecode_cache else 'not cached (PYTHONDONTWRITEBYTECODE=1)'}",
        "",
        "| command | CPU (median) | above `python -c pass` | target |",
        "|---|---|---|---|",
    ]
    for name, runs in times.items():
        median = statistics.median(runs)
        excess = "" if name == REFERENCE else f"{1000 * (median - reference):+.1f} ms"
        target = TARGETS.get(name)
        verdict = "" if target is None else f"<= {1000 * target:.0f} ms: {'met' if median - reference <= target else 'MISSED'}"
        lines.append(f"| `{name}` | {1000 * median:.1f} ms | {excess} | {verdict} |")
    before, after = (" / ".join(f"{x:.2f}" for x in la) for la in load)
    lines += ["", f"load (1, 5, 15 min) before: {before}; after: {after}; {os.cpu_count()} CPUs"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=10, help="runs of each command (default 10)")
    parser.add_argument("--no-bytecode-cache", action="store_true", help="compile every module at every start")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    before = os.getloadavg()
    times = measure(args.repeat, not args.no_bytecode_cache)
    print(report(times, (before, os.getloadavg()), not args.no_bytecode_cache))
    return 0


if __name__ == "__main__":
    sys.exit(main())
