"""`fencing_scope`: what a fence holds a replaced worker to (an engine behaviour beyond the
article's model, issue 14; docs/profiles.md). Only with `fencing=on`.

- `attempt` (the article's): the stores check the token on each write, so a replaced worker
  goes on with its action and is stopped at its next write (with end-only checkpoints, after
  more model calls).
- `step`: the engine hands out one step at a time and owns its result (Temporal's activity
  tasks, Restate's journal). A replaced worker gets no further step: whatever it does next
  after it was replaced, including finishing an action it began before, is discarded at
  once and it stops, fenced, without a write reaching any store.

What a step fence guards is the engine's own stores (the journal, the candidates, the effect
records), never an external receiver. A worker paused inside its send (between the intent and
the send, `poster_pauses`) was handed that step before it was replaced: when it wakes the send
it was making goes out and reaches the feed, which checks keys, not tokens; only the answer it
brings back is discarded (docs/model.md §9, docs/outside.md case 1). A stopped worker that is
continued runs what it was handed, as the Temporal conformance run shows (docs/conform.md).
"""

from sim.model.knobs.base import Inert, Knob, register

FENCING_SCOPE = register(Knob(
    name="fencing_scope",
    values=("attempt", "step"),
    words="what fencing holds a replaced worker to: its next write, or its next step",
    case=0,
    meanings=(
        "stopped at its next write",
        "stopped before its next step, its result discarded (a send it was making still goes out)",
    ),
    inert=(Inert(("step",), switch=("fencing", "off"),
                 does="with fencing=off no worker is fenced, at a write or at a step (set fencing=on)"),),
))  # fmt: skip
