"""The fault schedules `sim conform` can inject on a real engine, and each one's scenario file.

A schedule is a list of up to three faults (`Hit`s), each at a barrier of one worker process
(sim/conform/app.py `App.point`): right after the model call of a section step
(`after-call:sN`), inside the assemble step (`in:assemble`), or at one of the post step's
three points (`before-intent`, `after-intent`, `after-send`). At a barrier the harness
(sim/conform/harness.py `drive`) does the hit's action:

- `kill`: SIGKILL the worker; the next worker (w2, w3, ...) resumes the workflow;
- `stop`: SIGSTOP it; the next worker resumes; the stopped one is continued (SIGCONT) when
  the schedule's `wake` hit is reached (a later worker held at one of its own barriers: the
  pause's drawn delay), or once the last worker has finished;
- `change`: section 2 of the report is corrected while the worker is held, then it goes on;
- `wake`: the stopped worker is continued while this worker is held here, then both go on.

A kill or a stop may also correct the report while the worker is held (`change`), before the
next worker resumes. At most one stop and one change per schedule (the application has one
correction), and changes only before the acceptance (a change after it makes `sim`'s
controller rebuild the accepted work, docs/model.md section 5.3 d, which an engine has no part
of: an engine does not watch its input).

The scenario file (`scenario_text`) gives `sim`'s run exactly these faults, placed by `sim`'s own
run of the schedule so far under the engine's switches: worker wN is attempt #N; a hit at a
section step or inside assemble is a silence of the attempt at the tick it computes that step
or writes its candidate (crashed for a kill; paused for a stop, woken at the tick the wake's
worker reaches its point, the tick after, since the successor's action there is under way, or
the tick after the last worker is done); a kill at a post point
is a poster death at that point of the run's nth post action (the worker's), a stop after the
intent a poster pause (docs/outside.md, case 1: the send goes out when it wakes); a change is
one at the tick after the hit's. The newsletter is ready at the tick the last worker is done:
the harness's newsletter reads as soon as the workflow has a result, before a stopped worker
is continued at the end.

Not drawn: a kill or stop between two steps (a silence in `sim` always falls inside an action,
docs/model.md section 5.5: a model call started in the silent tick is made and counted), a
kill inside the accept step (the acceptance is the controller's in `sim`, not an action of an
attempt), a stop before the intent or after the send (the application's intent is its own
record, not the engine's, so no engine fences it, where `sim` fences the intent write).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from functools import lru_cache

from sim.base.errors import SimError
from sim.base.limits import ascii_number, quote
from sim.model.events import Computed, Event, payload, write
from sim.run import run_scenario
from sim.scenario import Scenario, parse
from sim.engine.trace import Kind, Trace

#: the section steps a worker can be held in (after its model call)
STEPS = 4
ASSEMBLE = "in:assemble"
#: the post step's barriers, in order (sim's poster death points have the same names)
POST_POINTS = ("before-intent", "after-intent", "after-send")
ACTIONS = ("kill", "stop", "change", "wake")
#: the most faults (kills, stops, changes) in one drawn schedule
MOST = 3
#: the first line of a drawn schedule's scenario file: the schedule's name
HEADER = "# sim conform schedule: "


class ScheduleTextError(SimError):
    """A schedule name or file the harness cannot inject: one line, exit 2."""


@dataclass(frozen=True, slots=True)
class Hit:
    """At worker `wN`'s barrier `point`, the harness does `action` (and corrects the report
    while it is held, with `change`)."""

    worker: int
    point: str
    action: str
    change: bool = False

    @property
    def name(self) -> str:
        point = self.point.removeprefix("after-call:").removeprefix("in:")
        return f"{self.action}-w{self.worker}-{point}{'-changed' if self.change and self.action != 'change' else ''}"

    @property
    def at_post(self) -> bool:
        return self.point in POST_POINTS

    @property
    def ends_worker(self) -> bool:
        return self.action in ("kill", "stop")


def point_of(word: str) -> str:
    if word.startswith("s") and word[1:].isascii() and word[1:].isdigit():
        return f"after-call:{word}"
    return ASSEMBLE if word == "assemble" else word


def where(point: str) -> str:
    if point.startswith("after-call:"):
        return f"after {point[11:]}'s model call"
    return {ASSEMBLE: "inside assemble", "before-intent": "in the post, before its intent",
            "after-intent": "in the post, after its intent, before the send",
            "after-send": "after the feed answered its post"}[point]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Schedule:
    hits: tuple[Hit, ...]
    keyed: bool

    @property
    def name(self) -> str:
        return "+".join(h.name for h in self.hits) + ("" if self.keyed else "-keyless")

    @classmethod
    def from_name(cls, name: str) -> Schedule:
        """The schedule a name spells (`Schedule.name`); ScheduleTextError if it spells none."""
        keyed = not name.endswith("-keyless")
        hits = []
        for part in name.removesuffix("-keyless").split("+"):
            change = part.endswith("-changed")
            words = part.removesuffix("-changed").split("-", 2)
            number = ascii_number(words[1][1:], 6) if len(words) == 3 else None  # not 5,000 digits
            if len(words) != 3 or words[0] not in ACTIONS or not words[1].startswith("w") or number is None:
                raise ScheduleTextError(f"not a schedule name: {quote(name)} (at {quote(part)})")
            hits.append(Hit(number, point_of(words[2]), words[0], change or words[0] == "change"))
        schedule = cls(tuple(hits), keyed)
        why = schedule.invalid()
        if why:
            raise ScheduleTextError(f"not a schedule the harness can inject: {quote(name)}: {why}")
        if schedule.name != name:  # another spelling (w01, in:assemble, change-...-changed) of one
            raise ScheduleTextError(f"not a schedule name: {quote(name)} (sim spells that schedule {quote(schedule.name)})")
        return schedule

    @property
    def workers(self) -> int:
        return 1 + sum(1 for h in self.hits if h.ends_worker)

    @property
    def stopped(self) -> Hit | None:
        return next((h for h in self.hits if h.action == "stop"), None)

    @property
    def how(self) -> str:
        words = []
        for h in self.hits:
            what = {"kill": f"SIGKILL w{h.worker}", "stop": f"SIGSTOP w{h.worker}", "change": f"hold w{h.worker}",
                    "wake": f"SIGCONT the stopped worker while w{h.worker} is held"}[h.action]  # fmt: skip
            change = "; section 2 of the report corrected" if h.change else ""
            then = f"; w{h.worker + 1} resumes" if h.ends_worker else ""
            words.append(f"{what} {where(h.point)}{change}{then}")
        if self.stopped is not None and not any(h.action == "wake" for h in self.hits):
            words.append(f"SIGCONT w{self.stopped.worker} once w{self.workers} has finished")
        return "; ".join(words) + f"; the post {'with' if self.keyed else 'without'} a key"

    def invalid(self) -> str | None:
        """Why the harness cannot inject this schedule, or None."""
        worker, stops, changed = 1, 0, 0
        order: dict[int, int] = {}
        for n, h in enumerate(self.hits):
            if h.point not in points_in_order():
                return f"unknown point {h.point}"
            if h.action == "wake":
                if self.stopped is None or h.worker <= self.stopped.worker or n != len(self.hits) - 1:
                    return "a wake is the last hit, on a worker after the stopped one"
            elif h.worker != worker:
                return f"hit {n + 1} is on w{h.worker}, where the running worker is w{worker}"
            if h.worker in order and points_in_order().index(h.point) <= order[h.worker]:
                return f"w{h.worker}'s barriers are not in the workflow's order"
            order[h.worker] = points_in_order().index(h.point)
            stops += h.action == "stop"
            changed += h.change
            if h.change and h.at_post:
                return "a change after the acceptance"
            if h.action == "stop" and h.at_post and h.point != "after-intent":
                return "a stop in the post other than after its intent"
            worker += h.ends_worker
        if stops > 1 or changed > 1 or not self.hits or sum(h.action != "wake" for h in self.hits) > MOST:
            return f"at most {MOST} faults, one stop and one change"
        return None


@lru_cache(maxsize=1)
def points_in_order() -> tuple[str, ...]:
    return (*(f"after-call:s{k}" for k in range(1, STEPS + 1)), ASSEMBLE, *POST_POINTS)


# -- sim's run of a schedule ------------------------------------------------------------------
def model_points(trace: Trace, attempt: int) -> list[tuple[str, int]]:
    """The barriers attempt `attempt` reaches in `sim`'s run, with the tick of each: a section
    step it computes, its candidate's write, its post action (all three of the post's points)."""
    out: list[tuple[str, int]] = []
    for e in trace.events:
        if e.attempt != attempt:
            continue
        if e.kind is Kind.COMPUTED:
            out.append((f"after-call:s{payload(e, Computed)['step']}", e.tick))
        elif e.kind is Kind.WRITE and write(e)["store"] == "candidate":
            out.append((ASSEMBLE, e.tick))
        elif post_action(e) and not any(p in POST_POINTS for p, _ in out):
            out.extend((p, e.tick) for p in POST_POINTS)
    return out


def post_action(e: Event) -> bool:
    """The event marks a post action: its intent written, its send, or the poster's death."""
    if e.kind is Kind.WRITE:
        w = write(e)
        return w["store"] == "effect" and w["record"] == "intent" and w["applied"]
    return e.kind in (Kind.SENT, Kind.DIED)


def nth_post(trace: Trace, attempt: int, tick: int) -> int:
    """The number of the post action attempt `attempt` makes at `tick` among the run's post actions."""
    actions = {(e.tick, e.attempt) for e in trace.events if post_action(e) and e.attempt is not None}
    return 1 + sum(1 for a in actions if a < (tick, attempt))


@dataclass(frozen=True, slots=True)
class Placed:
    """The faults of `sim`'s scenario, built hit by hit, as data: each silence (attempt, tick,
    wake or None), each change's tick, each poster death (point, nth), each poster pause (nth,
    ticks); and the newsletter's ready tick."""

    silent: tuple[tuple[int, int, int | None], ...] = ()
    changed: tuple[int, ...] = ()
    died: tuple[tuple[str, int], ...] = ()
    paused: tuple[tuple[int, int], ...] = ()
    ready: int = 12

    def lines(self, keyed: bool, whole: bool) -> list[str]:
        """The scenario's [switches] and [schedule] tables; `whole`: as a saved file writes them
        (no empty pause list, the newsletter's ready tick only where it is not the default)."""
        silences = ", ".join(f"{{attempt = {n}, at = {t}" + ("}" if w is None else f", wake = {w}}}")
                             for n, t, w in self.silent)  # fmt: skip
        return [
            "[switches]", 'rule = "any-accepted"', f'key = "{"per-operation" if keyed else "none"}"',
            *([""] if whole else []), "[schedule]",
            f"silences = [{silences}]",
            f"changes = [{', '.join(f'{{at = {t}, sections = [2]}}' for t in self.changed)}]",
            f"poster_deaths = [{', '.join(f'{{point = {chr(34)}{p}{chr(34)}, nth = {n}}}' for p, n in self.died)}]",
            *([f"poster_pauses = [{', '.join(f'{{nth = {n}, ticks = {t}}}' for n, t in self.paused)}]"]
              if self.paused or not whole else []),
            *(["duplicate_deliveries = []"] if whole else []),
            *([f"newsletter_ready = {self.ready}"] if self.ready != 12 or not whole else []),
        ]  # fmt: skip


def scenario_text(s: Schedule, switches: dict[str, str]) -> str:
    """The scenario file of a schedule under the engine's switches: `sim`'s run has exactly its
    faults (each placed by `sim`'s run of the hits before it)."""
    return "\n".join([f"{HEADER}{s.name}", f'description = "sim conform, a drawn schedule: {s.how}"', "",
                      *place(s, switches).lines(s.keyed, whole=True), ""])  # fmt: skip


def run_placed(placed: Placed, keyed: bool, switches: dict[str, str]) -> Trace:
    """`sim`'s run of the faults placed so far."""
    text = "\n".join([*placed.lines(keyed, whole=False), ""])
    trace, _ = run_scenario(parse(text, "<drawn>", "drawn").with_switches(switches))
    return trace


def tick_of(trace: Trace, h: Hit) -> int:
    for point, tick in model_points(trace, h.worker):
        if point == h.point:
            return tick
    raise ScheduleTextError(f"w{h.worker} (sim's attempt #{h.worker}) never reaches {h.point} in sim's run")


def place(s: Schedule, switches: dict[str, str]) -> Placed:
    """Each hit placed by `sim`'s run of those before it (a stop placed as a kill until the end,
    since its successors act the same until it wakes); then the stop made a pause that wakes at
    its wake hit's tick (or the tick after the last worker is done), and the newsletter ready
    when the last worker is done."""
    placed, stop, wake = Placed(), None, None
    for h in s.hits:
        trace = run_placed(placed, s.keyed, switches)
        tick = tick_of(trace, h)
        if h.action == "wake":
            # the successor's action at its barrier is under way (its model call made) when
            # the stopped worker is continued: the stopped attempt wakes the tick after
            wake = tick + 1
            continue
        if h.change:
            placed = replace(placed, changed=(*placed.changed, tick + 1))
        if not h.ends_worker:
            continue
        nth = nth_post(trace, h.worker, tick)
        if h.at_post:
            placed = replace(placed, died=(*placed.died, (h.point, nth)))
        else:
            placed = replace(placed, silent=(*placed.silent, (h.worker, tick, None)))
        if h.action == "stop":
            stop = (h, tick, nth)
    if stop is not None:
        placed = paused(placed, stop, wake if wake is not None else last_done(run_placed(placed, s.keyed, switches)) + 1)
    final = run_placed(placed, s.keyed, switches)
    return replace(placed, ready=last_done(final, None if stop is None else stop[0].worker))


def paused(placed: Placed, stop: tuple[Hit, int, int], wake: int) -> Placed:
    """The stop, placed as a kill so far, made a pause that wakes at `wake`: a paused silence,
    or in the post a poster pause in place of the death."""
    h, tick, nth = stop
    if h.at_post:
        return replace(placed, died=tuple(d for d in placed.died if d != (h.point, nth)), paused=((nth, wake - tick),))
    return replace(placed, silent=tuple((n, t, wake) if (n, t) == (h.worker, tick) else (n, t, w)
                                        for n, t, w in placed.silent))  # fmt: skip


def last_done(trace: Trace, but: int | None = None) -> int:
    """The tick the last worker (other than the stopped one, `but`) is done: the workflow has a result."""
    ticks = [e.tick for e in trace.events if e.kind is Kind.DONE and e.attempt != but]
    if not ticks:
        raise ScheduleTextError("no attempt finishes in sim's run of this schedule")
    return max(ticks)


# -- drawing ----------------------------------------------------------------------------------
def draw(rng: random.Random, switches: dict[str, str]) -> Schedule:
    """A schedule of 1 to 3 faults drawn from what the harness can inject, each at a barrier
    `sim`'s run of the schedule so far reaches."""
    keyed = rng.random() < 0.5
    hits: list[Hit] = []
    worker, after = 1, -1
    for _ in range(rng.randint(1, MOST)):
        s = Schedule(tuple(hits), keyed)
        trace = run_placed(place_so_far(s, switches), keyed, switches)
        points = [p for p, _ in model_points(trace, worker) if points_in_order().index(p) > after]
        if not points:
            break
        point = rng.choice(points)
        actions = allowed(s, point)
        action = rng.choice(actions)
        change = action == "change" or (action != "change" and "change" in actions and rng.random() < 0.3)
        hits.append(Hit(worker, point, action, change))
        after = points_in_order().index(point)
        if action in ("kill", "stop"):
            worker, after = worker + 1, -1
        if action == "stop" and rng.random() < 0.5:
            wake = wake_point(Schedule(tuple(hits), keyed), switches, rng)
            if wake is not None:
                hits.append(wake)
                break
    return Schedule(tuple(hits), keyed)


def allowed(s: Schedule, point: str) -> list[str]:
    changed = any(h.change for h in s.hits)
    post = point in POST_POINTS
    out = ["kill"]
    if s.stopped is None and (not post or point == "after-intent"):
        out.append("stop")
    if not changed and not post:
        out.append("change")
    return out


def place_so_far(s: Schedule, switches: dict[str, str]) -> Placed:
    """The hits so far placed, a stop as a kill (the successors act the same until it wakes)."""
    if not s.hits:
        return Placed()
    killed = Schedule(tuple(replace(h, action="kill") if h.action == "stop" else h for h in s.hits), s.keyed)
    return replace(place(killed, switches), ready=12)


def wake_point(s: Schedule, switches: dict[str, str], rng: random.Random) -> Hit | None:
    """A barrier of the worker after the stopped one, where the stopped one is continued."""
    trace = run_placed(place_so_far(s, switches), s.keyed, switches)
    assert s.stopped is not None
    successor = s.stopped.worker + 1
    points = [p for p, _ in model_points(trace, successor)]
    return Hit(successor, rng.choice(points), "wake") if points else None


def shrinks(s: Schedule) -> list[Schedule]:
    """Smaller schedules to try, smallest change first: a fault dropped (the last first; a wake
    with its stop's delay dropped), the change dropped, a hit's point moved earlier."""
    out: list[Schedule] = []
    hits = list(s.hits)
    for n in reversed(range(len(hits))):
        fewer = hits[:n] + hits[n + 1:]
        if hits[n].ends_worker:  # later hits move one worker down; a wake needs its stop
            fewer = [replace(h, worker=h.worker - 1) if i >= n else h for i, h in enumerate(fewer)]
        candidate = Schedule(tuple(fewer), s.keyed)
        if fewer and candidate.invalid() is None:
            out.append(candidate)
    for n, h in enumerate(hits):
        if h.change and h.action != "change":
            out.append(Schedule(tuple(hits[:n] + [replace(h, change=False)] + hits[n + 1:]), s.keyed))
        index = points_in_order().index(h.point)
        if index > 0:
            earlier = Schedule(tuple(hits[:n] + [replace(h, point=points_in_order()[index - 1])] + hits[n + 1:]), s.keyed)
            if earlier.invalid() is None:
                out.append(earlier)
    return out


def scenario_of(s: Schedule, switches: dict[str, str]) -> Scenario:
    return parse(scenario_text(s, switches), "<drawn>", s.name)
