"""Knobs: settings of the system beyond the article's model (docs/outside.md).

A knob is like a switch (docs/model.md §4) but outside the 864-run sweep: its first value is
the article's own behaviour, so a run that leaves every knob alone is a run of the article's
model, and its reports, outcome and figures are exactly the article's. Each knob is one
`Knob` value declared in its own module of this package and registered there; everything else
(`--set`, scenario files, the engine's `Setup`, the renderers) reads the declaration.

A knob's values are spellings (strings), like a switch's. An integer knob (such as the feed's
key retention) lists its named values and allows whole numbers in `integers` as well.

`Knobs` is the value a run carries (in `sim.switches.Switches.knobs`): only the knobs set
away from their default, in registry order, so that a run at the article's settings carries
nothing and writes nothing (sweep.json's keys do not change).
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.errors import SwitchError
from sim.limits import quote


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


#: the registered knobs, by name, in registry order
KNOBS: dict[str, Knob] = {}


def register(knob: Knob) -> Knob:
    if knob.name in KNOBS:
        raise ValueError(f"a knob named {knob.name!r} is already registered")
    KNOBS[knob.name] = knob
    return knob


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
