"""The canonical form is derived from declarations (`sim.engine.keep`, `sim.engine.canon`).

- every field of the state's records declares what the form keeps of it (a new field
  without one fails here), and every record type the state holds has its form;
- a field kept only while a condition holds (`While`) is dropped exactly when the condition
  is false, the condition is a function of what the form keeps, and the rules never read the
  field while the condition is false: on states the search reaches, an attempt whose
  condition is false is given another value of the field, and the run goes on with the same
  events.

Soundness as a whole is measured by tests/test_differential.py.
"""

from __future__ import annotations

from typing import Any, NamedTuple, get_type_hints

import pytest

from sim import properties
from sim.check import SETTING
from sim.engine import canon
from sim.engine.canon import PLANS, canonical, declarations, records_in
from sim.engine.keep import Dropped, Nested, While
from sim.engine.rules import run_tick
from sim.engine.state import POST, AttemptState, State, Status
from sim.faults import KINDS
from sim.search import NO_FAULTS, Node, NodeKey, Search, Space, node_key, root
from sim.switches import Switches

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
        "held": ("assemble", None), "code": a.code + 5, "unheard": (t - 1, t + 5),
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
