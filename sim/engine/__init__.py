"""The engine: the rules of docs/model.md §5 as step functions over an immutable state value
(`state`, `rules`), driven tick by tick by SimPy actors (`actors`, `run`)."""

from sim.engine.run import run, run_world

__all__ = ["run", "run_world"]
