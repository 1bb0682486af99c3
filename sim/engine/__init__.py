"""The engine: SimPy actors over the records of docs/model.md §2."""

from sim.engine.run import run, run_world

__all__ = ["run", "run_world"]
