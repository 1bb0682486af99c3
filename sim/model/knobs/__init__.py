"""Knobs beyond the article's model: one module per knob, each registered where it is
declared, imported below in registry order. `docs/extending.md` says how to add one."""

from sim.model.knobs import assessor, journal_code, reads, replay  # noqa: F401  (each registers its knob)
from sim.model.knobs.base import KNOBS, Inert, Knob, Knobs, Scope, inert_notes, register, unregister
from sim.model.knobs import (  # noqa: F401  (each module registers its knob)
    controller_state,  # case 9: what survives a controller restart
    receiver,  # case 2: a receiver with no idempotency
    compensate,  # case 2: a successor's correction
    retention,  # case 3: the feed's key retention
    zombie,  # an engine behaviour: a woken worker runs on from memory
    fencing_scope,  # an engine behaviour: fencing per step
    fencing_by,  # an engine behaviour: fencing by owner equality
    fenced_end,  # an engine behaviour: a fenced worker adopts the owner's result
    retries,  # an engine behaviour: a step re-delivered within its attempt
)

__all__ = ["KNOBS", "Inert", "Knob", "Knobs", "Scope", "inert_notes", "register", "unregister"]
