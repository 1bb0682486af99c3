"""What `sim trace --format itf`, the run page and the swimlane show at each tick is the
engine's own state, and the outcome's figures and the hazards read it too.

The engine publishes the state it reached at the end of every tick (`Trace.states`). At every
tick of every named scenario and of 1,000 schedules drawn with every fault kind (`--faults
all`, the way `sim explore` draws them, from fixed seeds, under switches and knobs drawn
too), the ITF export and the page's per-tick state (its lifecycles) must show the same
journal, candidates, acceptances, effects, feed and attempts as that state, and the
swimlane's "?" (an effect intended, unconfirmed) where the state holds an intent. The
expectations are read here from the `State` itself, in the engine's own terms, not through
the renderers' mapping (`sim.render.shown`).

The outcome's figures and what the hazards of `sim explore` see are read from the states;
here they are checked against the events themselves (what happened, in order), so that the
state's tallies and the readings of the states are shown to say what the events say.
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
from sim.model.events import Accepted, Computed, Feed, Lost, Newsletter, Refused, ReportChanged, operation, payload, write
from sim.model.faults import DuplicateDelivery, PosterPause, Silence, StorageLoss
from sim.properties.outcome import outcome
from sim.properties import PROPERTIES, Seen
from sim.analysis.explore import ExploreBounds, SeededChoices, draw_schedule
from sim.model.knobs import KNOBS
from sim.render import grid as grids
from sim.render import itf, lifecycle, page, shown
from sim.render.lifecycle import KINDS, lifecycles
from sim.run import run_scenario, simulate
from sim.model.schedule import Schedule
from sim.model.switches import SWITCHES, Switches
from sim.engine.trace import Event, Kind, Trace

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
    """What an effect's detail says is at its receiver: the digest's posts still up there (the
    one feed; in a run with several effects, the effect's own receiver, named)."""
    names = [r.name for r in s.setup.receivers]
    out = {}
    for key, _ in s.effects:
        digest, _, name = key.partition("/")
        feed = s.feeds[names.index(name) if name else 0]
        up = [post for post, d in feed.posts if d == digest and post not in feed.retracted]
        where = "the feed" if not s.setup.named else f"{name or names[0]}'s receiver"
        what = f"announcement of {digest}" if not s.setup.named else f"{name or names[0]} of {digest}"
        out[key] = f"{what}: " + (f"{where} has {', '.join(up)}" if up else f"not at {where}")
    return out


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
            if not detail.startswith(words[key]):
                yield f"t{tick} page: the effect of {key} says {detail!r}, the feed holds {words[key]!r}"


def grid_disagreements(trace: Trace, grid: grids.Grid) -> Iterator[str]:
    """Each tick where the swimlane's feed row shows "?" (intended, unconfirmed) and the engine
    holds no intent through the tick, or holds one through the tick and the row shows nothing."""
    rows = [r for r in grid.rows if r.group == "feed"]  # each effect's row in a run with several
    assert rows and (len(rows) == 1 or all(r.key.startswith("feed:") for r in rows))
    names = [r.key.split(":", 1)[1] if ":" in r.key else "" for r in rows]
    for feed, name in zip(rows, names):  # an effect record's key names its effect after the first
        for tick in range(1, trace.last_tick + 1):
            held = [d for d, record in trace.state_at(tick - 1).effects if record == "intent"]
            held = [d for d in held if (d, "intent") in trace.state_at(tick).effects
                    and (d.split("/", 1)[1] if "/" in d else names[0]) == name]  # fmt: skip
            cell = feed.cells[tick]
            if cell.text == "?" and not held:
                yield f"t{tick} swimlane {feed.label}: ? with no intent held through the tick"
            if cell.text == "" and held:
                yield f"t{tick} swimlane {feed.label}: nothing shown while the engine holds the intent of {held}"


def page_states(trace: Trace) -> list[Any]:
    return [[s.report, s.owner, [[i.to_json() for i in s.items(kind)] for kind in KINDS], list(s.broken)]
            for s in lifecycles(trace)]  # fmt: skip


@pytest.mark.parametrize("name", scenarios.names())
def test_every_named_scenario_shows_the_engine_state_at_every_tick(name: str) -> None:
    trace, result = run_scenario(load_scenario(name, ()))
    assert len(trace.states) == trace.last_tick + 1
    grid = grids.build(trace)
    embedded = page.data(trace, result, grid)["states"]  # what --html embeds
    assert list(disagreements(trace, embedded)) == []
    assert list(grid_disagreements(trace, grid)) == []


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
        found = list(disagreements(trace, page_states(trace))) + list(grid_disagreements(trace, grids.build(trace)))
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


def test_controller_restart_no_intents_the_swimlane_shows_no_intent_after_the_restart() -> None:
    """The restart at t15 loses #2's unconfirmed intent (controller_state=no-intents): from t15
    the engine holds no intent, so the feed row shows no "?" until #3 records a fresh one at
    t18 (a fold of the events kept the intent on, t15..t17, as it only cleared on a storage
    loss). The ITF export already showed no effect record there."""
    trace, _ = run_scenario(load_scenario("controller-restart-no-intents", ()))
    feed = grids.build(trace).row("feed")
    assert feed is not None
    assert [feed.cells[t].text for t in range(12, 19)] == ["?", "?", "?", "", "", "", "i =P1 ✓"]
    assert [shown_itf(s)["effects"] for s in itf.states(trace)[14:16]] == [{"d2": "intent"}, {}]


def test_effects_lost_the_swimlane_shows_the_intent_until_the_loss() -> None:
    """A storage loss of the effect records at t12 takes #2's intent of t10: the engine holds
    it at the end of t10 and t11, so t11 shows "?" (a fold of the events, which forgot the
    whole span at the loss, showed nothing), and nothing from t12 until the intent of t15."""
    schedule = Schedule(
        faults=(Silence(attempt=1, at=1, wake=None), DuplicateDelivery(nth=3), PosterPause(nth=1, ticks=8),
                StorageLoss(at=12, store="effects")),
        sections=2, first_token=41, heartbeat_limit=4, newsletter_ready=14, horizon=200,
    )  # fmt: skip
    trace = simulate(Switches(), schedule)[0]
    assert [e for e in trace.events if e.kind is Kind.LOST] and trace.state_at(11).effects == (("d2", "intent"),)
    feed = grids.build(trace).row("feed")
    assert feed is not None
    assert [feed.cells[t].text for t in range(11, 15)] == ["?", "lost", "", ""]
    assert list(grid_disagreements(trace, grids.build(trace))) == []


def event_figures(trace: Trace) -> dict[str, Any]:
    """The outcome's figures as the events say them, in order (the oracle for the states)."""
    admitted, calls, restored, stale, posts = 0, [0] * len(trace.state_at(trace.last_tick).attempts), 0, [0, 0], 0
    first: tuple[int, str] | None = None
    confirmed: dict[str, int] = {}
    letter = None
    setup = trace.states[0].setup  # the run's effects: the artifact is confirmed once its last one is
    last = setup.receivers[-1].name if setup.named else None
    for e in trace.events:
        if e.kind is Kind.ADMITTED:
            admitted += 1
        elif e.kind is Kind.COMPUTED:
            calls[(e.attempt or 0) - 1] += payload(e, Computed).get("calls", 1)
        elif e.kind is Kind.RESTORED:
            restored += 1
        elif e.kind is Kind.WRITE:
            w = write(e)
            if (e.attempt or 0) < admitted:
                stale[w["applied"]] += 1
            if w["store"] == "effect" and w["record"] == "confirmed" and w["applied"] and w.get("effect") == last:
                confirmed.setdefault(w["digest"], e.tick)
        elif e.kind is Kind.FEED and payload(e, Feed)["answer"] == "applied":
            posts += 1
        elif e.kind is Kind.ACCEPTED and first is None and tuple(payload(e, Accepted)["built_from"]) == trace.final_content:
            first = (e.tick, payload(e, Accepted)["digest"])
        elif e.kind is Kind.NEWSLETTER and letter is None:
            started = payload(e, Newsletter)
            letter = {"start_tick": e.tick, "digest": started["digest"], "quoted_revenue": started["quote"]}
    return {
        "model_calls_by_attempt": calls, "steps_restored": restored, "stale_writes_rejected": stale[0],
        "stale_writes_applied": stale[1], "posts_applied": posts,
        "first_accepted_tick": None if first is None else first[0],
        "confirmed_tick": None if first is None else confirmed.get(first[1]),
        "newsletter": letter or {"start_tick": None, "digest": None, "quoted_revenue": None},
    }  # fmt: skip


@pytest.mark.parametrize("part", range(4))
def test_the_outcome_read_from_the_states_says_what_the_events_say(part: int) -> None:
    """The outcome reads the states (their tallies, the first acceptance of the final report as
    its producer's verdict, the first state holding its confirmation or the newsletter)."""
    runs = [run_scenario(load_scenario(name, ()))[0] for name in scenarios.names()[part::4]]
    for trace in runs + [trace for _, _, trace in drawn_traces(part)]:
        figures = outcome(trace).to_json()
        assert {name: figures[name] for name in event_figures(trace)} == event_figures(trace)


class Told:
    """What the events told so far, event by event (the oracle for `Seen`, which reads the states)."""

    def __init__(self, trace: Trace) -> None:
        self.content, self.ready, self.started = trace.versions[0], trace.schedule.newsletter_ready, -1
        self.built: dict[str, tuple[int, ...]] = {}
        self.accepted_for: set[tuple[int, ...]] = set()
        self.accepted: set[str] = set()
        self.applied: set[str] = set()
        self.latest = self.latest_accepted = ""
        self.admitted = 0

    def take(self, e: Event) -> None:
        if e.kind is Kind.WRITE and write(e)["record"] == "candidate" and write(e)["applied"]:
            self.latest = digest = write(e)["digest"]  # type: ignore[typeddict-item]
            self.built[digest] = tuple(p[1] for p in write(e)["parts"])  # type: ignore[typeddict-item]
        elif e.kind is Kind.ACCEPTED:
            self.latest_accepted = payload(e, Accepted)["digest"]
            self.accepted_for.add(self.content)
            self.accepted.add(self.latest_accepted)
        elif e.kind is Kind.FEED and payload(e, Feed)["answer"] == "applied":
            self.applied.add(operation(payload(e, Feed)))
        elif e.kind is Kind.REPORT_CHANGED:
            self.content = tuple(payload(e, ReportChanged)["content"])
        elif e.kind is Kind.NEWSLETTER and self.started < 0:
            self.started = e.tick
        elif e.kind is Kind.ADMITTED:
            self.admitted = e.attempt or 0

    def arose(self, name: str, e: Event) -> bool:
        """Whether `name`'s hazard arose at `e` (before it; at a tick's end, after its last event)."""
        digest = payload(e, Accepted if e.kind is Kind.ACCEPTED else Refused)["digest"] if e.kind in ASSESSED else ""
        if name == "misused-dependant":
            if e.tick < self.ready or 0 <= self.started != e.tick:
                return False
            return any(d and (d not in self.accepted or self.built.get(d) != self.content)
                       for d in (self.latest, self.latest_accepted))  # fmt: skip
        return {
            "wrong-acceptance": lambda: self.built.get(digest) != self.content,
            "two-acceptances": lambda: self.content in self.accepted_for,
            "stale-write": lambda: (e.attempt or 0) < self.admitted,
            "duplicate-effect": lambda: operation(payload(e, Feed)) in self.applied,
            "uncorrected-duplicate": lambda: operation(payload(e, Feed)) in self.applied,
            "faithful-digest": lambda: "truth" in payload(e, Accepted),
        }[name]()


ASSESSED = (Kind.ACCEPTED, Kind.REFUSED)


def hazard_disagreements(trace: Trace) -> Iterator[str]:
    """Each event (or tick end) where a hazard reading the states (`Seen`) says otherwise than
    the events told so far."""
    told, seen, events = Told(trace), Seen(trace), trace.events
    hazards = [(p.name, p.hazard) for p in PROPERTIES if p.hazard is not None]
    for i, e in enumerate(events):
        for name, hazard in hazards:
            if e.kind in hazard.kinds and hazard.arose(seen, e) != told.arose(name, e):
                yield f"event {i} ({e.kind.value} at t{e.tick}): {name}"
        told.take(e)
        if i + 1 == len(events) or events[i + 1].tick != e.tick:
            for name, hazard in hazards:
                if hazard.at_tick_end and hazard.arose(seen, e) != told.arose(name, e):
                    yield f"end of t{e.tick}: {name}"


@pytest.mark.parametrize("part", range(4))
def test_the_hazards_read_from_the_states_say_what_the_events_say(part: int) -> None:
    """What `sim explore`'s hazards see before an event (a candidate's content, the
    acceptances, the feed's posts, the latest admission) or at the end of a tick is read from
    the states; the events, taken in order, say the same at every event of every named
    scenario and drawn run."""
    runs = [run_scenario(load_scenario(name, ()))[0] for name in scenarios.names()[part::4]]
    for trace in runs + [trace for _, _, trace in drawn_traces(part)]:
        assert list(hazard_disagreements(trace)) == []
