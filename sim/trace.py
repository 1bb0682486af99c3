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
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # pragma: no cover (names for the annotations only: a module that reads the
    # trace, `sim.events` say, does not import the fault kinds, the knobs and the switches)
    from sim.engine.state import State
    from sim.faults import Fault
    from sim.schedule import Schedule
    from sim.switches import Switches


class Kind(Enum):
    """The kinds of event; `sim.events.EVENT_KINDS` declares each one's fields and wording."""

    REPORT_CHANGED = "report-changed"
    ADMITTED = "admitted"
    SILENT = "silent"
    WOKE = "woke"
    COMPUTED = "computed"  # a model call
    RESTORED = "restored"
    WRITE = "write"  # a protected write, of one of three stores
    FENCED = "fenced"
    ACCEPTED = "accepted"
    REFUSED = "refused"
    STOPPED = "stopped"  # the attempt stops because its candidate was refused
    UNKNOWN = "unknown"
    SENT = "sent"
    FEED = "feed"
    DIED = "died"
    DONE = "done"
    NEWSLETTER = "newsletter"
    LOST = "lost"  # a storage loss (beyond the article's model: `sim.faults.loss`)
    UNHEARD = "unheard"  # heartbeats delayed while working (beyond it: `sim.faults.delay`)
    EXPIRED = "expired"  # the feed had forgotten a key (beyond it: the knob `retention`)
    RETRACTED = "retracted"  # a correction retracted an earlier post (beyond it: `compensate`)
    MUTATED = "mutated"  # a section's bytes change under its hash (beyond it: `sim.faults.mutation`)
    CODE_CHANGED = "code-changed"  # the orchestration code changes (beyond it: `sim.faults.code`)
    REPLAY_FAILED = "replay-failed"  # a strict replay met a record of other code (the knob `replay`)
    CONTROLLER_DOWN = "controller-down"  # the controller crashes (beyond it: `sim.faults.restart`)
    CONTROLLER_UP = "controller-up"  # and restarts, with what survived on storage
    ADOPTED = "adopted"  # a fenced worker returns the owner's result (beyond it: `fenced_end`)


class Event(NamedTuple):
    """One thing that happened at a tick; `detail` holds the fields its kind declares."""

    tick: int
    kind: Kind
    attempt: int | None
    detail: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"tick": self.tick, "kind": self.kind.value, "attempt": self.attempt, **self.detail}


#: revenue figure of section 2, by the section's content revision (v1 says 4.1, v2 says 4.7).
REVENUE = ("4.1", "4.7")


def revenue(revision: int) -> str:
    """The revenue figure a section-2 summary of this content revision quotes."""
    return REVENUE[revision] if revision < len(REVENUE) else f"r{revision}"


def quoted(revision: int, wrong: bool = False) -> str:
    """The figure a section-2 summary of this content revision quotes; a wrong summary (beyond
    the article's model, `sim.faults.wrong`) quotes it with its digits transposed."""
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
        """The report content current at `tick` (after that tick's input phase)."""
        return ReportHistory(self).at(tick)

    @property
    def final_content(self) -> tuple[int, ...]:
        return self.versions[-1]

    def to_json(self) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.events]


class ReportHistory:
    """The report content current at each tick of one trace, read once from its changes."""

    __slots__ = ("versions", "first", "revisions")

    def __init__(self, trace: Trace) -> None:
        self.versions = trace.versions
        self.first = trace.versions[0]
        self.revisions = [
            (e.tick, tuple(e.detail["content"])) for e in trace.events if e.kind is Kind.REPORT_CHANGED
        ]

    def at(self, tick: int) -> tuple[int, ...]:
        """The content after `tick`'s input phase."""
        content = self.first
        for at, new in self.revisions:
            if at > tick:
                break
            content = new
        return content

    def version_at(self, tick: int) -> int:
        """The 1-based report version current at `tick`."""
        return self.versions.index(self.at(tick)) + 1
