"""What `sim trace --format itf` and the run page show at each tick is the engine's own state.

The engine publishes the state it reached at the end of every tick (`Trace.states`). At every
tick of every named scenario and of 1,000 schedules drawn with every fault kind (`--faults
all`, the way `sim explore` draws them, from fixed seeds, under switches and knobs drawn
too), the ITF export and the page's per-tick state (its lifecycles) must show the same
journal, candidates, acceptances, effects, feed and attempts as that state. The expectations
are read here from the `State` itself, in the engine's own terms, not through the renderers'
mapping (`sim.render.shown`).
"""

from __future__ import annotations

import functools
import inspect
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from sim import scenario as scenarios
from sim.cli import cli
from sim.commands.common import load_scenario
from sim.engine.records import knows
from sim.engine.state import State, Status
from sim.events import Lost, payload
from sim.explore import ExploreBounds, SeededChoices, draw_schedule
from sim.knobs import KNOBS
from sim.render import grid as grids
from sim.render import itf, lifecycle, page, shown
from sim.render.lifecycle import KINDS, lifecycles
from sim.run import run_scenario, simulate
from sim.schedule import Schedule
from sim.switches import SWITCHES, Switches
from sim.trace import Kind, Trace

#: the drawn runs: how many, from which seed
DRAWN, SEED = 1000, 2022


def plain(v: Any) -> Any:
    """An ITF value as plain Python: ints, tuples, dicts (a #map with its keys made plain)."""
    kind = type(v)
    if kind is list:
        return [plain(x) for x in v]
    if kind is not dict:
        return v
    if "#bigint" in v:
        return int(v["#bigint"])
    if "#map" in v:
        return {plain(k): plain(x) for k, x in v["#map"]}
    if "#tup" in v:
        return tuple(plain(x) for x in v["#tup"])
    return {name: plain(x) for name, x in v.items()}


def journal_key(s: State, key: int | tuple[int, ...]) -> int | tuple[int, ...]:
    """The engine's key, the step 1-based (and the code version, the last part with
    journal_code=yes, 1-based): how every output numbers steps and code versions."""
    parts = [key] if isinstance(key, int) else list(key)
    parts[0] += 1
    if s.setup.journal_code:
        parts[-1] += 1
    return parts[0] if len(parts) == 1 else tuple(parts)


def one(index: int | None) -> int:
    return 0 if index is None else index + 1


def expected_itf(s: State, tick: int) -> dict[str, Any]:
    """What the engine's state at the end of `tick` holds, in the ITF's plain shapes."""
    feed: dict[str, Any] = {
        "posts": [{"post": p, "digest": d} for p, d in s.feed.posts],
        "keys": {k: p for k, _, p, since in s.feed.remembered if knows(since, tick, s.setup.retention)},
    }
    if s.setup.compensate:
        feed["retracted"] = list(s.feed.retracted)
    return {
        "journal": {journal_key(s, k): {"result": r.result, "content": r.content, "by": r.attempt} for k, r in s.journal},
        "candidates": [
            {"digest": c.digest, "attempt": c.attempt, "token": c.token, "pin": one(c.pin),
             "parts": [p.result for p in c.parts], "built_from": list(c.built_from)}
            for c in s.candidates
        ],  # fmt: skip
        "acceptances": [{"digest": a.digest, "version": one(a.version), "tick": a.tick} for a in s.acceptances],
        "effects": dict(s.effects),
        "feed": feed,
        "attempts": {a.n: (a.token, one(a.pin), a.status.value, a.silent_since is not None) for a in s.attempts},
        "owner": s.owner or 0,
        "epoch": s.epoch if s.attempts else 0,  # docs/trace.md: 0 before the first admission
        "report": s.version + 1,
    }


def shown_itf(state: dict[str, Any]) -> dict[str, Any]:
    """The same variables, as one ITF state shows them."""
    s = plain(state)
    return {
        "journal": s["journal"],
        "candidates": s["candidates"],
        "acceptances": s["acceptances"],
        "effects": s["effects"],
        "feed": s["feed"],
        "attempts": {n: (a["token"], a["pin"], a["status"], a["silent"]) for n, a in s["attempts"].items()},
        "owner": s["owner"],
        "epoch": s["epoch"],
        "report": s["report"]["version"],
    }


def expected_page(s: State) -> list[list[tuple[str, str]]]:
    """Each lifecycle's items at the end of a tick, (key, state), as the engine's state says:
    an attempt's status (replaced: running under a token below the epoch), a candidate's
    verdict in the controller's records, an effect record confirmed or not."""
    attempts = []
    for a in s.attempts:
        status = a.status.value
        attempts.append((f"#{a.n}", "replaced" if a.status is Status.RUNNING and a.token < s.epoch else status))
    accepted = {a.digest for a in s.acceptances}
    artifacts = []
    for c in s.candidates:
        verdict = s.attempts[c.attempt - 1].verdict
        if c.digest in accepted:
            state = "accepted" if c.built_from == s.content else "superseded"
        else:
            state = "refused" if verdict is not None and not verdict[0] else "candidate"
        artifacts.append((c.digest, state))
    effects = [(d, "confirmed" if record == "confirmed" else "open") for d, record in sorted(s.effects)]
    return [attempts, artifacts, effects]


def shown_page(items: list[list[list[str]]]) -> list[list[tuple[str, str]]]:
    """The page's items at a tick, (key, state), an effect's state reduced to confirmed or not."""
    attempts, artifacts, effects = ([(i[0], i[1]) for i in kind] for kind in items)
    return [attempts, artifacts, [(k, "confirmed" if state == "confirmed" else "open") for k, state in effects]]


def feed_words(s: State) -> dict[str, str]:
    """What an effect's detail says is at the feed: the digest's posts still up."""
    up: dict[str, list[str]] = {}
    for post, digest in s.feed.posts:
        if post not in s.feed.retracted:
            up.setdefault(digest, []).append(post)
    return {d: f"the feed has {', '.join(up[d])}" if d in up else "not at the feed" for d, _ in s.effects}


def disagreements(trace: Trace, page_states: list[Any]) -> Iterator[str]:
    """Each tick where the ITF export or the page's state differs from the engine's state."""
    for tick, (doc, shown) in enumerate(zip(itf.states(trace), page_states, strict=True)):
        s = trace.state_at(tick)
        want, got = expected_itf(s, tick), shown_itf(doc)
        for name in want:
            if want[name] != got[name]:
                yield f"t{tick} ITF {name}: the engine has {want[name]}, the export shows {got[name]}"
        if expected_page(s) != shown_page(shown[2]):
            yield f"t{tick} page: the engine has {expected_page(s)}, the page shows {shown_page(shown[2])}"
        words = feed_words(s)
        for key, _, detail, _ in shown[2][2]:
            if not detail.startswith(f"announcement of {key}: {words[key]}"):
                yield f"t{tick} page: the effect of {key} says {detail!r}, the feed holds {words[key]!r}"


def page_states(trace: Trace) -> list[Any]:
    return [[s.report, s.owner, [[i.to_json() for i in s.items(kind)] for kind in KINDS], list(s.broken)]
            for s in lifecycles(trace)]  # fmt: skip


@pytest.mark.parametrize("name", scenarios.names())
def test_every_named_scenario_shows_the_engine_state_at_every_tick(name: str) -> None:
    trace, result = run_scenario(load_scenario(name, ()))
    assert len(trace.states) == trace.last_tick + 1
    embedded = page.data(trace, result, grids.build(trace))["states"]  # what --html embeds
    assert list(disagreements(trace, embedded)) == []


def drawn_switches(rng: random.Random) -> Switches:
    """Switches and knobs drawn at random: every switch, and each knob a quarter of the time."""
    values = {name: rng.choice([m.value for m in enum]) for name, enum in SWITCHES.items()}
    for name, knob in KNOBS.items():
        if rng.random() < 0.25:
            values[name] = rng.choice([*knob.values, *(["1", "2"] if knob.integers else [])])
    return Switches().with_values(values)


def drawn(part: int, parts: int) -> Iterator[tuple[Switches, Schedule]]:
    """This part's share of the DRAWN runs: `--faults all` schedules drawn as `sim explore`
    draws them (`draw_schedule` from a seeded source), each under drawn switches."""
    bounds = ExploreBounds(faults="all")
    for k in range(part, DRAWN, parts):
        rng = random.Random(SEED * 10_000 + k)
        yield drawn_switches(rng), draw_schedule(SeededChoices(rng), bounds)


@functools.cache
def drawn_traces(part: int) -> tuple[tuple[Switches, Schedule, Trace], ...]:
    """This part's drawn runs, run once per test process."""
    return tuple((switches, schedule, simulate(switches, schedule)[0]) for switches, schedule in drawn(part, 4))


@pytest.mark.parametrize("part", range(4))
def test_drawn_runs_show_the_engine_state_at_every_tick(part: int) -> None:
    for switches, schedule, trace in drawn_traces(part):
        found = list(disagreements(trace, page_states(trace)))
        assert found == [], f"{switches.set_args()} {schedule}: {found[:3]}"


def kinds_reached(trace: Trace) -> set[str]:
    """The event kinds of a run, a storage loss named with its store."""
    out = set()
    for e in trace.events:
        out.add(f"lost-{payload(e, Lost)['store']}" if e.kind is Kind.LOST else e.kind.value)
    return out


def test_the_runs_reach_what_a_fold_of_the_events_got_wrong() -> None:
    """The sample is worth its time: the drawn runs hold storage losses of each store,
    controller restarts and retractions; an expired key needs a resend under the same key
    after the retention, which the drawn runs rarely reach and the named key-expired does."""
    drawn_kinds: set[str] = set()
    for part in range(4):
        for _, _, trace in drawn_traces(part):
            drawn_kinds |= kinds_reached(trace)
    assert {"lost-journal", "lost-acceptances", "lost-effects", "controller-up", "retracted"} <= drawn_kinds
    assert "expired" in kinds_reached(run_scenario(load_scenario("key-expired", ()))[0])


def test_journal_lost_the_export_drops_the_lost_records() -> None:
    """Issue 22, defect 7: the journal lost at t5 is empty in the export at t5, and at t9 holds
    the four records #2 wrote since (the fold of the events still listed #1's two)."""
    result = CliRunner().invoke(cli, ["trace", "journal-lost", "--format", "itf"])
    assert result.exit_code == 0, result.output
    states = json.loads(result.output)["states"]
    assert plain(states[4]["journal"]) != {} and plain(states[5]["journal"]) == {}
    at9 = plain(states[9]["journal"])
    assert sorted((k, r["by"]) for k, r in at9.items()) == [((1, 0), 2), ((2, 1), 2), ((3, 0), 2), ((4, 0), 2)]


def test_acceptances_lost_the_page_shows_no_acceptance_after_the_loss() -> None:
    trace, _ = run_scenario(load_scenario("acceptances-lost", ()))
    states = lifecycles(trace)
    d1 = [states[t].find("artifacts", "d1") for t in (7, 8)]
    assert [i.state if i else "" for i in d1] == ["accepted", "candidate"]
    assert d1[1] is not None and "its acceptance at t6 was lost" in d1[1].detail


def test_the_export_and_the_page_read_the_engine_state_not_a_fold_of_the_events() -> None:
    """No renderer of the per-tick state keeps a model of the world of its own: the ITF export,
    the lifecycles and the page read `sim.render.shown`, which reads `Trace.state_at`."""
    for module in (itf, lifecycle, page):
        source = inspect.getsource(module)
        assert "class World" not in source and "trace.events" not in source, module
    assert "class World" not in inspect.getsource(shown)
    assert "trace.state_at(" in inspect.getsource(shown.ticks)
