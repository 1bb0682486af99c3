"""The seam between fault kinds and the machinery that uses them.

A fault is something that happens *to* the work (docs/model.md §5 and §9). Each kind of fault
is one frozen dataclass in its own module of this package, subclassing `Fault` and
registered with `register`; it implements, in that one module, everything the rest of `sim`
needs to know about it:

- its data: the TOML key of its list in a scenario's `[schedule]` table, the fields of one
  entry (`entries`: each field's meaning and bounds, which the JSON Schema of scenario files,
  `sim schema`, shows an editor), how an entry is parsed, validated and written back
  (`parse`, `validate`, `dump`);
- its words: `describe` (the one wording used by check, explore and the renderers), the
  plural noun, the coverage labels;
- the engine: the `Moment` at which the engine asks whether it takes effect, the place it
  matches there (`where`) and the `directive` the engine then carries out; and why it did
  not take effect when it did not (`unfired`);
- `sim explore`: how it is drawn (`draw`), simplified while shrinking (`simpler`,
  `complexity`, `fit`), the one-fault schedules (`singles`) and how a trace shows it
  (`observe`);
- `sim check`: which faults of the kind it offers at a moment of a run (`offers`), the
  canonical order of its faults (`sort_key`) and the words for the bound (`bound_words`).

The engine only knows the moments and their directives (below); it never names a kind.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar, Protocol, TypeVar

from sim.base.errors import ScenarioError, ScheduleError
from sim.model.events import Event
from sim.base.limits import MAX_INT, MAX_LIST, quote

T = TypeVar("T")


class Setting(Protocol):
    """What a fault kind reads of the schedule it is in (a `sim.model.schedule.Schedule`)."""

    @property
    def sections(self) -> int: ...

    @property
    def horizon(self) -> int: ...

    @property
    def change_atoms(self) -> tuple[tuple[int, ...], ...]: ...

    def realizable(self, sections: tuple[int, ...]) -> bool: ...


#: what a fault kind reads to see itself in a run: a trace event of its kind `shown_by`, whose
#: payload it reads with `sim.model.events.payload`
Observed = Event


class Moment(Enum):
    """When the engine asks the schedule whether a fault takes effect, in the order a tick
    runs them (docs/model.md §5), with what a matching fault's `where` names and what its
    `directive` tells the engine to do. The directives below are the ones declared here; a
    kind that needs another declares it in its own module, and the moment's rule in
    `sim.engine.rules` carries it out (`rules.directed` refuses a directive of no type the
    rule reads, docs/extending.md)."""

    #: the input phase of tick t; where (t,); directive: a `NewContent` (sections get new
    #: content), a `Loss` (a store loses its records), a `Restart` (the controller goes down), a
    #: `Mutation` (a section's bytes change under its hash) or a `CodeChange` (the
    #: orchestration code's version increments)
    INPUT = 0
    #: attempt #n begins what it does at tick t; where (n, t); directive: a `Stall`, or an
    #: `Unheard` (its heartbeats stop reaching the controller while it works on)
    ACT = 1
    #: attempt #n makes the model call of step s (1-based; each attempt computes a step at
    #: most once); where (n, s); directive: `WRONG` (the summary is wrong in content, right in
    #: form)
    CALL = 2
    #: the run's nth post action begins (a poster fenced at its intent is not one); where
    #: (nth,); directive: the `PostPoint` it dies at,
    #: or a `Hold` (it falls silent between its intent and its send)
    POST = 3
    #: the run's nth send begins; where (nth,); directive: `Copies` (how many copies of the
    #: request reach the feed)
    SEND = 4


class Effect(Enum):
    """What a fault does to a run, as a declaration outside this package names it: a knob
    whose values act only at such a fault (`sim.model.knobs.Inert`), a property that only such a
    fault can break (`sim.properties.Property.reached`). Each kind declares its effects
    (`Fault.effects`), so those declarations never name a kind, and a new kind with the
    same effect is covered by them as it is registered. The value is the effect in words,
    after "a fault kind that"."""

    CHANGES_REPORT = "changes the report"
    CHANGES_CODE = "changes the code"
    RESTARTS_CONTROLLER = "restarts the controller"
    MUTATES_SNAPSHOT = "changes a section's bytes under its hash"
    WRONG_SUMMARY = "makes a model call return a wrong summary"


def effects_of(kinds: Iterable[type[Fault]]) -> frozenset[Effect]:
    """Every effect of these fault kinds."""
    return frozenset(effect for kind in kinds for effect in kind.effects)


class PostPoint(Enum):
    """Where in its post a poster stops (the effect lifecycle, docs/model.md §3)."""

    BEFORE_INTENT = "before-intent"
    AFTER_INTENT = "after-intent"
    AFTER_SEND = "after-send"


@dataclass(frozen=True, slots=True)
class Stall:
    """The ACT directive: the attempt heartbeats, begins its action and falls silent until
    `wake` (None: it never resumes, a crash)."""

    wake: int | None


@dataclass(frozen=True, slots=True)
class Unheard:
    """An ACT directive: the attempt keeps working, but for `ticks` ticks from now its
    heartbeats do not reach the controller (a slow heartbeat path, or a clock outside its
    assumed bound)."""

    ticks: int


@dataclass(frozen=True, slots=True)
class NewContent:
    """An INPUT directive: the report changes at the start of the tick, its `sections`
    (1-based) getting new content."""

    sections: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Copies:
    """The SEND directive: `copies` concurrent copies of the request reach the feed, which
    receives them one after the other (docs/model.md §2)."""

    copies: int


@dataclass(frozen=True, slots=True)
class Loss:
    """An INPUT directive: a store loses every record it holds ("journal", "acceptances" or
    "effects"), at the start of the tick."""

    store: str


@dataclass(frozen=True, slots=True)
class Mutation:
    """An INPUT directive: the bytes of `section` (1-based) in the current report change in
    place, at the start of the tick, while its content hash (and so its version) stays."""

    section: int


@dataclass(frozen=True, slots=True)
class CodeChange:
    """An INPUT directive: the orchestration code's version increments at the start of the
    tick (a deploy under running work)."""


@dataclass(frozen=True, slots=True)
class Wrong:
    """The CALL directive: the model call returns a summary that is wrong in content and
    right in form (a fallible model that an assessor of form cannot catch)."""


#: the one `Wrong` directive
WRONG = Wrong()


@dataclass(frozen=True, slots=True)
class Restart:
    """An INPUT directive: the controller crashes at the start of the tick and restarts
    `down` ticks later, in its own phase of that tick; until then its phase does nothing."""

    down: int


@dataclass(frozen=True, slots=True)
class Hold:
    """A POST directive: the poster records its intent, then falls silent for `ticks` ticks
    before it sends (a worker paused inside the effect); it sends when it wakes."""

    ticks: int


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What a run did, for saying why a fault never took effect."""

    admitted: int
    posts: int
    sends: int
    last_tick: int


class Choices(Protocol):
    """Where `sim explore` gets its decisions. Each shrinks toward its first/lowest value."""

    def integer(self, lo: int, hi: int) -> int: ...

    def pick(self, options: Sequence[T]) -> T: ...

    def flip(self, p: float) -> bool: ...


def toward(target: int, lo: int, hi: int) -> tuple[int, ...]:
    """lo..hi ordered by distance from `target` (ties: the lower first): shrinks to `target`."""
    return tuple(sorted(range(lo, hi + 1), key=lambda v: (abs(v - target), v)))


class Bounds(Protocol):
    """What `sim explore` lets a drawn fault name (its `ExploreBounds`, docs/explore.md)."""

    @property
    def last_tick(self) -> int: ...  # faults take effect at ticks 0..last_tick

    @property
    def attempts(self) -> int: ...  # faults that name an attempt name #1..#attempts

    @property
    def max_pause(self) -> int: ...  # a pause lasts 1..max_pause ticks

    @property
    def max_nth(self) -> int: ...  # faults that name the nth post or send name one of the first max_nth

    @property
    def example(self) -> Setting: ...  # the setting a drawn schedule keeps (a workflow's, or the article's)


#: chance that a fault's tick is drawn from the whole range rather than near its earliest tick
FAR_TICK = 0.25
NEAR_TICKS = 12


def draw_tick(c: Choices, lo: int, bounds: Bounds) -> int:
    """A tick from `lo` on: mostly within NEAR_TICKS of it, where a run does most of its
    work, sometimes anywhere up to the last tick."""
    hi = max(lo, bounds.last_tick)
    if c.flip(FAR_TICK):
        return c.integer(lo, hi)
    return c.integer(lo, min(hi, lo + NEAR_TICKS))


def lower(value: int, floor: int) -> list[int]:
    """Smaller values to try for `value` while shrinking, boldest first."""
    out: list[int] = []
    for v in (floor, (floor + value) // 2, value - 1):
        if floor <= v < value and v not in out:
            out.append(v)
    return out


def integer_field(item: dict[str, Any], name: str, where: str, default: int | None = None,
                  required: bool = True) -> int | None:  # fmt: skip
    """An integer field of a schedule entry, with the scenario loader's messages."""
    if name not in item:
        if required and default is None:
            raise ScenarioError(f"{where}.{name}: missing (an integer tick or number)")
        return default
    value = item[name]
    if not isinstance(value, int) or isinstance(value, bool):
        raise ScenarioError(f"{where}.{name}: expected an integer, got {quote(value)}")
    if abs(value) > MAX_INT:
        raise ScenarioError(f"{where}.{name}: {quote(value)} is out of range; allowed: integers up to {MAX_INT:,}")
    return value


@dataclass(frozen=True, slots=True)
class Entry:
    """One field of a fault kind's entry in a scenario's `[schedule]` list, declared with the
    kind (`Fault.entries`): what it means (`doc`, an editor's help on hover), whether the
    loader requires it (`required`, as `parse` reads it: `integer_field(..., required=...)`),
    and its form: an integer `lo..hi`, a list of distinct integers `lo..hi`, at least one
    (`many`), or one of `choices` (spellings). `lo` and `hi` are the bounds every schedule
    holds the field to whatever its other fields and constants say (a tick is never negative,
    attempts start at #1, a wake comes by the horizon, so by MAX_HORIZON); a bound that
    depends on another value (a wake after its own silence, a section within `sections`) is
    the kind's `validate`, which the schema cannot express. `sim schema` builds the JSON
    Schema of scenario files from these; tests/test_schema.py checks both ends of every
    bound against the loader."""

    doc: str
    required: bool = False
    lo: int = -MAX_INT
    hi: int = MAX_INT
    many: bool = False
    choices: tuple[str, ...] = ()


class Fault(ABC):
    """A fault value: one entry of a schedule. See the module docstring for the protocol."""

    __slots__ = ()

    #: the key of its list in a scenario's [schedule] table, and the fields of one entry: its
    #: `entries` (each field's meaning and bounds), whose names are `fields`
    key: ClassVar[str]
    entries: ClassVar[dict[str, Entry]] = {}
    fields: ClassVar[tuple[str, ...]]
    #: at most this many faults of the kind in one schedule
    most: ClassVar[int] = MAX_LIST
    #: the kind in words, plural ("silences"), and its name in `sim check`'s bound
    plural: ClassVar[str]
    check_name: ClassVar[str]
    #: when the engine consults it
    moment: ClassVar[Moment]
    #: the labels `sim explore`'s coverage table counts it under, in table order
    coverage_labels: ClassVar[tuple[str, ...]]
    #: the kind of trace event (its `Kind` value) that shows a fault of this kind took effect
    shown_by: ClassVar[str]
    #: one of the article's own faults (`--faults article`, the default); the kinds beyond
    #: the article's model join `sim explore` and `sim check` only with `--faults all`
    article: ClassVar[bool] = True
    #: the case of docs/outside.md (the article's failures outside its model) the kind runs,
    #: if any (`sim.model.cases` lists each case with the kinds and knobs that name it)
    case: ClassVar[int | None] = None
    #: what it does to a run, as knobs and properties name it (`Effect`)
    effects: ClassVar[frozenset[Effect]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A kind that declares its `entries` has them as its `fields`, in their order."""
        super().__init_subclass__(**kwargs)
        if "entries" in cls.__dict__:
            cls.fields = tuple(cls.entries)

    # -- the data ----------------------------------------------------------------------
    @classmethod
    @abstractmethod
    def parse(cls, item: dict[str, Any], where: str) -> Fault:
        """One entry of the kind's list; `where` prefixes every error (file: key path)."""

    @abstractmethod
    def dump(self) -> str:
        """The entry as a TOML inline table."""

    @classmethod
    def validate(cls, faults: Sequence[Any], schedule: Setting) -> None:
        """Raise a ScheduleError naming the first fault of this kind that cannot happen."""

    @abstractmethod
    def sort_key(self) -> tuple[Any, ...]:
        """The canonical order of the kind's faults (in a schedule and in `sim check`)."""

    @abstractmethod
    def describe(self) -> str:
        """The fault in words."""

    # -- the engine --------------------------------------------------------------------
    @abstractmethod
    def where(self) -> tuple[int, ...]:
        """Where it matches at its moment (see `Moment`)."""

    @abstractmethod
    def directive(self) -> object:
        """What the engine does when it matches (see `Moment`)."""

    @abstractmethod
    def unfired(self, facts: RunFacts) -> str:
        """Why it never took effect in a run that did `facts`."""

    # -- sim explore -------------------------------------------------------------------
    @classmethod
    @abstractmethod
    def draw(cls, c: Choices, bounds: Bounds, sections: int, drawn: Sequence[Fault]) -> Fault | None:
        """One fault of the kind, or None when it cannot join the ones `drawn` so far."""

    @abstractmethod
    def simpler(self, sections: int) -> Iterator[Fault]:
        """Simpler versions of this fault, simplest first (some may be invalid)."""

    def fit(self, sections: int) -> Fault:
        """This fault in a report of only `sections` sections."""
        return self

    @abstractmethod
    def complexity(self) -> tuple[int, int]:
        """(how late it is, everything else): how far it is from the simplest fault."""

    @classmethod
    @abstractmethod
    def singles(cls, bounds: Bounds, sections: int) -> Iterator[Fault]:
        """Every fault of the kind within `bounds`, for the one-fault schedules."""

    @classmethod
    @abstractmethod
    def observe(cls, event: Observed) -> tuple[str, int, int] | None:
        """For an event of kind `shown_by`: (coverage label, tick, last tick it affects),
        or None when the event does not show a fault."""

    # -- sim check ---------------------------------------------------------------------
    @classmethod
    @abstractmethod
    def offers(cls, code: Sequence[Fault], tick: int, where: tuple[int, ...], horizon: int,
               schedule: Setting) -> list[Fault]:  # fmt: skip
        """The faults of the kind a schedule `code` can add at this moment of its run (at
        `tick`, the place `where`)."""

    @classmethod
    @abstractmethod
    def bound_words(cls, horizon: int, schedule: Setting) -> str:
        """What `sim check` enumerates of the kind, in words."""

    @classmethod
    def too_many_offers(cls, schedule: Setting) -> str | None:
        """Why `sim check` cannot enumerate the kind's offers for this setting (None: it can):
        a kind whose offers grow faster than the setting says so, before any search."""
        return None

    def restricts_until(self) -> int | None:
        """The last tick at which this fault, once it has taken effect, can still change what
        `offers` gives (None: never after its own moment). `sim check`'s search keeps a fault
        in its nodes until then, so that `offers` sees it as it sees a whole schedule."""
        return None


class AtTick(Fault):
    """A fault of the INPUT moment: it takes effect at the start of tick `at` (a report change,
    a storage loss, a snapshot mutation, a code change, a controller crash). Its place is the
    tick; `unfired_words` names it in the reason it never took effect."""

    __slots__ = ()
    at: int
    unfired_words: ClassVar[str]

    def where(self) -> tuple[int]:
        return (self.at,)

    def unfired(self, facts: RunFacts) -> str:
        return f"{self.unfired_words} at t{self.at}: the run ended at t{facts.last_tick}"

    @classmethod
    def check_ticks(cls, faults: Sequence[AtTick], plural: str | None = None) -> None:
        """No negative tick; with `plural` (the faults in words), at most one per tick."""
        for f in faults:
            if f.at < 0:
                raise ScheduleError(f"{cls.key}: negative tick {f.at}")
        if plural is not None and len({f.at for f in faults}) != len(faults):
            raise ScheduleError(f"{cls.key}: two {plural} at one tick")


#: the registered fault kinds, in their order in scenario files and in `sim explore`'s draw
KINDS: list[type[Fault]] = []


def register(kind: type[Fault]) -> type[Fault]:
    """Add a fault kind to the registry (a class decorator); its key must be new."""
    if any(k.key == kind.key for k in KINDS):
        raise ValueError(f"a fault kind with key {kind.key!r} is already registered")
    KINDS.append(kind)
    return kind


def unregister(kind: type[Fault]) -> None:
    KINDS.remove(kind)


#: the fault sets `--faults` names: the article's own kinds, or every registered kind
FAULT_SETS = ("article", "all")


def selected(faults: str) -> tuple[type[Fault], ...]:
    """The registered kinds in a fault set, in registry order."""
    if faults not in FAULT_SETS:
        raise ValueError(f"--faults: {faults!r} is not a fault set; allowed: {', '.join(FAULT_SETS)}")
    return tuple(kind for kind in KINDS if faults == "all" or kind.article)


def by_key(key: str) -> type[Fault] | None:
    for kind in KINDS:
        if kind.key == key:
            return kind
    return None


def canonical(faults: Sequence[Fault]) -> tuple[Fault, ...]:
    """Faults in their canonical order: by kind (registry order), then the kind's own order."""
    rank = {kind: i for i, kind in enumerate(KINDS)}
    return tuple(sorted(faults, key=lambda f: (rank[type(f)], f.sort_key())))


def check_order(fault: Fault) -> tuple[Any, ...]:
    """The order `sim check` lists faults in: by the moment they are consulted, then kind."""
    kind = type(fault)
    # `_value_`, the same as `.value` without its descriptor's two interpreted calls (the search
    # orders the faults of every transition that chose one)
    return (kind.moment._value_, KINDS.index(kind), *fault.sort_key())


def describe(faults: Sequence[Fault], none: str = "no fault at all") -> str:
    """Faults in words, joined; `none` when there are none."""
    return "; ".join(f.describe() for f in faults) or none
