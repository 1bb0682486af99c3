"""The SimPy actors: the report's input, each worker attempt, and the controller.

Each actor is a SimPy process that waits for `order.at(...)` events, so the same-tick order
is settled by `sim.engine.order` alone. Actors change the shared records through the
`World`, which logs every change as a trace event.
"""

from __future__ import annotations

from enum import Enum
from typing import Generator

from sim.engine import order
from sim.engine.records import Acceptance, Candidate, Part
from sim.engine.world import World
from sim.faults import PostPoint, Stall
from sim.switches import Key, Rule
from sim.trace import Kind, revenue

Process = Generator[order.At, None, None]


class Status(Enum):
    """The attempt lifecycle of docs/model.md §3, as the controller records it."""

    RUNNING = "running"
    UNKNOWN = "UNKNOWN"
    FENCED = "fenced"
    REFUSED = "refused"
    DONE = "done"


# what an attempt is doing in its program
STEPS, ASSEMBLE, WAIT, POST = "steps", "assemble", "wait", "post"


def input_process(world: World) -> Process:
    """docs/model.md §5.1: a scheduled report change takes effect at the start of its tick."""
    for tick in world.input_ticks:
        yield order.at(world.env, tick, order.INPUT)
        world.report_changes(tick)


class Attempt:
    """One admitted try at the work. Its program, one step per tick (docs/model.md §5.4)."""

    __slots__ = (
        "world", "n", "token", "pin", "inherited", "status", "alive", "crashed",
        "silent_since", "results", "unwritten", "step", "phase", "held", "verdict",
        "candidate", "ended",
    )  # fmt: skip

    def __init__(self, world: World, n: int, token: int, pin: int | None,
                 inherited: Candidate | None) -> None:  # fmt: skip
        self.world = world
        self.n = n
        self.token = token
        self.pin = pin
        self.inherited = inherited  # an accepted digest whose announcement remains
        self.status = Status.RUNNING
        self.alive = True  # its process still runs (acting, waiting or paused)
        self.crashed = False
        self.silent_since: int | None = None  # tick of its last heartbeat while silent
        self.results: list[Part | None] = [None] * world.schedule.sections
        self.unwritten: list[int] = []  # computed steps not yet journaled (end-only)
        self.step = 0
        self.phase = POST if inherited is not None else STEPS
        self.held: tuple[str, object] | None = None  # begun action finished on waking
        self.verdict: tuple[bool, int] | None = None
        self.candidate: Candidate | None = inherited  # produced or inherited
        self.ended: int | None = None

    # -- the SimPy process -------------------------------------------------------------
    def process(self) -> Process:
        env = self.world.env
        priority = order.worker_priority(self.n)
        tick = int(env.now) + 1  # it does not act in the tick it was admitted
        try:
            while True:
                yield order.at(env, tick, priority)
                next_tick = self.act(tick)
                if next_tick is None:
                    return
                tick = next_tick
        finally:
            self.alive = False

    def act(self, t: int) -> int | None:
        """Do at most one step at tick t; return the next tick to act, or None to stop."""
        if self.status is Status.REFUSED or self.status is Status.FENCED:
            return None
        world = self.world
        if self.silent_since is not None:  # waking from a pause
            self.silent_since = None
            world.log(t, Kind.WOKE, self.n, {})
            held, self.held = self.held, None
            if held is not None:
                return self.finish(t, held)
        silence = world.stall_at(self.n, t)
        if self.phase is STEPS:
            while self.step < len(self.results) and self.restore(t, self.step):
                self.step += 1
            if self.step < len(self.results):
                part = self.compute(t, self.step)
                if silence is not None:
                    return self.fall_silent(t, silence, ("compute", part))
                return self.finish(t, ("compute", part))
            self.phase = ASSEMBLE
        if self.phase is ASSEMBLE:
            if silence is not None:
                return self.fall_silent(t, silence, ("assemble", None))
            return self.finish(t, ("assemble", None))
        if self.phase is WAIT:
            verdict = self.verdict
            if verdict is None or verdict[1] >= t:  # posts from the tick after acceptance
                if silence is not None:
                    return self.fall_silent(t, silence, None)
                return t + 1
            if not verdict[0]:  # refused while it was silent and UNKNOWN: it stops now
                self.stop(t)
                return None
            self.phase = POST
        if silence is not None:
            return self.fall_silent(t, silence, ("post", None))
        return self.post(t)

    def fall_silent(self, t: int, silence: Stall, held: tuple[str, object] | None) -> int | None:
        """It heartbeated at t as it started; whatever it began waits for the wake."""
        self.held = held
        self.silent_since = t
        doing = "waiting" if held is None else held[0]
        self.world.log(t, Kind.SILENT, self.n, {"crashed": silence.wake is None, "wake": silence.wake, "during": doing})
        if silence.wake is None:
            self.crashed = True
            return None
        return silence.wake

    def finish(self, t: int, action: tuple[str, object]) -> int | None:
        """Finish a begun action: write a computed step, or write the candidate."""
        what, payload = action
        world = self.world
        if what == "compute":
            part = payload
            assert isinstance(part, Part)
            i = self.step
            self.results[i] = part
            self.step += 1
            if not world.per_step:
                self.unwritten.append(i)
                return t + 1
            if not world.write_journal(t, self, [(i, part)]):
                self.fence(t)
                return None
            return t + 1
        if what == "assemble":
            candidate = Candidate(
                digest=f"d{self.n}",
                attempt=self.n,
                token=self.token,
                parts=tuple(p for p in self.results if p is not None),
                pin=self.pin,
                tick=t,
            )
            steps = [(i, self.results[i]) for i in self.unwritten]
            if not world.write_candidate(t, self, candidate, steps):
                self.fence(t)
                return None
            self.unwritten = []
            self.candidate = candidate
            self.phase = WAIT
            return t + 1
        return self.post(t)

    # -- steps ---------------------------------------------------------------------
    def restore(self, t: int, i: int) -> bool:
        """A step whose journal key matches is restored at no cost (no tick, no call)."""
        world = self.world
        record = world.journal.get(world.journal_key(i, self.pin))
        if record is None:
            return False
        self.results[i] = Part(record.result, record.content)
        world.log(t, Kind.RESTORED, self.n, {"step": i + 1, "result": record.result, "by": record.attempt, "content": record.content})
        return True

    def compute(self, t: int, i: int) -> Part:
        """One model call. With pins on it reads the pinned snapshot, otherwise the live report."""
        world = self.world
        content = world.versions[self.pin][i] if self.pin is not None else world.content[i]
        part = Part(f"s{i + 1}@{self.n}", content)
        world.log(t, Kind.COMPUTED, self.n, {"step": i + 1, "result": part.result, "content": content})
        return part

    def stop(self, t: int) -> None:
        """Its candidate was refused: it stops."""
        self.status = Status.REFUSED
        self.ended = t
        assert self.candidate is not None
        self.world.log(t, Kind.STOPPED, self.n, {"digest": self.candidate.digest})

    def fence(self, t: int) -> None:
        """A protected store rejected its write: it stops (it may still be alive)."""
        self.status = Status.FENCED
        self.ended = t
        self.world.log(t, Kind.FENCED, self.n, {})

    # -- the announcement ------------------------------------------------------------
    def post(self, t: int) -> int | None:
        """Record the intent, send with the key rule, record the feed's answer (one tick)."""
        world = self.world
        digest = self.candidate
        assert digest is not None
        death = world.next_post()
        if death is PostPoint.BEFORE_INTENT:
            self.die(t, death)
            return None
        # Every poster records its intent first, so a stale token is fenced before the send;
        # only a successor finishing an inherited announcement resends under the intent its
        # predecessor already recorded (docs/model.md §5.4: "reconcile first").
        if self.inherited is None or world.effects.get(digest.digest) is None:
            if not world.write_effect(t, self, digest.digest, "intent"):
                self.fence(t)
                return None
        if death is PostPoint.AFTER_INTENT:
            self.die(t, death)
            return None
        world.send(t, self, digest.digest, self.post_key(digest.digest))
        if death is PostPoint.AFTER_SEND:
            self.die(t, death)
            return None
        if not world.write_effect(t, self, digest.digest, "confirmed"):
            self.fence(t)
            return None
        self.status = Status.DONE
        self.ended = t
        world.log(t, Kind.DONE, self.n, {"digest": digest.digest})
        return None

    def announcement_owed(self) -> Candidate | None:
        """The accepted digest whose announcement this attempt still owes, if any: a successor
        of a lost owner inherits it (docs/model.md §5.4, "reconcile first")."""
        if self.inherited is not None or (self.verdict is not None and self.verdict[0]):
            return self.candidate
        return None

    def post_key(self, digest: str) -> str | None:
        key = self.world.switches.key
        if key is Key.PER_OPERATION:
            return f"announce/{digest}"
        if key is Key.PER_ATTEMPT:
            return f"attempt/{self.n}"
        return None

    def die(self, t: int, point: PostPoint) -> None:
        self.crashed = True
        self.silent_since = t
        self.world.log(t, Kind.DIED, self.n, {"point": point.value})


class Controller:
    """Assessment, the newsletter gate, suspicion and rebuild (docs/model.md §5.3)."""

    __slots__ = ("world", "attempts", "owner", "assessed", "newsletter")

    def __init__(self, world: World) -> None:
        self.world = world
        self.attempts: list[Attempt] = []
        self.owner: Attempt | None = None
        self.assessed = 0  # candidates assessed so far, in write order
        self.newsletter: Candidate | None = None

    def process(self) -> Process:
        world = self.world
        env = world.env
        steps = [getattr(self, name) for name in order.CONTROLLER_STEPS]
        tick = 0
        while True:
            yield order.at(env, tick, order.CONTROLLER)
            for step in steps:
                step(tick)
            if self.quiescent(tick):
                break
            if tick >= world.schedule.horizon:
                world.horizon_reached = True
                break
            tick += 1
        world.last_tick = tick
        world.finished.succeed()

    def admit(self, tick: int, reason: str, inherit: Candidate | None) -> Attempt:
        """Publish a new epoch, then admit an attempt holding it (record before dispatch)."""
        world = self.world
        token = world.epoch + 1
        world.epoch = token
        if inherit is not None:
            pin = inherit.pin
        else:
            pin = world.version if world.pins else None
        attempt = Attempt(world, len(self.attempts) + 1, token, pin, inherit)
        self.attempts.append(attempt)
        self.owner = attempt
        world.log(tick, Kind.ADMITTED, attempt.n, {
            "token": token, "reason": reason, "pin": None if pin is None else pin + 1,
            "reconcile": None if inherit is None else inherit.digest,
        })  # fmt: skip
        world.env.process(attempt.process())
        return attempt

    # a. assessment ---------------------------------------------------------------------
    def assess(self, t: int) -> None:
        world = self.world
        candidates = world.candidates
        while self.assessed < len(candidates) and candidates[self.assessed].tick < t:
            candidate = candidates[self.assessed]
            self.assessed += 1
            reason = self.refusal(candidate)
            producer = self.attempts[candidate.attempt - 1]
            if reason is None:
                version = world.version if world.pins else None
                world.acceptances.append(Acceptance(candidate.digest, version, t, candidate))
                world.last_acceptance = t
                producer.verdict = (True, t)
                world.log(t, Kind.ACCEPTED, None, {
                    "digest": candidate.digest, "producer": candidate.attempt,
                    "version": None if version is None else version + 1,
                    "built_from": list(candidate.built_from),
                })  # fmt: skip
                continue
            producer.verdict = (False, t)
            world.log(t, Kind.REFUSED, None, {"digest": candidate.digest, "producer": candidate.attempt, "reason": reason})
            # running -> refused; a silent UNKNOWN producer stays UNKNOWN (a crashed one for
            # good), and a paused one stops when it wakes and reads the verdict
            if producer.status is Status.RUNNING or (
                producer.status is Status.UNKNOWN and producer.silent_since is None
            ):
                producer.stop(t)

    def refusal(self, candidate: Candidate) -> str | None:
        world = self.world
        if world.fencing and candidate.token < world.epoch:
            return "stale token"
        if not world.pins:
            return None  # every complete candidate is accepted
        if candidate.pin != world.version:
            return f"pinned to v{(candidate.pin or 0) + 1}, report is v{world.version + 1}"
        if candidate.built_from != world.content:
            return "a part does not match the pinned version"
        if any(a.version == world.version for a in world.acceptances):
            return f"a digest is already accepted for v{world.version + 1}"
        return None

    # b. newsletter gate ----------------------------------------------------------------
    def gate(self, t: int) -> None:
        world = self.world
        if self.newsletter is not None or t < world.schedule.newsletter_ready:
            return
        digest = choose_newsletter(world)
        if digest is None:
            return
        self.newsletter = digest
        accepted = any(a.candidate is digest for a in world.acceptances)
        world.log(t, Kind.NEWSLETTER, None, {
            "digest": digest.digest, "quote": revenue(digest.parts[1].content),
            "built_from": list(digest.built_from), "accepted": accepted,
        })  # fmt: skip

    # c. suspicion ----------------------------------------------------------------------
    def suspect(self, t: int) -> None:
        world = self.world
        limit = world.schedule.heartbeat_limit
        for attempt in self.attempts:
            since = attempt.silent_since
            if attempt.status is Status.RUNNING and since is not None and t - since >= limit:
                attempt.status = Status.UNKNOWN
                world.log(t, Kind.UNKNOWN, attempt.n, {"missed": t - since})
                if attempt is self.owner:
                    self.admit(t, "suspicion", attempt.announcement_owed())

    # d. rebuild ------------------------------------------------------------------------
    def rebuild(self, t: int) -> None:
        if self.owner is None:
            self.admit(t, "start", None)
        elif self.rebuild_due(t):
            self.admit(t, "rebuild", None)

    def rebuild_due(self, t: int) -> bool:
        owner = self.owner
        return (
            owner is not None
            and owner.ended is not None
            and owner.ended < t
            and (owner.status is Status.DONE or owner.status is Status.REFUSED)
            and not self.world.satisfied()
        )

    # -- the end of a run ------------------------------------------------------------------
    def quiescent(self, t: int) -> bool:
        """Nothing can happen any more: the run is over."""
        world = self.world
        if self.assessed < len(world.candidates) or world.pending_changes(t):
            return False
        if self.newsletter is None and t < world.schedule.newsletter_ready:
            return False
        for attempt in self.attempts:
            if attempt.alive or (attempt.crashed and attempt.status is Status.RUNNING):
                return False
        return not self.rebuild_due(t + 1)


def choose_newsletter(world: World) -> Candidate | None:
    """The newsletter rule (docs/model.md §4): which digest the dependant would take now."""
    rule = world.switches.rule
    acceptances = world.acceptances
    if rule is Rule.LATEST_FINISHED:
        return world.candidates[-1] if world.candidates else None
    if rule is Rule.CURRENT_ACCEPTED and world.pins:
        current = [a for a in acceptances if a.version == world.version]
        return current[-1].candidate if current else None
    if rule is Rule.CURRENT_ACCEPTED and not world.fail_open:
        return None  # fail-closed: nothing to compare, so it waits
    return acceptances[-1].candidate if acceptances else None
