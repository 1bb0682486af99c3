"""Compatibility names for `sim.explore` and `sim.check` until they read `sim.properties`.

The invariants are the safety properties of `sim.properties`; nothing else should import
this module.
"""

from __future__ import annotations

from sim.properties import BY_NAME as _ALL
from sim.properties import NAMES, SAFETY, Property, breaking_events, violations

#: the invariants (safety properties), by name
INVARIANTS: tuple[Property, ...] = SAFETY
BY_NAME: dict[str, Property] = {name: _ALL[name] for name in NAMES}
#: invariant -> the protection (switch) that guards it
GUARDED_BY: dict[str, str] = {p.name: p.guard.switch for p in SAFETY if p.guard is not None}

__all__ = ["BY_NAME", "GUARDED_BY", "INVARIANTS", "NAMES", "breaking_events", "violations"]
