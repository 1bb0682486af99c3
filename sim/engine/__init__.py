"""The engine: SimPy actors over the records of SPEC.md section 2."""

from sim.engine.world import run

__all__ = ["run"]
