"""`fencing_by`: what a fenced store compares (an engine behaviour beyond the article's
model, issue 14; docs/profiles.md). Only with `fencing=on`.

- `token` (the article's): the writer's token against the epoch; an older token is refused.
- `owner`: the writer against the owner the controller recorded; anyone else is refused
  (DBOS keeps the executor's id on the workflow row). The two agree while every admission
  publishes a new epoch; they part when an epoch is reused (a controller that restarts
  without its epoch, docs/outside.md case 9): a reissued token passes a token check but not
  an owner check.
"""

from sim.model.knobs.base import Inert, Knob, register

FENCING_BY = register(Knob(
    name="fencing_by",
    values=("token", "owner"),
    words="what a fenced store compares: the writer's token with the epoch, or the writer with the owner",
    case=0,
    meanings=("an older token is refused", "anyone but the recorded owner is refused"),
    inert=(Inert(("owner",), switch=("fencing", "off"),
                 does="with fencing=off no store compares anything before a write (set fencing=on)"),),
))  # fmt: skip
