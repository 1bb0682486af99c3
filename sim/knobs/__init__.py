"""Knobs beyond the article's model: one module per knob, each registered where it is
declared, imported below in registry order. `docs/extending.md` says how to add one."""

from sim.knobs.base import KNOBS, Knob, Knobs, register

# engine behaviours (issue 14, docs/profiles.md)
from sim.knobs import zombie, fencing_scope, fencing_by  # noqa: E402,F401  (each registers its knob)

__all__ = ["KNOBS", "Knob", "Knobs", "register"]
