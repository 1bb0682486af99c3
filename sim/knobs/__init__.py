"""Knobs beyond the article's model: one module per knob, each registered where it is
declared, imported below in registry order. `docs/extending.md` says how to add one."""

from sim.knobs.base import KNOBS, Knob, Knobs, register
from sim.knobs import controller_state  # noqa: F401  (case 9)

__all__ = ["KNOBS", "Knob", "Knobs", "register"]
