"""`retries`: how often the engine re-delivers a step to the same attempt when the step has
not returned in time (an engine behaviour beyond the article's model, issue 14;
docs/profiles.md).

- `0` (the article's): a step is never retried within its attempt; a worker that stops
  answering is suspected and replaced by the controller, nothing else.
- a whole number N: the engine's step timeout is the heartbeat limit. Each time it passes
  while a worker is paused inside a model call, the engine sends the step to that worker
  again, at most N times. The deliveries wait in the paused worker; when it wakes it runs
  each of them (one model call each) before it returns to the call it held, whose result
  is the one it keeps. A crashed worker never runs them. Restate's invocation retries and
  Temporal's activity retries to a worker that still holds the task are of this kind: the
  retried step costs model calls, and only the engine's journal decides which result
  counts, so no record and no verdict changes, only the cost.
"""

from sim.model.knobs.base import Knob, register
from sim.base.limits import MAX_HORIZON

RETRIES = register(Knob(
    name="retries",
    values=("0",),
    words="how many times the engine re-delivers a step to a worker paused inside it",
    case=0,
    integers=(1, MAX_HORIZON),
    meanings=("a step is never retried within its attempt",),
))  # fmt: skip
