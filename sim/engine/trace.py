"""The record of one run: its events, the state the engine reached at the end of each tick, and
what the run started from.

Every later stage (invariants, the outcome, the renderers, the sweep) reads only this. Event
details are plain JSON values so a trace can be exported as it is. The states are the
engine's own values (`sim.engine.state.State`, immutable, sharing their unchanged parts, so
keeping one per tick costs a reference): a reader that shows what was true at a tick reads
them (`state_at`) rather than rebuilding them from the events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

# the kinds of event and an event are declared with their payloads (sim.model.events); every
# reader of a trace may import them from here
from sim.model.events import REVENUE, Event, Kind, revenue

if TYPE_CHECKING:  # pragma: no cover (the engine imports this module)
    from sim.engine.state import State
    from sim.model.faults import Fault
    from sim.model.schedule import Schedule
    from sim.model.switches import Switches


def quoted(revision: int, wrong: bool = False) -> str:
    """The figure a section-2 summary of this content revision quotes; a wrong summary (beyond
    the article's model, `sim.model.faults.wrong`) quotes it with its digits transposed."""
    figure = revenue(revision)
    return figure[::-1] if wrong else figure


@dataclass(frozen=True, slots=True)
class Trace:
    switches: Switches
    schedule: Schedule
    events: tuple[Event, ...]
    #: report content by version (version 1 first): one content revision per section.
    versions: tuple[tuple[int, ...], ...]
    last_tick: int
    horizon_reached: bool
    #: faults of the schedule that never took effect (e.g. a silence of an attempt that
    #: was never admitted), described in words.
    unfired: tuple[str, ...]
    #: the faults of the schedule that took effect, in the order they did
    fired: tuple[Fault, ...] = ()
    #: the engine's state at the end of each tick it ran, in tick order: t0..t(last) for a
    #: run from its start (`state_at`)
    states: tuple[State, ...] = ()

    def state_at(self, tick: int) -> State:
        """The engine's state at the end of `tick` (after its input, workers and controller)."""
        first = self.last_tick + 1 - len(self.states)
        if not first <= tick <= self.last_tick:
            raise IndexError(f"the trace holds the states of t{first}..t{self.last_tick}, not t{tick}")
        return self.states[tick - first]

    def content_at(self, tick: int) -> tuple[int, ...]:
        """The report content current at `tick` (after that tick's input phase, the only phase
        that changes it): the engine's state's."""
        return self.state_at(tick).content

    def version_at(self, tick: int) -> int:
        """The 1-based report version current at `tick`."""
        return self.state_at(tick).version + 1

    @property
    def final_content(self) -> tuple[int, ...]:
        return self.versions[-1]

    def to_json(self) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.events]


__all__ = ["REVENUE", "Event", "Kind", "Trace", "quoted", "revenue"]
