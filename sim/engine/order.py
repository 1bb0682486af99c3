"""Every same-tick ordering rule of docs/model.md §5, in one place.

SimPy's queue is keyed by (time, priority, event id). The engine schedules every action of
an actor with `at(env, tick, priority)`, and the priorities below put the three phases of a
tick in the order docs/model.md §5 gives; ties inside a phase are broken by number (attempt order),
never by hashing or dict order. The controller's four steps run in `CONTROLLER_STEPS` order.
"""

from __future__ import annotations

from sim.base import lean_import

lean_import.load("simpy")  # first: SimPy without importlib.metadata

from simpy import Environment  # noqa: E402
from simpy.events import Event

#: docs/model.md §5.1: first the input, where a report change scheduled for the tick lands.
INPUT = 0

#: docs/model.md §5.2: then the workers, at most one step each, lowest attempt number first.
#: Attempt #n acts at priority WORKERS + n.
WORKERS = 1

#: docs/model.md §5.3: last the controller: a. assessment, b. newsletter gate, c. suspicion, d. rebuild.
CONTROLLER = 1 << 40

#: the controller's steps within phase 3, by the names of their step functions in `sim.engine.rules`:
#: first, beyond the article's model, its restart after an outage (a no-op otherwise).
CONTROLLER_STEPS = ("restart", "assess", "gate", "suspect", "rebuild")

#: the three phases of a tick, in the order the priorities above give them, by the names of
#: their step functions in `sim.engine.rules` (what `rules.run_tick` steps without SimPy).
PHASES = ("input_phase", "workers_phase", "controller")
assert INPUT < WORKERS < CONTROLLER


def worker_priority(attempt: int) -> int:
    """Attempts act in attempt order: #1 before #2 before #3 ..."""
    return WORKERS + attempt


class At(Event):
    """An event that fires at an absolute tick with a given same-tick priority."""

    __slots__ = ()

    def __init__(self, env: Environment, tick: int, priority: int) -> None:
        self.env = env
        self.callbacks = []
        self._value = None
        self._ok = True
        env.schedule(self, priority, tick - env.now)  # type: ignore[arg-type]


#: `at(env, tick, priority)` schedules an `At` event. It is the class itself rather than a
#: wrapper function: one Python call less per event (`sim check` runs the engine millions of times).
at = At
