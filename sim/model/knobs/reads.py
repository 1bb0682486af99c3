"""What a step reads (docs/outside.md, case 5): only its own section, as the article's model
assumes, or also the next section, which its journal key does not name (an undeclared input),
or also the next section with the key naming both (the read declared)."""

from sim.model.knobs.base import Inert, Knob, register

READS = register(Knob(
    name="reads",
    values=("declared", "next-section", "next-section-keyed"),
    words="what a step reads besides its own section, and whether its journal key names it",
    case=5,
    meanings=(
        "each step reads only its own section, the one its journal key names",
        "each step also reads the next section (the last one: only its own); its key does not name it",
        "each step also reads the next section, and its journal key names that section's hash too",
    ),
    # with pins off a journal key names no section (only the step), so the keyed read has
    # no section hash to add: the step reads the next section undeclared, as next-section
    inert=(Inert(("next-section-keyed",), switch=("pins", "off"), same_as="next-section",
                 does="with pins=off a journal key names no section, so it cannot name the next one either "
                 "(set pins=on)"),),
))  # fmt: skip
