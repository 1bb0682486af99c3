"""What a property is, the registry that holds every property, and the verdict words.

A property is one declared value (`Property`), after stateright's `Property::always` and
`Property::eventually`:

- a safety property (`ALWAYS`) must hold at every event of a run: the first event that
  breaks it gives the tick it broke, and nothing later can repair it;
- a progress property (`EVENTUALLY`) is an obligation the run must have met by its end: it
  is judged once the run is over (a run that reached the horizon is judged there too).

Each property module declares one value and registers it here. Everything that needs to
know what a property is, what breaks it, which protection guards it, when that protection
does not work, what makes it at risk and how its break is explained reads that value; no
other module keeps a table of properties.

Properties read the ground truth of a trace (what each digest was really built from, which
report content was current at each tick), never the model's own belief: that way they also
see what a switched-off protection hides (docs/model.md §6, "ground truth").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from sim.model.faults import Effect
from sim.model.switches import PROTECTIONS, Switches
from sim.engine.trace import Event, Kind, Trace

if TYPE_CHECKING:
    from sim.engine.records import Candidate
    from sim.engine.state import State

# -- verdict words: the one place they are written -----------------------------------------
#: a property that holds (on one run, or over every schedule checked)
HOLDS = "holds"
#: a property that broke
BROKEN = "broken"
#: `sim check`'s verdict for a configuration in which nothing broke: exhaustive only up to
#: its bound
HOLDS_WITHIN_BOUND = "holds within the bound"
#: every safety property held
ALL_HOLD = "all hold"


def verdict(broken: bool, *, bounded: bool = False) -> str:
    """The verdict word: BROKEN, else HOLDS (HOLDS_WITHIN_BOUND for a bounded check)."""
    if broken:
        return BROKEN
    return HOLDS_WITHIN_BOUND if bounded else HOLDS


# -- kinds ----------------------------------------------------------------------------------
class Temporal(Enum):
    """When a property must hold."""

    ALWAYS = "always"  # safety: at every event of the run
    EVENTUALLY = "eventually"  # progress: by the end of the run

    @property
    def judged(self) -> str:
        """Where the verdict is reached, in words."""
        return "at every event" if self is Temporal.ALWAYS else "at the end of the run"


ALWAYS = Temporal.ALWAYS
EVENTUALLY = Temporal.EVENTUALLY


# -- guards ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Guard:
    """A protection: the switch that turns it on, the value that does, and its name in words."""

    switch: str
    words: str

    @property
    def on(self) -> Enum:
        return PROTECTIONS[self.switch]

    def is_on(self, switches: Switches) -> bool:
        return getattr(switches, self.switch) is self.on

    def switched_on(self, switches: Switches) -> Switches:
        """These switches with this protection on."""
        changes: dict[str, Any] = {self.switch: self.on}
        return dataclasses.replace(switches, **changes)

    def setting(self, switches: Switches) -> str:
        """`switch=value` as these switches have it."""
        return f"{self.switch}={getattr(switches, self.switch).value}"


#: every protection, by switch, in `sim.model.switches.PROTECTIONS` order
GUARDS: dict[str, Guard] = {
    "fencing": Guard("fencing", "fencing tokens"),
    "pins": Guard("pins", "version pins"),
    "key": Guard("key", "a per-operation post key"),
    "rule": Guard("rule", "the newsletter rule current-accepted"),
}
assert tuple(GUARDS) == tuple(PROTECTIONS), "one Guard per protection, in the same order"


@dataclass(frozen=True, slots=True)
class Failure:
    """Other settings under which a property's guard, switched on, still does not hold it.

    `settings` are (switch, value) pairs that must all be in force; `reason` is the short
    form (`sim explore` prints it); `caveat` says why in a clause (the explainer page adds
    it to the verdict); `remedies` are the single changes (`switch=value`) that restore the
    guard.
    """

    settings: tuple[tuple[str, Enum], ...]
    reason: str
    caveat: str
    remedies: tuple[str, ...]
    #: a further condition on the settings, for a knob beyond the article's model (a knob's
    #: value is a spelling, and may be any of a range of numbers); None: none
    when: Callable[[Switches], bool] | None = None

    def applies(self, switches: Switches) -> bool:
        if self.when is not None and not self.when(switches):
            return False
        return all(getattr(switches, name) is value for name, value in self.settings)


# -- the hazards: what puts a property at risk -----------------------------------------------
class Seen:
    """What was true when an event of a trace happened, as the hazards read it: the engine's
    states (`Trace.state_at`), never a model of the run rebuilt from the events.

    The walk (`sim.properties.at_risk`) shows each event to the hazards that look at its kind,
    which read what was true just *before* it, and shows
    the end of each tick with events to the hazards judged there, which read the state at the
    end of that tick. The state changes inside a tick in an order the rules fix (docs/model.md
    §5: the input, the workers, then the controller's assessment, in candidates' write order),
    so what was true before an event is read from the states at the end of its tick and of
    the tick before: a candidate is never removed, an attempt keeps its verdict (a storage
    loss of the acceptance records leaves it), the feed's posts only grow, in order.
    """

    __slots__ = ("trace",)

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    def state(self, tick: int) -> State:
        """The engine's state at the end of `tick`."""
        return self.trace.state_at(tick)

    def before(self, tick: int) -> State | None:
        """The state at the end of the tick before `tick` (None at t0)."""
        return self.trace.state_at(tick - 1) if tick > 0 else None

    def content(self, tick: int) -> tuple[int, ...]:
        """The report content current at `tick` (only its input phase changes it)."""
        return self.trace.content_at(tick)

    def built(self, tick: int, digest: str) -> tuple[int, ...]:
        """What a candidate written by the end of `tick` was built from."""
        return next(c.built_from for c in self.state(tick).candidates if c.digest == digest)

    def admitted(self, tick: int) -> int:
        """The latest attempt admitted before the workers act in `tick` (0: none): admissions
        are the controller's, which acts last in a tick."""
        before = self.before(tick)
        return 0 if before is None else len(before.attempts)

    def accepted(self, tick: int) -> list[tuple[int, Candidate]]:
        """(tick of its acceptance, candidate) for each candidate accepted by the end of `tick`,
        in write order (its producer's verdict)."""
        s = self.state(tick)
        out = []
        for c in s.candidates:
            verdict = s.attempts[c.attempt - 1].verdict
            if verdict is not None and verdict[0]:
                out.append((verdict[1], c))
        return out

    def accepted_before(self, tick: int, digest: str) -> list[tuple[int, ...]]:
        """The report contents a digest was accepted under before the controller assessed
        `digest` in `tick`: the candidates written before it (it assesses them in write order,
        so each has had its verdict), by their producers' verdicts."""
        s = self.state(tick)
        out = []
        for c in s.candidates:
            if c.digest == digest:
                break
            verdict = s.attempts[c.attempt - 1].verdict
            if verdict is not None and verdict[0]:
                out.append(self.content(verdict[1]))
        return out

    def applied_before(self, tick: int, digest: str, post: str | None, answer: str, effect: str | None = None) -> bool:
        """Whether the feed had applied a post for `digest` before this answer of `tick`: a
        post before the one it applies now (posts only grow, in order), always for a repeat
        (it answers with the post applied for the same request). A rejection (a key the feed
        holds for another request) reads the posts by the end of the tick before: of the
        posts of its own tick the states do not say which came first, and no run drawn in
        tests/test_states.py has another post of the digest earlier in the same tick. A read-back
        that finds the post is a repeat averted (`effect`: the effect's receiver, in a run with
        several)."""
        s = self.state(tick)
        i = 0 if effect is None else [r.name for r in s.setup.receivers].index(effect)
        posts = s.feeds[i].posts
        if answer == "applied":
            ids = [p for p, _ in posts]
            posts = posts[: ids.index(post)] if post in ids else posts
        elif answer not in ("repeat", "found"):
            before = self.before(tick)
            posts = () if before is None else before.feeds[i].posts
        return answer in ("repeat", "found") or any(d == digest for _, d in posts)


@dataclass(frozen=True, slots=True)
class Hazard:
    """The situation in which a property could break, whether or not a protection stops it.

    `kinds`: the event kinds it looks at, reading what was true just before the event (`Seen`);
    empty means it is judged at the end of every tick with events instead (at the tick's last
    event, reading the state at the end of the tick). `arose` says whether the hazard arose
    there. A broken property was always at risk.
    """

    words: str
    arose: Callable[[Seen, Event], bool]
    kinds: frozenset[Kind] = frozenset()

    @property
    def at_tick_end(self) -> bool:
        return not self.kinds


# -- monitors -------------------------------------------------------------------------------
#: a monitor's memo: a small plain value (ints, strings, tuples of them), equal for equal
#: histories as far as the property can tell, and ordered (no sets) so it encodes stably
Memo = Any


@dataclass(frozen=True, slots=True)
class Monitor:
    """A property followed event by event, keeping only a small memo (after TLC's and
    stateright's properties, which read the state, not the history).

    `step(memo, event, content, position)` takes one event of a kind in `kinds`, with the
    report content current at its tick and its position (its index in a trace; its tick in
    `sim check`'s search), and returns the next memo and whether this event breaks the
    property. A progress property also has `end(memo)`: the positions of the events that
    break it once the run is over, in order (empty: it holds).

    The same monitor judges a whole trace (`Property.breaks`, for the renderers) and the
    state-space search (`sim.analysis.check.search`, where the memo is part of each node), so a property
    is written once.
    """

    kinds: frozenset[Kind]
    step: Callable[[Memo, Event, tuple[int, ...], int], tuple[Memo, bool]]
    start: Memo = ()
    end: Callable[[Memo], tuple[int, ...]] | None = None


def monitor_breaks(monitor: Monitor) -> Check:
    """Every event index of a trace that breaks the property the monitor follows."""

    def breaks(trace: Trace) -> Iterator[int]:
        memo = monitor.start
        kinds = monitor.kinds
        step = monitor.step
        content_at = trace.content_at  # the engine's state at the event's tick
        for i, e in enumerate(trace.events):
            if e.kind in kinds:
                memo, broke = step(memo, e, content_at(e.tick), i)
                if broke:
                    yield i
        if monitor.end is not None:
            yield from monitor.end(memo)

    return breaks


def add(memo: tuple[Any, ...], item: Any) -> tuple[Any, ...]:
    """A memo that is a sorted tuple of distinct items, with `item` in it."""
    return memo if item in memo else tuple(sorted((*memo, item)))


def only_where(applies: Callable[[Switches], bool], breaks: Check) -> Check:
    """`breaks`, judged only on a trace whose switches `applies` accepts (else nothing breaks)."""

    def judged(trace: Trace) -> Iterator[int]:
        if applies(trace.switches):
            yield from breaks(trace)

    return judged


def judged_under(prop: Property, switches: Switches) -> bool:
    """Whether `prop` is judged in a run with these switches (`Property.applies`)."""
    return prop.applies is None or prop.applies(switches)


# -- the property ---------------------------------------------------------------------------
#: a property's check: every event index that breaks it, in trace order
Check = Callable[[Trace], Iterator[int]]
#: why the event at this index broke the property, in words (the swimlane's "why" line)
Why = Callable[[Trace, int], str]


@dataclass(frozen=True, slots=True)
class Property:
    """One property of a run, declared once (see the module's docstring)."""

    name: str
    temporal: Temporal
    description: str
    why: Why
    #: how it is followed event by event (the search needs one; see `Monitor`)
    monitor: Monitor | None = None
    #: every event index of a trace that breaks it; derived from `monitor` when not given
    breaks: Check = None  # type: ignore[assignment]
    #: the protection that guards it (None: no single protection does)
    guard: Guard | None = None
    #: other protections it relies on as well (a progress property may need several)
    also: tuple[Guard, ...] = ()
    #: settings under which that guard, on, does not hold it
    unless: tuple[Failure, ...] = ()
    #: what puts it at risk (None: not followed by `at_risk`)
    hazard: Hazard | None = None
    #: one of the article's own properties; a property beyond its model (docs/outside.md)
    #: can only break under a fault kind or knob beyond it, is judged by `sim trace` and
    #: `sim explore`, by `sim check` wherever the fault kinds it enumerates can break it
    #: (`reached`), and is not a column of the sweep
    article: bool = True
    #: the settings under which it is judged at all (None: every run); elsewhere it holds by
    #: definition. A property beyond the article's model that only means something under a
    #: knob set away from its default says so here, so the article's runs never judge it.
    applies: Callable[[Switches], bool] | None = None
    #: whether a schedule of fault kinds with these effects (`sim.model.faults.Effect`) can break it
    #: under these settings (None: any schedule can, as any of the article's faults can break
    #: one of its own properties). A property beyond the article's model declares here which
    #: faults and which settings reach it, so that a check judges it whenever the kinds it
    #: enumerates can (`reachable`) and names it as not judged when they cannot
    #: (`sim.properties.judged`). It may over-approximate (judging a property that cannot
    #: break costs nothing), never under-approximate.
    reached: Callable[[Switches, frozenset[Effect]], bool] | None = None

    def __post_init__(self) -> None:
        if self.breaks is None:
            if self.monitor is None:
                raise ValueError(f"property {self.name!r} needs a monitor or a breaks function")
            object.__setattr__(self, "breaks", monitor_breaks(self.monitor))
        if self.applies is not None:
            object.__setattr__(self, "breaks", only_where(self.applies, self.breaks))
        if self.monitor is not None and (self.monitor.end is None) != self.safety:
            raise ValueError(f"property {self.name!r}: a progress monitor has an end, a safety one none")

    @property
    def safety(self) -> bool:
        return self.temporal is ALWAYS

    def reachable(self, switches: Switches, effects: frozenset[Effect]) -> bool:
        """Whether a schedule of fault kinds with these effects can break it under these
        switches: it is judged there (`applies`) and its declaration (`reached`) says so."""
        return judged_under(self, switches) and (self.reached is None or self.reached(switches, effects))

    # -- verdicts -------------------------------------------------------------------------
    def first_break(self, trace: Trace) -> int | None:
        """The index of the first event that breaks it, or None when it holds."""
        for index in self.breaks(trace):
            return index
        return None

    def first_tick(self, trace: Trace) -> int | None:
        """The tick it first broke, or None when it holds."""
        index = self.first_break(trace)
        return None if index is None else trace.events[index].tick

    def holds(self, trace: Trace) -> bool:
        return self.first_break(trace) is None

    # -- guards ---------------------------------------------------------------------------
    def failure(self, switches: Switches) -> Failure | None:
        """The first of `unless` in force under these switches (None: the guard would work)."""
        for failure in self.unless:
            if failure.applies(switches):
                return failure
        return None

    def unguarded_by(self, switches: Switches) -> str | None:
        """Why it is not protected under these switches: "<guard> is off", or the reason
        its guard, on, does not work here; None when it is guarded."""
        if self.guard is None:
            return "no protection guards it"
        for guard in (self.guard, *self.also):
            if not guard.is_on(switches):
                return f"{guard.switch} is off"
        failure = self.failure(switches)
        return None if failure is None else failure.reason

    def guarded(self, switches: Switches) -> bool:
        """Whether its guard (and every protection in `also`) is on and works here."""
        return self.unguarded_by(switches) is None

    def remedies(self, switches: Switches) -> tuple[str, ...]:
        """The single changes (`switch=value`) that would make its guard hold here: the guard
        switched on, and whatever its failure (with the guard on) names."""
        if self.guard is None:
            return ()
        out = () if self.guard.is_on(switches) else (f"{self.guard.switch}={self.guard.on.value}",)
        failure = self.failure(self.guard.switched_on(switches))
        return out + (() if failure is None else tuple(r for r in failure.remedies if r not in out))

    def caveat(self, switches: Switches) -> str | None:
        """Why its guard, even switched on, would not hold it under these (other) switches."""
        if self.guard is None:
            return None
        failure = self.failure(self.guard.switched_on(switches))
        return None if failure is None else failure.caveat

    def guard_text(self, switches: Switches) -> str:
        """Which protection guards it and whether it does here: the start of the swimlane's
        "stop" line. When the guard is on but does not hold here, it says so instead of
        claiming the guard (what would stop the break is the caller's to add: `remedies`)."""
        guard = self.guard
        if guard is None:
            return "no single protection guards it"
        if guard.is_on(switches):
            failure = self.failure(switches)
            if failure is None:
                return f"guarded by {guard.words} (on here)"
            return f"not guarded here: {guard.words} is on but does not hold it, as {failure.reason}"
        text = f"guarded by {guard.words} (off here: {guard.setting(switches)})"
        caveat = self.caveat(switches)
        if caveat is not None:
            text += f"; switched on alone it would not hold it either: {caveat}"
        return text


# -- the registry ---------------------------------------------------------------------------
_REGISTRY: dict[str, Property] = {}


def register(prop: Property) -> Property:
    """Add a property to the registry (each name once); returns it, for the module to keep."""
    if prop.name in _REGISTRY:
        raise ValueError(f"property {prop.name!r} is declared twice")
    _REGISTRY[prop.name] = prop
    return prop


def unregister(prop: Property) -> None:
    """Take a property out of the registry (a test's toy, registered around it)."""
    del _REGISTRY[prop.name]


def registered() -> tuple[Property, ...]:
    """Every registered property in the fixed order: safety properties by name, then
    progress properties by name."""
    return tuple(sorted(_REGISTRY.values(), key=lambda p: (not p.safety, p.name)))


# -- helpers for the explanations -------------------------------------------------------------
def section_version(trace: Trace, section: int, revision: int) -> int:
    """The first version (1-based) whose section `section` (0-based) has this revision."""
    for i, content in enumerate(trace.versions):
        if content[section] == revision:
            return i + 1
    return len(trace.versions)
