"""Fault kinds: one module per kind, each added to the registry below, one line each.

The registry's order is the order of the lists in a scenario file's [schedule] table and of
`sim explore`'s draw. `docs/extending.md` says how to add a kind.
"""

from sim.faults.base import (
    KINDS,
    Bounds,
    Choices,
    Fault,
    Moment,
    PostPoint,
    RunFacts,
    Stall,
    by_key,
    canonical,
    check_order,
    describe,
    register,
    unregister,
)
from sim.faults.change import ReportChange
from sim.faults.death import PosterDeath
from sim.faults.duplicate import DuplicateDelivery
from sim.faults.silence import Silence

register(Silence)
register(ReportChange)
register(PosterDeath)
register(DuplicateDelivery)

__all__ = [
    "KINDS",
    "Choices",
    "DuplicateDelivery",
    "Bounds",
    "Fault",
    "Moment",
    "PostPoint",
    "PosterDeath",
    "ReportChange",
    "RunFacts",
    "Silence",
    "Stall",
    "by_key",
    "canonical",
    "check_order",
    "describe",
    "register",
    "unregister",
]
