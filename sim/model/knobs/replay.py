"""How a successor uses the journal (docs/outside.md, case 8): it restores matching records
(the article's model), or, as replay engines do, it replays the history strictly and stops
with a non-determinism error when a record it replays was written under other code.

A stuck attempt stays running and the owner and is never suspected, whatever its heartbeats:
as in a replay engine, whose failed workflow task is retried over and over within the same
execution and fails the same way each time (docs/model.md §9, docs/outside.md case 8)."""

from sim.model.faults import Effect
from sim.model.knobs.base import Inert, Knob, register

REPLAY = register(Knob(
    name="replay",
    values=("reuse", "strict"),
    words="what an attempt does with a matching journal record written under other code",
    case=8,
    meanings=(
        "reuse: it restores the record, whatever code computed it",
        "strict: it stops with a non-determinism error, and the run is stuck",
    ),
    # a record written under other code exists only once the code has changed
    inert=(Inert(("strict",), effects=(Effect.CHANGES_CODE,)),),
))  # fmt: skip
