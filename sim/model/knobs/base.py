"""Knobs: settings of the system beyond the article's model (docs/outside.md).

A knob is like a switch (docs/model.md §4) but outside the 864-run sweep: its first value is
the article's own behaviour, so a run that leaves every knob alone is a run of the article's
model, and its reports, outcome and figures are exactly the article's. Each knob is one
`Knob` value declared in its own module of this package and registered there; everything else
(`--set`, scenario files, the engine's `Setup`, the renderers) reads the declaration.

A knob's values are spellings (strings), like a switch's. An integer knob (such as the feed's
key retention) lists its named values and allows whole numbers in `integers` as well.

`Knobs` is the value a run carries (in `sim.model.switches.Switches.knobs`): only the knobs set
away from their default, in registry order, so that a run at the article's settings carries
nothing and writes nothing (sweep.json's keys do not change).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sim.base.errors import SwitchError
from sim.model.faults import Effect
from sim.base.limits import quote


@dataclass(frozen=True, slots=True)
class Inert:
    """When some of a knob's values have no effect, declared with the knob (`Knob.inert`), so
    that a command can tell a user who set one that the other settings make it inert.

    Either the values act only at a fault with one of `effects` (`sim.model.faults.Effect`, which
    each fault kind declares): they are inert in a run where no such fault can occur. Or they
    act only away from a switch setting, `switch` (name, value): they are inert in a run with
    that setting, and `does` says why, naming the setting. With `same_as` they are not inert
    as a whole but act exactly as that other value of the knob does (nothing of theirs
    beyond it)."""

    values: tuple[str, ...]
    effects: tuple[Effect, ...] = ()
    switch: tuple[str, str] | None = None
    does: str = ""
    same_as: str | None = None

    def __post_init__(self) -> None:
        if bool(self.effects) == (self.switch is not None) or (self.switch is not None and not self.does):
            raise ValueError("an Inert names fault effects, or a switch setting and why it makes the knob inert")

    def holds(self, settings: Mapping[str, str], effects: frozenset[Effect]) -> bool:
        """Whether a run with these settings (each switch's spelling) and fault effects makes it inert."""
        if self.switch is not None:
            name, value = self.switch
            return settings.get(name) == value
        return not effects.intersection(self.effects)


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a command's runs take their faults from, for a note on an inert knob: how the
    note names them ("enumerated", "drawn", "in the schedule") and what would bring in the
    other kinds ("add --faults all"; "" for nothing to add)."""

    source: str
    hint: str = ""


@dataclass(frozen=True, slots=True)
class Knob:
    """One knob: its name (as `--set` and a scenario's [switches] table spell it), its named
    values (the first is the article's behaviour, the default), the whole numbers it also
    allows (None: none), what it sets in words, and the case of docs/outside.md it serves
    (0: an engine behaviour, docs/profiles.md)."""

    name: str
    values: tuple[str, ...]
    words: str
    case: int
    integers: tuple[int, int] | None = None
    #: each named value in words (same order as `values`)
    meanings: tuple[str, ...] = ()
    #: when some of its values have no effect (see `Inert`)
    inert: tuple[Inert, ...] = ()

    def __post_init__(self) -> None:
        for rule in self.inert:
            unknown = [v for v in (*rule.values, *filter(None, [rule.same_as])) if v not in self.values]
            if unknown or self.default in rule.values:
                raise ValueError(f"knob {self.name!r}: an Inert names {unknown or [self.default]}")

    @property
    def default(self) -> str:
        return self.values[0]

    def allowed(self) -> str:
        named = ", ".join(self.values)
        if self.integers is None:
            return named
        lo, hi = self.integers
        return f"{named}, or a whole number {lo}..{hi:,}"

    def parse(self, value: object, source: str) -> str:
        """The spelling of `value` (a string, or an int for an integer knob), or a SwitchError."""
        if isinstance(value, str) and value in self.values:
            return value
        if self.integers is not None:
            number: int | None = None
            if isinstance(value, int) and not isinstance(value, bool):
                number = value
            elif isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 12:
                number = int(value)
            if number is not None and self.integers[0] <= number <= self.integers[1]:
                return str(number)
        raise SwitchError(f"{source}: knob {self.name!r} has no value {quote(value)}; allowed: {self.allowed()}")

    def number(self, value: str) -> int | None:
        """An integer knob's value as a number (None: one of its named values)."""
        return int(value) if value.isdigit() else None

    def inert_because(self, value: str, settings: Mapping[str, str], effects: frozenset[Effect],
                      scope: Scope) -> str | None:  # fmt: skip
        """Why `value` has no effect in a run with these settings (each switch's and knob's
        spelling) and the effects of its fault kinds, as a note's words; None when it may
        have one."""
        for rule in self.inert:
            if value not in rule.values or not rule.holds(settings, effects):
                continue
            why = rule.does
            if rule.switch is None:
                hint = f" ({scope.hint})" if scope.hint else ""
                why = f"no fault kind {scope.source} {' or '.join(e.value for e in rule.effects)}{hint}"
            beyond = "" if rule.same_as is None else f" beyond {self.name}={rule.same_as}"
            return f"{self.name}={value} has no effect{beyond}: {why}"
        return None


#: the registered knobs, by name, in registry order
KNOBS: dict[str, Knob] = {}


def inert_notes(runs: Sequence[tuple[Mapping[str, str], frozenset[Effect]]], scope: Scope) -> list[str]:
    """One note per knob set away from its default that has no effect in any of these runs
    (each: its settings, every switch's and knob's spelling, and the effects of the fault
    kinds it may have), saying why (the reason in the first run), in registry order."""
    if not runs:
        return []
    notes = []
    for name, knob in KNOBS.items():
        value = runs[0][0].get(name, knob.default)
        if value == knob.default or any(settings.get(name, knob.default) != value for settings, _ in runs):
            continue
        reasons = [knob.inert_because(value, settings, effects, scope) for settings, effects in runs]
        if all(reasons):
            notes.append(str(reasons[0]))
    return notes


def register(knob: Knob) -> Knob:
    if knob.name in KNOBS:
        raise ValueError(f"a knob named {knob.name!r} is already registered")
    KNOBS[knob.name] = knob
    return knob


def unregister(knob: Knob) -> None:
    """Take a knob out of the registry (a test's toy, registered around it)."""
    del KNOBS[knob.name]


@dataclass(frozen=True, slots=True)
class Knobs:
    """The knobs a run sets away from their defaults: (name, value) pairs in registry order."""

    pairs: tuple[tuple[str, str], ...] = ()

    def get(self, name: str) -> str:
        for key, value in self.pairs:
            if key == name:
                return value
        return KNOBS[name].default

    def with_values(self, values: dict[str, str]) -> Knobs:
        """A copy with these knobs set (spellings already parsed); defaults are dropped."""
        merged = dict(self.pairs)
        merged.update(values)
        return Knobs(tuple(
            (name, merged[name]) for name in KNOBS if name in merged and merged[name] != KNOBS[name].default
        ))  # fmt: skip

    def as_dict(self) -> dict[str, str]:
        return dict(self.pairs)

    def __bool__(self) -> bool:
        return bool(self.pairs)
