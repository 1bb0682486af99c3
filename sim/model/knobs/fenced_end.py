"""`fenced_end`: what a worker does once a fence has refused it (an engine behaviour beyond
the article's model, issue 14; docs/profiles.md). Only with `fencing=on`.

- `stops` (the article's): it stops; whatever it still holds is dropped.
- `adopts`: it waits for the owner's recorded outcome and returns it, instead of stopping
  with nothing. DBOS does so: a fenced execution of a workflow waits for the workflow's
  result and returns it. In the model the fenced attempt logs `adopted` (naming the attempt
  whose announcement it returns) at the tick the first attempt is done, or at once when one
  already is. It writes nothing and sends nothing, so no record and no verdict changes:
  only the attempt's end does.
"""

from sim.model.knobs.base import Inert, Knob, register

FENCED_END = register(Knob(
    name="fenced_end",
    values=("stops", "adopts"),
    words="what a fenced worker returns: nothing, or the owner's result once it is recorded",
    case=0,
    meanings=("it stops with nothing", "it waits for the owner's outcome and returns it"),
    inert=(Inert(("adopts",), switch=("fencing", "off"),
                 does="with fencing=off no worker is fenced, so none adopts a result (set fencing=on)"),),
))  # fmt: skip
