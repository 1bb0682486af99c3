"""Knobs beyond the article's model: one module per knob, each registered where it is
declared, imported below in registry order. `docs/extending.md` says how to add one."""

from sim.knobs import assessor, journal_code, reads, replay  # noqa: F401  (each registers its knob)
from sim.knobs.base import KNOBS, Knob, Knobs, register

__all__ = ["KNOBS", "Knob", "Knobs", "register"]
