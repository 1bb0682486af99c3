"""`fencing_scope`: what a fence holds a replaced worker to (an engine behaviour beyond the
article's model, issue 14; docs/profiles.md). Only with `fencing=on`.

- `attempt` (the article's): the stores check the token on each write, so a replaced worker
  goes on with its action and is stopped at its next write (with end-only checkpoints, after
  more model calls).
- `step`: the engine hands out one step at a time and owns its result (Temporal's activity
  tasks, Restate's journal). A replaced worker gets no further step: whatever it does next
  after it was replaced, including finishing an action it began before, is discarded at
  once and it stops, fenced, without a write reaching any store.
"""

from sim.knobs.base import Inert, Knob, register

FENCING_SCOPE = register(Knob(
    name="fencing_scope",
    values=("attempt", "step"),
    words="what fencing holds a replaced worker to: its next write, or its next step",
    case=0,
    meanings=("stopped at its next write", "stopped before its next step, its result discarded"),
    inert=(Inert(("step",), switch=("fencing", "off"),
                 does="with fencing=off no worker is fenced, at a write or at a step (set fencing=on)"),),
))  # fmt: skip
