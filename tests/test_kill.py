"""SIGKILL `sim check --out DIR` and `sim sweep --out DIR` at random (seeded) moments, starting
from a DIR that holds a complete previous set, and check after each kill: `sim check`'s folder
holds exactly the old set or exactly the new set; each of `sim sweep`'s five reports is the
old file or the new one, whole; the files around them are untouched; every file parses; no
worker outlives the kill. One normal run afterwards leaves no temporary file anywhere.

The default run kills each command 6 times; `-m slow` runs the 50-kill version and prints
the figures (run with `-s` to see them)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from collections import Counter
from pathlib import Path

import pytest
from conftest import processes, until

from sim.base.files import LEGACY, TEMP_PREFIX

SIM = str(Path(sys.executable).parent / "sim")

Snapshot = dict[str, bytes]


def snapshot(folder: Path) -> Snapshot:
    """Every file under `folder` but the temporary ones, by relative path."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.startswith(TEMP_PREFIX) and not LEGACY.match(p.name)
    }


def restore(folder: Path, files: Snapshot) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def leftovers(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.name.startswith(TEMP_PREFIX) or LEGACY.match(p.name)]


def parses(files: Snapshot) -> None:
    for name, data in files.items():
        if name.endswith(".toml"):
            tomllib.loads(data.decode("utf-8"))
        elif name.endswith(".json"):
            json.loads(data)


def session(sid: int) -> list[int]:
    """The live processes of session `sid` (a killed `sim` and its workers)."""
    return [pid for pid, fields in processes() if int(fields[3]) == sid]


def run(args: list[str], cwd: Path) -> float:
    started = time.monotonic()
    subprocess.run([SIM, *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
    return time.monotonic() - started


def kill_at(args: list[str], cwd: Path, after: float, procs: list[subprocess.Popen[bytes]]) -> None:
    """Start `sim ARGS`, SIGKILL it `after` seconds later, and check its workers die with it."""
    proc = subprocess.Popen([SIM, *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    procs.append(proc)
    try:
        proc.wait(timeout=after)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    until(lambda: not session(proc.pid))
    orphans = session(proc.pid)
    for pid in orphans:
        os.kill(pid, signal.SIGKILL)
    assert orphans == [], "a worker outlived its parent"


def moments(rng: random.Random, kills: int, span: float) -> list[float]:
    """Half anywhere in the run (and a little after), half in its last third, where it writes."""
    return [span * (rng.uniform(0.0, 1.1) if i % 2 else rng.uniform(0.65, 1.05)) for i in range(kills)]


# -- sim check: the folder is the old set or the new set --------------------------------------------
NEW_CHECK = ["check", "-k", "1", "-t", "6", "-j", "2", "-p", "all-on,fencing=off,key=none", "--out", "check"]
OLD_CHECK = ["check", "-k", "1", "-t", "4", "-j", "1", "-p", "pins=off", "--out", "check"]


def kill_check(tmp_path: Path, kills: int, seed: int, procs: list[subprocess.Popen[bytes]]) -> Counter[str]:
    out = tmp_path / "check"
    mine = {"notes.txt": b"not sim check's: kept\n"}
    restore(out, mine)
    span = run(NEW_CHECK, tmp_path)
    new = snapshot(out)
    restore(out, mine)
    run(OLD_CHECK, tmp_path)
    old = snapshot(out)
    assert set(old) != set(new) and "check.json" in old and "check.json" in new
    assert old["notes.txt"] == new["notes.txt"] == mine["notes.txt"]
    figures: Counter[str] = Counter()
    for after in moments(random.Random(seed), kills, span):
        restore(out, old)
        kill_at(NEW_CHECK, tmp_path, after, procs)
        now = snapshot(out)
        parses(now)
        figures["old" if now == old else "new" if now == new else "neither"] += 1
        assert now in (old, new), f"killed after {after:.2f} s: {sorted(now)}"
    run(NEW_CHECK, tmp_path)
    assert snapshot(out) == new
    assert leftovers(tmp_path) == []
    return figures


# -- sim sweep: each report is the old file or the new one ---------------------------------------
REPORTS = ("sweep.json", "sweep.csv", "sweep-map.svg", "sweep.md", "explainer.html")
#: an older run's reports: each starts as sim sweep's does (sim.commands.sweep.REPORT_HEADS),
#: since sim sweep replaces only reports it wrote
OLD_REPORTS = {
    "sweep.json": b'{\n  "runs": [\n    {"id": 1, "switches": {}}\n  ],\n  "old": true\n}\n',
    "sweep.csv": b"id,silent,fencing,checkpoints,change,pins,rule,post_death,key,gate,old\n",
    "sweep-map.svg": b'<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1" '
                     b'width="1" height="1" role="group" aria-label="Overview map of the old runs"/>\n',
    "sweep.md": b"# The 864-run sweep\n\nGenerated by `sim sweep`; old.\n",
    "explainer.html": b'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" '
                      b'content="width=device-width, initial-scale=1">\n<title>old: the 864 runs of its worked '
                      b"example</title>\n<!-- old -->\n",
}
AROUND = {
    "explainer-main.png": b"\x89PNG not sim sweep's\n",
    "counterexamples/check/check.json": b'{"not": "sim sweep\'s"}\n',
}
SWEEP = ["sweep", "--out", "reports"]


def kill_sweep(tmp_path: Path, kills: int, seed: int, procs: list[subprocess.Popen[bytes]]) -> Counter[str]:
    out = tmp_path / "reports"
    restore(out, AROUND)
    span = run(SWEEP, tmp_path)
    new = snapshot(out)
    assert set(new) == set(REPORTS) | set(AROUND)
    old = {**AROUND, **OLD_REPORTS}
    figures: Counter[str] = Counter()
    for after in moments(random.Random(seed), kills, span):
        restore(out, old)
        kill_at(SWEEP, tmp_path, after, procs)
        now = snapshot(out)
        assert set(now) == set(old), f"killed after {after:.2f} s: {sorted(now)}"
        parses(now)
        for name in AROUND:
            assert now[name] == AROUND[name]
        which = ["old" if now[n] == old[n] else "new" if now[n] == new[n] else "neither" for n in REPORTS]
        assert "neither" not in which, f"killed after {after:.2f} s: {dict(zip(REPORTS, which))}"
        figures["old" if set(which) == {"old"} else "new" if set(which) == {"new"} else "mixed"] += 1
    run(SWEEP, tmp_path)
    assert snapshot(out) == new
    assert leftovers(tmp_path) == []
    return figures


def test_killing_check_leaves_the_old_set_or_the_new(tmp_path: Path, procs: list[subprocess.Popen[bytes]]) -> None:
    figures = kill_check(tmp_path, kills=6, seed=11, procs=procs)
    assert sum(figures.values()) == 6 and figures["neither"] == 0


def test_killing_sweep_leaves_each_report_old_or_new(tmp_path: Path, procs: list[subprocess.Popen[bytes]]) -> None:
    figures = kill_sweep(tmp_path, kills=6, seed=11, procs=procs)
    # the reports are staged and then renamed in a row: a mix needs a kill inside those renames
    assert sum(figures.values()) == 6 and figures["mixed"] == 0


@pytest.mark.slow
def test_fifty_kills_of_each(tmp_path: Path, procs: list[subprocess.Popen[bytes]]) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "s").mkdir()
    check = kill_check(tmp_path / "c", kills=50, seed=2024, procs=procs)
    sweep = kill_sweep(tmp_path / "s", kills=50, seed=2024, procs=procs)
    print(f"\nsim check, 50 kills: {dict(check)}\nsim sweep, 50 kills: {dict(sweep)}")
    assert check["neither"] == 0 and sum(check.values()) == 50 and sum(sweep.values()) == 50
    assert sweep["mixed"] == 0
