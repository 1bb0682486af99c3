"""The SimPy actors: the report's input, each worker attempt, and the controller.

Each actor's process is a thin loop that keeps nothing the state does not have: it waits
for the `order.at(...)` event of the tick the state says it acts next (so the same-tick
order is settled by `sim.engine.order` alone), calls its step function of
`sim.engine.rules` on the world's current state, and stores the next state with
`World.apply`. Each starts from whatever state the world holds, so a world built from a
snapshot (`World(..., state=s)`) resumes the run where the snapshot left it.
"""

from __future__ import annotations

from typing import Generator

from sim.engine import order, rules
from sim.engine.state import Status
from sim.engine.world import World

Process = Generator[order.At, None, None]

__all__ = ["Process", "Status", "attempt_process", "controller_process", "input_process", "start"]


def input_process(world: World) -> Process:
    """docs/model.md §5.1: a scheduled report change takes effect at the start of its tick."""
    env = world.env
    first = world.state.tick
    for tick in world.input_ticks:
        if tick >= first:
            yield order.at(env, tick, order.INPUT)
            world.apply(rules.input_phase(world.state, tick, world))


def attempt_process(world: World, n: int) -> Process:
    """Attempt #n: one step at each tick its state names, until its program ends."""
    env = world.env
    priority = order.worker_priority(n)
    act = rules.act
    while True:
        tick = world.state.attempts[n - 1].next_tick
        if tick is None:
            return
        yield order.at(env, tick, priority)
        world.state, events = act(world.state, n, tick, world)
        world.events += events  # World.apply, inlined (it runs at every act)


def controller_process(world: World) -> Process:
    """The controller's phase of every tick (`rules.controller`: its steps a to d, then the
    end-of-tick check) until the run ends; an attempt it admits starts acting the tick after.
    It acts last in every tick, so the state after its phase is the tick's end state, which it
    publishes (`World.states`)."""
    env = world.env
    step = rules.controller
    while not world.state.finished:
        tick = world.state.tick
        yield order.at(env, tick, order.CONTROLLER)
        before = world.state
        world.state, events = step(before, tick, world)
        world.states.append(world.state)  # the state at the end of the tick (a reference)
        if events:  # World.apply, inlined: the controller acts every tick
            world.events += events
            for n in range(len(before.attempts) + 1, len(world.state.attempts) + 1):
                env.process(attempt_process(world, n))
    world.finished.succeed()


def start(world: World) -> None:
    """Start every actor's process on the world's state (a fresh run or a snapshot)."""
    env = world.env
    env.process(input_process(world))
    for a in world.state.attempts:
        if a.next_tick is not None:
            env.process(attempt_process(world, a.n))
    env.process(controller_process(world))
