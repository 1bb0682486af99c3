"""The engine: the rules of docs/model.md §5 as step functions over an immutable state value
(`state`, `rules`), driven tick by tick by SimPy actors (`actors`, `run`): a run is
`sim.engine.run.run` (or `run_world`).

The package imports none of its modules (it did `run` and `run_world`, and its `run` then
hid the module `sim.engine.run`): a module of the engine imports a sibling through it
(`from sim.engine import order`) without an import circle. It imports nothing: the run's
record (`trace`) is read without SimPy, and the two modules that import SimPy (`order`,
`world`) load it first without `importlib.metadata` (`sim.base.lean_import`).
"""
