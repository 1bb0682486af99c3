"""The engine: the rules of docs/model.md §5 as step functions over an immutable state value
(`state`, `rules`), driven tick by tick by SimPy actors (`actors`, `run`): a run is
`sim.engine.run.run` (or `run_world`).

This package names no module of its own, so that a module of the engine may import a
sibling through it (`from sim.engine import order`) without a circle; it only has SimPy
imported without `importlib.metadata` (`sim.lean_import`) before any engine module imports
SimPy.
"""

from sim import lean_import

lean_import.load("simpy")  # first: SimPy without importlib.metadata
