"""What the assessor checks (docs/outside.md, case 6): completeness and form, as in the
article (the pin, the token, the parts' hashes), or also every figure of every part against
its section. A digest with a wrong part is then refused, and the refusal strikes that
part's journal record so that the rebuild computes the step again instead of restoring it."""

from sim.model.knobs.base import Knob, register

ASSESSOR = register(Knob(
    name="assessor",
    values=("form", "figures"),
    words="what the assessor checks of a candidate digest",
    case=6,
    meanings=(
        "completeness and form: the pin, the token and the parts' hashes",
        "form and every figure of every part; a wrong part's journal record is struck at the refusal",
    ),
))  # fmt: skip
