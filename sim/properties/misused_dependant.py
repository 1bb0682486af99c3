"""misused-dependant (always): the newsletter starts only on an accepted digest built from
the report current when it starts.

Guarded by the newsletter rule current-accepted: the newsletter waits for an accepted digest
of the current version. The rule needs versions to compare; with pins off there are none,
and the gate decides: fail-closed waits, fail-open admits the latest accepted digest, which
is the rule any-accepted. So with pins off and the fail-open gate the rule is on and still
does not hold this property; pins on, or the fail-closed gate, restores it. (The gate is the
ninth knob, `sim.model.switches.Gate`; docs/model.md §4, "version pins", says what pins
off leaves without versions.)
"""

from __future__ import annotations

from sim.model.events import Newsletter, payload
from sim.properties.base import (
    ALWAYS,
    GUARDS,
    Failure,
    Hazard,
    Memo,
    Monitor,
    Property,
    Seen,
    register,
)
from sim.properties.wrong_acceptance import stale_parts
from sim.model.switches import Gate, Pins, Switches
from sim.engine.trace import Event, Kind, Trace


def step(memo: Memo, e: Event, content: tuple[int, ...], position: int) -> tuple[Memo, bool]:
    """The newsletter's start breaks it if it took a digest never accepted or built from an
    old report."""
    started = payload(e, Newsletter)
    return memo, not started["accepted"] or tuple(started["built_from"]) != content


MONITOR = Monitor(frozenset({Kind.NEWSLETTER}), step)


def why(trace: Trace, index: int) -> str:
    started = payload(trace.events[index], Newsletter)
    if not started["accepted"]:
        return f"{started['digest']} was never accepted (quoting {started['quote']})"
    return f"{started['digest']} was {stale_parts(trace, index)}"


def arose(seen: Seen, e: Event) -> bool:
    """At the end of a tick while the newsletter is ready and waiting (from its ready tick to
    the tick it starts, or the end of the run), the latest candidate or the latest accepted
    digest is not an accepted digest built from the current report: the weaker rules
    ("latest finished", "any accepted") would take a wrong digest. The gate reads the state
    at the end of a tick, since nothing after assessment in a tick writes candidates or
    acceptances (docs/model.md §5.3 b)."""
    t = e.tick
    before, s = seen.before(t), seen.state(t)
    if not any(t >= d.ready and (before is None or before.started[i] is None) for i, d in enumerate(s.setup.dependants)):
        return False  # none ready yet, or each started before this tick
    accepted = seen.accepted(t)
    latest = s.candidates[-1].digest if s.candidates else None
    # the latest acceptance: the latest verdict, of two in one tick the later assessed (written)
    latest_accepted = None
    if accepted:
        last = max(at for at, _ in accepted)
        latest_accepted = [c for at, c in accepted if at == last][-1].digest
    digests = {c.digest for _, c in accepted}
    for digest in (latest, latest_accepted):
        if digest is not None and (digest not in digests or seen.built(t, digest) != s.content):
            return True
    return False


#: with pins off and the fail-open gate, the rule current-accepted admits as any-accepted
PINS_OFF_FAIL_OPEN = Failure(
    settings=(("pins", Pins.OFF), ("gate", Gate.FAIL_OPEN)),
    reason="pins is off and the gate fails open",
    caveat="with pins off the rule has no version to compare, and the fail-open gate (the ninth knob) "
    "admits as any-accepted",
    remedies=("pins=on", "gate=fail-closed"),
)

def own_weaker_rule(switches: Switches) -> bool:
    """A workflow's dependant takes the artifact by a rule of its own other than
    current-accepted, or by its own fail-open gate with pins off (docs/workflows.md)."""
    for d in switches.dependants:
        if d.rule not in (None, "current-accepted"):
            return True
        if d.gate == "fail-open" and switches.pins is Pins.OFF:
            return True
    return False


#: a workflow's dependant with its own weaker rule is not held by the rule switch
OWN_WEAKER_RULE = Failure(
    settings=(),
    when=own_weaker_rule,
    reason="a dependant takes the artifact by its own weaker rule (a workflow's)",
    caveat="a dependant of the workflow declares its own rule (or fail-open gate), which the rule switch does not set",
    remedies=(),
)

PROPERTY: Property = register(Property(
    name="misused-dependant",
    temporal=ALWAYS,
    description="the newsletter started only on an accepted digest built from the then-current report",
    monitor=MONITOR,
    why=why,
    guard=GUARDS["rule"],
    unless=(PINS_OFF_FAIL_OPEN, OWN_WEAKER_RULE),
    hazard=Hazard("while the newsletter waited, a weaker rule would have taken a wrong digest", arose),
))  # fmt: skip
