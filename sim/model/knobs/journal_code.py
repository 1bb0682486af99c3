"""Whether the journal key carries the orchestration code's version (docs/outside.md, case 8)."""

from sim.model.faults import Effect
from sim.model.knobs.base import Inert, Knob, register

JOURNAL_CODE = register(Knob(
    name="journal_code",
    values=("no", "yes"),
    words="whether a journal key names the code version its step was computed under",
    case=8,
    meanings=(
        "no: a record computed under older code matches a later attempt's key",
        "yes: the key names the code version, so an attempt of newer code computes the step again",
    ),
    # every attempt runs the first code unless the code changes: the version never differs
    inert=(Inert(("yes",), effects=(Effect.CHANGES_CODE,)),),
))  # fmt: skip
