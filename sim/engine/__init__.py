"""The engine: the rules of docs/model.md §5 as step functions over an immutable state value
(`state`, `rules`), driven tick by tick by SimPy actors (`actors`, `run`): a run is
`sim.engine.run.run` (or `run_world`).

The package imports none of its modules (it did `run` and `run_world`, and its `run` then
hid the module `sim.engine.run`): a module of the engine imports a sibling through it
(`from sim.engine import order`) without an import circle. It only loads SimPy without
`importlib.metadata` (`sim.base.lean_import`) before any engine module imports SimPy.
"""

from sim.base import lean_import

lean_import.load("simpy")  # first: SimPy without importlib.metadata
