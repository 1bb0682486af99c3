"""compensate (case 2 of docs/outside.md): a successor's resend as a correction.

`no` is the article's successor: it resends an inherited announcement as it was. With `yes`,
a successor that inherits an unconfirmed announcement cannot know whether its predecessor's
send reached the feed, so it sends a correction instead: the same announcement, marked as
superseding any earlier copy. When the feed applies it, it retracts every earlier post of the
same digest that is still up (a `retracted` event each), in the same transaction. The
effect still happened twice (duplicate-effect); what readers are left with is one post.
"""

from sim.model.knobs.base import Knob, register

KNOB = register(Knob(
    name="compensate",
    values=("no", "yes"),
    words="whether a successor resends an inherited announcement as a correction that retracts earlier copies",
    case=2,
    meanings=(
        "the article's successor: a plain resend",
        "a correction: the resend supersedes any earlier copy of the announcement, which the feed retracts",
    ),
))  # fmt: skip
