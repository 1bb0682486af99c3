"""faithful-digest (always, beyond the article's model): every part of an accepted digest is
what a correct, from-scratch model call would produce from the input its journal key names,
under the code in force when the digest is accepted.

Judged per part, from the ground truth the engine logs with an acceptance when anything
beyond the article's model is in play (`accepted.truth`, `accepted.code`): a part breaks it
when the bytes it read were not the bytes its key's hash names (a snapshot mutated after
hashing), when it read a section its key does not name and that section's content then was
not the content current at the acceptance (an undeclared input), when its model call was
wrong (a fallible model that an assessor of form accepts), or when it was computed under
other code than the code in force. A digest mixing report versions whose every part is
correct for its own key holds it: that is wrong-acceptance's business. In the article's
model every part is plain and the code never changes, so it cannot break there
(docs/outside.md, cases 5, 6 and 8).

No single protection guards it: the knobs `assessor=figures` (a wrong summary),
`journal_code=yes` (a successor of newer code) and `reads=next-section-keyed` (a declared
read) each hold one of its causes; nothing in the model holds a mutated snapshot.
"""

from __future__ import annotations

from typing import Any

from sim.model.events import Accepted, PartTruth, payload
from sim.model.faults import Effect
from sim.properties.base import ALWAYS, Hazard, Memo, Monitor, Property, Seen, register
from sim.model.switches import Switches
from sim.engine.trace import Event, Kind, Trace

#: the faults that make a part unfaithful under any settings: bytes changed under their hash
#: (case 5), a wrong summary (case 6), code changed under running work (case 8)
CAUSES = frozenset({Effect.MUTATES_SNAPSHOT, Effect.WRONG_SUMMARY, Effect.CHANGES_CODE})


def reached(switches: Switches, effects: frozenset[Effect]) -> bool:
    """Whether a schedule of faults with these effects can break it: one of `CAUSES`, or,
    when a step also reads the next section (the knob `reads`, case 5), a report change,
    which leaves a part built from a section that is no longer current. (With
    `reads=next-section-keyed` and pins on the key names that section too, so a change makes
    the step computed again; it is judged there all the same: judging a property that cannot
    break costs nothing.)"""
    if effects & CAUSES:
        return True
    return switches.knob("reads") != "declared" and Effect.CHANGES_REPORT in effects


def flaws(part: PartTruth, code: int, content: tuple[int, ...]) -> list[str]:
    """What makes one part (an `accepted.truth` entry) unfaithful, in words (empty: none)."""
    step, changed, also, wrong, made = part
    out = []
    if changed:
        out.append(f"s{step} read bytes its hash does not name")
    for section, rev, bytes_changed in also:
        if bytes_changed:
            out.append(f"s{step} also read section {section}'s changed bytes")
        elif section <= len(content) and rev != content[section - 1]:
            out.append(f"s{step} also read section {section} at rev {rev}, not the current rev {content[section - 1]}")
    if wrong:
        out.append(f"s{step} is a wrong summary")
    if made != code:
        out.append(f"s{step} was computed under code v{made}, code v{code} is in force")
    return out


def unfaithful(e: Event, content: tuple[int, ...]) -> list[str]:
    accepted = payload(e, Accepted)
    truth, code = accepted.get("truth"), accepted.get("code")
    if truth is None or code is None:  # the article's model: every part plain, the first code
        return []
    return [flaw for part in truth for flaw in flaws(part, code, content)]


def step(memo: Memo, e: Event, content: tuple[int, ...], position: int) -> tuple[Memo, bool]:
    """An acceptance of a digest with an unfaithful part breaks it."""
    return memo, bool(unfaithful(e, content))


MONITOR = Monitor(frozenset({Kind.ACCEPTED}), step)


def why(trace: Trace, index: int) -> str:
    e = trace.events[index]
    return f"{payload(e, Accepted)['digest']} was accepted although " + "; ".join(unfaithful(e, trace.content_at(e.tick)))


def arose(seen: Seen, e: Event) -> bool:
    """A digest whose parts' ground truth was not the article's plain case was accepted."""
    return "truth" in payload(e, Accepted)


PROPERTY = register(Property(
    name="faithful-digest",
    temporal=ALWAYS,
    description=(
        "every part of an accepted digest is what a correct, from-scratch model call makes of the input "
        "its journal key names, under the code in force at the acceptance"
    ),
    monitor=MONITOR,
    why=why,
    hazard=Hazard("a digest was accepted whose parts read or ran under more than their keys name", arose,
                  frozenset({Kind.ACCEPTED})),
    article=False,
    reached=reached,
))  # fmt: skip
