"""`sim conform ENGINE --explore N --seed S` and `--schedule FILE`: fault schedules drawn at
random and run on the real engine, each beside `sim`'s prediction for the same schedule.

A schedule (sim/conform/schedule.py) is up to three faults the harness can inject at the
workers' barriers: a worker killed (SIGKILL) or stopped (SIGSTOP, continued at a drawn later
barrier of its successor or once the last worker has finished) right after any section step's
model call, inside assemble, or at the post's three points (a stop only after the intent:
the article's paused poster); the report's section 2 corrected at any barrier before the
acceptance; the post with or without the key. Each schedule is written as a scenario file
(`schedule.scenario_text`, placed by `sim`'s run under the engine's switches), so `sim`'s run
has exactly these faults.

Each schedule is run `runs` times (3 by default): a figure that differs between the runs is
reported as varying, never as a match (`harness.merge`). A schedule with a MISMATCH is a
disagreement: it is shrunk (a fault dropped, the change dropped, a barrier moved earlier, as
long as some run of the smaller schedule, of at most `runs`, still disagrees; at most
`SHRINK_RUNS` engine runs in all) and saved into the output folder as a scenario file,
replayable with `sim conform ENGINE --schedule FILE`, beside a folder with the engine's own
records of each run of it (`harness.keep_record`). What it writes, and over what (only over
files it wrote itself, checked before any run): sim/conform/outputs.py.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sim.conform import harness, outputs, schedule
from sim.conform.engines import ENGINES, Engine
from sim.conform.harness import ConformError, Fault
from sim.conform.schedule import HEADER, Schedule, ScheduleTextError
from sim.scenario import load, parse


def fault_of(s: Schedule, engine: Engine, folder: Path) -> Fault:
    """The harness's fault for a schedule, its scenario file written into `folder` afresh (a
    file left there by an earlier run, perhaps edited since, is never trusted: it is replaced
    if `sim conform` wrote it, else refused, `outputs.write_owned`)."""
    path = folder / f"{s.name}.toml"
    outputs.write_owned(path, schedule.scenario_text(s, engine.switches), outputs.SCHEDULE_MARK)
    return Fault(s.name, 0, str(path), s.how, s)


def from_file(path: Path, engine: Engine) -> Schedule:
    """The schedule a scenario file describes, if the harness can inject it: its first line
    names the schedule (`schedule.HEADER`), and the file's faults and key are those of that
    schedule's scenario under the engine's switches."""
    scenario = load(str(path))
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    if not first.startswith(HEADER):
        raise ConformError(f"{path}: not a schedule the harness can inject (its first line is not "
                           f"'{HEADER}NAME', as `sim conform --explore` writes it)")  # fmt: skip
    try:
        s = Schedule.from_name(first.removeprefix(HEADER).strip())
        candidate = parse(schedule.scenario_text(s, engine.switches), "<drawn>", s.name)
    except ScheduleTextError as error:
        raise ConformError(f"{path}: {error}") from None
    if (candidate.schedule != scenario.schedule
            or candidate.switches.as_dict()["key"] != scenario.switches.as_dict()["key"]):  # fmt: skip
        raise ConformError(f"{path}: its faults are not those of the schedule {s.name} on {engine.name} "
                           "(the file was edited, or written for another engine)")  # fmt: skip
    return s


def mismatched(result: dict[str, Any]) -> bool:
    return any(r["verdict"] == "MISMATCH" for r in result["rows"])


def explore(engine_name: str, count: int, seed: int, out: Path, runs: int = 3,
            on_start: Callable[[list[int]], None] | None = None, jobs: int = 1,
            scratch: Path | None = None) -> dict[str, Any]:  # fmt: skip
    """Draw `count` schedules (seeded), run each `runs` times on the engine and shrink and save
    each disagreement into `out`; the document `sim conform --explore` prints. Each drawn
    schedule's scenario file is written into `scratch` (default: `out/schedules`)."""
    from concurrent.futures import ThreadPoolExecutor

    engine = ENGINES[engine_name]
    harness.require(engine)
    outputs.check_explore_out(out, engine.name, schedules=scratch is None)
    rng = random.Random(seed)
    drawn = [schedule.draw(rng, engine.switches) for _ in range(count)]
    scenarios = outputs.own_folder(out / "schedules") if scratch is None else scratch
    faults = [fault_of(s, engine, scenarios) for s in drawn]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(lambda f: harness.run_fault(engine, f, on_start, runs), faults))
    disagreements = [shrink_and_save(engine, s, out, runs, on_start, scenarios)
                     for s, r in zip(drawn, results) if mismatched(r)]  # fmt: skip
    doc = summary(engine, seed, runs, drawn, results, disagreements)
    for item, fault in zip(doc["schedules"], faults):
        item["scenario"] = fault.scenario
    return doc


def replay(engine_name: str, path: Path, runs: int = 1,
           on_start: Callable[[list[int]], None] | None = None) -> dict[str, Any]:  # fmt: skip
    """`sim conform ENGINE --schedule FILE`: the schedule of a scenario file, run `runs` times
    (nothing written: the file is read, the runs are in temporary folders)."""
    engine = ENGINES[engine_name]
    harness.require(engine)
    s = from_file(path, engine)
    fault = Fault(s.name, 0, str(path), s.how, s)
    result = harness.run_fault(engine, fault, on_start, runs)
    return summary(engine, None, runs, [s], [result], [])


@dataclass(frozen=True, slots=True)
class Estimate:
    """The engine runs a `sim conform` makes, and their time, said before it starts."""

    runs: int
    seconds: float
    #: the runs at a time the time assumes (`-j`, at most one per usable CPU)
    at_once: int


def estimate(engine_names: list[str], fixed: int, drawn: int, runs: int, jobs: int) -> Estimate:
    """`fixed` faults and `drawn` schedules, each run `runs` times on each engine, from each
    engine's declared time for one run (`Engine.run_seconds`), `jobs` at a time (no more than
    the usable CPUs count: the runs are CPU-bound while their workers import the engine). The
    shrinking of a disagreement is not in it: at most `SHRINK_RUNS` + `runs` more runs each."""
    from sim.base.limits import usable_cpus

    at_once = max(1, min(jobs, usable_cpus()))
    each = (fixed + drawn) * runs
    seconds = sum(each * ENGINES[name].run_seconds for name in engine_names) / at_once
    return Estimate(each * len(engine_names), seconds, at_once)


#: the most engine runs shrinking one disagreement may spend (each smaller schedule is run until
#: it disagrees, at most `runs` times); past it, the smallest disagreeing schedule found so far
#: is the one saved, and the disagreement says the shrinking stopped there
SHRINK_RUNS = 12


@dataclass
class Budget:
    """The engine runs a shrinking has spent, and whether it ran out."""

    spent: int = 0
    exhausted: bool = False

    def take(self) -> bool:
        """One more run, if the budget has it."""
        self.exhausted = self.exhausted or self.spent >= SHRINK_RUNS
        self.spent += not self.exhausted
        return not self.exhausted


def disagrees(engine: Engine, fault: Fault, runs: int, on_start: Callable[[list[int]], None] | None,
              budget: Budget) -> bool:  # fmt: skip
    """Whether some run of `fault`, of at most `runs` (stopping at the first that disagrees, and
    when the budget runs out), has a MISMATCH."""
    predicted = harness.predict(engine, fault)
    for _ in range(runs):
        if not budget.take():
            return False
        with harness.run_folder() as workdir:
            observed = harness.observe(engine, fault, workdir, on_start)
        if any(r["verdict"] == "MISMATCH" for r in harness.compare(engine, fault, observed, predicted)):
            return True
    return False


def shrink_and_save(engine: Engine, s: Schedule, out: Path, runs: int,
                    on_start: Callable[[list[int]], None] | None, scratch: Path) -> dict[str, Any]:  # fmt: skip
    """The smallest schedule below `s` that still disagrees (one step at a time, within
    `SHRINK_RUNS` engine runs), saved with the engine's records of `runs` runs of it."""
    current = s
    budget = Budget()
    progress = True
    while progress and not budget.exhausted:
        progress = False
        for smaller in schedule.shrinks(current):
            try:
                fault = fault_of(smaller, engine, scratch)
            except ScheduleTextError:  # a barrier sim's run of the smaller schedule never reaches
                continue
            if disagrees(engine, fault, runs, on_start, budget):
                current, progress = smaller, True
                break
    name = f"disagreement-{engine.name}-{current.name}"
    outputs.write_owned(out / f"{name}.toml", schedule.scenario_text(current, engine.switches), outputs.SCHEDULE_MARK)
    with outputs.staged_record(out / name) as staged:  # the old record folder replaced as a whole
        result = harness.run_fault(engine, fault_of(current, engine, scratch), on_start, runs, keep=staged)
    return {"drawn": s.name, "shrunk": current.name, "file": f"{name}.toml", "record": name,
            "shrink_runs": budget.spent, "shrink_complete": not budget.exhausted,
            "rows": [r for r in result["rows"] if r["verdict"] == "MISMATCH"]}  # fmt: skip


def summary(engine: Engine, seed: int | None, runs: int, drawn: list[Schedule], results: list[dict[str, Any]],
            disagreements: list[dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
    """Per fault kind (kill, stop, kill in the post, change; a schedule counts under each kind
    it has, and under "all"): schedules run, agreeing (every row a match), explained (none a
    mismatch, some explained), varying (some varying, none a mismatch), mismatched."""
    kinds: dict[str, dict[str, int]] = {}
    for s, result in zip(drawn, results):
        verdicts = {r["verdict"] for r in result["rows"]}
        outcome = ("mismatch" if "MISMATCH" in verdicts else "varying" if "varying" in verdicts
                   else "explained" if "explained" in verdicts else "agree")  # fmt: skip
        for kind in ("all", *fault_kinds(s)):
            tally = kinds.setdefault(kind, {"schedules": 0, "agree": 0, "explained": 0, "varying": 0, "mismatch": 0})
            tally["schedules"] += 1
            tally[outcome] += 1
    kinds = {k: kinds[k] for k in KINDS if k in kinds}
    return {"engine": engine.name, "seed": seed, "runs": runs, "kinds": kinds,
            "schedules": [{"schedule": s.name, "how": s.how, "rows": r["rows"]} for s, r in zip(drawn, results)],
            "disagreements": disagreements,
            "ok": not any(mismatched(r) for r in results)}  # fmt: skip


#: the fault kinds an exploration's tally is kept by, in order
KINDS = ("all", "kill", "stop", "kill in the post", "stop in the post", "change", "two or more faults")


def fault_kinds(s: Schedule) -> list[str]:
    """The kinds of a schedule's faults, as the tally counts them."""
    out = []
    for h in s.hits:
        if h.ends_worker:
            out.append(f"{h.action} in the post" if h.at_post else h.action)
        if h.change:
            out.append("change")
    if sum(h.action != "wake" for h in s.hits) > 1:
        out.append("two or more faults")
    return sorted(set(out), key=KINDS.index)


def text(doc: dict[str, Any]) -> str:
    """An exploration's summary, for the terminal."""
    seed = "" if doc["seed"] is None else f" (seed {doc['seed']})"
    lines = [f"sim conform {doc['engine']}: {doc['kinds'].get('all', {}).get('schedules', 0)} schedules{seed}, "
             f"each run {doc['runs']} times"]  # fmt: skip
    for kind, t in doc["kinds"].items():
        lines.append(f"  {kind}: {t['schedules']} run, {t['agree']} agree, {t['explained']} explained, "
                     f"{t['varying']} varying, {t['mismatch']} mismatch")  # fmt: skip
    for item in doc["schedules"]:
        bad = [r for r in item["rows"] if r["verdict"] != "match"]
        verdicts = "; ".join(f"{r['figure']}: {r['observed']} against {r['predicted']} ({r['verdict']})" for r in bad)
        lines.append(f"  {item['schedule']}: {verdicts or 'every row matches'}")
    for d in doc["disagreements"]:
        lines.append(f"  disagreement: {d['drawn']} shrunk to {d['shrunk']}: {d['file']} (the engine's records: {d['record']}/)")
    return "\n".join(lines) + "\n"

