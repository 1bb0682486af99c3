"""Benchmark `sim check`'s state-space search, each figure a ratio measured in one run.

    .venv/bin/python benchmarks/bench_check.py search     # the search against the enumerator
    .venv/bin/python benchmarks/bench_check.py big        # sim check -k 3 -t 12 -p each, 2 workers
    .venv/bin/python benchmarks/bench_check.py dask       # 1 and 2 Dask workers, per-unit overhead
    .venv/bin/python benchmarks/bench_check.py share      # what the rows of -p each could share
    .venv/bin/python benchmarks/bench_check.py lockstep   # the rows sharing exactly, tried
    .venv/bin/python benchmarks/bench_check.py instructions [--against REV]   # counted, not timed
    .venv/bin/python benchmarks/bench_check.py compiled   # the compiled modules against SIM_COMPILED=0

`search` (default K = 3, T = 8, all-on, per-step; `--faults`, `--horizon` change it): the
schedule enumerator (`sim.analysis.check.enumerator`, the reference) and the search, each in a fresh process
on one core, one after the other. Reports the enumerator's schedule-ticks (engine ticks run)
against the search's transitions, the CPU seconds of each and their ratio, and whether the
two agree (schedules, violations, counterexamples).

`big`: the CLI `sim check --max-faults 3 --horizon 12 --protections each -j 2` in a
subprocess: wall time, the search's nodes, transitions and depth, and the peak resident
memory of the command and of its largest worker.

`targets`: issue 27's three targets, each with the machine's load, in one run: the big check
above (wall, and the CPU of its processes per transition), `sim check -k 4 -t 10 -p all-on
--yes` (wall, nodes, transitions, peak memory), and `sim sweep` end to end (median wall of
five) against its reference, measured in the same run: the wall of `python3 -c pass` (median
of five) plus the SimPy-free reference loop of `benchmarks/bench_sweep.py` (the engine's step
functions in a plain loop over the sweep's 1,008 runs, checked first to log the engine's
events; interpreted, `SIM_COMPILED=0`, in its own process: the reference is plain Python,
whatever this install compiled). About 15 minutes on two cores; the first line says whether
the checker's modules ran compiled (docs/compiled.md).

`share` (default K = 2, T = 10; `--faults`, `--horizon` change it): how much work the 14 rows
of `-p each` (7 protection settings, 2 checkpoint modes) could share, an upper bound
(docs/check.md, "Reductions: what the search already does, and what it does not", its
paragraph on sharing work between rows). Each row is searched as `sim check` searches it;
each node's transitions are counted under two keys: its form (canonical state, faults used,
pending, idle) and that form with its next tick (every transition's plan, next form, end and
event kinds). Reports the transitions of all rows, and those left if each key were expanded
once for all the rows holding it (the most transitions any of them spent on it), for all
rows, each checkpoint mode, and each pair of rows that differ in one switch. An upper bound:
equal forms under different switches need not have equal futures.

`lockstep` (default K = 2, T = 8): exact sharing between the rows, tried: the 7 rows of one
checkpoint mode searched level by level together, each row merging as `sim check` merges it.
A node's transitions are computed once, for the first row that holds its state (equal up to
the switches), with the engine's `Setup` behind a proxy that notes every field the ticks read;
another row holding the same state takes them over when its switches agree with the first
row's on every field read (the same for a run past the horizon). It runs interpreted
(`SIM_COMPILED=0`, docs/compiled.md): compiled, the rules read a `Setup` as a C struct, which
no proxy can stand in for. Reports the expansions
computed and taken over, which differing switches were read, the CPU against the rows searched
one by one, and whether every row's findings (nodes, transitions, schedules, violations,
counterexamples) are the same.

`instructions` (default K = 2, T = 8): the machine instructions a search executes, counted by
valgrind's callgrind rather than timed, so that the figure is the same whatever else the
shared machine is doing (two counts of the same code differ by less than 0.1 %) and a change
of a few per cent can be judged, which wall or CPU time here cannot. Each count runs in its
own process under `valgrind --tool=callgrind` (about 50 times slower than without it):
`check(all-on, per-step, K, T)`, less the same process stopped just before the search (the
imports and the configuration), over its transitions; and the reference, the SimPy-free loop
of `benchmarks/bench_sweep.py` stepping the sweep's 1,008 runs (their worlds built first, and
not counted), over the engine ticks it steps.
Reports instructions per transition, per reference tick, and their ratio (what a transition
costs in bare engine ticks), all interpreted (`SIM_COMPILED=0`); where this install compiled the
checker's modules (docs/compiled.md), the same search compiled too. With `--against REV` the same search is counted in a checkout of
that commit too (a temporary `git worktree`, removed after): the change in per cent, and
whether both searches found the same (a digest of the result). Needs valgrind on the PATH.

`compiled` (default K = 3, T = 8, `--repeat 3`): the compiled modules (docs/compiled.md) against
the same code interpreted (`SIM_COMPILED=0`), taking turns: `sim check -k K -t T -p all-on --set
checkpoints=per-step -j 1 --json` (CPU of the command, and whether the two JSON documents are
the same bytes) and `sim sweep` (wall). Reports each run, the best of each and their ratio.
Needs an install that compiled them (`sim --version` says "compiled").

`dask`: the same check (K = 2, T = 8, `-p each`, `--split 4`) on a `LocalCluster` of 1 and of
2 worker processes (the speed-up), and the overhead of one unit of work: 200 units that do
almost nothing (K = 0), on the 1-worker cluster, against the same units run in-process.

The machine's load average is printed with each figure: other work on a shared machine
slows the second of two processes first, so read ratios together with it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from hashlib import blake2b
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def fresh(code: str) -> dict[str, object]:
    """Run `code` (which prints one JSON document) in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


ONE = """
import json, time
from sim.analysis.check.check import CheckBound, check, configurations
from sim.model.switches import Checkpoints, Switches
from sim.analysis.check import enumerator
bound = CheckBound({k}, {t})
configs = configurations(Switches(), "all", [Checkpoints.PER_STEP])
start = time.process_time()
if "{what}" == "search":
    (r,) = check(configs, bound)
    work = {{"transitions": r.transitions, "nodes": r.nodes, "depth": r.depth}}
else:
    (r,) = enumerator.enumerate_all(configs, bound)
    work = {{"ticks": r.ticks, "distinct_traces": r.distinct_traces}}
cpu = time.process_time() - start
examples = {{n: [str(e.code), e.tick] for n, e in r.counterexamples.items()}}
print(json.dumps({{"cpu": cpu, "schedules": r.schedules, "violations": r.violations,
                  "examples": examples, **work}}))
"""


def search_vs_enumerator(k: int, t: int) -> None:
    print(f"K={k} T={t} all-on per-step, one core each, {load()}", flush=True)
    walked = fresh(ONE.format(k=k, t=t, what="enumerate"))
    print(f"  enumerator: {walked['schedules']:,} schedules, {walked['ticks']:,} schedule-ticks, "
          f"{walked['cpu']:.1f} s CPU  ({load()})", flush=True)  # fmt: skip
    searched = fresh(ONE.format(k=k, t=t, what="search"))
    print(f"  search:     {searched['schedules']:,} schedules, {searched['nodes']:,} nodes, "
          f"{searched['transitions']:,} transitions, depth t{searched['depth']}, {searched['cpu']:.1f} s CPU  "
          f"({load()})")  # fmt: skip
    same = all(walked[key] == searched[key] for key in ("schedules", "violations", "examples"))
    print(f"  transitions / schedule-ticks = 1/{walked['ticks'] / searched['transitions']:.1f}  "  # type: ignore[operator]
          f"speed-up x{walked['cpu'] / searched['cpu']:.2f}  same verdicts and counterexamples: {same}")  # type: ignore[operator]


def big(workers: int) -> None:
    print(f"sim check -k 3 -t 12 -p each -j {workers}  ({load()})", flush=True)
    done = cli_check(["-k", "3", "-t", "12", "-p", "each", "-j", str(workers)])
    print(f"  {done['rows']} rows, {done['schedules']:,} schedules, {done['nodes']:,} nodes, "
          f"{done['transitions']:,} transitions, depth t{done['depth']}")  # fmt: skip
    print(f"  wall {done['seconds'] / 60:.1f} min; peak resident memory of the largest process {done['peak']:.0f} MB  "
          f"({load()})")  # fmt: skip
    print("  " + done["last_line"])


def cli_check(args: list[str]) -> dict[str, Any]:
    """`sim check ARGS --json` in a subprocess: its rows summed, wall seconds, the CPU seconds
    of it and its workers, the peak resident memory of its largest process, and the last line
    it wrote on stderr (its summary)."""
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryFile("w+") as stdout, \
            tempfile.TemporaryFile("w+") as stderr:  # fmt: skip
        started = time.perf_counter()
        pid = subprocess.Popen([sys.executable, "-m", "sim", "check", *args, "--json", "--out", out],
                               stdout=stdout, stderr=stderr, cwd=ROOT).pid  # fmt: skip
        # this command's own usage, its workers' included (they are waited for before it
        # exits): CPU, and the peak of its largest process (not of any earlier command)
        _, status, usage = os.wait4(pid, 0)
        seconds = time.perf_counter() - started
        stdout.seek(0), stderr.seek(0)
        said = stderr.read().strip()
        if status != 0:
            raise SystemExit(f"sim check {' '.join(args)} failed ({status}): {said}")
        rows = json.loads(stdout.read())["results"]
    cpu = usage.ru_utime + usage.ru_stime
    total = {key: sum(r[key] for r in rows) for key in ("schedules", "nodes", "transitions")}
    return {"seconds": seconds, "cpu": cpu, "peak": usage.ru_maxrss / 1024, "rows": len(rows), **total,
            "depth": max(r["depth"] for r in rows), "violations": sum(sum(r["violations"].values()) for r in rows),
            "last_line": said.splitlines()[-1] if said else ""}  # fmt: skip


def sweep_against_reference(repeat: int = 5) -> tuple[float, float, float]:
    """`sim sweep`'s median wall, and the reference's two parts: `python3 -c pass` (median wall)
    and the SimPy-free reference loop over the sweep's runs (median wall, in this process)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_sweep

    bare = bench_sweep.wall(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), repeat)
    sweep, _, _ = bench_sweep.command(["sweep"], repeat)
    # the reference loop is plain Python: interpreted, whether or not this install compiled the
    # engine's modules (docs/compiled.md), in a fresh process
    code = (f"import sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); import bench_sweep; "
            f"print(bench_sweep.wall(bench_sweep.reference_loop(), {repeat}))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                          env={**os.environ, "SIM_COMPILED": "0"})  # fmt: skip
    return sweep, bare, float(done.stdout)


def timed(args: list[str], interpreted: bool) -> tuple[float, float, bytes]:
    """`python -m sim ARGS` in a fresh process, compiled or not: wall and CPU seconds, stdout."""
    env = {**os.environ, "SIM_COMPILED": "0" if interpreted else "1"}
    with tempfile.TemporaryDirectory() as where:
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "sim", *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                cwd=where, env=env)  # fmt: skip
        out = proc.stdout.read() if proc.stdout else b""
        _, status, usage = os.wait4(proc.pid, 0)
        if status != 0 and not (args[0] == "check" and os.waitstatus_to_exitcode(status) == 1):
            raise SystemExit(f"sim {' '.join(args)} failed ({status})")
        return time.perf_counter() - started, usage.ru_utime + usage.ru_stime, out


def compiled_against_interpreted(k: int, t: int, repeat: int) -> None:
    """`compiled` (see the module docstring)."""
    from sim.base.compiled import mode

    if mode() != "compiled":
        raise SystemExit(f"this install runs {mode()}: nothing compiled to compare")
    check = ["check", "-k", str(k), "-t", str(t), "-p", "all-on", "--set", "checkpoints=per-step", "-j", "1", "--json"]
    runs: dict[str, dict[bool, list[float]]] = {"check": {False: [], True: []}, "sweep": {False: [], True: []}}
    outputs: dict[bool, bytes] = {}
    for i in range(repeat):
        for interpreted in ((False, True) if i % 2 == 0 else (True, False)):
            _, cpu, outputs[interpreted] = timed(check, interpreted)
            wall, _, _ = timed(["sweep", "--out", "r"], interpreted)
            runs["check"][interpreted].append(cpu)
            runs["sweep"][interpreted].append(wall)
            print(f"  {'interpreted' if interpreted else 'compiled':<11}  check K={k} T={t}: {cpu:.2f} s CPU  "
                  f"sweep: {wall:.2f} s wall  ({load()})", flush=True)  # fmt: skip
    for what, unit in (("check", "s CPU"), ("sweep", "s wall")):
        fast, slow = min(runs[what][False]), min(runs[what][True])
        print(f"{what}: compiled {fast:.2f} {unit}, interpreted {slow:.2f} {unit} (best of {repeat}): x{slow / fast:.2f}")
    print(f"the same JSON from both: {outputs[False] == outputs[True]}")


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def targets() -> None:
    """Issue 27's three targets, each measured here and judged (see the module docstring)."""
    from sim.base.compiled import mode

    print(f"issue 27's targets, python {sys.version.split()[0]}, {os.cpu_count()} cores, sim {mode()}  ({load()})",
          flush=True)  # fmt: skip
    big = cli_check(["-k", "3", "-t", "12", "-p", "each", "-j", "2"])
    per = big["cpu"] / big["transitions"] * 1e6
    print(f"1. sim check -k 3 -t 12 -p each -j 2: {big['seconds'] / 60:.1f} min wall (target < 3 min: "
          f"{verdict(big['seconds'] < 180)}); {big['transitions']:,} transitions, {per:.1f} us of CPU each "
          f"(target <= 12 us: {verdict(per <= 12)}); {big['schedules']:,} schedules, {big['nodes']:,} nodes, "
          f"largest process {big['peak']:.0f} MB  ({load()})", flush=True)  # fmt: skip
    four = cli_check(["-k", "4", "-t", "10", "-p", "all-on", "--yes", "-j", "2"])
    print(f"2. sim check -k 4 -t 10 -p all-on: {four['seconds'] / 60:.1f} min wall (target < 30 min: "
          f"{verdict(four['seconds'] < 1800)}); {four['schedules']:,} schedules, {four['nodes']:,} nodes, "
          f"{four['transitions']:,} transitions, {four['violations']} violations, largest process "
          f"{four['peak'] / 1024:.1f} GB  ({load()})", flush=True)  # fmt: skip
    sweep, bare, loop = sweep_against_reference()
    reference = bare + loop
    print(f"3. sim sweep end to end: {sweep:.2f} s wall (target <= 0.6 s: {verdict(sweep <= 0.6)}); reference "
          f"{reference:.2f} s = python3 -c pass {bare:.3f} s + reference loop {loop:.2f} s; {sweep / reference:.2f}x "
          f"(target <= 3x: {verdict(sweep <= 3 * reference)})  ({load()})")  # fmt: skip


def digest(value: object) -> bytes:
    return blake2b(repr(value).encode(), digest_size=16).digest()


def counted_row(config: Any, bound: Any) -> tuple[int, dict[tuple[Any, ...], int]]:
    """One row searched as `sim check` searches it, each node's transitions counted under its
    two keys (see `share`): (the row's transitions, {(tick, form, next or None): most})."""
    from sim.analysis.check.canon import canonical
    from sim.analysis.check.check import space_of
    from sim.analysis.check.search import NO_FAULTS, Search, node_key, root
    from sim.engine.rules import run_tick

    seen: dict[tuple[Any, ...], int] = {}

    def note(node: Any, t: int, count: int, outs: list[Any]) -> None:
        form = digest((canonical(node.state), node.used, node.pending, node.idle))
        for key in ((t, form, None), (t, form, digest(sorted(outs)))):
            seen[key] = max(seen.get(key, 0), count)

    class Counting(Search):
        def successors(self, node: Any, t: int) -> Any:
            outs = []
            for plan, state, events in super().successors(node, t):
                outs.append((repr(plan), digest(canonical(state)), state.finished, tuple(e.kind.value for e in events)))
                yield plan, state, events
            note(node, t, len(outs), outs)

        def straight(self, node: Any, t: int) -> None:
            before = self.found.transitions
            state, u, kinds = node.state, t, []
            while not state.finished:  # the run it makes, described (replayed: nothing changes)
                state, events = run_tick(state, u, NO_FAULTS)
                kinds.append(tuple(e.kind.value for e in events))
                u += 1
            super().straight(node, t)
            note(node, t, self.found.transitions - before, [(u, digest(canonical(state)), tuple(kinds))])

    space = space_of(config, bound)
    search = Counting(space)
    start = root(space)
    found = search.run({node_key(start): start}, 0)
    return found.transitions, seen


def share(k: int, t: int) -> None:
    """How much work the rows of `-p each` could share (module docstring), an upper bound."""
    from sim.analysis.check.check import CheckBound, configurations
    from sim.model.switches import Checkpoints, Switches

    configs = configurations(Switches(), "each", list(Checkpoints))
    print(f"K={k} T={t}, the {len(configs)} rows of -p each, one core  ({load()})", flush=True)
    started = time.perf_counter()
    rows = [counted_row(config, CheckBound(k, t)) for config in configs]
    print(f"  searched in {time.perf_counter() - started:.0f} s  ({load()})")

    def left(indices: list[int], step: bool) -> tuple[int, int]:
        most: dict[tuple[Any, ...], int] = {}
        for i in indices:
            for key, count in rows[i][1].items():
                if (key[2] is not None) == step and count > most.get(key, -1):
                    most[key] = count
        return sum(rows[i][0] for i in indices), sum(most.values())

    def line(title: str, indices: list[int]) -> None:
        total, by_form = left(indices, False)
        _, by_step = left(indices, True)
        print(f"  {title}: {total:,} transitions; left by form {by_form:,} ({by_form / total:.1%}), "
              f"by form and next tick {by_step:,} ({by_step / total:.1%})")

    line("all rows", list(range(len(configs))))
    counts: dict[tuple[Any, ...], set[int]] = {}
    for _, seen in rows:
        for key, count in seen.items():
            if key[2] is None:
                counts.setdefault(key, set()).add(count)
    held = [c for key, c in counts.items() if sum(key in seen for _, seen in rows) > 1]
    print(f"  forms held by several rows: {len(held):,}; of them with unequal transitions in different rows "
          f"(equal forms, unequal futures): {sum(len(c) > 1 for c in held):,}")
    for mode in Checkpoints:
        line(f"checkpoints={mode.value}", [i for i, c in enumerate(configs) if c.switches.checkpoints is mode])
    names = ("fencing", "pins", "key", "rule", "checkpoints")
    for a in range(len(configs)):
        for b in range(a + 1, len(configs)):
            differ = [n for n in names if getattr(configs[a].switches, n) != getattr(configs[b].switches, n)]
            if len(differ) == 1:
                rows_of = [f"{configs[i].protections} {configs[i].switches.checkpoints.value}" for i in (a, b)]
                line(f"{rows_of[0]} / {rows_of[1]} ({differ[0]})", [a, b])


class Reading:
    """A run's `Setup` (or one of its dependants, `within` "dependants.") that notes the name of
    every field read (`lockstep`); a dependant's fields are noted one by one, as "dependants.rule"
    (the gate reads every dependant's ready tick at every tick, and only the rule differs
    between rows), and a property (a value derived from fields, such as `named`) is evaluated
    on the proxy, so that the fields it reads are noted."""

    __slots__ = ("_read", "_record", "_within")

    def __init__(self, record: Any, read: set[str], within: str = "") -> None:
        self._record = record
        self._read = read
        self._within = within

    def __getattr__(self, name: str) -> Any:
        derived = getattr(type(self._record), name, None)
        if isinstance(derived, property):  # a value derived from fields: their reads are noted
            return derived.fget(self)  # type: ignore[misc]
        if name == "dependants" and not self._within:
            self._read.add("dependants.count")  # how many there are is read with them
            return tuple(Reading(d, self._read, "dependants.") for d in self._record.dependants)
        self._read.add(self._within + name)
        return getattr(self._record, name)


def parts(setup: Any) -> dict[str, Any]:
    """A setup's fields by the names `Reading` notes them under."""
    import dataclasses

    from sim.engine.state import Dependant

    out = {f.name: getattr(setup, f.name) for f in dataclasses.fields(setup) if f.name != "dependants"}
    for f in dataclasses.fields(Dependant):
        out[f"dependants.{f.name}"] = tuple(getattr(d, f.name) for d in setup.dependants)
    out["dependants.count"] = len(setup.dependants)
    return out


def sharing_search() -> Any:
    """`Search` with what `lockstep` needs: a node's transitions, or its run past the horizon,
    made with the reads of its `Setup` noted, and a run's counts taken from a run made once."""
    import dataclasses

    from sim.analysis.check.search import NO_FAULTS, Node, Search
    from sim.engine.rules import run_tick

    class Sharing(Search):
        def own(self, node: Node, read: set[str]) -> Node:
            reading: Any = Reading(node.state.setup, read)
            return dataclasses.replace(node, state=node.state._replace(setup=reading))

        def computed(self, node: Node, t: int) -> tuple[frozenset[str], list[Any]]:
            read: set[str] = set()
            setup = node.state.setup
            out = [(plan, state._replace(setup=setup), events)
                   for plan, state, events in super().successors(self.own(node, read), t)]  # fmt: skip
            return frozenset(read), out

        def ran(self, node: Node, t: int) -> tuple[frozenset[str], Any]:
            read: set[str] = set()
            state, ticks = self.own(node, read).state, list[Any]()
            while not state.finished:
                state, events = run_tick(state, t + len(ticks), NO_FAULTS)
                ticks.append((events, state.content))
            return frozenset(read), (ticks, state._replace(setup=node.state.setup))

        def account(self, node: Node, t: int, run: Any) -> None:
            """What `Search.straight` counts, from a run made once."""
            ticks, last = run
            found, memos, broken = self.found, node.memos, node.broken
            for events, content in ticks:
                found.transitions += 1
                if events:
                    memos, broken = self.follow(memos, broken, events, content, node.used, node.path)
            found.nodes += len(ticks) - 1
            found.depth = max(found.depth, t + len(ticks) - 1)
            self.end(last, memos, broken, node.count, node.used, node.path)

    return Sharing


def lockstep_group(spaces: list[Any], stats: dict[str, Any]) -> list[Any]:
    """The rows of `spaces` searched together, sharing exactly (module docstring, `lockstep`).
    `stats` gets the expansions and runs computed and taken over, and the first tick at which
    each differing switch read stopped a take-over."""
    from sim.analysis.check import canon
    from sim.analysis.check.search import node_key, root
    from sim.base import memory

    sharing = sharing_search()
    rows = [sharing(space) for space in spaces]
    starts = [root(space) for space in spaces]
    base = starts[0].state
    taken: dict[int, tuple[Any, Any]] = {}  # id(state) -> (state, the state it was taken over from)
    for start in starts[1:]:
        if start.state._replace(setup=base.setup) == base:
            start.state = base._replace(setup=start.state.setup)
            taken[id(start.state)] = (start.state, base)
    setups = [parts(start.state.setup) for start in starts]
    differ = [[frozenset(n for n in a if a[n] != b[n]) for b in setups] for a in setups]
    frontiers = [{node_key(start): start} for start in starts]
    t = 0
    with memory.collector_paused():
        while any(frontiers):
            frontiers, taken = level_together(rows, frontiers, t, taken, differ, stats)
            canon.trim()
            t += 1
    return [row.found for row in rows]


def level_together(rows: list[Any], frontiers: list[dict[Any, Any]], t: int, taken: dict[int, tuple[Any, Any]],
                   differ: list[list[frozenset[str]]], stats: dict[str, Any]) -> tuple[list[dict[Any, Any]], Any]:  # fmt: skip
    """One level of every row: nodes whose states are one state (up to the switches) expanded
    once, another row taking the transitions over when the switches read agree."""
    buckets: dict[tuple[Any, ...], list[tuple[int, Any]]] = {}
    for i, frontier in enumerate(frontiers):
        rows[i].found.nodes += len(frontier)
        rows[i].found.depth = max(rows[i].found.depth, t)
        for node in frontier.values():
            hit = taken.get(id(node.state))
            origin = hit[1] if hit is not None and hit[0] is node.state else node.state
            buckets.setdefault((id(origin), node.used, node.pending), []).append((i, node))
    following: list[dict[Any, Any]] = [{} for _ in rows]
    taken = {}
    for bucket in buckets.values():
        first: tuple[int, frozenset[str], Any] | None = None
        for i, node in bucket:
            row, past = rows[i], t > rows[i].space.horizon
            kind = "runs" if past else "expansions"
            if first is not None and not first[1] & differ[first[0]][i]:
                stats[kind + " taken over"] = stats.get(kind + " taken over", 0) + 1
                made = first[2]
            else:
                for name in first[1] & differ[first[0]][i] if first is not None else ():
                    stats["read"][name] = min(stats["read"].get(name, t), t)
                stats[kind + " computed"] = stats.get(kind + " computed", 0) + 1
                read, made = (row.ran if past else row.computed)(node, t)
                first = first or (i, read, made)
            if past:
                row.account(node, t, made)
                continue
            setup = node.state.setup
            for plan, state, events in made:
                mine = state if state.setup is setup else state._replace(setup=setup)
                if mine is not state:
                    taken[id(mine)] = (mine, state)
                row.found.transitions += 1
                row.arrive(node, plan, mine, events, t, following[i])
    return following, taken


def findings(found: Any) -> tuple[Any, ...]:
    """What a row's search found, in an order that does not depend on the order of the work."""
    return (found.nodes, found.transitions, found.depth, found.schedules, found.horizon_reached,
            sorted(found.violations.items()), sorted(found.shortest.items()))  # fmt: skip


def lockstep(k: int, t: int) -> None:
    """The rows of one checkpoint mode sharing exactly, against the rows one by one."""
    from sim.analysis.check.check import CheckBound, configurations, space_of
    from sim.analysis.check.search import Search, node_key, root
    from sim.base import memory
    from sim.model.switches import Checkpoints, Switches

    print(f"K={k} T={t}, the 7 rows of -p each in each checkpoint mode, one core  ({load()})", flush=True)
    for mode in Checkpoints:
        spaces = [space_of(c, CheckBound(k, t)) for c in configurations(Switches(), "each", [mode])]
        started = time.process_time()
        with memory.collector_paused():
            alone = [Search(space).run({node_key(start): start}, 0) for space in spaces for start in [root(space)]]
        one_by_one = time.process_time() - started
        stats: dict[str, Any] = {"read": {}}
        started = time.process_time()
        together = lockstep_group(spaces, stats)
        shared = time.process_time() - started
        same = [findings(f) for f in alone] == [findings(f) for f in together]
        print(f"  checkpoints={mode.value}: one by one {one_by_one:.1f} s CPU, together {shared:.1f} s "
              f"(x{one_by_one / shared:.2f}); the same findings in every row: {'yes' if same else 'NO'}  ({load()})")
        for kind, title in (("expansions", "nodes expanded"), ("runs", "runs past the horizon")):
            done, over = stats.get(kind + " computed", 0), stats.get(kind + " taken over", 0)
            print(f"    {title}: {done + over:,}, taken over from another row {over:,} ({over / max(done + over, 1):.1%})")
        read = ", ".join(f"{name} (from t{tick})" for name, tick in sorted(stats["read"].items(), key=lambda x: x[1]))
        print(f"    switches read that stopped a take-over: {read or 'none'}")


DASK = """
import json, time
from sim.analysis.check.check import CheckBound, check, configurations
from sim.analysis.check.cluster import dask_executor
from sim.model.switches import Checkpoints, Switches
configs = configurations(Switches(), "each", list(Checkpoints))
with dask_executor("{address}") as (executor, threads):
    start = time.perf_counter()
    results = check(configs, CheckBound({k}, {t}), executor=executor, workers=threads, split={split})
    seconds = time.perf_counter() - start
print(json.dumps({{"seconds": seconds, "transitions": sum(r.transitions for r in results)}}))
"""

#: 200 units of little work each (one configuration's root with no fault: one run of about
#: 15 ticks), on the cluster and in-process
TINY = """
import json, time
from concurrent.futures import wait
from sim.analysis.check.check import CheckBound, configurations, run_unit, units_of
from sim.analysis.check.cluster import dask_executor
from sim.model.switches import Checkpoints, Switches
(config,) = configurations(Switches(), "all", [Checkpoints.PER_STEP])
units = [units_of(i, config, CheckBound(0, 1), 1)[0][0] for i in range(200)]
start = time.perf_counter()
for unit in units:
    run_unit(unit)
inline = time.perf_counter() - start
with dask_executor("local:1") as (executor, threads):
    run_unit(units[0]), wait([executor.submit(run_unit, units[0])])
    start = time.perf_counter()
    wait([executor.submit(run_unit, unit) for unit in units])
    seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "inline": inline, "units": len(units)}))
"""


def dask() -> None:
    one = fresh(DASK.format(k=2, t=8, address="local:1", split=4))
    print(f"K=2 T=8 -p each --split 4 on local:1: {one['seconds']:.1f} s  ({load()})", flush=True)
    two = fresh(DASK.format(k=2, t=8, address="local:2", split=4))
    print(f"                          on local:2: {two['seconds']:.1f} s  speed-up x{one['seconds'] / two['seconds']:.2f}"  # type: ignore[operator]
          f"  ({load()})", flush=True)  # fmt: skip
    tiny = fresh(TINY)
    per_unit = (tiny["seconds"] - tiny["inline"]) / tiny["units"]  # type: ignore[operator]
    print(f"per-unit overhead on local:1: ({tiny['seconds']:.2f} s on the cluster - {tiny['inline']:.2f} s "
          f"in-process) / {tiny['units']} units = {per_unit * 1000:.1f} ms  ({load()})")  # fmt: skip


#: `instructions`: the search, or (k < 0) the same process stopped just before it
COUNTED = """
import hashlib, sys
from sim.analysis.check.check import CheckBound, check, configurations
from sim.model.switches import Checkpoints, Switches
bound = CheckBound(max(0, {k}), {t})
configs = configurations(Switches(), "all", [Checkpoints.PER_STEP])
if {k} >= 0:
    (r,) = check(configs, bound)
    print(r.transitions, hashlib.blake2b(repr(r).encode(), digest_size=8).hexdigest())
"""

#: `instructions`: the reference, the engine's ticks stepped by the SimPy-free loop of
#: bench_sweep over the sweep's runs, their worlds built first (with `stop`, the same process
#: stopped after building them, so that the difference is the stepping alone). With `tally`,
#: run without valgrind: the loop checked against the engine's events (`reference_loop`), and
#: the ticks it steps, counted by the controller's phases, which end every tick.
REFERENCE = """
import sys
sys.path.insert(0, {benchmarks!r})
import bench_sweep
from sim.engine import rules
from sim.engine.world import World
ticks = 0
if {tally}:
    bench_sweep.reference_loop()
    phase = rules.controller
    def controller(*args):
        global ticks
        ticks += 1
        return phase(*args)
    rules.controller = controller
worlds = [World(*bench_sweep._inputs(switches, gate)) for switches, gate in bench_sweep._runs()]
if not {stop}:
    for world in worlds:
        bench_sweep._stepped(world)
print(ticks)
"""


def collected(text: str) -> int:
    """The instructions callgrind counted, from its summary line (`==pid== Collected : N`)."""
    for line in text.splitlines():
        head, sep, count = line.partition("Collected :")
        if sep and head.startswith("=="):
            return int(count.strip())
    raise SystemExit(f"no callgrind summary in valgrind's output: {text.strip()[-300:]!r}")


def counted(code: str, tree: Path, compiled: bool = False) -> tuple[int, str]:
    """Run `code` in a fresh interpreter on the checkout `tree` under callgrind: the
    instructions it executed, and what it printed. Interpreted (`SIM_COMPILED=0`) unless
    `compiled` (docs/compiled.md)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0", "SIM_COMPILED": "1" if compiled else "0"}
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out", sys.executable, "-c", code],
            capture_output=True, text=True, env=env, cwd=scratch,
        )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"valgrind failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    return collected(done.stderr), done.stdout.strip()


def search_instructions(k: int, t: int, tree: Path, compiled: bool = False) -> tuple[float, int, str]:
    """Instructions per transition of the search in `tree`, its transitions, and its digest."""
    whole, said = counted(COUNTED.format(k=k, t=t), tree, compiled)
    before, _ = counted(COUNTED.format(k=-1, t=t), tree, compiled)
    transitions, digest_ = said.split()
    return (whole - before) / int(transitions), int(transitions), digest_


def instructions(k: int, t: int, against: str | None) -> None:
    """`instructions` (see the module docstring)."""
    import shutil

    if shutil.which("valgrind") is None:
        raise SystemExit("instructions: valgrind is not on the PATH (Debian's package valgrind)")
    print(f"instructions counted by callgrind, K={k} T={t} all-on per-step, python {sys.version.split()[0]}", flush=True)
    per, transitions, mine = search_instructions(k, t, ROOT)
    bench = str(ROOT / "benchmarks")
    whole, _ = counted(REFERENCE.format(benchmarks=bench, stop=False, tally=False), ROOT)
    before, _ = counted(REFERENCE.format(benchmarks=bench, stop=True, tally=False), ROOT)
    tallied = subprocess.run([sys.executable, "-c", REFERENCE.format(benchmarks=bench, stop=False, tally=True)],
                             capture_output=True, text=True, check=True, cwd=ROOT,
                             env={**os.environ, "SIM_COMPILED": "0"})  # fmt: skip
    ticks = int(tallied.stdout.split()[-1])
    tick = (whole - before) / ticks
    print(f"  search: {per:,.0f} instructions a transition ({transitions:,} transitions)")
    print(f"  reference: {tick:,.0f} instructions an engine tick (the SimPy-free loop, {ticks:,} ticks)")
    print(f"  a transition costs {per / tick:.2f} engine ticks", flush=True)
    from sim.base.compiled import mode

    if mode() == "compiled":  # the same search, compiled (docs/compiled.md)
        fast, _, same = search_instructions(k, t, ROOT, compiled=True)
        print(f"  compiled: {fast:,.0f} instructions a transition ({per / fast:.2f}x fewer; "
              f"{fast / tick:.2f} interpreted engine ticks); the same result: {same == mine}", flush=True)
    if against is None:
        return
    with tempfile.TemporaryDirectory() as scratch:
        other = Path(scratch) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(other), against], cwd=ROOT, check=True)
        try:
            theirs, their_transitions, their_digest = search_instructions(k, t, other)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT, check=True)
    print(f"  {against}: {theirs:,.0f} instructions a transition ({their_transitions:,} transitions); "
          f"this tree {100 * (per / theirs - 1):+.2f} %; the same result: {their_digest == mine}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", nargs="?", default="search", choices=["search", "big", "dask", "targets", "share", "lockstep", "instructions",
                                                                     "compiled"])
    parser.add_argument("--faults", type=int, help="K (search: 3, share, lockstep and instructions: 2)")
    parser.add_argument("--horizon", type=int, help="T (search: 8, share: 10, lockstep and instructions: 8)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--against", metavar="REV", help="instructions: count the search of this commit too")
    parser.add_argument("--repeat", type=int, default=3, help="compiled: runs of each mode")
    args = parser.parse_args()
    if args.what == "search":
        search_vs_enumerator(args.faults or 3, args.horizon or 8)
    elif args.what == "big":
        big(args.workers)
    elif args.what == "targets":
        targets()
    elif args.what == "share":
        share(2 if args.faults is None else args.faults, args.horizon or 10)
    elif args.what == "lockstep":
        from sim.base.compiled import mode

        if mode() == "compiled":  # the proxy of `Setup` (`Reading`) stands in for the interpreted class only
            os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "SIM_COMPILED": "0"})
        lockstep(2 if args.faults is None else args.faults, args.horizon or 8)
    elif args.what == "instructions":
        instructions(2 if args.faults is None else args.faults, args.horizon or 8, args.against)
    elif args.what == "compiled":
        compiled_against_interpreted(3 if args.faults is None else args.faults, args.horizon or 8, args.repeat)
    else:
        dask()


if __name__ == "__main__":
    main()
