"""`sim check`'s state-space search against the schedule enumerator it replaced, the
soundness of the canonical state it merges nodes by, and the direct tick driver it steps.

The agreement test pins the search to its oracle: for every row of `--protections each`
(both checkpoint modes) the same schedules, the same number of schedules breaking each
property, and the same shortest counterexample (faults, tick, file) for each broken one. The
default run covers small bounds; `-m slow` covers every bound up to 2 faults, horizon 8.
"""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import benchmark, interpreted

from sim.analysis.check import enumerator
from sim.analysis.check.check import CheckBound, Config, check, configurations, space_of
from sim.engine.run import run
from sim.engine.rules import run_tick
from sim.engine.state import State
from sim.engine.trace import Kind
from sim.engine.world import World
from sim.model.faults import KINDS, Fault
from sim.model.schedule import worked_example
from sim.analysis.check.search import Chooser, Node, NodeKey, Search, node_key, root
from sim.analysis.sweep import COMBINATIONS
from sim.model.switches import Checkpoints, Switches

ROWS = configurations(Switches(), "each", list(Checkpoints))


def agree(configs: list[Config], bound: CheckBound) -> None:
    """The search and the enumerator agree on every figure they share."""
    searched = check(configs, bound)
    walked = enumerator.enumerate_all(configs, bound)
    for s, w in zip(searched, walked):
        where = f"{s.protections} {s.checkpoints} at {bound}"
        assert (s.schedules, s.violations, s.horizon_reached) == (w.schedules, w.violations, w.horizon_reached), where
        assert s.counterexamples == w.counterexamples, where
        assert s.nodes <= s.transitions <= max(1, w.schedules) * (bound.horizon + 30), where


@pytest.mark.parametrize("bound", [CheckBound(0, 8), CheckBound(1, 8)], ids=str)
def test_search_agrees_with_the_enumerator_on_one_fault(bound: CheckBound) -> None:
    agree(ROWS, bound)


def test_search_agrees_with_the_enumerator_on_two_faults_early() -> None:
    rows = [ROWS[0], ROWS[8], ROWS[2], ROWS[10]]  # all-on, fencing=off end-only, pins=off, key=per-attempt end-only
    assert [(r.protections, r.switches.checkpoints.value) for r in rows] == [
        ("all-on", "per-step"), ("fencing=off", "end-only"), ("pins=off", "per-step"), ("key=per-attempt", "end-only"),
    ]  # fmt: skip
    agree(rows, CheckBound(2, 3))


@pytest.mark.slow
@pytest.mark.parametrize("faults", [1, 2])
def test_search_agrees_with_the_enumerator_on_every_bound_up_to_two_faults_horizon_8(faults: int) -> None:
    for horizon in range(1, 9):
        agree(ROWS, CheckBound(faults, horizon))


def test_counterexamples_are_shortest_and_agree_where_something_breaks() -> None:
    rows = [r for r in ROWS[:7] if r.protections in ("fencing=off", "key=none", "rule=latest-finished")]
    agree(rows, CheckBound(2, 4))


# -- the canonical state is sound ------------------------------------------------------------
HISTORY_ONLY = {"result", "by", "version", "pin", "remembered"}  # remembered: a forgotten key's tick


def renamed(value: Any) -> Any:
    """A value of an event's detail with the history-only names taken out: result ids,
    writers, and version numbers (a version is known by its content)."""
    if isinstance(value, dict):
        return {k: renamed(v) for k, v in value.items() if k not in HISTORY_ONLY}
    if isinstance(value, list):
        return [renamed(v) for v in value if not (isinstance(v, str) and re.fullmatch(r"s\d+@\d+", v))]
    if isinstance(value, str):
        return re.sub(r"v\d+", "v?", value)
    return value


def future(state: State, rng: random.Random, budget: int, horizon: int, replay: list[Any]) -> list[Any]:
    """Run a state to its end, choosing faults at random (or replaying the choices of `replay`,
    given by consult index per tick); return the renamed events and the choices made."""
    events: list[Any] = []
    choices: list[Any] = []
    ticks = 0
    while not state.finished:
        t = state.tick
        plan: dict[int, Fault] = {}
        if replay:
            plan = dict(replay[ticks]) if ticks < len(replay) else {}
        elif budget > 0 and t <= horizon and rng.random() < 0.3:
            probe = Chooser({}, record=True)
            run_tick(state, t, probe)
            offered = [
                (i, fault)
                for i, moment, where in probe.consults or []
                for kind in KINDS if kind.moment is moment
                for fault in kind.offers((), t, where, horizon, worked_example(Switches()))
            ]  # fmt: skip
            if offered:
                i, fault = rng.choice(offered)
                plan = {i: fault}
                budget -= 1
        choices.append(sorted(plan.items(), key=lambda p: p[0]))
        state, tick_events = run_tick(state, t, Chooser(plan, record=False))
        events += [(e.tick, e.kind, e.attempt, renamed(e.detail)) for e in tick_events]
        ticks += 1
    return [events, state.horizon_reached, choices]


class Recording(Search):
    """A search that keeps pairs of different states it merged into one node."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.pairs: list[tuple[State, State]] = []

    def merge(self, following: dict[NodeKey, Node], arrived: Node) -> None:
        from sim.analysis.check.search import node_key

        known = following.get(node_key(arrived))
        if known is not None and known.state[:-1] != arrived.state[:-1] and len(self.pairs) < 400:
            self.pairs.append((known.state, arrived.state))
        super().merge(following, arrived)


@pytest.mark.parametrize(
    "values",
    [{}, {"fencing": "off"}, {"pins": "off"}, {"checkpoints": "end-only", "key": "none", "fencing": "off"},
     # the knobs' canonical forms: in the slow run (their agreement with the enumerator is in
     # the default run, tests/test_outside.py and tests/test_profiles.py)
     *[pytest.param(v, marks=pytest.mark.slow) for v in (
         {"fencing": "off", "zombie": "from-memory"}, {"checkpoints": "end-only", "fencing_scope": "step"},
         {"retention": "2"}, {"receiver": "none", "compensate": "yes"}, {"fenced_end": "adopts"},
         {"retries": "3"})]],
    ids=["all-on", "fencing-off", "pins-off", "end-only-weak", "zombie-from-memory", "step-fencing", "retention-2",
         "receiver-none-compensated", "fenced-adopts", "retries-3"],
)
def test_merged_states_have_the_same_future_up_to_renaming(values: dict[str, str]) -> None:
    config = Config("x", Switches().with_values(values))
    bound = CheckBound(2, 6)
    search = Recording(space_of(config, bound))
    start = root(search.space)
    from sim.analysis.check.search import node_key

    search.run({node_key(start): start}, 0)
    assert len(search.pairs) >= 20, "the search merged too few different states to test"
    rng = random.Random(12)
    for a, b in search.pairs:
        for _ in range(3):
            mine = future(a, rng, budget=1, horizon=bound.horizon, replay=[])
            theirs = future(b, rng, budget=1, horizon=bound.horizon, replay=mine[2])
            assert mine == theirs


# -- the direct tick driver is the SimPy run ----------------------------------------------------
def test_stepping_ticks_directly_gives_every_sweep_run() -> None:
    for switches in COMBINATIONS:
        schedule = worked_example(switches)
        whole = run(switches, schedule)
        world = World(switches, schedule)
        state = world.state
        events = []
        while not state.finished:
            state, tick_events = run_tick(state, state.tick, world)
            events += tick_events
        assert tuple(events) == whole.events
        assert (state.last_tick, state.horizon_reached) == (whole.last_tick, whole.horizon_reached)


def test_the_rules_log_only_the_kinds_asked_for_and_step_the_same_states() -> None:
    """`Faults.logged`: with a set of kinds the rules make exactly the events of those kinds
    the full log holds, in order, and the same states; with None every event. Drawn at random:
    the sweep's runs, a fault at random ticks, a random set of kinds each tick."""
    rng = random.Random(27)
    kinds = list(Kind)
    dropped = 0
    for switches in rng.sample(COMBINATIONS, 40):
        state = World(switches, worked_example(switches)).state
        while not state.finished:
            t = state.tick
            probe = Chooser({}, record=True)
            run_tick(state, t, probe)
            offered = [(i, fault) for i, moment, where in probe.consults or [] for kind in KINDS
                       if kind.moment is moment for fault in kind.offers((), t, where, 8, worked_example(switches))]  # fmt: skip
            plan = dict([rng.choice(offered)]) if offered and rng.random() < 0.3 else {}
            logged = frozenset(rng.sample(kinds, rng.randint(0, len(kinds))))
            whole, every = run_tick(state, t, Chooser(plan, record=False))
            some, kept = run_tick(state, t, Chooser(plan, False, logged))
            assert some == whole
            assert kept == [e for e in every if e.kind in logged]
            dropped += len(every) - len(kept)
            state = whole
    assert dropped > 100, "too few events left out to test"


def choices_built_twice_or_orphaned(search: Search, levels: int = 6) -> tuple[list[str], int]:
    """Walk the first levels of a search and list every node whose choices for a tick repeat
    a set of (consult, fault) pairs, or hold a set of several faults whose parent (the set
    without its last fault) is not among them; with the number of multi-fault sets seen."""
    frontier: dict[NodeKey, Node] = {("root",): root(search.space)}
    problems: list[str] = []
    multi = 0
    for t in range(levels):
        for node in list(frontier.values()):
            sets = [frozenset(plan) for plan, _, _ in search.successors(node, t)]
            if len(set(sets)) != len(sets):
                problems.append(f"t{t}: a set of faults built twice")
            for chosen in sets:
                if len(chosen) > 1:
                    multi += 1
                    last = max(chosen, key=lambda pair: pair[0])
                    if chosen - {last} not in sets:
                        problems.append(f"t{t}: {sorted(chosen, key=lambda pair: pair[0])} has no parent")
        frontier = search.level(frontier, t)
    return problems, multi


@pytest.mark.parametrize("row", [0, 5, 9])
def test_the_choices_of_a_tick_are_each_built_once(row: int) -> None:
    """Faults at several consults of one tick are one transition, a set, built once whatever
    the order they could be listed in (docs/check.md, "Reductions: what the search already
    does, and what it does not"): two faults at a time, the first levels of three rows."""
    problems, multi = choices_built_twice_or_orphaned(Search(space_of(ROWS[row], CheckBound(2, 6))))
    assert problems == []
    assert multi > 0, "no tick offered two faults: the test checked nothing"


def test_the_check_that_choices_are_built_once_sees_a_repeat_and_an_orphan() -> None:
    """The check above fails on a generation tree that lists each order of a pair, and on
    one that drops the single faults a pair grew from."""

    class EveryOrder(Search):
        def successors(self, node: Node, t: int):  # type: ignore[no-untyped-def, override]
            built = list(super().successors(node, t))
            yield from built
            for plan, state, events in built:
                if len(plan) == 2:  # the same pair, listed the other way round
                    yield plan[::-1], state, events

    class NoSingles(Search):
        def successors(self, node: Node, t: int):  # type: ignore[no-untyped-def, override]
            built = list(super().successors(node, t))
            paired = {pair for plan, _, _ in built if len(plan) == 2 for pair in plan}
            yield from (b for b in built if not (len(b[0]) == 1 and b[0][0] in paired))

    space = space_of(ROWS[0], CheckBound(2, 6))
    repeated, _ = choices_built_twice_or_orphaned(EveryOrder(space))
    assert any("built twice" in p for p in repeated)
    orphaned, _ = choices_built_twice_or_orphaned(NoSingles(space))
    assert any("has no parent" in p for p in orphaned)


@pytest.mark.parametrize("mode", list(Checkpoints), ids=lambda m: m.value)
def test_rows_sharing_exactly_find_what_each_row_finds_and_fail_on_an_unnoted_read(
    mode: Checkpoints, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The `lockstep` benchmark (docs/check.md, the paragraph on sharing work between rows):
    the rows of `-p each` searched together, a row taking over another's transitions when
    their switches agree on every field the ticks read, find what each row finds alone (nodes,
    transitions, schedules, violations, counterexamples), having taken some over; a record of
    the reads that misses `fencing` makes them differ. Interpreted (a proxy of `Setup` notes the
    reads, which the compiled rules read as a C struct's fields)."""
    if not interpreted(request):
        return
    bench = benchmark("bench_check")
    spaces = [space_of(c, CheckBound(1, 6)) for c in configurations(Switches(), "each", [mode])]
    alone = [bench.findings(Search(space).run({node_key(start): start}, 0)) for space in spaces for start in [root(space)]]
    stats: dict[str, Any] = {"read": {}}
    assert [bench.findings(f) for f in bench.lockstep_group(spaces, stats)] == alone
    assert stats.get("expansions taken over", 0) > 0 and "fencing" in stats["read"]
    noted = bench.Reading.__getattr__
    monkeypatch.setattr(bench.Reading, "__getattr__",
                        lambda self, name: getattr(self._record, name) if name == "fencing" else noted(self, name))  # fmt: skip
    assert [bench.findings(f) for f in bench.lockstep_group(spaces, {"read": {}})] != alone


def test_the_instruction_count_is_read_from_callgrinds_summary() -> None:
    """The `instructions` benchmark (docs/check.md, "Counted, not timed: instructions per
    transition"): its figure is callgrind's count, read from the summary line; a valgrind
    output without one is refused, not read as 0."""
    bench = benchmark("bench_check")
    assert bench.collected("==7== Events    : Ir\n==7== Collected : 5349352630\n==7==\n") == 5_349_352_630
    with pytest.raises(SystemExit, match="no callgrind summary"):
        bench.collected("==7== error: could not start\n")


@pytest.mark.slow
def test_the_instruction_count_repeats_and_grows_with_the_work() -> None:
    """Two counts of the same code agree within 0.01 % on a busy machine as on a quiet one, and
    more work counts more (three interpreters under valgrind: about 10 s, so in the slow tier)."""
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed (Debian's package valgrind)")
    bench = benchmark("bench_check")
    root = Path(bench.ROOT)
    idle, _ = bench.counted("pass", root)
    again, _ = bench.counted("pass", root)
    busy, said = bench.counted("print(sum(range(10**5)))", root)
    assert abs(again - idle) <= idle / 10_000, (idle, again)
    assert said == str(sum(range(10**5))) and busy > idle + 10**6


def test_a_node_goes_to_a_worker_and_back_whole() -> None:
    """A node crosses to a worker process by pickle (a unit of work's frontier): compiled, it
    has its own `__init__` and its own `__reduce__`; every field comes back, and a changed one
    does not compare equal."""
    import pickle
    from dataclasses import fields, replace

    space = space_of(Config("x", Switches()), CheckBound(1, 4))
    node = root(space)
    node = replace(node, used=1, count=3, rank=((1, 2, ()),))
    again = pickle.loads(pickle.dumps(node))
    assert type(again) is Node and again == node
    assert all(getattr(again, f.name) == getattr(node, f.name) for f in fields(Node))
    assert replace(again, count=4) != node


def test_the_memo_of_shared_parts_is_emptied_when_a_search_ends() -> None:
    """The canonical form's memo keeps the parts of the states it saw alive: filled while the
    search runs, emptied when it ends (else the collector scans them after the search)."""
    from sim.analysis.check import canon

    sizes: list[int] = []

    class Watched(Search):
        def level(self, frontier: dict[NodeKey, Node], t: int) -> dict[NodeKey, Node]:
            following = super().level(frontier, t)
            sizes.append(len(canon._memo))
            return following

    space = space_of(Config("x", Switches()), CheckBound(1, 5))
    start = root(space)
    Watched(space).run({node_key(start): start}, 0)
    # it holds the shared parts' forms (an attempt's form is not remembered: `canon.attempt`):
    # 47 at its largest in this search
    assert max(sizes) > 20 and len(canon._memo) == 0
