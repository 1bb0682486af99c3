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
from typing import Any

from sim.events import Accepted, Feed, ReportChanged, payload, write
from sim.faults import Effect
from sim.switches import PROTECTIONS, Switches
from sim.trace import Event, Kind, ReportHistory, Trace

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


#: every protection, by switch, in `sim.switches.PROTECTIONS` order
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
    """What a walk over a trace has seen so far: the run's state as the hazards read it.

    The walk (`sim.properties.at_risk`) shows each event to the hazards that look at its
    kind *before* taking it in, and shows the last event of each tick to the hazards judged
    at the end of a tick *after* taking it in.
    """

    __slots__ = (
        "accepted",
        "accepted_for",
        "applied",
        "built",
        "content",
        "latest",
        "latest_accepted",
        "latest_admitted",
        "ready",
        "started",
    )  # fmt: skip

    def __init__(self, trace: Trace) -> None:
        self.content: tuple[int, ...] = trace.versions[0]  # the report content current now
        self.built: dict[str, tuple[int, ...]] = {}  # candidate digest -> what it was built from
        self.accepted_for: set[tuple[int, ...]] = set()  # report contents a digest was accepted for
        self.accepted: set[str] = set()  # accepted digests
        self.applied: set[str] = set()  # digests the feed applied a post for
        self.latest: str | None = None  # the latest candidate written
        self.latest_accepted: str | None = None
        self.latest_admitted = 0  # the number of the latest attempt admitted
        self.ready = trace.schedule.newsletter_ready
        self.started: int | None = None  # the tick the newsletter started

    def take(self, e: Event) -> None:
        kind = e.kind
        if kind is Kind.WRITE:
            w = write(e)
            if w["record"] == "candidate" and w["applied"]:
                self.built[w["digest"]] = tuple(p[1] for p in w["parts"])
                self.latest = w["digest"]
        elif kind is Kind.ACCEPTED:
            digest = payload(e, Accepted)["digest"]
            self.accepted_for.add(self.content)
            self.accepted.add(digest)
            self.latest_accepted = digest
        elif kind is Kind.FEED:
            feed = payload(e, Feed)
            if feed["answer"] == "applied":
                self.applied.add(feed["digest"])
        elif kind is Kind.REPORT_CHANGED:
            self.content = tuple(payload(e, ReportChanged)["content"])
        elif kind is Kind.NEWSLETTER:
            self.started = e.tick
        elif kind is Kind.ADMITTED:
            self.latest_admitted = e.attempt or 0


@dataclass(frozen=True, slots=True)
class Hazard:
    """The situation in which a property could break, whether or not a protection stops it.

    `kinds`: the event kinds it looks at, before the run takes the event in; empty means it
    is judged at the end of every tick instead (after the tick's last event). `arose` says
    whether the hazard arose at that event. A broken property was always at risk.
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
    state-space search (`sim.search`, where the memo is part of each node), so a property
    is written once.
    """

    kinds: frozenset[Kind]
    step: Callable[[Memo, Event, tuple[int, ...], int], tuple[Memo, bool]]
    start: Memo = ()
    end: Callable[[Memo], tuple[int, ...]] | None = None


def monitor_breaks(monitor: Monitor) -> Check:
    """Every event index of a trace that breaks the property the monitor follows."""

    def breaks(trace: Trace, report: ReportHistory) -> Iterator[int]:
        memo = monitor.start
        kinds = monitor.kinds
        step = monitor.step
        for i, e in enumerate(trace.events):
            if e.kind in kinds:
                memo, broke = step(memo, e, report.at(e.tick), i)
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

    def judged(trace: Trace, report: ReportHistory) -> Iterator[int]:
        if applies(trace.switches):
            yield from breaks(trace, report)

    return judged


def judged_under(prop: Property, switches: Switches) -> bool:
    """Whether `prop` is judged in a run with these switches (`Property.applies`)."""
    return prop.applies is None or prop.applies(switches)


# -- the property ---------------------------------------------------------------------------
#: a property's check: every event index that breaks it, in trace order
Check = Callable[[Trace, ReportHistory], Iterator[int]]
#: why the event at this index broke the property, in words (the swimlane's "why" line)
Why = Callable[[Trace, ReportHistory, int], str]


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
    #: whether a schedule of fault kinds with these effects (`sim.faults.Effect`) can break it
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
    def first_break(self, trace: Trace, report: ReportHistory | None = None) -> int | None:
        """The index of the first event that breaks it, or None when it holds."""
        for index in self.breaks(trace, report or ReportHistory(trace)):
            return index
        return None

    def first_tick(self, trace: Trace, report: ReportHistory | None = None) -> int | None:
        """The tick it first broke, or None when it holds."""
        index = self.first_break(trace, report)
        return None if index is None else trace.events[index].tick

    def holds(self, trace: Trace, report: ReportHistory | None = None) -> bool:
        return self.first_break(trace, report) is None

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
