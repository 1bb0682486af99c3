"""The eight switches of the worked example (and the ninth knob), as closed sets.

docs/model.md §4 defines the switches; §8 fixes their spelling. The first value of
each switch is the worked example's. `COMBINATIONS` is the 864-run order used by the sweep:
the product of the switches in the order of the table of docs/model.md §4, first value first, so run ids
stay stable as long as the switch set does not change.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterator

from sim.base.errors import SwitchError
from sim.model.knobs import KNOBS, Knobs
from sim.base.limits import quote


class Silent(Enum):
    """What happens to attempt #1, silent at t3 as it starts step 3: paused, it wakes at t8;
    crashed, it never does."""

    PAUSED = "paused"
    CRASHED = "crashed"


class Fencing(Enum):
    """Whether the protected stores check owner tokens (fencing tokens): on, a write by a
    replaced owner is refused."""

    ON = "on"
    OFF = "off"


class Checkpoints(Enum):
    """When a step's journal record is written: per-step, as soon as the step is computed;
    end-only, all of an attempt's step records at assembly, with its candidate."""

    PER_STEP = "per-step"
    END_ONLY = "end-only"


class Change(Enum):
    """When the report is corrected (v1 to v2, section 2): during the outage (t4), never, or
    after acceptance (t12)."""

    DURING = "during"
    NEVER = "never"
    AFTER = "after"


class Pins(Enum):
    """Version pins: on, each attempt reads a frozen copy of its pinned version, journal
    keys include section hashes and every acceptance records its version; off, no hashes
    anywhere."""

    ON = "on"
    OFF = "off"


class Rule(Enum):
    """The newsletter rule, which digest the newsletter takes: the one accepted for the
    current version, the most recent acceptance, or the most recent candidate whatever its
    verdict."""

    CURRENT_ACCEPTED = "current-accepted"
    ANY_ACCEPTED = "any-accepted"
    LATEST_FINISHED = "latest-finished"


class PostDeath(Enum):
    """Whether the first post action is cut off after its send, before the feed's answer is
    written down."""

    YES = "yes"
    NO = "no"


class Key(Enum):
    """The post's idempotency key: per-operation (the digest and the announce operation:
    every retry carries the same key), per-attempt (from the attempt number), or none (the
    feed cannot spot a repeat)."""

    PER_OPERATION = "per-operation"
    PER_ATTEMPT = "per-attempt"
    NONE = "none"


class Gate(Enum):
    """The newsletter's gate where the current-accepted rule has no versions to compare (pins
    off; the ninth knob, outside the 864): fail-open admits anyway, fail-closed keeps waiting"""

    FAIL_OPEN = "fail-open"
    FAIL_CLOSED = "fail-closed"


#: switch name -> its Enum, in the order of docs/model.md §8; `gate` (the ninth knob) last.
SWITCHES: dict[str, type[Enum]] = {
    "silent": Silent,
    "fencing": Fencing,
    "checkpoints": Checkpoints,
    "change": Change,
    "pins": Pins,
    "rule": Rule,
    "post_death": PostDeath,
    "key": Key,
    "gate": Gate,
}

#: the eight switches the sweep varies (the gate stays at fail-open, as in the article).
SWEPT = tuple(name for name in SWITCHES if name != "gate")

#: the four protections and the value that turns each one on.
PROTECTIONS: dict[str, Enum] = {
    "fencing": Fencing.ON,
    "pins": Pins.ON,
    "key": Key.PER_OPERATION,
    "rule": Rule.CURRENT_ACCEPTED,
}

#: the six single weakenings of an all-on run: each turns exactly one protection off.
WEAKENINGS: tuple[tuple[str, str], ...] = (
    ("fencing", "off"),
    ("pins", "off"),
    ("key", "per-attempt"),
    ("key", "none"),
    ("rule", "any-accepted"),
    ("rule", "latest-finished"),
)

#: the switches that set the worked example's faults: what happens to the work, not what
#: protects it (the sweep's "event" switches).
FAULT_SWITCHES = ("silent", "change", "post_death")


#: what a receiver does with a repeated request: deduplicates by key, applies every request
#: (and cannot be asked), or applies every request and answers "did you apply this?"
RECEIVER_KINDS = ("dedup", "no-key", "read-back")


@dataclass(frozen=True, slots=True)
class Receiver:
    """One external effect and its receiver's behaviour (a workflow's `[[effects]]`; the
    article's one announcement is `Receiver("announce")`, its feed set by the knobs)."""

    name: str
    kind: str = "dedup"
    retention: int | None = None  # for "dedup": ticks it remembers a key (None: for ever)
    correction: bool = False  # a successor's resend of an inherited send retracts earlier copies


@dataclass(frozen=True, slots=True)
class Reader:
    """One dependant of the accepted artifact (a workflow's `[[dependants]]`; the article's
    newsletter): the tick it may start from (the first dependant's is the schedule's
    `newsletter_ready`, which `sim explore` draws), and its rule and gate (None: the switches')."""

    name: str
    ready: int
    rule: str | None = None  # a `sim.model.switches.Rule` value
    gate: str | None = None  # a `sim.model.switches.Gate` value



@dataclass(frozen=True, slots=True)
class Switches:
    silent: Silent = Silent.PAUSED
    fencing: Fencing = Fencing.ON
    checkpoints: Checkpoints = Checkpoints.PER_STEP
    change: Change = Change.DURING
    pins: Pins = Pins.ON
    rule: Rule = Rule.CURRENT_ACCEPTED
    post_death: PostDeath = PostDeath.YES
    key: Key = Key.PER_OPERATION
    gate: Gate = Gate.FAIL_OPEN
    #: the knobs beyond the article's model set away from their defaults (`sim.model.knobs`)
    knobs: Knobs = Knobs()
    #: a workflow's effects, each with its receiver, and its dependants (`--workflow`,
    #: `sim.model.workflow.on_workflow`): not switches, but what the switches act on; () for
    #: the article's one announcement (its feed as the knobs say) and its newsletter
    effects: tuple[Receiver, ...] = ()
    dependants: tuple[Reader, ...] = ()

    def as_dict(self) -> dict[str, str]:
        """Switch name -> value spelling, in the order of docs/model.md §8, then each knob
        set away from its default (none in the article's runs)."""
        out = {name: getattr(self, name)._value_ for name in SWITCHES}  # _value_: the value without enum's descriptor
        out.update(self.knobs.as_dict())
        return out

    def knob(self, name: str) -> str:
        """A knob's value (its default unless set)."""
        return self.knobs.get(name)

    def with_values(self, values: dict[str, Any], source: str = "--set") -> Switches:
        """A copy with some switches or knobs set from their spellings; unknown names or
        values raise."""
        changes: dict[str, Any] = {}
        knobs: dict[str, str] = {}
        for name, value in values.items():
            parsed = parse_value(name, value, source)
            if name in KNOBS:
                knobs[name] = parsed
            else:
                changes[name] = parsed
        if knobs:
            changes["knobs"] = self.knobs.with_values(knobs)
        return dataclasses.replace(self, **changes)

    def protections_on(self) -> tuple[str, ...]:
        return tuple(name for name, on in PROTECTIONS.items() if getattr(self, name) is on)

    def label(self) -> str:
        """`name=value` pairs for every switch that differs from the worked example."""
        default = Switches()
        return " ".join(
            [f"{name}={getattr(self, name).value}" for name in SWITCHES if getattr(self, name) is not getattr(default, name)]
            + [f"{name}={value}" for name, value in self.knobs.pairs]
        )

    def set_args(self) -> str:
        """The `--set` arguments that reproduce these switches from the worked example."""
        return " ".join(f"--set {pair}" for pair in self.label().split())


def parse_value(name: str, value: object, source: str) -> Any:
    """The Enum member named by `value` for switch `name` (for a knob, its spelling), or a
    SwitchError naming both."""
    knob = KNOBS.get(name)
    if knob is not None:
        return knob.parse(value, source)
    enum = SWITCHES.get(name)
    if enum is None:
        raise SwitchError(
            f"{source}: unknown switch {quote(name)}; switches are: {', '.join(SWITCHES)}"
            + (f"; knobs: {', '.join(KNOBS)}" if KNOBS else "")
        )
    try:
        return enum(value)  # the member by its value (an unhashable value is compared with each)
    except ValueError:
        pass
    allowed = ", ".join(m.value for m in enum)
    raise SwitchError(f"{source}: switch {name!r} has no value {quote(value)}; allowed: {allowed}")


def parse_assignments(pairs: tuple[str, ...] | list[str], source: str = "--set") -> dict[str, str]:
    """Split `name=value` strings; a pair without `=`, or a name given twice with two
    different values (`--set fencing=off --set fencing=on`: which one was meant?), raises a
    SwitchError. The same value twice is taken once."""
    out: dict[str, str] = {}
    parsed: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise SwitchError(f"{source}: expected name=value, got {quote(pair)}")
        name = name.strip()
        meant = parse_value(name, value.strip(), source)
        if name in parsed and parsed[name] != meant:
            raise SwitchError(f"{source}: {name} is given twice, as {quote(out[name])} and {quote(value.strip())}; "
                              "allowed: one value for each name")  # fmt: skip
        parsed[name] = meant
        out[name] = value.strip()
    return out


def for_own_schedules(values: dict[str, str], command: str) -> Switches:
    """Switches for a command that makes its own fault schedules (`sim explore`, `sim check`).

    `silent`, `change` and `post_death` only describe the worked example's fixed faults,
    which such a command replaces, so setting one of them is refused rather than ignored.
    """
    for name in values:
        if name in FAULT_SWITCHES:
            allowed = ", ".join(n for n in SWITCHES if n not in FAULT_SWITCHES)
            raise SwitchError(
                f"--set {name}: sim {command} makes its own fault schedules, so "
                f"{', '.join(FAULT_SWITCHES)} do not apply; set only {allowed}"
            )
    return Switches().with_values(values)


def combinations() -> Iterator[Switches]:
    """The 864 combinations of the eight swept switches, in the fixed sweep order."""
    enums = [SWITCHES[name] for name in SWEPT]
    for values in itertools.product(*enums):
        named: dict[str, Any] = dict(zip(SWEPT, values, strict=True))
        yield Switches(**named)


#: the 864 combinations, built when first asked for (`__getattr__`), not at import: a command
#: that does not sweep does not pay for them
COMBINATIONS: tuple[Switches, ...]


def __getattr__(name: str) -> tuple[Switches, ...]:
    if name != "COMBINATIONS":
        raise AttributeError(f"module 'sim.model.switches' has no attribute {name!r}")
    built = globals()["COMBINATIONS"] = tuple(combinations())
    return built
