"""receiver (case 2 of docs/outside.md): whether the feed deduplicates by key.

`idempotent` is the article's feed: it remembers each key with the post it applied and
answers a repeat with that post. `none` is a receiver that neither deduplicates by key nor
can be asked whether an effect happened: every request it receives is a new post, whatever
key the sender puts on it (unlike `key=none`, where the sender leaves the key out of a feed
that would have checked it).
"""

from sim.model.knobs.base import Knob, register

KNOB = register(Knob(
    name="receiver",
    values=("idempotent", "none"),
    words="whether the feed deduplicates requests by their idempotency key",
    case=2,
    meanings=(
        "the article's feed: it remembers each key and answers a repeat with the original post",
        "a receiver with no idempotency: every request is a new post, and it cannot be asked what it applied",
    ),
))  # fmt: skip
