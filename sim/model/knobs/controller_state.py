"""controller_state: what of the controller survives on storage when it restarts
(docs/outside.md, case 9; the fault kind `controller_restarts` restarts it).

- `durable` (the article's requirement): the attempt records, the owner epoch, the
  unconfirmed effect intents and the acceptances are on durable storage, and the restarted
  controller rebuilds its suspicion timers: every attempt counts as heard at the restart.
- `no-epoch`: the owner-token counter is not durable; it starts again below the first
  token, so the next admission reissues a token already held by an earlier attempt.
- `no-intents`: the unconfirmed intent records are lost at the restart.
- `old-timers`: the suspicion timers are not rebuilt: the controller counts silence from
  the last heartbeat it heard before it crashed.
"""

from sim.model.faults import Effect
from sim.model.knobs.base import Inert, Knob, register

CONTROLLER_STATE = register(Knob(
    name="controller_state",
    values=("durable", "no-epoch", "no-intents", "old-timers"),
    words="what of the controller survives its restart",
    case=9,
    meanings=(
        "attempt records, owner epoch, unconfirmed intents and acceptances are durable; "
        "suspicion timers are rebuilt (every attempt counts as heard at the restart)",
        "the owner-token counter starts again from the first token: the next admission "
        "reissues a token already used",
        "unconfirmed intent records are lost at the restart",
        "suspicion timers are not rebuilt: silence counts from the last heartbeat heard "
        "before the crash",
    ),
    # every value but the durable one acts only when the controller restarts
    inert=(Inert(("no-epoch", "no-intents", "old-timers"), effects=(Effect.RESTARTS_CONTROLLER,)),),
))  # fmt: skip
