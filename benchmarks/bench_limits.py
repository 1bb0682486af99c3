"""The worst case of every command that reads a scenario, measured: run by hand,
`.venv/bin/python benchmarks/bench_limits.py [--repeat N]`.

It builds the largest run an accepted scenario file can ask for that we know of (docs/limits.md):
26 sections (the most), horizon 1,000 (the most), 100 attempts (100 silences: each attempt
falls silent, is replaced and wakes late, the most a list holds) and 100 report changes of all
26 sections (each one a new version of every section: the journal grows by 26 records a
change). The run lasts to about t930: the longest, with the largest state, of the files we
have tried. Then it runs each command on it in a subprocess and measures the command's wall
time, its CPU time (user + system, the child's rusage), its peak memory (ru_maxrss) and the
bytes it writes:

- `sim trace FILE` (the swimlane, plain text), `--json`, `--format itf` (streamed), `--html`;
- `sim diff FILE main`;
- `sim scenarios --check` is not here: it runs only the named scenarios.

Prints one markdown row per command (the median of `--repeat` runs) and the machine's load.
docs/limits.md quotes these figures.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIM = str(Path(sys.executable).with_name("sim"))
N = 100  # entries in a list at most (sim.base.limits.MAX_LIST)


def largest_scenario() -> str:
    """The scenario file described in the module docstring."""
    sections = ", ".join(str(s) for s in range(1, 27))
    silences = ", ".join(f"{{attempt = {i}, at = {3 + 9 * (i - 1)}, wake = {10 + 9 * (i - 1)}}}" for i in range(1, N + 1))
    changes = ", ".join(f"{{at = {4 + 9 * i}, sections = [{sections}]}}" for i in range(N))
    return "\n".join([
        'description = "The largest run we know an accepted file to ask for: 26 sections, horizon 1000, '
        '100 attempts, 100 changes of every section."',
        "[schedule]", "sections = 26", "horizon = 1000", "heartbeat_limit = 2", "newsletter_ready = 12",
        f"silences = [{silences}]", f"changes = [{changes}]", "",
    ])  # fmt: skip


def measure(args: list[str], cwd: Path) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds, peak memory in bytes, bytes written) of `sim ARGS`."""
    out_path = cwd / "out.bin"
    started = time.monotonic()
    with open(out_path, "wb") as out:
        proc = subprocess.Popen([SIM, *args], cwd=cwd, stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"sim {' '.join(args)} failed: {os.waitstatus_to_exitcode(status)}")
    written = out_path.stat().st_size
    for extra in cwd.glob("*.html"):
        written += extra.stat().st_size
        extra.unlink()
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, written


COMMANDS: list[tuple[str, list[str]]] = [
    ("sim trace FILE (the swimlane, text)", ["trace", "big.toml", "--no-color", "--width", "200"]),
    ("sim trace FILE --json", ["trace", "big.toml", "--json"]),
    ("sim trace FILE --format itf", ["trace", "big.toml", "--format", "itf"]),
    ("sim trace FILE --html page.html", ["trace", "big.toml", "--html", "page.html"]),
    ("sim diff FILE main", ["diff", "big.toml", "main", "--no-color", "--width", "200"]),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sim-bench-limits-") as folder:
        cwd = Path(folder)
        text = largest_scenario()
        (cwd / "big.toml").write_text(text, encoding="utf-8")
        load = os.getloadavg()[0]
        print(f"the input: {len(text.encode()):,} bytes; {args.repeat} run(s) each, the median; "
              f"load {load:.1f} at the start")  # fmt: skip
        print("| command | wall | CPU | peak memory | written |")
        print("|---|---|---|---|---|")
        for label, command in COMMANDS:
            runs = [measure(command, cwd) for _ in range(args.repeat)]
            wall, cpu, peak, size = (statistics.median(r[i] for r in runs) for i in range(4))
            print(f"| `{label}` | {wall:.1f} s | {cpu:.1f} s | {peak / 2**20:.0f} MB | {size / 1e6:.1f} MB |", flush=True)
        print(f"load {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    sys.exit(main())
