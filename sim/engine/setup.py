"""What the switches and the schedule fix for one run (`Setup`) and its dependants as the run
reads them (`Dependant`): the part of a state (`sim.engine.state.State.setup`) that no step
changes and the rules read at every step, about 19 fields a transition of `sim check`'s search.

In a module of their own so that they are compiled (docs/compiled.md): compiled, each is a
native class, and the compiled rules read a field as a C struct's (an interpreted dataclass's
field is looked up by name: about 130 instructions a read, some 3 % of the search). Frozen as
before; a compiled frozen dataclass is not unpickled field by field (its fields cannot be set),
so each is pickled as the call that makes it again (`made`), as it is interpreted too.
`sim.engine.state` imports both from here, and every other module reads them there.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, TypeVar

from sim.engine import primitives
from sim.model.switches import Key, Receiver, Rule

R = TypeVar("R", "Setup", "Dependant")


def made(record: R) -> tuple[type[R], tuple[Any, ...]]:
    """What pickles a record: its type and its fields in order (the call that makes it again)."""
    return type(record), tuple([getattr(record, f.name) for f in fields(record)])


@dataclass(frozen=True, slots=True)
class Dependant:
    """A dependant as the run reads it: its name, ready tick, rule and gate (the switches'
    where its workflow leaves them unset)."""

    name: str
    ready: int
    rule: Rule
    fail_open: bool

    def __reduce__(self) -> tuple[type[Dependant], tuple[Any, ...]]:
        return made(self)


@dataclass(frozen=True, slots=True)
class Setup:
    """What the switches and the schedule fix for the whole run (a dataclass rather than a
    NamedTuple: the rules read it at every step; compiled, each field is a C struct's)."""

    fencing: bool
    pins: bool
    per_step: bool
    key: Key
    sections: int
    heartbeat_limit: int
    horizon: int
    last_change_at: int  # the last tick with a scheduled report change (-1: none)
    #: the effects after the acceptance, in order, each with its receiver: the article's one
    #: announcement (its feed as the knobs receiver, retention and compensate say) or a
    #: workflow's (`Schedule.effects`, docs/workflows.md)
    receivers: tuple[Receiver, ...]
    #: the dependants (the article's newsletter, or a workflow's), rule and gate resolved
    dependants: tuple[Dependant, ...]
    # engine behaviours beyond the article (`sim.model.knobs`; the article's at their defaults)
    rereads: bool = True  # zombie=rereads: the journal is looked up before every step
    step_fencing: bool = False  # fencing_scope=step: a replaced worker gets no further step
    owner_fencing: bool = False  # fencing_by=owner: stores compare the writer with the owner
    adopts: bool = False  # fenced_end=adopts: a fenced worker returns the owner's result
    retries: int = 0  # retries=N: a step re-delivered to a worker paused inside it, at most N times
    # knobs beyond the article's model (docs/outside.md); the defaults are the article's
    reads_next: bool = False  # a step also reads the next section (reads != declared)
    reads_keyed: bool = False  # ... and its journal key names it (reads=next-section-keyed)
    figures: bool = False  # the assessor checks every figure (assessor=figures)
    journal_code: bool = False  # the journal key names the code version (journal_code=yes)
    strict: bool = False  # a record of other code stops the attempt (replay=strict)
    #: beyond the article's model: what of the controller survives its restart (the knob
    #: `controller_state`: "durable", "no-epoch", "no-intents" or "old-timers"), and the
    #: first owner token (where a counter that is not durable starts again)
    controller_state: str = "durable"
    first_token: int = 41
    #: the step (0-based) whose result carries the figure the dependant quotes: the article's
    #: s2, the revenue; another workflow's first step reading its figure part (docs/workflows.md)
    figure: int = 1
    #: each step's model calls (a workflow's; `Schedule.calls`): () for one each, the article's
    calls: tuple[int, ...] = ()

    def __reduce__(self) -> tuple[type[Setup], tuple[Any, ...]]:
        return made(self)

    # the first effect's receiver and the first dependant, as the article's pages name them
    @property
    def retention(self) -> int | None:
        """Ticks the first receiver remembers a key (None: for ever)."""
        return self.receivers[0].retention

    @property
    def compensate(self) -> bool:
        """Whether the first effect's inherited resend is a correction."""
        return self.receivers[0].correction

    @property
    def newsletter_ready(self) -> int:
        """The first dependant's ready tick (0 with none)."""
        return self.dependants[0].ready if self.dependants else 0

    @property
    def named(self) -> bool:
        """Whether events name their effect and dependant (`primitives.named_run`)."""
        return primitives.named_run(self)
