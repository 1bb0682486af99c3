"""What the canonical form of a state keeps of each field (`sim.analysis.check.canon` applies it).

Every field of the state's records (`State`, `AttemptState`, and the records they hold:
`Candidate`, `Acceptance`, `Part`, `JournalRecord`, `Feed`) declares once, beside its
definition, as `Annotated[type, declaration]`, what the canonical form keeps of it and why
that cannot change a run's future or a verdict. `tests/test_canon.py` fails for a field
with no declaration, and checks each condition a field is dropped under.

The declarations:

- `Kept`: the value as it is.
- `Nested`: the value, with each record inside it by its own declarations.
- `Dropped`: history only (logged, or read only where it cannot change what happens next);
  `Fixed`: the same in every node of one search level.
- `AsContent`: a 0-based version index, kept as that version's content (a version is known
  by its content: contents only grow, so each version has its own).
- `Relative`: a tick, kept relative to the start of the current tick (None stays None).
- `IsSet`: only whether it is set (not None).
- `Before`: only whether it is set, and whether it is at or before another field's tick.
- `Form`: kept as a named form of `sim.analysis.check.canon` (`canon.FORMS`), for a field whose
  reason needs more than one of the above (an age capped at a bound, a window).
- `While`: kept (as `then`) only while `when` holds of its record, else as `otherwise`
  (dropped, unless said): the condition is named beside the field.

A record type is marked `@declared`, which refuses it at import if a field declares none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, get_type_hints


@dataclass(frozen=True, slots=True)
class Keep:
    """What the canonical form keeps of one field, and why that is enough."""

    why: str = ""


@dataclass(frozen=True, slots=True)
class Kept(Keep):
    pass


@dataclass(frozen=True, slots=True)
class Nested(Keep):
    pass


@dataclass(frozen=True, slots=True)
class Dropped(Keep):
    pass


@dataclass(frozen=True, slots=True)
class Fixed(Dropped):
    pass


@dataclass(frozen=True, slots=True)
class AsContent(Keep):
    pass


@dataclass(frozen=True, slots=True)
class Relative(Keep):
    pass


@dataclass(frozen=True, slots=True)
class IsSet(Keep):
    pass


@dataclass(frozen=True, slots=True)
class Before(Keep):
    #: the field (of the same record) whose tick it is compared with
    other: str = ""


@dataclass(frozen=True, slots=True)
class Form(Keep):
    #: the name of the form in `sim.analysis.check.canon.FORMS`
    name: str = ""


@dataclass(frozen=True, slots=True)
class While(Keep):
    #: the condition, a predicate of the record holding the field
    when: Callable[[Any], bool] = bool
    #: what is kept while it holds
    then: Keep = Kept()
    #: what is kept once it does not
    otherwise: Keep = Dropped()


KEPT = Kept()
NESTED = Nested()

R = TypeVar("R", bound=type)


def roles(cls: type) -> dict[str, list[Keep]]:
    """The declarations (`Annotated[type, Keep]`) each field of a record type carries, by name."""
    hints = get_type_hints(cls, include_extras=True)
    return {name: [m for m in getattr(hints[name], "__metadata__", ()) if isinstance(m, Keep)]
            for name in cls._fields}  # type: ignore[attr-defined]  # fmt: skip


def declarations(cls: type) -> dict[str, Keep]:
    """Each field's declaration, by name; a field without one is missing from the result."""
    return {name: found[0] for name, found in roles(cls).items() if found}


def declared(cls: R) -> R:
    """A record type whose every field declares what the canonical form keeps of it, once;
    any other is refused when its module is imported (TypeError)."""
    for name, found in roles(cls).items():
        if len(found) != 1:
            what = "does not declare" if not found else "declares more than once"
            raise TypeError(f"{cls.__name__}.{name} {what} what the canonical form keeps of it (sim/engine/keep.py)")
    return cls

__all__ = ["KEPT", "NESTED", "AsContent", "Before", "Dropped", "Fixed", "Form", "IsSet", "Keep", "Kept", "Nested",
           "Relative", "While", "declarations", "declared"]  # fmt: skip
