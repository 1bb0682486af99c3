"""The state of one run as one immutable, hashable value (docs/model.md §2 and §3).

Layout. A `State` is a NamedTuple of plain values (ints, strings, enums, None, tuples of
them and the frozen `Setup`); two runs in the same situation have equal states with equal
hashes. `tick` is its last field (`rules.end_of_tick` replaces it every tick); the groups
below are by meaning, not field order. Nothing in it
points at anything else: an attempt is named by its number (#n is `attempts[n - 1]`), a
candidate by its digest id (`Candidate.digest`), so identity is never data.

- `setup`: what the switches and the schedule fix for the whole run (`Setup`).
- the report: `versions` (the content revision of each section, by version), `version`
  (0-based index of the current one; `content` is its content), `last_change`.
- the records: `epoch` (the one authoritative token), `journal` ((key, record) pairs in first
  write order, a later write of a key replacing its record in place), `candidates` (in write
  order), `acceptances`, `effects` ((record key, "intent" | "confirmed") pairs: the digest id
  for the first effect, `records.effect_key` for each), `feeds` (one `records.Feed` per
  receiver; `feed` is the first), `last_acceptance`.
- beyond the article's model (docs/outside.md, cases 5 and 8): `code` (the orchestration
  code's version in force, 0-based) and `mutated` ((section, content revision) pairs whose
  bytes changed under their hash, sorted).
- the fault moments' counters: `posts` (post actions begun), `sends` (sends begun). The
  schedule's faults are matched against these values (docs/model.md §9).
- the attempts: one `AttemptState` each, in attempt order.
- the controller: `owner` (an attempt number), `assessed` (candidates assessed, in write order),
  `started` (each dependant's digest id once the gate let it start; `newsletter` is the first); beyond the article's model (`sim.model.faults.restart`),
  `down` (while the controller is down, the tick it restarts at) and `outage` (its latest
  outage, (crash tick, restart tick): what its memory of heartbeats depends on).
- the tallies of what happened, which no rule reads (`TALLY`, for the outcome's figures and the
  pages): `restored` (steps restored), `stale_refused` and `stale_applied` (a superseded
  attempt's protected writes), and each attempt's `calls` (its model calls).
- run bookkeeping: `tick` (the tick the controller acts next: every actor has acted in every
  tick before it), `finished`, `last_tick`, `horizon_reached`.

The rules that change a state are the step functions of `sim.engine.rules`; the trace's
events are not part of the state (a step returns the events it logs).

A field is declared once, in its record's class: its type, what the canonical form keeps of
it (`Annotated[type, Keep]`, `sim.engine.keep`; a record with a field that declares none is
refused at import) and, for `State`, its value at t0 as its default (a constant, or
`initially(f)`, f of the run's `Setup`). Everything else is derived from the fields:
`initial_state` (`initial`), the rules' working copies (`working_source` writes them out as
`sim.engine.working`'s `WorkingState` and `WorkingAttemptState`, which `rules.Draft` and
`rules.Worker` extend) and the canonical form
(`sim.analysis.check.canon`). An attempt's values at admission are the admission rule's
(`rules.admit`, by name); an `AttemptState` field with a default needs nothing there.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Annotated, Any, NamedTuple, TypeVar

from sim.engine import primitives, records
from sim.engine.keep import KEPT, NESTED, AsContent, Before, Dropped, Fixed, Form, IsSet, Relative, While, declared
from sim.engine.records import (
    Acceptance,
    Candidate,
    Feed,
    JournalKey,
    JournalRecord,
    Part,
)
from sim.model.faults import Moment
# defined there to be compiled with the rules (docs/compiled.md), and read here as before
from sim.engine.primitives import Status as Status, alive as alive, heard_of as heard_of
from sim.engine.setup import Dependant as Dependant, Setup as Setup
from sim.model.knobs import KNOBS
from sim.model.schedule import Schedule
from sim.model.switches import Checkpoints, Fencing, Gate, Key, Pins, Reader, Receiver, Rule, Switches


# what an attempt is doing in its program (docs/model.md §5.4)
STEPS, ASSEMBLE, WAIT, POST = "steps", "assemble", "wait", "post"

#: an action an attempt began as it fell silent, finished when it wakes:
#: ("compute", the computed part), ("assemble", None), ("post", None) or ("send", None)
#: (a poster paused between its intent and its send)
Held = tuple[str, Part | None]


#: a count of what happened, kept for the readers of a run (the outcome's figures, the pages)
#: and never read by the rules: two states that differ only in it have the same future
TALLY = Dropped("a tally of what happened for the readers (`sim.properties.outcome`, `sim.render.shown`); no rule reads it")

#: what an attempt whose program has ended no longer needs: its program reads it, and nothing else
WORKING = While(why="read by its own program only", when=alive)


@declared
class AttemptState(NamedTuple):
    """One admitted attempt, as a value. Each field declares what the canonical form keeps
    of it (`sim.engine.keep`), at the start of a tick. Its values at admission are the
    admission rule's (`rules.admit`, by name); a field with a default needs nothing there."""

    n: Annotated[int, Dropped("its position in `attempts` names it")]  # its attempt number
    token: Annotated[int, WORKING]
    #: the 0-based version it is pinned to (None: pins off)
    pin: Annotated[int | None, While("read by its program, and by `canon.readable`", alive, AsContent())]
    #: the accepted digest whose announcement it inherited, by id
    inherited: Annotated[str | None, While(
        "its program reads it; once ended, only whether it is set counts (`rules.announcement_owed`)",
        alive, KEPT, IsSet())]
    status: Annotated[Status, KEPT]
    #: the tick it acts next; None: its program has ended
    next_tick: Annotated[int | None, Relative("only how far ahead it acts")]
    crashed: Annotated[bool, KEPT]
    #: tick of its last heartbeat while silent
    silent_since: Annotated[int | None, Form(
        "while it is running, how long ago it fell silent, capped at the heartbeat limit (when it is suspected); "
        "after that only whether it is silent. Uncapped while a controller outage counts (the restarted "
        "controller counts from its own tick) and with `retries` (a paused worker runs one re-delivery per step "
        "timeout passed, however long it was silent), in which case how long is kept whatever its status",
        "silence")]
    #: per step
    results: Annotated[tuple[Part | None, ...], While(
        "read by its program: result ids dropped; with zombie=from-memory whether it has called the model "
        "(which decides whether it still restores)", alive, Form(name="results"))]
    unwritten: Annotated[tuple[int, ...], WORKING]  # computed steps not yet journaled (end-only)
    step: Annotated[int, WORKING]
    phase: Annotated[str, WORKING]  # STEPS, ASSEMBLE, WAIT or POST
    #: begun action finished on waking
    held: Annotated[Held | None, While("read by its program (its part's result id dropped)", alive, NESTED)]
    #: (accepted, tick of the verdict)
    verdict: Annotated[tuple[bool, int] | None, Form(
        "whether it is set and accepted: its tick lies before this tick, which is all the rules ask of it "
        "(`verdict[1] >= t`)", "accepted")]
    candidate: Annotated[str | None, KEPT]  # the digest it produced or inherited, by id
    ended: Annotated[int | None, IsSet("it lies before this tick, all the rules ask of it (`ended < t`)")]
    #: (since, until): its heartbeats of the ticks after `since` and before `until` do not
    #: reach the controller, while it keeps working; the one of `since` was the last it heard
    #: before them (beyond the article's model: `sim.model.faults.delay`). Delays compose: one that
    #: starts inside the window extends it (`rules.delay_heartbeats`), so this is the union of
    #: every delay so far. None: heard
    unheard: Annotated[tuple[int, int] | None, While(
        "read by the controller's suspicion while it is running, and by its program while it runs: kept as "
        "(how long unheard, capped like a silence; ticks until heard again, 0 once past) while it covers a tick "
        "to come or the last heartbeat of a silence (the count then runs from its start)",
        heard_of, Form(name="window"))] = None
    #: the orchestration code version (0-based) it runs: the one deployed at its admission
    #: (beyond the article's model: `sim.model.faults.code`)
    code: Annotated[int, WORKING] = 0
    #: the effect (0-based, `setup.receivers`) it posts next, in POST: effects go one a tick, in order
    effect: Annotated[int, WORKING] = 0
    #: the model calls it has made so far (its `computed` events): what the outcome and the
    #: pages count, never read by the rules
    calls: Annotated[int, TALLY] = 0

    @property
    def alive(self) -> bool:
        """Its program still runs (acting, waiting or paused)."""
        return self.next_tick is not None

    @property
    def stuck(self) -> bool:
        """Its program ended with neither a crash nor an end state: `primitives.stuck`."""
        return primitives.stuck(self)

    def last_heard(self, t: int) -> int | None:
        """The tick of its last heartbeat the controller heard, if it has missed any by t:
        `primitives.last_heard`."""
        return primitives.last_heard(self, t)


#: the same in every node of one search level (or the end of the run)
LEVEL = Fixed("the same in every node of one search level, or the end of the run")


class Initially:
    """A `State` field's value at t0 computed from the run's `Setup` (see `initially`)."""

    __slots__ = ("of",)

    def __init__(self, of: Callable[[Setup], Any]) -> None:
        self.of = of


def initially(of: Callable[[Setup], Any]) -> Any:
    """A `State` field's default when its value at t0 depends on the run: `of(setup)`."""
    return Initially(of)


T = TypeVar("T", bound=type)


def declared_state(cls: T) -> T:
    """`keep.declared`, and every field declares its value at t0 as its default (a constant,
    or `initially(f)`); refused when the module is imported otherwise (TypeError)."""
    missing = [name for name in cls._fields if name not in cls._field_defaults]  # type: ignore[attr-defined]
    if missing:
        raise TypeError(f"{cls.__name__}: no value at t0 (a default) for {', '.join(missing)}")
    return declared(cls)


def initial_feeds(setup: Setup) -> tuple[Feed, ...]:
    """Each receiver's record at t0: nothing received yet."""
    return tuple(Feed(retention=r.retention) for r in setup.receivers)


@declared_state
class State(NamedTuple):
    """One run's state between two steps (see the module docstring for the layout). Each
    field is declared here once: its type, what the canonical form keeps of it
    (`sim.engine.keep`) and its value at t0 (the default: a constant, or `initially(f)`, f
    of the run's `Setup`). `initial_state`, the rules' working copy (`WorkingState`) and
    the canonical form (`sim.analysis.check.canon`) are derived from these declarations."""

    setup: Annotated[Setup, Fixed("the same in every node of one search")] = initially(lambda setup: setup)
    versions: Annotated[tuple[tuple[int, ...], ...], Dropped(
        "a version is known by its content, kept where a field names it (`AsContent`); versions no pin refers "
        "to any more are gone with it")] = initially(lambda setup: ((0,) * setup.sections,))
    version: Annotated[int, AsContent("the current content")] = 0
    last_change: Annotated[int | None, Before(
        "only whether it is set and whether it is at or before the last acceptance matter (`rules.satisfied`): "
        "every later change or acceptance is later than both", "last_acceptance")] = None
    last_acceptance: Annotated[int | None, IsSet("see `last_change`")] = None
    epoch: Annotated[int, KEPT] = initially(lambda setup: setup.first_token - 1)
    journal: Annotated[tuple[tuple[JournalKey, JournalRecord], ...], Form(
        "the records a restore can still match (`canon.readable`), sorted by key, each by its declarations",
        "readable")] = ()
    candidates: Annotated[tuple[Candidate, ...], NESTED] = ()
    acceptances: Annotated[tuple[Acceptance, ...], NESTED] = ()
    #: (record key, "intent" | "confirmed"): the key is the digest id for the first effect,
    #: "<digest id>/<effect>" for a later one (`records.effect_key`)
    effects: Annotated[tuple[tuple[str, str], ...], KEPT] = ()
    #: each effect's receiver, in the order of `setup.receivers`
    feeds: Annotated[tuple[Feed, ...], NESTED] = initially(initial_feeds)
    #: the fault moments' counters: the faults name the nth post or send
    posts: Annotated[int, KEPT] = 0
    sends: Annotated[int, KEPT] = 0
    attempts: Annotated[tuple[AttemptState, ...], NESTED] = ()
    owner: Annotated[int | None, KEPT] = None
    assessed: Annotated[int, KEPT] = 0
    #: each dependant's artifact once it has started, by digest id (`setup.dependants` order)
    started: Annotated[tuple[str | None, ...], KEPT] = initially(lambda setup: (None,) * len(setup.dependants))
    #: while the controller is down: the tick it restarts at
    down: Annotated[int | None, Relative("beyond the article's model: only how far ahead it restarts")] = None
    #: its latest outage: (crash tick, restart tick)
    outage: Annotated[tuple[int, int] | None, Form(
        "beyond the article's model: relative to now only until the heartbeat limit has passed since the "
        "restart: by then every running attempt whose last heartbeat came before the restart has been "
        "suspected, so the outage no longer changes what the controller counts from (`rules.heard`)",
        "outage")] = None
    finished: Annotated[bool, LEVEL] = False
    last_tick: Annotated[int, LEVEL] = 0
    horizon_reached: Annotated[bool, LEVEL] = False
    #: beyond the article's model: the code version in force, and the sections whose bytes changed under their hash
    code: Annotated[int, KEPT] = 0
    mutated: Annotated[tuple[tuple[int, int], ...], KEPT] = ()
    #: tallies of what happened, for the readers (`TALLY`): the steps restored from the journal,
    #: and the protected writes of a superseded attempt (one admitted before the latest
    #: admission) the stores refused and applied
    restored: Annotated[int, TALLY] = 0
    stale_refused: Annotated[int, TALLY] = 0
    stale_applied: Annotated[int, TALLY] = 0
    tick: Annotated[int, LEVEL] = 0  # last: `rules.end_of_tick` replaces it every tick

    @property
    def content(self) -> tuple[int, ...]:
        """The report's content now (`primitives.content`)."""
        return primitives.content(self)

    @property
    def feed(self) -> Feed:
        """The first effect's receiver (the article's feed)."""
        return self.feeds[0]

    @property
    def newsletter(self) -> str | None:
        """The first dependant's artifact once it has started (the article's newsletter)."""
        return self.started[0] if self.started else None


Record = TypeVar("Record", bound=tuple[Any, ...])


def initial(cls: type[Record], setup: Setup) -> Record:
    """A record of `cls` holding each field's declared value at t0 (`declared_state`)."""
    defaults: dict[str, Any] = cls._field_defaults  # type: ignore[attr-defined]
    values = (defaults[name] for name in cls._fields)  # type: ignore[attr-defined]
    return tuple.__new__(cls, [v.of(setup) if isinstance(v, Initially) else v for v in values])


def listed(items: list[str], indent: str) -> str:
    """Items as a comma-separated source list, wrapped at 110 columns, an item whole on its line
    (the generated files)."""
    lines = [indent]
    for word in (f"{item}," for item in items):
        if lines[-1] == indent:
            lines[-1] += word
        elif len(lines[-1]) + 1 + len(word) <= 110:
            lines[-1] += f" {word}"
        else:
            lines.append(indent + word)
    return "\n".join(lines)


def working_class_source(cls: type) -> str:
    """The source of the rules' working copy of a record type: a class with one typed
    attribute per field, built from a record (`WorkingX(record)`), changed in place and made
    a record again by `freeze()`. Written out (`working_source`) rather than made at import,
    so that mypyc can compile it and the rules that extend it (docs/compiled.md)."""
    names = cls._fields  # type: ignore[attr-defined]
    hints = cls.__annotations__
    fields = listed([f"self.{name}" for name in names], " " * 12)
    lines = [f"class Working{cls.__name__}:", f'    """The working copy of `{cls.__name__}` (generated)."""', "",
             f"    __slots__ = (\n{listed([repr(name) for name in names], ' ' * 8)}\n    )",
             "    #: the fields it was written for (at import, a record with others refuses it)",
             f"    FIELDS: ClassVar[tuple[str, ...]] = (\n{listed([repr(name) for name in names], ' ' * 8)}\n    )", ""]  # fmt: skip
    lines += [f"    {name}: {attribute_type(hints[name])}" for name in names]
    lines += ["", f"    def __init__(self, r: {cls.__name__}) -> None:", f"        (\n{fields}\n        ) = r", "",
              f"    def freeze(self) -> {cls.__name__}:", f"        return _new(_{cls.__name__}, (\n{fields}\n        ))"]  # fmt: skip
    return "\n".join(lines) + "\n"


def attribute_type(annotation: Any, names: set[str] | None = None) -> str:
    """A field's type as source, its declaration (`Annotated[type, declaration]`) left out;
    the names it uses are added to `names`."""
    import ast  # only when the working copies are written out

    source = getattr(annotation, "__forward_arg__", annotation)  # a NamedTuple keeps it as a ForwardRef
    tree = ast.parse(source if isinstance(source, str) else "Any", mode="eval").body
    if isinstance(tree, ast.Subscript) and isinstance(tree.value, ast.Name) and tree.value.id == "Annotated":
        tree = tree.slice.elts[0] if isinstance(tree.slice, ast.Tuple) else tree.slice
    if names is not None:
        names.update(node.id for node in ast.walk(tree) if isinstance(node, ast.Name))
    return ast.unparse(tree)


def working_source() -> str:
    """The module `sim/engine/working.py`, derived from the fields of `State` and `AttemptState`
    (`tests/test_compiled.py` fails while the file differs from it)."""
    used = {"State", "AttemptState", *(cls.__name__ for cls in MADE)}
    for cls in (State, AttemptState, *MADE):
        for annotation in cls.__annotations__.values():
            attribute_type(annotation, used)
    by_module: dict[str, list[str]] = {}
    for name in sorted(used - {"int", "str", "bool", "float", "tuple", "None"}):
        home = getattr(globals().get(name, vars(records).get(name)), "__module__", "")  # a type alias has none of its own
        if not home.startswith("sim."):
            home = "sim.engine.records" if name in vars(records) else "sim.engine.state"
        by_module.setdefault(home, []).append(name)
    imports = "".join(f"from {home} import {', '.join(names)}\n" for home, names in sorted(by_module.items()))
    from sim.model.events import Kind  # only when the working copies are written out

    enums: tuple[type[Enum], ...] = (Kind, Moment, Status)  # the enums whose members the rules read on every tick
    imports += "".join(f"from {enum.__module__} import {enum.__name__}\n" for enum in enums if enum.__name__ not in used)
    head = (
        '"""The rules\' working copies of `State` and `AttemptState` (`rules.Draft`, `rules.Worker`), and the\n'
        "members of the enums they read, as constants.\n\n"
        "Generated from the fields of `sim.engine.state` by `python -m sim.engine.state`: do not edit;\n"
        '`tests/test_compiled.py` fails while it differs from what that writes."""\n\n'
        f"from __future__ import annotations\n\nfrom typing import ClassVar, Final\n\n{imports}\n_new: Final = tuple.__new__\n"
        "#: the record types made here, as constants (compiled, a C static rather than a lookup by name)\n"
        + "".join(f"_{cls.__name__}: Final = {cls.__name__}\n" for cls in dict.fromkeys((State, AttemptState, *MADE)))
    )
    differ = [f"{cls.__name__}._fields != Working{cls.__name__}.FIELDS" for cls in (State, AttemptState)]
    differ += [f"{cls.__name__}._fields != {cls._fields!r}" for cls in MADE]  # type: ignore[attr-defined]
    differ += [f"tuple({enum.__name__}.__members__) != {enum.__name__}Members.MEMBERS" for enum in enums]
    check = ("\n\nif (\n    " + "\n    or ".join(differ) + "\n):\n"
             '    raise ImportError("sim/engine/working.py is stale: run `python -m sim.engine.state` to write it again")\n')  # fmt: skip
    members = "".join(f"\n\n{members_source(enum)}" for enum in enums)
    makers = "".join(f"\n\n{maker_source(cls)}" for cls in MADE)
    return head + "".join(f"\n\n{working_class_source(cls)}" for cls in (State, AttemptState)) + makers + members + check


#: the records the rules make on every tick, each by a function written out for it (`maker_source`)
MADE: tuple[type, ...] = (records.Truth, Part, JournalRecord, Candidate, Acceptance, AttemptState)


def maker_source(cls: type) -> str:
    """`new_Part(...)`: the record made without its NamedTuple's Python-level `__new__` (a call
    into the interpreter for each record the rules make), every field given, or left at its
    declared default where it and every field after it have a plain one (`AttemptState`'s last)."""
    hints = cls.__annotations__
    fields = cls._fields  # type: ignore[attr-defined]
    given = cls._field_defaults  # type: ignore[attr-defined]
    defaults: dict[str, Any] = {}
    for name in reversed(fields):  # from the last field back, while each has a plain default
        if name not in given or type(given[name]) not in (int, bool, str, type(None)):
            break
        defaults[name] = given[name]
    params = [f"{name}: {attribute_type(hints[name])}" + (f" = {defaults[name]!r}" if name in defaults else "")
              for name in fields]  # fmt: skip
    head = f"def new_{cls.__name__}({', '.join(params)}) -> {cls.__name__}:"
    made = f"    return _new(_{cls.__name__}, ({', '.join(fields)},))"
    if len(head) > 120:  # wrapped, a parameter or field whole on its line
        head = f"def new_{cls.__name__}(\n{listed(params, ' ' * 4)}\n) -> {cls.__name__}:"
        made = f"    return _new(_{cls.__name__}, (\n{listed(list(fields), ' ' * 8)}\n    ))"
    return (f"{head}\n"
            f'    """`{cls.__name__}(...)`, every field given (generated)."""\n'
            f"{made}\n")  # fmt: skip


def members_source(enum: type[Enum]) -> str:
    """A class of the enum's members as constants (`StatusMembers`), which the rules import in
    the enum's place (`Status`) where they read its members: compiled, `Status.RUNNING` is then
    a C static rather than a lookup through the metaclass of every `Enum`, which defines
    `__getattr__` (docs/compiled.md)."""
    name = enum.__name__
    lines = [f"class {name}Members:", f'    """The members of `{enum.__module__}.{name}`, as constants (generated)."""', "",
             "    #: the members it was written for (at import, an enum with others refuses it)",
             f"    MEMBERS: ClassVar[tuple[str, ...]] = (\n{listed([repr(m.name) for m in enum], ' ' * 8)}\n    )", ""]  # fmt: skip
    lines += [f"    {member.name}: Final = {name}.{member.name}" for member in enum]
    return "\n".join(lines) + "\n"


def input_ticks(schedule: Schedule) -> list[int]:
    """The ticks whose input phase the schedule changes the report at."""
    return sorted({f.where()[0] for f in schedule.faults if f.moment is Moment.INPUT})


def initial_state(switches: Switches, schedule: Schedule) -> State:
    """The state at t0, before anything has acted: each field's declared value at t0."""
    ticks = input_ticks(schedule)
    setup = Setup(
        fencing=switches.fencing is Fencing.ON,
        pins=switches.pins is Pins.ON,
        per_step=switches.checkpoints is Checkpoints.PER_STEP,
        key=switches.key,
        sections=schedule.sections,
        figure=schedule.figure - 1,
        calls=schedule.calls,
        heartbeat_limit=schedule.heartbeat_limit,
        horizon=schedule.horizon,
        last_change_at=ticks[-1] if ticks else -1,
        receivers=receivers(switches),
        dependants=dependants(switches, schedule),
        rereads=switches.knob("zombie") == "rereads",
        step_fencing=switches.knob("fencing_scope") == "step",
        owner_fencing=switches.knob("fencing_by") == "owner",
        adopts=switches.knob("fenced_end") == "adopts",
        retries=KNOBS["retries"].number(switches.knob("retries")) or 0,
        reads_next=switches.knob("reads") != "declared",
        reads_keyed=switches.knob("reads") == "next-section-keyed",
        figures=switches.knob("assessor") == "figures",
        journal_code=switches.knob("journal_code") == "yes",
        strict=switches.knob("replay") == "strict",
        controller_state=switches.knob("controller_state"),
        first_token=schedule.first_token,
    )
    return initial(State, setup)


def receivers(switches: Switches) -> tuple[Receiver, ...]:
    """The run's receivers: the article's feed as the knobs say, or a workflow's declared ones.
    A receiver knob set away from its default (docs/outside.md: receiver=none, a finite
    retention, compensate=yes) applies to every declared receiver it can: none makes each a
    receiver without keys, a retention each dedup receiver's, compensate each a corrector."""
    retention = KNOBS["retention"].number(switches.knob("retention"))
    no_keys = switches.knob("receiver") == "none"
    corrects = switches.knob("compensate") == "yes"
    if not switches.effects:
        return (Receiver("announce", "no-key" if no_keys else "dedup", retention, corrects),)
    out = []
    for r in switches.effects:
        kind = "no-key" if no_keys else r.kind
        out.append(Receiver(r.name, kind, (retention if retention is not None else r.retention) if kind == "dedup" else None,
                            r.correction or corrects))  # fmt: skip
    return tuple(out)


def dependants(switches: Switches, schedule: Schedule) -> tuple[Dependant, ...]:
    """The run's dependants: the article's newsletter, or a workflow's, each with its own rule
    and gate where it declares them and the switches' otherwise; the first is ready at the
    schedule's `newsletter_ready` (the workflow's first ready tick, or what explore draws)."""
    # a workflow (it has effects) declares its dependants, perhaps none; the article has its newsletter
    declared = switches.dependants if switches.effects else (Reader("newsletter", schedule.newsletter_ready),)
    return tuple(Dependant(r.name, schedule.newsletter_ready if i == 0 else r.ready,
                           Rule(r.rule) if r.rule else switches.rule,
                           (r.gate or switches.gate.value) == Gate.FAIL_OPEN.value)
                 for i, r in enumerate(declared))  # fmt: skip


def find_candidate(candidates: tuple[Candidate, ...], digest: str) -> Candidate:
    """The candidate with this digest id."""
    for c in candidates:
        if c.digest == digest:
            return c
    raise KeyError(digest)


if __name__ == "__main__":  # write the working copies out again (`working_source`)
    from pathlib import Path

    Path(__file__).with_name("working.py").write_text(working_source())
