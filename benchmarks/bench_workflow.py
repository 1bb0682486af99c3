"""Time a workflow's sweep: run by hand, `python benchmarks/bench_workflow.py [--repeat N] [--before REV]`.

Issue 26's speed figures, measured in one run, taking turns:

- `sim sweep --workflow FILE` wall time for a 12-step, 3-effect, 2-dependant workflow (written
  by this script: eleven edits of a repository's files and a test step reading every edit; a
  pull request at a dedup receiver, a chat message at a receiver without keys, a ticket at a
  read-back receiver; deploy and archive as dependants). Target: under 5 s on 2 cores.
- `sim sweep` (the article's, the default workflow) wall time, the reference in the same run.
- with `--before REV`: the library's default sweep (`sim.sweep()`: the 864 runs and what they
  need, no report: the named scenarios an editable install reads are this checkout's) and `sim
  check -k 1 -t 12 -p all-on`, from a git worktree of REV (the code before workflows could run,
  say), beside this checkout's, taking turns: the default workflow's sweep and check within
  10 % of before.

Each figure is the median of `--repeat` runs; the machine's load is printed with them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def big_workflow() -> str:
    """The 12-step, 3-effect, 2-dependant workflow file of issue 26's speed figure."""
    edits = [f"edit-{i}" for i in range(11)]
    steps = "".join(f'[[steps]]\nname = "{e}"\nreads = ["repo.f{i}", "task.issue"]\n\n' for i, e in enumerate(edits))
    listed = ", ".join(f'"{e}"' for e in edits)
    steps += f'[[steps]]\nname = "test"\nreads = [{listed}]\ncalls = 0\n\n'
    parts = ", ".join(f'"f{i}"' for i in range(11))
    return (
        'name = "big"\ndescription = "12 steps, 3 effects, 2 dependants."\n\n'
        '[[inputs]]\nname = "task"\nparts = ["issue"]\n\n'
        f'[[inputs]]\nname = "repo"\nparts = [{parts}]\n\n{steps}'
        f'[artifact]\nname = "revision"\nassembles = [{listed}, "test"]\nfigure = ["repo.f3"]\n\n'
        '[[effects]]\nname = "open-pr"\nreceiver = "dedup"\n\n'
        '[[effects]]\nname = "chat"\nreceiver = "no-key"\nafter = "open-pr"\n\n'
        '[[effects]]\nname = "ticket"\nreceiver = "read-back"\nafter = "chat"\n\n'
        '[[dependants]]\nname = "deploy"\nready = 30\n\n'
        '[[dependants]]\nname = "archive"\nready = 40\n'
    )


def wall(args: list[str], cwd: Path) -> float:
    """Wall time of `python -m sim ARGS` (or, for ["-c", CODE], of that code) run from `cwd`."""
    start = time.perf_counter()
    command = args if args[0] == "-c" else ["-m", "sim", *args]
    subprocess.run([sys.executable, *command], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONPATH": str(cwd)})  # fmt: skip
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", help="a git revision to measure the default sweep and check against")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "big.toml").write_text(big_workflow(), encoding="utf-8")
        trees = {"now": ROOT}
        if args.before:
            subprocess.run(["git", "worktree", "add", "--detach", str(folder / "before"), args.before], cwd=ROOT,
                           check=True, capture_output=True)  # fmt: skip
            trees["before"] = folder / "before"
        runs = {"big sweep (now)": (ROOT, ["sweep", "--workflow", str(folder / "big.toml"), "--out", str(folder / "o")])}
        runs["sweep (now)"] = (ROOT, ["sweep", "--out", str(folder / "o-now")])
        for label, tree in trees.items():
            if args.before:  # the library's sweep (the named scenarios are this checkout's, an editable install's)
                runs[f"library sweep ({label})"] = (tree, ["-c", "import sim; sim.sweep()"])
                runs[f"check k1 t12 all-on ({label})"] = (tree, ["check", "-k", "1", "-t", "12", "-p", "all-on", "--json",
                                                                 "--out", str(folder / f"c-{label}")])  # fmt: skip
        times: dict[str, list[float]] = {label: [] for label in runs}
        try:
            for _ in range(args.repeat):  # taking turns, so that a busy minute costs each alike
                for label, (tree, argv) in runs.items():
                    times[label].append(wall(argv, tree))
        finally:
            if args.before:
                subprocess.run(["git", "worktree", "remove", "--force", str(folder / "before")], cwd=ROOT, check=False)
    print(f"load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores; median of {args.repeat}")
    for label, values in times.items():
        print(f"  {label:32} {statistics.median(values):6.2f} s wall  (range {min(values):.2f}-{max(values):.2f})")
    ref = statistics.median(times["sweep (now)"])
    print(f"  big sweep / default sweep: {statistics.median(times['big sweep (now)']) / ref:.2f}x (target: under 5 s)")
    if args.before:
        for what in ("library sweep", "check k1 t12 all-on"):
            now, before = statistics.median(times[f"{what} (now)"]), statistics.median(times[f"{what} (before)"])
            print(f"  {what}: now / before = {now / before:.3f} (target: at most 1.10)")


if __name__ == "__main__":
    main()
