"""Every event the engine logs has exactly the fields its kind declares in `sim.model.events`."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import pytest

from sim import scenario as scenarios
from sim.commands.common import load_scenario
from sim.engine.run import run
from sim.engine.actors import Status
from sim.model.events import (
    EVENT_KINDS,
    PLANNED,
    CandidateWrite,
    EffectWrite,
    JournalWrite,
    Silent,
    conforms,
    declared,
    happened,
    payload,
)
from sim.render.text import brief, describe
from sim.run import run_scenario
from sim.model.schedule import worked_example
from sim.model.switches import COMBINATIONS
from sim.engine.trace import Event, Kind, Trace


def mismatches(trace: Trace) -> list[str]:
    """What in the trace's events differs from their kinds' declarations."""
    out = []
    for i, e in enumerate(trace.events):
        kind = EVENT_KINDS[e.kind]
        fields = kind.fields(e.detail)
        if list(e.detail) != [name for name, _ in fields]:
            out.append(f"event {i} ({e.kind.value}): fields {list(e.detail)}, declared {fields}")
            continue
        out += [
            f"event {i} ({e.kind.value}): {name}={e.detail[name]!r} is not {hint}"
            for name, hint in fields
            if not conforms(e.detail[name], hint)
        ]
    return out


@pytest.mark.parametrize("name", scenarios.names())
def test_every_named_scenario_has_its_declared_fields(name: str) -> None:
    trace, _ = run_scenario(load_scenario(name, ()))
    assert mismatches(trace) == []


def test_every_sweep_run_has_its_declared_fields_and_reads() -> None:
    seen: set[type[Any]] = set()
    for switches in COMBINATIONS:
        trace = run(switches, worked_example(switches))
        assert mismatches(trace) == [], switches
        for e in trace.events:
            seen.add(EVENT_KINDS[e.kind].shape(e.detail))
            assert describe(e) and brief(e, trace)[1]
    # the sweep logs every kind of the article's model, and a write of every store; the kinds
    # beyond it (a storage loss, delayed heartbeats, a forgotten key, a retraction, a snapshot
    # mutation, a code change, a strict replay's error, a controller restart, a fenced worker
    # returning the owner's result) are logged by their scenarios (above)
    beyond = {Kind.LOST, Kind.UNHEARD, Kind.EXPIRED, Kind.RETRACTED, Kind.MUTATED, Kind.CODE_CHANGED,
              Kind.REPLAY_FAILED, Kind.CONTROLLER_DOWN, Kind.CONTROLLER_UP, Kind.ADOPTED}
    assert seen == {shape for kind in EVENT_KINDS.values() if kind.kind not in beyond for shape in kind.shapes}
    scenario_shapes = {
        EVENT_KINDS[e.kind].shape(e.detail) for name in scenarios.names() for e in run_scenario(load_scenario(name, ()))[0].events
    }
    assert {shape for k in beyond for shape in EVENT_KINDS[k].shapes} <= scenario_shapes


def test_every_kind_is_declared_once() -> None:
    assert set(EVENT_KINDS) == set(Kind)
    assert all(k is decl.kind for k, decl in EVENT_KINDS.items())


def test_a_write_has_one_shape_per_store() -> None:
    write = EVENT_KINDS[Kind.WRITE]
    base = {"token": 41, "epoch": 42, "applied": False}
    assert write.shape({"store": "journal", **base}) is JournalWrite
    assert write.shape({"store": "candidate", **base}) is CandidateWrite
    assert write.shape({"store": "effect", **base}) is EffectWrite
    # every shape starts with the fields every protected write logs, in the same order
    common = ["store", "token", "epoch", "applied", "record"]
    assert all([n for n, _ in declared(s)][:5] == common for s in write.shapes)


def test_planned_fields_are_declared_and_only_a_pause_plans() -> None:
    assert EVENT_KINDS[Kind.SILENT].planned == ("wake",)
    assert {k for k, decl in EVENT_KINDS.items() if decl.planned} == {Kind.SILENT}
    for decl in EVENT_KINDS.values():
        for shape in decl.shapes:
            assert set(decl.planned) <= {name for name, _ in declared(shape)}
    # two pauses that differ only in their planned wake did the same thing
    a = Event(3, Kind.SILENT, 1, {"crashed": False, "wake": 8, "during": "compute"})
    b = Event(3, Kind.SILENT, 1, {"crashed": False, "wake": 9, "during": "compute"})
    assert happened(a) == happened(b) == {"crashed": False, "during": "compute"} and a != b
    assert PLANNED == {Kind.SILENT: ("wake",)}
    c = Event(9, Kind.DONE, 2, {"digest": "d2"})
    assert happened(c) is c.detail
    assert payload(a, Silent) is a.detail and EVENT_KINDS[Kind.SILENT].shape(a.detail) is Silent


def test_declared_statuses_are_the_engines() -> None:
    statuses = {decl.status for decl in EVENT_KINDS.values()} - {None}
    assert statuses <= {s.value for s in Status}


@pytest.mark.parametrize(
    ("value", "hint", "ok"),
    [
        (1, int, True),
        (True, int, False),
        (1, bool, False),
        (None, int | None, True),
        ("x", int | None, False),
        ([1, "s1@1", 0], tuple[int, str, int], True),
        ((1, "s1@1", 0), tuple[int, str, int], False),  # a JSON array is a list
        ([1, "s1@1"], tuple[int, str, int], False),
        ([[1, "a", 0], [2, "b", 1]], list[tuple[int, str, int]], True),
        ([1, 2.0], list[int], False),
        ("post", Literal["post", "waiting"], True),
        ("later", Literal["post", "waiting"], False),
    ],
)
def test_conforms(value: Any, hint: Any, ok: bool) -> None:
    assert conforms(value, hint) is ok


def test_a_detail_off_its_declaration_is_reported() -> None:
    trace = run(COMBINATIONS[0], worked_example(COMBINATIONS[0]))
    first = trace.events[0]  # #1 admitted: token, reason, pin, reconcile
    assert first.kind is Kind.ADMITTED and mismatches(trace) == []
    extra = first._replace(detail={**first.detail, "extra": 1})
    retyped = first._replace(detail={**first.detail, "token": "41", "reason": "later"})
    found = mismatches(dataclasses.replace(trace, events=(extra, retyped)))
    assert [m.split(":")[0] for m in found] == ["event 0 (admitted)"] + ["event 1 (admitted)"] * 2
