"""Fault kinds: one module per kind, each added to the registry below, one line each.

The registry's order is the order of the lists in a scenario file's [schedule] table and of
`sim explore`'s draw. `docs/extending.md` says how to add a kind.
"""

from sim.model.faults.base import (
    FAULT_SETS,
    KINDS,
    Bounds,
    WRONG,
    Choices,
    CodeChange,
    Copies,
    Effect,
    Entry,
    Fault,
    Hold,
    Loss,
    Moment,
    Mutation,
    NewContent,
    PostPoint,
    Restart,
    RunFacts,
    Stall,
    Unheard,
    Wrong,
    by_key,
    canonical,
    check_order,
    describe,
    effects_of,
    register,
    selected,
    unregister,
)
from sim.model.faults.change import ReportChange
from sim.model.faults.code import CodeUpdate
from sim.model.faults.delay import HeartbeatDelay
from sim.model.faults.death import PosterDeath
from sim.model.faults.duplicate import DuplicateDelivery
from sim.model.faults.loss import StorageLoss
from sim.model.faults.mutation import SnapshotMutation
from sim.model.faults.pause import PosterPause
from sim.model.faults.restart import ControllerRestart
from sim.model.faults.silence import Silence
from sim.model.faults.wrong import WrongSummary

register(Silence)
register(ReportChange)
register(PosterDeath)
register(DuplicateDelivery)
# beyond the article's model (`Fault.article` False: drawn and enumerated with --faults all)
register(PosterPause)
register(StorageLoss)
register(HeartbeatDelay)
register(SnapshotMutation)
register(WrongSummary)
register(CodeUpdate)
register(ControllerRestart)

__all__ = [
    "FAULT_SETS",
    "KINDS",
    "WRONG",
    "Choices",
    "CodeChange",
    "Copies",
    "CodeUpdate",
    "ControllerRestart",
    "DuplicateDelivery",
    "Effect",
    "Entry",
    "Bounds",
    "Fault",
    "HeartbeatDelay",
    "Hold",
    "Loss",
    "Moment",
    "Mutation",
    "NewContent",
    "PostPoint",
    "PosterDeath",
    "PosterPause",
    "ReportChange",
    "Restart",
    "RunFacts",
    "Silence",
    "SnapshotMutation",
    "Stall",
    "StorageLoss",
    "Unheard",
    "Wrong",
    "WrongSummary",
    "by_key",
    "canonical",
    "check_order",
    "describe",
    "effects_of",
    "register",
    "selected",
    "unregister",
]
