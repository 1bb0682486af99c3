"""One run as SimPy drives it: the state value (`sim.engine.state`) it has reached, the fault
schedule as the engine consults it, and the trace: its events and its states (the state at
the end of each tick).

The world holds no rules: the step functions of `sim.engine.rules` compute each next state
and the events it logs, and `World.apply` stores them. Nor does it know the actors
(`sim.engine.actors`) that call them; `sim.engine.run` puts the two together.

`World(switches, schedule, state=s)` resumes a run from a snapshot `s` of its state: its
environment starts at `Environment(initial_time=s.tick)`, the tick the run's controller acts
next (every actor has acted in every tick before it).
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.base import lean_import

lean_import.load("simpy")  # first: SimPy without importlib.metadata

import simpy  # noqa: E402

from sim.engine.state import State, initial_state, input_ticks
from sim.model.faults import Fault, Moment, RunFacts
from sim.model.schedule import Schedule
from sim.model.switches import Switches
from sim.engine.rules import Faults
from sim.engine.trace import Event

#: where a consult happened: (tick, sequence number within the run); the input phase of tick t is (t, 0)
Position = tuple[int, int]
#: a recorded consult: (tick, sequence number, moment, where)
Consult = tuple[int, int, Moment, tuple[int, ...]]


class World(Faults):
    def __init__(self, switches: Switches, schedule: Schedule, record: bool = False,
                 state: State | None = None) -> None:  # fmt: skip
        self.switches = switches
        self.schedule = schedule
        self.state = initial_state(switches, schedule) if state is None else state
        self.env = simpy.Environment(initial_time=self.state.tick)
        Faults.__init__(self)  # the rules log every kind of event: the trace holds them all
        # the fault schedule, as the engine consults it (docs/model.md §9 and sim/model/faults)
        self.faults = {(f.moment.value, *f.where()): f for f in schedule.faults}
        self.moments = 0  # consults so far (the input phases aside)
        self.input_ticks = input_ticks(schedule)
        self.fired: dict[Fault, Position] = {}
        #: with `record`, every consult of the run in order (what `sim check` grows schedules from)
        self.consults: list[Consult] | None = [] if record else None
        # the trace: the events, and the state reached at the end of each tick (the controller's
        # phase ends every tick: `actors.controller_process` keeps each, a reference to a value
        # that shares its unchanged parts with the one before)
        self.events: list[Event] = []
        self.states: list[State] = []
        self.finished = self.env.event()

    def apply(self, step: tuple[State, Sequence[Event]]) -> None:
        """Store a step's next state and log its events."""
        self.state, events = step
        if events:
            self.events.extend(events)

    # -- faults ------------------------------------------------------------------------
    def consult(self, tick: int, moment: Moment, where: tuple[int, ...]) -> Fault | None:
        """The fault that takes effect at this moment and place, if the schedule has one."""
        fault = self.faults.get((moment._value_, *where))
        if moment is Moment.INPUT:
            position = (where[0], 0)
        else:
            self.moments += 1
            position = (tick, self.moments)
            if self.consults is not None:
                self.consults.append((tick, self.moments, moment, where))
        if fault is not None:
            self.fired[fault] = position
        return fault

    # -- the end of a run -------------------------------------------------------------------
    @property
    def versions(self) -> tuple[tuple[int, ...], ...]:
        return self.state.versions

    @property
    def last_tick(self) -> int:
        return self.state.last_tick

    @property
    def horizon_reached(self) -> bool:
        return self.state.horizon_reached

    def unfired(self) -> tuple[str, ...]:
        """Each fault of the schedule that never took effect, with why."""
        s = self.state
        facts = RunFacts(admitted=len(s.attempts), posts=s.posts, sends=s.sends, last_tick=s.last_tick)
        return tuple(f.unfired(facts) for f in self.schedule.faults if f not in self.fired)
