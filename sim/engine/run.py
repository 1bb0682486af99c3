"""One run: the world and its actors put together, run to the end, and the trace they leave."""

from __future__ import annotations

from sim.engine.actors import start
from sim.engine.state import State
from sim.engine.world import World
from sim.model.schedule import Schedule
from sim.model.switches import Switches
from sim.engine.trace import Trace


def run_world(world: World) -> Trace:
    """Run the world's scenario to its end and return its trace."""
    start(world)
    world.env.run(until=world.finished)
    return Trace(
        switches=world.switches,
        schedule=world.schedule,
        events=tuple(world.events),
        versions=world.state.versions,
        last_tick=world.state.last_tick,
        horizon_reached=world.state.horizon_reached,
        unfired=world.unfired(),
        fired=tuple(world.fired),
        states=tuple(world.states),
    )


def run(switches: Switches, schedule: Schedule) -> Trace:
    """Run one scenario to its end and return its trace."""
    return run_world(World(switches, schedule))


def run_through(world: World, tick: int) -> State:
    """Run the world's scenario through the end of `tick` (or to its end if sooner) and return
    the state it reached: a snapshot `World(..., state=...)` resumes from."""
    start(world)
    env = world.env
    while not world.state.finished and env.peek() <= tick:
        env.step()
    return world.state
