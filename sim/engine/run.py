"""One run: the world and its actors put together, run to the end, and the trace they leave."""

from __future__ import annotations

from sim.engine.actors import Controller, input_process
from sim.engine.world import World
from sim.schedule import Schedule
from sim.switches import Switches
from sim.trace import Trace


def run_world(world: World) -> Trace:
    """Run the world's scenario to its end and return its trace."""
    controller = Controller(world)
    world.env.process(input_process(world))
    world.env.process(controller.process())
    world.env.run(until=world.finished)
    return Trace(
        switches=world.switches,
        schedule=world.schedule,
        events=tuple(world.events),
        versions=tuple(world.versions),
        last_tick=world.last_tick,
        horizon_reached=world.horizon_reached,
        unfired=world.unfired(len(controller.attempts)),
        fired=tuple(world.fired),
    )


def run(switches: Switches, schedule: Schedule) -> Trace:
    """Run one scenario to its end and return its trace."""
    return run_world(World(switches, schedule))
