"""`sim conform ENGINE --explore N --seed S` and `--schedule FILE`: fault schedules drawn at
random and run on the real engine, each beside `sim`'s prediction for the same schedule.

A schedule is one of the faults the harness can inject with one worker held at a barrier
(sim/conform/harness.py `drive`): w1 killed (SIGKILL) or stopped (SIGSTOP, continued once the
restarted worker has finished) right after the model call of any section step s1..s4; or w1
killed right after the feed answered its post; the post with or without the key; for a
worker held in a section step, the report's section 2 corrected or not before the restarted
worker resumes. Each schedule is written as a scenario file (`scenario_text`), so `sim`'s run
has exactly these faults: attempt #1 silent at tick k (it computes s_k at tick k), woken (a
stop) the tick after the restarted attempt is done; the poster's death after its send, the
first post action's; the change the tick after the silence, during the outage.

Each schedule is run `runs` times (3 by default): a figure that differs between the runs is
reported as varying, never as a match (`harness.merge`). A schedule with a MISMATCH is a
disagreement: it is shrunk (the change dropped, then the held step moved earlier, as long as
the disagreement stays) and saved into the output folder as a scenario file, replayable with
`sim conform ENGINE --schedule FILE`, beside a folder with the engine's own records of each
run of it (`harness.keep_record`).

Not drawn (yet): a pause with a drawn delay, a kill before a step or inside the non-calling
steps (assemble, accept), the poster's earlier points (before or after its intent: the
application records no intent), a second or third fault in one run (a second worker held at
a barrier): `harness.drive` holds one worker.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sim.conform import harness
from sim.conform.engines import ENGINES, Engine
from sim.conform.harness import ConformError, Fault
from sim.files import write_out
from sim.run import run_scenario
from sim.scenario import load, parse
from sim.trace import Kind

#: the section steps a worker can be held in (after its model call)
STEPS = 4


@dataclass(frozen=True, slots=True)
class Schedule:
    """One schedule the harness can inject: w1 `action` ("kill" or "stop") at barrier `hold`."""

    action: str
    hold: str
    keyed: bool
    change: bool

    @property
    def name(self) -> str:
        return (f"{self.action}-{self.hold.replace('after-call:', 'after-')}"
                f"{'-changed' if self.change else ''}{'' if self.keyed else '-keyless'}")  # fmt: skip

    @property
    def how(self) -> str:
        signal = "SIGKILL" if self.action == "kill" else "SIGSTOP (SIGCONT once w2 finished)"
        where = "after the feed answered its post" if self.hold == "after-post" else f"after {self.hold[11:]}'s model call"
        change = "; section 2 of the report corrected before w2 resumes" if self.change else ""
        return f"{signal} w1 {where}{change}; the post {'with' if self.keyed else 'without'} a key"


def draw(rng: random.Random) -> Schedule:
    """A schedule drawn from what the harness can inject."""
    kind = rng.choice(("kill", "stop", "kill-post"))
    keyed = rng.random() < 0.5
    if kind == "kill-post":
        return Schedule("kill", "after-post", keyed, change=False)
    return Schedule(kind, f"after-call:s{rng.randint(1, STEPS)}", keyed, change=rng.random() < 0.5)


def shrinks(s: Schedule) -> list[Schedule]:
    """Smaller schedules to try, smallest change first: without the change, then the held step
    earlier."""
    out = [replace(s, change=False)] if s.change else []
    if s.hold.startswith("after-call:s") and int(s.hold[12:]) > 1:
        out.append(replace(s, hold=f"after-call:s{int(s.hold[12:]) - 1}"))
    return out


def scenario_text(s: Schedule) -> str:
    """The scenario file of a schedule: `sim`'s run has exactly its faults."""
    k = int(s.hold[12:]) if s.hold.startswith("after-call:s") else 0
    silences = f"[{{attempt = 1, at = {k}}}]" if k else "[]"
    if k and s.action == "stop":
        silences = f"[{{attempt = 1, at = {k}, wake = {done_tick(s) + 1}}}]"
    return "\n".join([
        f'description = "sim conform, a drawn schedule: {s.how}"',
        "",
        "[switches]",
        'rule = "any-accepted"',
        f'silent = "{"paused" if s.action == "stop" else "crashed"}"',
        f'change = "{"during" if s.change else "never"}"',
        f'post_death = "{"yes" if s.hold == "after-post" else "no"}"',
        f'key = "{"per-operation" if s.keyed else "none"}"',
        "",
        "[schedule]",
        f"silences = {silences}",
        f"changes = [{{at = {k + 1}, sections = [2]}}]" if s.change else "changes = []",
        'poster_deaths = [{point = "after-send", nth = 1}]' if s.hold == "after-post" else "poster_deaths = []",
        "duplicate_deliveries = []",
        "",
    ])  # fmt: skip


def done_tick(s: Schedule) -> int:
    """The tick at which the restarted attempt is done when w1 is killed at the same point (a
    stopped w1 is continued only after the restarted worker has finished)."""
    trace, _ = run_scenario(parse(scenario_text(replace(s, action="kill")), "<drawn>", "drawn"))
    return max(e.tick for e in trace.events if e.kind is Kind.DONE)


def every_schedule() -> list[Schedule]:
    """Every schedule the draw can make."""
    steps = [f"after-call:s{k}" for k in range(1, STEPS + 1)]
    out = [Schedule(a, h, keyed, change) for a in ("kill", "stop") for h in steps
           for keyed in (True, False) for change in (False, True)]  # fmt: skip
    return out + [Schedule("kill", "after-post", keyed, False) for keyed in (True, False)]


def from_file(path: Path) -> Schedule:
    """The schedule a scenario file describes, if the harness can inject it: the drawn schedule
    whose scenario has the same faults (the file's schedule, built) and the same post key."""
    scenario = load(str(path))
    for s in every_schedule():
        candidate = parse(scenario_text(s), "<drawn>", s.name)
        if (candidate.schedule == scenario.schedule
                and candidate.switches.as_dict()["key"] == scenario.switches.as_dict()["key"]):  # fmt: skip
            return s
    raise ConformError(f"{path}: not a schedule the harness can inject (one silence of attempt 1 at a section "
                       "step, or the first post's death after its send; a change during the outage)")  # fmt: skip


def fault_of(s: Schedule, folder: Path) -> Fault:
    """The harness's fault for a schedule, its scenario file written into `folder`."""
    path = folder / f"{s.name}.toml"
    if not path.exists():
        write_out(path, scenario_text(s))
    return Fault(s.name, 0, str(path), s.how, s.hold, s.action, s.keyed, s.change)


def mismatched(result: dict[str, Any]) -> bool:
    return any(r["verdict"] == "MISMATCH" for r in result["rows"])


def explore(engine_name: str, count: int, seed: int, out: Path, runs: int = 3,
            on_start: Callable[[list[int]], None] | None = None, jobs: int = 1) -> dict[str, Any]:  # fmt: skip
    """Draw `count` schedules (seeded), run each `runs` times on the engine and shrink and save
    each disagreement into `out`; the document `sim conform --explore` prints."""
    from concurrent.futures import ThreadPoolExecutor

    engine = ENGINES[engine_name]
    harness.require(engine)
    rng = random.Random(seed)
    drawn = [draw(rng) for _ in range(count)]
    scenarios = out / "schedules"
    scenarios.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(lambda s: harness.run_fault(engine, fault_of(s, scenarios), on_start, runs), drawn))
    disagreements = [shrink_and_save(engine, s, out, runs, on_start) for s, r in zip(drawn, results) if mismatched(r)]
    return summary(engine, seed, runs, drawn, results, disagreements)


def replay(engine_name: str, path: Path, out: Path, runs: int = 1,
           on_start: Callable[[list[int]], None] | None = None) -> dict[str, Any]:  # fmt: skip
    """`sim conform ENGINE --schedule FILE`: the schedule of a scenario file, run `runs` times."""
    engine = ENGINES[engine_name]
    harness.require(engine)
    s = from_file(path)
    fault = replace(fault_of(s, out), scenario=str(path))
    result = harness.run_fault(engine, fault, on_start, runs)
    return summary(engine, None, runs, [s], [result], [])


def shrink_and_save(engine: Engine, s: Schedule, out: Path, runs: int,
                    on_start: Callable[[list[int]], None] | None) -> dict[str, Any]:  # fmt: skip
    """The smallest schedule below `s` that still disagrees (one step at a time), saved."""
    scratch = out / "schedules"
    current = s
    progress = True
    while progress:
        progress = False
        for smaller in shrinks(current):
            if mismatched(harness.run_fault(engine, fault_of(smaller, scratch), on_start, runs)):
                current, progress = smaller, True
                break
    name = f"disagreement-{engine.name}-{current.name}"
    write_out(out / f"{name}.toml", scenario_text(current))
    result = harness.run_fault(engine, fault_of(current, scratch), on_start, runs, keep=out / name)
    return {"drawn": s.name, "shrunk": current.name, "file": f"{name}.toml", "record": name,
            "rows": [r for r in result["rows"] if r["verdict"] == "MISMATCH"]}  # fmt: skip


def summary(engine: Engine, seed: int | None, runs: int, drawn: list[Schedule], results: list[dict[str, Any]],
            disagreements: list[dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
    """Per fault kind (kill, stop, kill at the post): schedules run, agreeing (every row a
    match), explained (none a mismatch, some explained), varying (some varying, none a
    mismatch), mismatched."""
    kinds: dict[str, dict[str, int]] = {}
    for s, result in zip(drawn, results):
        kind = "kill after the post" if s.hold == "after-post" else s.action
        verdicts = {r["verdict"] for r in result["rows"]}
        tally = kinds.setdefault(kind, {"schedules": 0, "agree": 0, "explained": 0, "varying": 0, "mismatch": 0})
        tally["schedules"] += 1
        outcome = ("mismatch" if "MISMATCH" in verdicts else "varying" if "varying" in verdicts
                   else "explained" if "explained" in verdicts else "agree")  # fmt: skip
        tally[outcome] += 1
    return {"engine": engine.name, "seed": seed, "runs": runs, "kinds": kinds,
            "schedules": [{"schedule": s.name, "how": s.how, "rows": r["rows"]} for s, r in zip(drawn, results)],
            "disagreements": disagreements,
            "ok": not any(mismatched(r) for r in results)}  # fmt: skip


def text(doc: dict[str, Any]) -> str:
    """An exploration's summary, for the terminal."""
    seed = "" if doc["seed"] is None else f" (seed {doc['seed']})"
    lines = [f"sim conform {doc['engine']}: {sum(k['schedules'] for k in doc['kinds'].values())} schedules{seed}, "
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

