"""The canonical form is derived from declarations (`sim.engine.keep`, `sim.analysis.check.canon`).

- every field of the state's records declares what the form keeps of it (a new field
  without one fails here), and every record type the state holds has its form;
- a field kept only while a condition holds (`While`) is dropped exactly when the condition
  is false, the condition is a function of what the form keeps, and the rules never read the
  field while the condition is false: on states the search reaches, an attempt whose
  condition is false is given another value of the field, and the run goes on with the same
  events.

- a state field is declared once (type, canonical role, value at t0): the rules' working
  copies, `initial_state` and the canonical form are derived from it, so a field added there
  alone reaches all three; a record with a field that declares no role is refused at import.

Soundness as a whole is measured by tests/test_differential.py.
"""

from __future__ import annotations

import importlib
import sys
import types as types_
from pathlib import Path
from typing import Annotated, Any, NamedTuple, get_type_hints

import pytest

from sim import properties
from sim.analysis.check.check import SETTING
from sim.analysis.check import canon
from sim.analysis.check.canon import PLANS, canonical, declarations, records_in
from sim.engine.keep import KEPT, Dropped, Nested, Relative, While, declared
from sim.engine.rules import Draft, Worker, run_tick
from sim.engine.state import (
    POST,
    AttemptState,
    Initially,
    State,
    Status,
    declared_state,
    initial,
    initial_state,
    initially,
    working_class_source,
)
from sim.engine.working import WorkingAttemptState, WorkingState
from sim.model.schedule import worked_example
from conftest import interpreted
from sim.model.faults import KINDS
from sim.analysis.check.search import NO_FAULTS, Node, NodeKey, Search, Space, node_key, root
from sim.model.switches import Switches

RECORDS = tuple(PLANS)


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__name__)
def test_every_field_declares_what_the_canonical_form_keeps(cls: type) -> None:
    missing = [name for name in cls._fields if name not in declarations(cls)]  # type: ignore[attr-defined]
    assert not missing, f"{cls.__name__}: no declaration for {', '.join(missing)} (see sim/engine/keep.py)"


def test_a_field_without_a_declaration_is_found() -> None:
    class Loose(NamedTuple):
        kept: int
        other: str

    assert declarations(Loose) == {}


def test_every_record_a_nested_field_holds_has_a_form() -> None:
    """A field kept `Nested` has each record in it by the record's own declarations (a
    record kept whole, such as a `Truth`, needs none)."""
    held: set[type] = set()
    for cls in RECORDS:
        hints = get_type_hints(cls, include_extras=True)
        for name, keep in declarations(cls).items():
            if isinstance(keep, Nested) or (isinstance(keep, While) and isinstance(keep.then, Nested)):
                held |= records_in(hints[name])
    assert held and held <= set(PLANS), f"records without a form: {held - set(PLANS)}"


def test_every_field_dropped_or_kept_under_a_condition_says_why() -> None:
    for cls in RECORDS:
        for name, keep in declarations(cls).items():
            if isinstance(keep, (Dropped, While)):
                assert keep.why, f"{cls.__name__}.{name}: no reason"


# -- fields kept only while a condition holds ------------------------------------------------------
CONDITIONAL = {name: keep for name, keep in declarations(AttemptState).items() if isinstance(keep, While)}


def other_value(name: str, a: AttemptState, t: int) -> Any:
    """A different value for one field of an attempt (one the rules could meet)."""
    return {
        "token": a.token + 7, "pin": 0 if a.pin is None else None, "inherited": "d9",
        "results": (None,) * len(a.results), "unwritten": (0,), "step": 3, "phase": POST,
        "held": ("assemble", None), "code": a.code + 5, "effect": a.effect + 1, "unheard": (t - 1, t + 5),
    }[name]  # fmt: skip


class Collect(Search):
    """A search that keeps the states it reaches."""

    def __init__(self, space: Space) -> None:
        super().__init__(space)
        self.states: list[State] = []
        self.seen = 0

    def merge(self, following: dict[NodeKey, Node], arrived: Node) -> None:
        self.seen += 1
        if self.seen % 3 == 0:
            self.states.append(arrived.state)
        super().merge(following, arrived)


def reached(values: dict[str, str]) -> list[State]:
    kinds = tuple(kind.key for kind in KINDS)
    space = Space(Switches().with_values(values), 1, 8, SETTING, tuple(p.name for p in (*properties.SAFETY, properties.EFFECTS_CONFIRMED)), kinds)
    search = Collect(space)
    start = root(space)
    search.run({node_key(start): start}, 0)
    return [s for s in search.states if not s.finished]


def rest(state: State) -> list[Any]:
    events = []
    while not state.finished:
        state, tick_events = run_tick(state, state.tick, NO_FAULTS)
        events += tick_events
    return events


SETTINGS = ({}, {"replay": "strict"}, {"fencing": "off", "zombie": "from-memory"},
            {"checkpoints": "end-only", "retries": "2", "fenced_end": "adopts"})  # fmt: skip


def test_a_field_is_dropped_only_while_its_condition_is_false_and_never_read_then() -> None:
    states = [s for values in SETTINGS for s in reached(values)]
    tried = {name: 0 for name in CONDITIONAL}
    for state in states[::2]:
        t = state.tick
        for i, a in enumerate(state.attempts):
            for name, keep in CONDITIONAL.items():
                if keep.when(a) or (not isinstance(keep.otherwise, Dropped) and getattr(a, name) is None):
                    continue  # kept, or (inherited) kept as whether it is set: only another set value is tried
                changed = a._replace(**{name: other_value(name, a, t)})
                assert not keep.when(changed), f"{name}: its own condition reads it"
                other = state._replace(attempts=state.attempts[:i] + (changed,) + state.attempts[i + 1:])
                canon.trim()
                assert canonical(other) == canonical(state), f"{name} is kept although its condition is false"
                assert rest(other) == rest(state), f"{name} is read while its condition is false: #{a.n} at t{t}"
                tried[name] += 1
    assert all(tried.values()), f"no attempt with a false condition for {[n for n, k in tried.items() if not k]}"


def test_each_condition_is_a_function_of_what_the_form_keeps() -> None:
    """Two attempts with equal forms have equal conditions, so a dropped field's None never
    stands for a kept one."""
    seen: dict[Any, tuple[bool, ...]] = {}
    for state in reached({"replay": "strict"})[::3]:
        now = canon.Now(state)
        for a in state.attempts:
            form = canon.record(a, now)
            conditions = tuple(keep.when(a) for keep in CONDITIONAL.values())
            assert seen.setdefault(form, conditions) == conditions


def test_a_stuck_attempt_still_running_keeps_its_unheard_window() -> None:
    """Issue 22, defect 1: an attempt stuck by replay=strict has ended its program but is
    still running, so the controller may still suspect it: its unheard window is kept; once
    it is not running any more, it is dropped."""
    keep = CONDITIONAL["unheard"]
    stuck = AttemptState(n=2, token=42, pin=0, inherited=None, status=Status.RUNNING, next_tick=None, crashed=False,
                         silent_since=None, results=(None,) * 4, unwritten=(), step=0, phase="steps", held=None,
                         verdict=None, candidate=None, ended=None, unheard=(5, 8), code=1)  # fmt: skip
    assert keep.when(stuck)
    assert not keep.when(stuck._replace(status=Status.UNKNOWN))
    state = SETTING_STATE._replace(attempts=(stuck,), tick=6)
    heard = state._replace(attempts=(stuck._replace(unheard=None),))
    assert canonical(state) != canonical(heard)
    gone = state._replace(attempts=(stuck._replace(status=Status.UNKNOWN),))
    assert canonical(gone) == canonical(gone._replace(attempts=(stuck._replace(status=Status.UNKNOWN, unheard=None),)))


SETTING_STATE = root(Space(Switches(), 0, 1, SETTING, (), ())).state


# -- a state field is declared once -----------------------------------------------------------------
def test_every_state_field_reaches_the_working_copy_the_initial_state_and_the_canonical_form() -> None:
    switches = Switches()
    start = initial_state(switches, worked_example(switches))
    state = reached({})[-1]
    for cls, copy, record in ((State, WorkingState, state), (AttemptState, WorkingAttemptState, state.attempts[0])):
        thawed = copy(record)
        assert [getattr(thawed, name) for name in cls._fields] == list(record)  # type: ignore[attr-defined]
        assert thawed.freeze() == record and type(thawed.freeze()) is cls
        assert set(declarations(cls)) == set(cls._fields)  # type: ignore[attr-defined]
    assert issubclass(Draft, WorkingState) and issubclass(Worker, WorkingAttemptState)
    for name, default in State._field_defaults.items():
        value = default.of(start.setup) if isinstance(default, Initially) else default
        assert getattr(start, name) == value, name
    assert set(State._field_defaults) == set(State._fields)


def grown(extra: dict[str, tuple[Any, Any]], without: str = "") -> type:
    """`State` with more fields (each its type and value at t0), declared as a maintainer
    would, before `tick` (`without`: a field whose value at t0 is left out)."""
    hints = get_type_hints(State, include_extras=True)
    *before, last = State._fields
    names = [*before, *extra, last]
    types = {**hints, **{name: tp for name, (tp, _) in extra.items()}}
    defaults = {**State._field_defaults, **{name: value for name, (_, value) in extra.items()}}
    body = {"__annotations__": {n: types[n] for n in names}, "__module__": __name__,
            **{n: defaults[n] for n in names if n != without}}  # fmt: skip
    return declared_state(types_.new_class("Grown", (NamedTuple,), {}, lambda ns: ns.update(body)))


def test_a_field_declared_in_the_state_alone_reaches_the_working_copy_the_initial_state_and_the_form(
        request: pytest.FixtureRequest) -> None:  # fmt: skip
    if not interpreted(request):  # a `State` with fields more: the interpreted form alone reads it
        return
    Grown = grown({  # noqa: N806
        "backlog": (Annotated[int, KEPT], initially(lambda setup: setup.sections * 2)),
        "deadline": (Annotated[int | None, Relative("only how far ahead")], None),
        "note": (Annotated[str, Dropped("history only")], ""),
    })  # fmt: skip
    switches = Switches()
    setup = initial_state(switches, worked_example(switches)).setup
    start = initial(Grown, setup)
    assert (start.backlog, start.deadline, start.note) == (8, None, "")
    assert tuple(start[:-4]) + (start.tick,) == initial_state(switches, worked_example(switches))
    made: dict[str, Any] = {"_new": tuple.__new__, "Grown": Grown, "_Grown": Grown}  # the working module's head
    exec(compile("from __future__ import annotations\n" + working_class_source(Grown), "<Grown>", "exec"), made)  # noqa: S102
    thawed = made["WorkingGrown"](start)
    thawed.backlog += 1
    thawed.deadline = 9
    changed = thawed.freeze()
    assert type(changed) is Grown and (changed.backlog, changed.deadline, changed.tick) == (9, 9, start.tick)
    form = canon.plan(Grown)
    try:
        now = canon.Now(changed)
        assert form(changed, now) != form(changed._replace(backlog=8), now)  # kept
        assert form(changed, now) != form(changed._replace(deadline=10), now)  # relative to now
        assert form(changed, now) == form(changed._replace(note="seen"), now)  # dropped
        later = changed._replace(deadline=10, tick=changed.tick + 1)
        assert form(later, canon.Now(later))[-2:] == form(changed, now)[-2:]  # the same distance ahead
    finally:
        canon.NAMESPACE.pop("form_Grown", None)


def test_a_record_with_a_field_that_declares_no_role_is_refused() -> None:
    with pytest.raises(TypeError, match=r"Loose\.other does not declare what the canonical form keeps"):

        @declared
        class Loose(NamedTuple):
            kept: Annotated[int, KEPT]
            other: int

    with pytest.raises(TypeError, match=r"Twice\.kept declares more than once"):

        @declared
        class Twice(NamedTuple):
            kept: Annotated[int, KEPT, Dropped("no")]

    assert grown({})._fields == State._fields  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match=r"Grown: no value at t0 \(a default\) for setup"):
        grown({}, without="setup")


def test_a_state_field_without_a_role_is_refused_at_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The module that declares it fails to import: nothing can run with the field unmerged or
    silently dropped from the canonical form."""
    (tmp_path / "toy_state.py").write_text(
        "from typing import Annotated, NamedTuple\n"
        "from sim.engine.keep import KEPT\n"
        "from sim.engine.state import declared_state\n\n\n"
        "@declared_state\n"
        "class State(NamedTuple):\n"
        "    epoch: Annotated[int, KEPT] = 0\n"
        "    backlog: int = 0  # no role\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TypeError, match=r"State\.backlog does not declare"):
        importlib.import_module("toy_state")
    sys.modules.pop("toy_state", None)
