"""The properties of a run, as data: one module per property, registered in `base`. Beside
them, on the same floor, `outcome`: what a run came to (no property; it reads them).

Safety properties (always): duplicate-effect, misused-dependant, stale-write,
two-acceptances, wrong-acceptance, and beyond the article's model uncorrected-duplicate
(judged only with the feed's knobs set, docs/outside.md cases 2 and 3) and faithful-digest
(cases 5, 6 and 8): the invariants, whose breaks the outcome lists as
`violations`, the swimlane marks with "!" and `sim explore`/`sim check` search for.
Progress properties (eventually, judged at the end of the run): effects-confirmed and
finished (the outcome's `finished` field).

To add a property: write one module that registers a `Property`, and import it below.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sim.properties import (  # noqa: F401  (each module registers its property)
    duplicate_effect,
    effects_confirmed,
    faithful_digest,
    finished,
    misused_dependant,
    stale_write,
    two_acceptances,
    uncorrected_duplicate,
    wrong_acceptance,
)
from sim.properties import base
from sim.properties.base import (
    ALL_HOLD,
    ALWAYS,
    BROKEN,
    EVENTUALLY,
    GUARDS,
    HOLDS,
    HOLDS_WITHIN_BOUND,
    Failure,
    Guard,
    Hazard,
    Property,
    Seen,
    Temporal,
    judged_under,
    registered,
    verdict,
)
from sim.model.faults import KINDS, Fault, effects_of
from sim.model.switches import Switches
from sim.engine.trace import Kind, Trace

#: every property, in the fixed order: safety by name, then progress by name
PROPERTIES: tuple[Property, ...] = ()
#: each property by name (one dict, kept up to date in place)
BY_NAME: dict[str, Property] = {}
#: the safety properties (the invariants), by name
SAFETY: tuple[Property, ...] = ()
#: the progress properties, by name
PROGRESS: tuple[Property, ...] = ()
#: the invariants' names, sorted: the outcome's violations name these
NAMES: tuple[str, ...] = ()
#: the article's own invariants (the sweep's and `sim check --faults article`'s columns)
ARTICLE_SAFETY: tuple[Property, ...] = ()
ARTICLE_NAMES: tuple[str, ...] = ()


def _derive() -> None:
    """Derive the collections above from the registry (`sim.properties.base.registered`).
    Readers look them up here when they use them (`properties.SAFETY`), so a property
    registered later with `register` (a test's toy) is in every one of them."""
    global PROPERTIES, SAFETY, PROGRESS, NAMES, ARTICLE_SAFETY, ARTICLE_NAMES
    PROPERTIES = registered()
    BY_NAME.clear()
    BY_NAME.update((p.name, p) for p in PROPERTIES)
    SAFETY = tuple(p for p in PROPERTIES if p.safety)
    PROGRESS = tuple(p for p in PROPERTIES if not p.safety)
    NAMES = tuple(p.name for p in SAFETY)
    ARTICLE_SAFETY = tuple(p for p in SAFETY if p.article)
    ARTICLE_NAMES = tuple(p.name for p in ARTICLE_SAFETY)


_derive()


def register(prop: Property) -> Property:
    """Register a property after this package is imported (every module of the package
    registers its own with `sim.properties.base.register` as it is imported, above)."""
    base.register(prop)
    _derive()
    return prop


def unregister(prop: Property) -> None:
    base.unregister(prop)
    _derive()


FINISHED = finished.PROPERTY
EFFECTS_CONFIRMED = effects_confirmed.PROPERTY


def judged(switches: Switches, kinds: Iterable[type[Fault]]) -> tuple[Property, ...]:
    """What a search over schedules of these fault kinds judges under these switches: every
    invariant such a schedule can break (`Property.reachable`: the article's own always, one
    beyond its model where its declaration says these kinds' effects and these settings
    reach it), and that every recorded intent is confirmed by the end of the run (`finished`
    is the outcome's, and is not judged there)."""
    effects = effects_of(kinds)
    return (*(p for p in SAFETY if p.reachable(switches, effects)), EFFECTS_CONFIRMED)


def not_judged(switches: Switches, kinds: Iterable[type[Fault]]) -> tuple[Property, ...]:
    """The invariants these switches let some registered fault kind break but no schedule of
    these kinds can: what a verdict over `kinds` leaves out, and must say it leaves out."""
    effects = effects_of(kinds)
    every = effects_of(KINDS)
    return tuple(p for p in SAFETY if p.reachable(switches, every) and not p.reachable(switches, effects))


def judged_words(switches: Switches, kinds: Sequence[type[Fault]], source: str, progress: bool = True) -> str:
    """What a verdict over schedules of these fault kinds judged under these switches, in
    words: the properties (`judged`; without `progress`, the invariants only), the fault
    kinds ("enumerated", "drawn": `source`) and the invariants it left out (`not_judged`)."""
    props = [p for p in judged(switches, kinds) if progress or p.safety]
    words = f"judged: {', '.join(p.name for p in props)}; fault kinds {source}: {', '.join(k.plural for k in kinds)}"
    left = not_judged(switches, kinds)
    if left:
        words += f"; not judged: {', '.join(p.name for p in left)} (no fault kind {source} can break it here)"
    return words


def violations(trace: Trace, props: tuple[Property, ...] | None = None) -> list[tuple[str, int]]:
    """(name, first tick it broke) for every broken property of `props` (by default the
    invariants), in `props` order."""
    out = []
    for prop in SAFETY if props is None else props:
        tick = prop.first_tick(trace)
        if tick is not None:
            out.append((prop.name, tick))
    return out


def breaking_events(trace: Trace, props: tuple[Property, ...] | None = None) -> dict[int, tuple[str, ...]]:
    """Event index -> the properties of `props` that event breaks (every instance, not only
    the first): the swimlane's "!" marks."""
    out: dict[int, list[str]] = {}
    for prop in SAFETY if props is None else props:
        for index in prop.breaks(trace):
            out.setdefault(index, []).append(prop.name)
    return {index: tuple(out[index]) for index in sorted(out)}


def at_risk(trace: Trace, props: tuple[Property, ...] | None = None) -> set[str]:
    """The properties of `props` whose hazard arose in this run, whether or not a protection
    stopped it (each property's `hazard` says what that is). One walk over the events, in
    which every hazard reads what was true then from the engine's states (`Seen`)."""
    judging = SAFETY if props is None else props
    hazards = [p for p in judging if p.hazard is not None and judged_under(p, trace.switches)]
    by_kind: dict[Kind, list[tuple[str, Hazard]]] = {}
    at_tick_end: list[tuple[str, Hazard]] = []
    for p in hazards:
        assert p.hazard is not None
        if p.hazard.at_tick_end:
            at_tick_end.append((p.name, p.hazard))
        for kind in p.hazard.kinds:
            by_kind.setdefault(kind, []).append((p.name, p.hazard))
    risky: set[str] = set()
    seen = Seen(trace)
    events = trace.events
    count = len(events)
    for i, e in enumerate(events):
        for name, hazard in by_kind.get(e.kind, ()):
            if name not in risky and hazard.arose(seen, e):
                risky.add(name)
        if at_tick_end and (i + 1 == count or events[i + 1].tick != e.tick):
            for name, hazard in at_tick_end:
                if name not in risky and hazard.arose(seen, e):
                    risky.add(name)
    return risky


def unguarded_by(switches: Switches, name: str) -> str | None:
    """`BY_NAME[name].unguarded_by(switches)`: why it is not protected here (None: it is)."""
    return BY_NAME[name].unguarded_by(switches)


def guarded(switches: Switches, name: str) -> bool:
    """Whether the property's guard is on and works under these switches."""
    return BY_NAME[name].guarded(switches)


__all__ = [
    "ALL_HOLD", "ALWAYS", "ARTICLE_NAMES", "ARTICLE_SAFETY", "BROKEN", "BY_NAME", "EFFECTS_CONFIRMED", "EVENTUALLY", "FINISHED", "GUARDS",
    "HOLDS", "HOLDS_WITHIN_BOUND", "NAMES", "PROGRESS", "PROPERTIES", "SAFETY", "Failure", "Guard",
    "Hazard", "Property", "Seen", "Temporal", "at_risk", "breaking_events", "guarded", "judged", "judged_under", "judged_words", "not_judged", "register", "unguarded_by", "unregister",
    "verdict", "violations",
]  # fmt: skip
