"""retention (case 3 of docs/outside.md): how long the feed remembers an idempotency key.

`forever` is the article's feed: it keeps every key for the whole run. A whole number N is a
feed that forgets a key N ticks after it remembered it: a request at tick t finds a key
remembered at tick r if and only if t - r < N (the key's record is dropped at the start of
tick r + N). A resend after that is a new request: the feed applies a second post.
"""

from sim.model.knobs.base import Knob, register
from sim.base.limits import MAX_HORIZON

KNOB = register(Knob(
    name="retention",
    values=("forever",),
    words="how many ticks the feed remembers an idempotency key",
    case=3,
    integers=(1, MAX_HORIZON),
    meanings=("the article's feed: it keeps every key for the whole run",),
))  # fmt: skip
