"""Soundness of `sim check`'s merging, measured: the same bound searched three ways.

For each drawn setting (a profile or none, every protection switch, every knob, a set of
fault kinds, a bound) this compares

- (a) the state-space search, merging nodes by their canonical state (`sim check`);
- (b) the search with `merge="none"`, merging only nodes whose full states are equal
  (`sim check --merge none`: trusts no canonical form);
- (c) the plain schedule enumerator (`sim.analysis.check.enumerator`: one engine run per schedule);

on the schedules counted, the schedules breaking each property (every property, judged
whatever the fault set) and the shortest counterexample of each. A disagreement prints the
setting (as the `sim check` options that rerun it, and the fault kinds) and the schedules
it concerns: the two paths the canonical search merged although their futures differ
(`diagnose`), or the counterexamples that differ.

The default run draws at least 200 settings at K <= 2, T <= 7; `-m slow` draws 2,000 up to
K = 3, T = 8 (docs/check.md, "Soundness of merging", gives both sizes and their result).
The draws are derandomized (tests/conftest.py), so a run is reproducible.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.analysis.check import enumerator
from sim import properties
from sim.analysis.check.check import SETTING, CheckBound, Config, Result, result_of, workflow_setting
from sim.analysis.check.canon import canonical
from sim.engine.rules import run_tick
from sim.engine.state import State
from sim.engine.world import World
from sim.model.faults import KINDS, CodeUpdate, ControllerRestart, Fault, HeartbeatDelay, Silence, WrongSummary, describe
from sim.model.knobs import KNOBS
from sim.model.profiles import NAMES as PROFILES
from sim.model.profiles import get as profile
from sim.analysis.check.search import Found, Node, NodeKey, Search, Space, node_key, root
from sim.model.schedule import Schedule
from sim.model.switches import FAULT_SWITCHES, SWITCHES, Switches

#: every property, judged whatever the fault kinds (the widest comparison)
ALL_JUDGED = (*properties.SAFETY, properties.EFFECTS_CONFIRMED)
JUDGED = tuple(p.name for p in ALL_JUDGED)
#: the protection switches a setting may set (the fault switches describe the worked example's faults)
PROTECTION_SWITCHES = {name: tuple(m.value for m in enum) for name, enum in SWITCHES.items() if name not in FAULT_SWITCHES}
#: each knob's values: its named ones, and for an integer knob a few small numbers
KNOB_VALUES = {
    name: knob.values + (() if knob.integers is None else ("1", "2", "3")) for name, knob in KNOBS.items()
}
KIND_KEYS = tuple(kind.key for kind in KINDS)


@dataclass(frozen=True)
class Bound(CheckBound):
    """A `CheckBound` over any set of fault kinds (not only `--faults article|all`), judging
    every property: what the enumerator walks."""

    keys: tuple[str, ...] = ()

    @property
    def kinds(self) -> tuple[type[Fault], ...]:
        return tuple(kind for kind in KINDS if kind.key in self.keys)

    def judged_for(self, switches: Switches) -> tuple[properties.Property, ...]:
        return ALL_JUDGED


@dataclass(frozen=True)
class Setting:
    """One drawn setting: the profile (or none), the switch and knob values over it, the
    fault kinds enumerated and the bound."""

    profile: str | None
    values: dict[str, str] = field(hash=False)
    kinds: tuple[str, ...]
    max_faults: int
    horizon: int
    #: the constants of every schedule: the article's, or a drawn workflow's (`workflow_setting`)
    shape: Schedule = SETTING
    #: the drawn workflow's own settings (its assessor's knob), under `values`
    own: dict[str, str] = field(default_factory=dict, hash=False)
    #: the drawn workflow, whose effects (each with its receiver) and dependants the switches carry
    workflow: Any = field(default=None, hash=False)

    @property
    def switches(self) -> Switches:
        base = Switches() if self.profile is None else profile(self.profile).switches()
        switches = base.with_values({**self.own, **self.values})
        if self.workflow is None:
            return switches
        from sim.model.workflow import on_workflow

        return on_workflow(switches, self.workflow)

    def command(self) -> str:
        """The `sim check` options that rerun it (the fault kinds are said apart: `--faults`
        names only the article's four or all of them)."""
        sets = " ".join(f"--set {name}={value}" for name, value in self.values.items())
        where = f"--profile {self.profile} " if self.profile else ""
        shape = "" if self.shape == SETTING else f"; on a workflow whose setting is {self.shape}"
        return (f"sim check -k {self.max_faults} -t {self.horizon} {where}{sets} -p all --faults all; "
                f"fault kinds: {', '.join(self.kinds) or 'none'}{shape}")  # fmt: skip

    def space(self, merge: str) -> Space:
        return Space(self.switches, self.max_faults, self.horizon, self.shape, JUDGED, self.kinds, merge)


@st.composite
def drawn(draw: st.DrawFn, max_faults: int, horizon: int, kinds_at_most: int) -> Setting:
    """A setting: each switch and knob left as it is (the profile's or the worked example's)
    or set to a value, a set of fault kinds (at most `kinds_at_most` when the bound has
    `max_faults` faults, so that the space stays small) and a bound."""
    name = draw(st.none() | st.sampled_from(PROFILES))
    values: dict[str, str] = {}
    for switch, choices in PROTECTION_SWITCHES.items():
        value = draw(st.none() | st.sampled_from(choices))
        if value is not None:
            values[switch] = value
    for knob, choices in KNOB_VALUES.items():
        if draw(st.integers(0, 3)) == 0:  # a quarter of the draws set each knob
            values[knob] = draw(st.sampled_from(choices))
    # the bound counts down from the largest, so that Hypothesis's first (simplest) draws
    # are the largest bounds rather than the empty one
    faults = max_faults - draw(st.integers(0, max_faults))
    most = len(KIND_KEYS) if faults < max_faults else kinds_at_most
    keys = draw(st.sets(st.sampled_from(KIND_KEYS), max_size=most))
    kinds = tuple(key for key in KIND_KEYS if key in keys)
    return Setting(name, values, kinds, faults, horizon - draw(st.integers(0, horizon - 1)))


# -- the three ways ---------------------------------------------------------------------------------
def searched(setting: Setting, merge: str) -> Result:
    space = setting.space(merge)
    start = root(space)
    found = Search(space).run({node_key(start, merge): start}, 0)
    return result_of(Config("drawn", setting.switches), found, JUDGED, setting=setting.shape)


def figures(r: Any) -> tuple[Any, ...]:
    """What the three must agree on: schedules, broken counts, counterexamples, horizon hits."""
    return r.schedules, r.violations, r.counterexamples, r.horizon_reached


def disagreements(setting: Setting) -> list[str]:
    """Each way's figures that differ from the enumerator's, in words ([] when all agree)."""
    bound = Bound(max_faults=setting.max_faults, horizon=setting.horizon, faults="all", keys=setting.kinds,
                  setting=setting.shape)
    walked = enumerator.enumerate_all([Config("drawn", setting.switches)], bound)[0]
    out = []
    for merge in ("canonical", "none"):
        mine = searched(setting, merge)
        if figures(mine) == figures(walked):
            continue
        out.append(f"merge={merge}: schedules {mine.schedules:,} (enumerator {walked.schedules:,})")
        for name in JUDGED:
            if mine.violations[name] != walked.violations[name]:
                out.append(f"  {name}: {mine.violations[name]:,} broken (enumerator {walked.violations[name]:,})")
        for name in sorted(set(mine.counterexamples) | set(walked.counterexamples)):
            a, b = mine.counterexamples.get(name), walked.counterexamples.get(name)
            if a != b:
                out.append(f"  {name}: counterexample {example(a)} (enumerator {example(b)})")
        if merge == "canonical":
            out += diagnose(setting)
    return out


def example(c: Any) -> str:
    return "none" if c is None else f"at t{c.tick} <- {c.describe()}"


class Merges(Search):
    """A canonical search that keeps the pairs of nodes with different full states it merged."""

    def __init__(self, space: Space) -> None:
        super().__init__(space)
        self.pairs: list[tuple[Node, Node]] = []

    def merge(self, following: dict[NodeKey, Node], arrived: Node) -> None:
        known = following.get(self.key(arrived))
        if known is not None and known.state != arrived.state and len(self.pairs) < 5000:
            self.pairs.append((replace(known), arrived))
        super().merge(following, arrived)


def diagnose(setting: Setting) -> list[str]:
    """The first two paths the canonical search merged whose futures differ (searched from
    each with no merging): the schedules to look at."""
    search = Merges(setting.space("canonical"))
    start = root(search.space)
    search.run({node_key(start): start}, 0)
    none = setting.space("none")
    for a, b in search.pairs:
        futures = []
        for node in (a, b):
            alone = Node(node.state, node.used, node.pending, node.memos, node.broken, node.idle, 1, node.path,
                         node.rank)  # fmt: skip
            found = Search(none).run({node_key(alone, "none"): alone}, node.state.tick)
            futures.append((found.schedules, found.violations))
        if futures[0] != futures[1]:
            return [
                f"  merged at t{a.state.tick} with different futures {futures[0]} / {futures[1]}:",
                f"    {describe(a.path, none='no faults')}",
                f"    {describe(b.path, none='no faults')}",
            ]
    return ["  (no merged pair with different futures found among the first 5,000)"]


class TooBig(Exception):
    pass


class Sizing(Search):
    """A canonical search that gives up past `limit` transitions."""

    limit = 0

    def level(self, frontier: dict[NodeKey, Node], t: int) -> dict[NodeKey, Node]:
        if self.found.transitions > self.limit:
            raise TooBig
        return super().level(frontier, t)


def fitted(setting: Setting, cap: int) -> Setting:
    """The setting, its horizon lowered until its space holds at most `cap` schedules (so
    that the enumerator, which runs each schedule from t0, stays quick)."""
    while setting.horizon > 1:
        space = setting.space("canonical")
        search = Sizing(space)
        search.limit = cap
        start = root(space)
        try:
            if search.run({node_key(start): start}, 0).schedules <= cap:
                return setting
        except TooBig:
            pass
        setting = replace(setting, horizon=setting.horizon - 1)
    return setting


def judge(setting: Setting, cap: int) -> None:
    setting = fitted(setting, cap)
    problems = disagreements(setting)
    log = os.environ.get("SIM_DIFFERENTIAL_LOG")
    if log:  # one line per setting tried (docs/check.md counts them)
        with open(log, "a") as out:
            out.write(f"{setting.max_faults} {setting.horizon} {len(problems)} {setting.command()}\n")
    assert not problems, "\n".join([f"disagreement under {setting.command()}", *problems])


# -- defect 1 of issue 22: a replay-failed attempt still running --------------------------------------
STRICT = Setting(None, {"replay": "strict", "checkpoints": "per-step"},
                 ("silences", "heartbeat_delays", "code_changes"), 4, 7)  # fmt: skip


def test_a_stuck_attempt_keeps_its_unheard_window() -> None:
    """replay=strict: #2 restores #1's record of other code and is stuck, its program ended
    while it is still running. Its heartbeats, unheard from t5 for 3 ticks, get it suspected
    at t7 and #3 admitted; unheard for 1 tick, nothing more happens. At t6 the two states
    must not merge unless their futures are the same."""
    def run(ticks: int) -> tuple[State, list[Any]]:
        schedule = SETTING.with_faults((Silence(1, 2, None), CodeUpdate(3), HeartbeatDelay(2, 5, ticks)))
        world = World(STRICT.switches, schedule)
        state, at6, events = world.state, None, []
        while not state.finished:
            if state.tick == 6:
                at6 = state
            state, tick_events = run_tick(state, state.tick, world)
            if state.tick > 6 or state.finished:
                events += [(e.tick, e.kind, e.attempt) for e in tick_events if e.tick >= 6]
        assert at6 is not None
        return at6, events

    (short, heard), (long, unheard) = run(1), run(3)
    if canonical(short) == canonical(long):
        assert heard == unheard


def test_a_stuck_attempt_counts_as_the_enumerator_does() -> None:
    """The same, counted: the smallest bound at which the search (merging by the canonical
    state) lost schedules (75,408 of 75,420) was K = 4, T = 7 over silences, heartbeat delays
    and code changes, replay=strict, per-step."""
    assert figures(searched(STRICT, "canonical")) == figures(searched(STRICT, "none"))


# -- found by review on 2026-12-02 -------------------------------------------------------------------
def run_to(switches: Switches, faults: tuple[Fault, ...], at: int, shape: Schedule = SETTING) -> tuple[State, list[Any]]:
    """The state at the start of tick `at` and the events from then on (ticks, kinds, attempts
    and details, result ids left out: the names the canonical form may drop)."""
    world = World(switches, shape.with_faults(faults))
    state, mid, events = world.state, None, []
    while not state.finished:
        if state.tick == at:
            mid = state
        state, tick_events = run_tick(state, state.tick, world)
        events += [(e.tick, e.kind, e.attempt, {k: v for k, v in e.detail.items() if k != "result"})
                   for e in tick_events if e.tick >= at]  # fmt: skip
    assert mid is not None
    return mid, events


FIGURES = Switches().with_values({"assessor": "figures", "fencing": "off", "pins": "off", "checkpoints": "per-step"})


def test_a_wrong_result_struck_by_its_id_is_not_merged_with_another() -> None:
    """assessor=figures strikes the journal record that holds the very wrong result a refused
    digest had (`rules.strike`). At t7 #2 holds the journal's own wrong s1 (restored) in X1,
    and a wrong s1 it computed itself in X2: after d2's refusal X1 recomputes s1, X2
    restores the journal's wrong s1 again and is refused once more. The canonical form
    dropped result ids, and merged the two."""
    x1, after1 = run_to(FIGURES, (WrongSummary(1, 1), Silence(1, 1, 4), Silence(2, 4, 5), Silence(1, 5, None)), 7)
    x2, after2 = run_to(FIGURES, (WrongSummary(1, 1), Silence(1, 1, 5), WrongSummary(2, 1), Silence(1, 6, None)), 7)
    assert after1 != after2
    assert canonical(x1) != canonical(x2)


def test_a_wrong_result_struck_by_its_id_counts_as_the_enumerator_does() -> None:
    """The same, counted: with chat-summary, silences and wrong summaries, K = 4, T = 6, the
    search merging by the canonical state counted 312 schedules breaking misused-dependant,
    --merge none and the enumerator 313."""
    from sim.model.workflow import knobs_of
    from sim.workflow import load

    wf = load("chat-summary")
    setting = Setting(None, {"assessor": "figures", "fencing": "off", "pins": "off", "checkpoints": "per-step",
                             "rule": "latest-finished"}, ("silences", "wrong_summaries"), 4, 6,
                      shape=workflow_setting(wf), own=knobs_of(wf), workflow=wf)  # fmt: skip
    assert searched(setting, "canonical").violations["misused-dependant"] == 313
    assert disagreements(setting) == []


def test_a_paused_attempts_silence_is_kept_with_retries() -> None:
    """retries: a paused worker that wakes runs one re-delivery per step timeout it was
    silent (`rules.wake`). At t8 #1 is paused and suspected in both runs, silent since t3 in A
    and t2 in B; it wakes at t10 and runs 3 re-deliveries in A, 4 in B. The canonical form
    kept only that it was silent, and merged the two."""
    switches = Switches().with_values({"retries": "4", "checkpoints": "per-step"})
    a, after_a = run_to(switches, (Silence(1, 1, 2), ControllerRestart(2, 3), Silence(1, 3, 10)), 8)
    b, after_b = run_to(switches, (HeartbeatDelay(1, 1, 1), Silence(1, 2, 10), ControllerRestart(2, 3)), 8)
    assert after_a != after_b
    assert canonical(a) != canonical(b)


# -- the drawn settings -----------------------------------------------------------------------------
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(drawn(max_faults=2, horizon=7, kinds_at_most=3))
def test_the_search_merged_and_unmerged_and_the_enumerator_agree(setting: Setting) -> None:
    judge(setting, cap=3000)


@st.composite
def on_workflows(draw: st.DrawFn) -> Setting:
    """A drawn setting on a drawn workflow of a shape the engine runs: 2..6 steps over one or two
    inputs, each reading parts and earlier steps, the figure a part some step reads, one or two
    effects (dedup, kept for ever or for a few ticks, no key, or read-back), one or two
    dependants ready at drawn ticks."""
    from sim.model.workflow import Artifact, Dependant, Effect, Input, Step, Workflow, check, knobs_of

    inputs = tuple(Input(f"in{k}", tuple(f"p{i}" for i in range(draw(st.integers(1, 3)))))
                   for k in range(draw(st.integers(1, 2))))  # fmt: skip
    parts = [f"{i.name}.{p}" for i in inputs for p in i.parts]
    steps = [Step(f"t{i}", tuple(draw(st.lists(st.sampled_from(parts), min_size=1, max_size=2, unique=True))
                                 + draw(st.lists(st.sampled_from([f"t{j}" for j in range(i)] or ["t0"]), max_size=1,
                                                 unique=True)) * (i > 0)))
             for i in range(draw(st.integers(2, 6)))]  # fmt: skip
    effects = []
    for k in range(draw(st.integers(1, 2))):
        receiver = draw(st.sampled_from(["dedup", "no-key", "read-back"]))
        effects.append(Effect(f"e{k}", receiver, draw(st.none() | st.integers(1, 6)) if receiver == "dedup" else None,
                              draw(st.booleans())))  # fmt: skip
    dependants = tuple(Dependant(f"d{k}", draw(st.integers(0, 14))) for k in range(draw(st.integers(1, 2))))
    wf = Workflow("drawn", "drawn", inputs, tuple(steps),
                  Artifact("a", tuple(s.name for s in steps), draw(st.sampled_from(sorted({r for s in steps for r in s.reads
                                                                                       if "." in r})))),
                  tuple(effects), dependants, "drawn.toml")  # fmt: skip
    check(wf)
    base = draw(drawn(max_faults=2, horizon=7, kinds_at_most=3))
    return replace(base, shape=workflow_setting(wf), own=knobs_of(wf), workflow=wf)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(on_workflows())
def test_the_three_agree_on_drawn_workflows(setting: Setting) -> None:
    """The differential test on workflows drawn at random (docs/workflows.md): their setting
    (steps, the figure's step, the dependant's ready tick) and their receiver's settings."""
    judge(setting, cap=3000)


# the slow run's 2,000 settings, as two tests of 1,000 (each test's draws derive from its own
# source, so the two draw different settings) that `-n 2` runs side by side
SLOW = drawn(max_faults=3, horizon=8, kinds_at_most=2)
SLOW_SETTINGS = settings(max_examples=1000, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.slow
@SLOW_SETTINGS
@given(SLOW)
def test_the_three_agree_on_1000_settings_up_to_three_faults_horizon_8(setting: Setting) -> None:
    judge(setting, cap=3000)


@pytest.mark.slow
@SLOW_SETTINGS
@given(SLOW)
def test_the_three_agree_on_1000_more_settings_up_to_three_faults_horizon_8(setting: Setting) -> None:
    judge(setting, cap=3000)


def test_a_disagreement_names_the_setting_and_the_schedules(monkeypatch: pytest.MonkeyPatch) -> None:
    """The report of a disagreement, on a canonical form made unsound on purpose (it forgets
    every attempt's unheard window): the options that rerun it and the two merged paths."""
    import sys

    class Forgetful:  # every search below keys its nodes by the unsound form (`Search.key`)
        def key(self, node: Node) -> NodeKey:
            if self.space.merge != "canonical":  # type: ignore[attr-defined]
                return super().key(node)  # type: ignore[misc,no-any-return]
            state = node.state._replace(attempts=tuple(a._replace(unheard=None) for a in node.state.attempts))
            return (canonical(state), node.used, node.pending, node.memos, node.broken, node.idle)

    here = sys.modules[__name__]
    for name in ("Search", "Merges", "Sizing"):
        monkeypatch.setattr(here, name, type(name, (Forgetful, getattr(here, name)), {}))
    setting = Setting(None, {}, ("heartbeat_delays",), 2, 6)
    with pytest.raises(AssertionError) as failed:
        judge(setting, cap=3000)
    text = str(failed.value)
    assert "sim check -k 2 -t 6" in text and "fault kinds: heartbeat_delays" in text
    assert "merged at t" in text and "heartbeats go unheard" in text


