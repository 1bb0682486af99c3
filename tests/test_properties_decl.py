"""The properties as declared data (`sim.properties`): one declaration each, their guards,
the new progress property effects-confirmed, and the pins-off wording of `sim trace`."""

from __future__ import annotations

import importlib
import pkgutil
import random

import pytest
from click.testing import CliRunner

import sim.properties as props
from sim.analysis import explore
from sim.cli import cli
from sim.properties.outcome import FIELDS
from sim.properties import base
from sim.run import run_scenario, simulate
from sim.scenario import load
from sim.model.schedule import worked_example
from sim.model.switches import COMBINATIONS, WEAKENINGS, Switches
from sim.engine.trace import Kind, Trace

INVARIANTS = ("duplicate-effect", "misused-dependant", "stale-write", "two-acceptances", "wrong-acceptance")


def test_every_property_is_declared_once_in_its_own_module() -> None:
    # read from the registry, so that a new property module is all a new property needs
    # (docs/extending.md); the article's own invariants are the article's five
    safety = sorted(p.name for p in props.PROPERTIES if p.safety)
    progress = sorted(p.name for p in props.PROPERTIES if not p.safety)
    assert [p.name for p in props.PROPERTIES] == [*safety, *progress]
    assert props.NAMES == tuple(safety) and props.ARTICLE_NAMES == INVARIANTS
    assert [p.name for p in props.SAFETY] == safety
    assert [p.name for p in props.PROGRESS] == progress and {"effects-confirmed", "finished"} <= set(progress)
    # every module but the registry (base) and what a run came to (outcome, on the same floor)
    modules = [m.name for m in pkgutil.iter_modules(props.__path__) if m.name not in ("base", "outcome")]
    declared = {}
    for name in modules:
        module = importlib.import_module(f"sim.properties.{name}")
        declared[module.PROPERTY.name] = name
    assert sorted(declared) == sorted(p.name for p in props.PROPERTIES)
    assert all(module == name.replace("-", "_") for name, module in declared.items())
    with pytest.raises(ValueError, match="declared twice"):
        base.register(props.BY_NAME["stale-write"])


def test_kinds_descriptions_and_guards() -> None:
    for p in props.SAFETY:
        assert p.temporal is props.ALWAYS and p.temporal.judged == "at every event"
    for p in props.PROGRESS:
        assert p.temporal is props.EVENTUALLY and p.temporal.judged == "at the end of the run"
    guards = {p.name: p.guard.switch if p.guard else None for p in props.PROPERTIES}
    assert {name: guards[name] for name in GUARDED} == GUARDED
    assert props.BY_NAME["stale-write"].description == (
        "no protected store applied a write whose token was below the epoch"
    )


#: the protection that guards each property of the article's and of the cases declared so far
#: (a property declared later gets its own test: docs/extending.md)
GUARDED: dict[str, str | None] = {
    "duplicate-effect": "key", "misused-dependant": "rule", "stale-write": "fencing",
    "two-acceptances": "pins", "wrong-acceptance": "pins", "effects-confirmed": "fencing", "finished": "pins",
    "uncorrected-duplicate": "key",
    "faithful-digest": None,
}  # fmt: skip


def test_the_outcome_keeps_only_the_invariants() -> None:
    trace, result = run_scenario(load("lost-announcement"))
    assert result.violations == (("stale-write", 10),)
    assert "effects-confirmed" not in str(result.to_json()) and "effects_confirmed" not in FIELDS
    assert result.finished is False and not props.FINISHED.holds(trace)


def test_effects_confirmed_breaks_on_lost_announcement_at_the_unconfirmed_intent() -> None:
    trace, _ = run_scenario(load("lost-announcement"))
    prop = props.EFFECTS_CONFIRMED
    index = prop.first_break(trace)
    assert index is not None
    e = trace.events[index]
    assert (e.tick, e.detail["record"], e.detail["digest"], e.attempt) == (12, "intent", "d1", 1)
    assert prop.first_tick(trace) == 12
    assert props.violations(trace, props.PROGRESS) == [("effects-confirmed", 12), ("finished", 12)]
    assert "never confirmed" in prop.why(trace, index)


@pytest.mark.parametrize("name", ["main", "main-end-only", "superseded", "duplicate-effect", "stale-write"])
def test_effects_confirmed_holds_where_every_post_is_confirmed(name: str) -> None:
    trace, _ = run_scenario(load(name))
    assert props.EFFECTS_CONFIRMED.holds(trace)


def test_all_on_sweep_runs_hold_every_property() -> None:
    for switches in COMBINATIONS:
        if switches.protections_on() == tuple(props.GUARDS):
            trace, _ = simulate(switches, worked_example(switches))
            assert props.violations(trace, props.PROPERTIES) == [], switches.label()


def reference_at_risk(trace: Trace) -> set[str]:
    """The hazards as the explorer computed them before they became declarations (kept as
    an independent oracle). The invariants whose hazard arose in this run.

    - stale-write: an attempt tried a protected write with a token below the epoch;
    - wrong-acceptance: a candidate not built from the current report was assessed;
    - two-acceptances: a candidate was assessed while a digest was already accepted for the
      current report;
    - duplicate-effect: the feed received an operation again after it had applied it once
      (a resend or a second copy, whatever its answer);
    - misused-dependant: while the newsletter was ready and waiting (from its ready tick to
      the tick it started, or the end), the latest candidate or the latest accepted digest
      was not an accepted digest built from the then-current report, so the weaker rules
      ("latest finished", "any accepted") would have taken a wrong digest.
    A broken invariant was always at risk.
    """
    risky: set[str] = set()
    content = trace.versions[0]
    built: dict[str, tuple[int, ...]] = {}  # candidate digest -> what it was built from
    accepted_for: set[tuple[int, ...]] = set()  # report contents a digest was accepted for
    accepted: set[str] = set()
    applied: set[str] = set()
    latest: str | None = None
    latest_accepted: str | None = None
    ready = trace.schedule.newsletter_ready
    started: int | None = None
    events = trace.events
    count = len(events)
    for i, e in enumerate(events):
        kind = e.kind
        d = e.detail
        if kind is Kind.WRITE:
            if d["token"] < d["epoch"]:
                risky.add("stale-write")
            if d["record"] == "candidate" and d["applied"]:
                built[d["digest"]] = tuple(p[1] for p in d["parts"])
                latest = d["digest"]
        elif kind is Kind.ACCEPTED or kind is Kind.REFUSED:
            if built.get(d["digest"]) != content:
                risky.add("wrong-acceptance")
            if content in accepted_for:
                risky.add("two-acceptances")
            if kind is Kind.ACCEPTED:
                accepted_for.add(content)
                accepted.add(d["digest"])
                latest_accepted = d["digest"]
        elif kind is Kind.FEED:
            if d["digest"] in applied:
                risky.add("duplicate-effect")
            if d["answer"] == "applied":
                applied.add(d["digest"])
        elif kind is Kind.REPORT_CHANGED:
            content = tuple(d["content"])
        elif kind is Kind.NEWSLETTER:
            started = e.tick
        # the newsletter gate reads the state at the end of each tick (docs/model.md §5.3 b comes after
        # assessment, and nothing later in a tick writes candidates or acceptances)
        end_of_tick = i + 1 == count or events[i + 1].tick != e.tick
        if end_of_tick and e.tick >= ready and (started is None or started == e.tick):
            for digest in (latest, latest_accepted):
                if digest is not None and (digest not in accepted or built.get(digest) != content):
                    risky.add("misused-dependant")
    return risky


def test_hazards_and_verdicts_agree_with_the_explorer_and_the_outcome() -> None:
    """`sim.properties.at_risk` gives the same sets as the explorer's former single-pass
    `at_risk` (kept above as an oracle), and the outcome's fields come from the properties."""
    rng = random.Random(3)
    configs = [Switches()] + [Switches().with_values({k: v}) for k, v in WEAKENINGS]
    for switches in configs:
        choices = explore.SeededChoices(rng)
        for _ in range(60):
            trace, result = simulate(switches, explore.draw_schedule(choices))
            assert props.at_risk(trace) == reference_at_risk(trace)
            assert result.finished == props.FINISHED.holds(trace)
            assert result.violations == tuple(props.violations(trace))
            assert set(result.broken) <= props.at_risk(trace)


ON = Switches()


@pytest.mark.parametrize(("setting", "name", "reason"), [
    (("fencing", "off"), "stale-write", "fencing is off"),
    (("pins", "off"), "wrong-acceptance", "pins is off"),
    (("pins", "off"), "two-acceptances", "pins is off"),
    (("key", "per-attempt"), "duplicate-effect", "key is off"),
    (("key", "none"), "duplicate-effect", "key is off"),
    (("rule", "any-accepted"), "misused-dependant", "rule is off"),
    (("rule", "latest-finished"), "misused-dependant", "rule is off"),
    (("fencing", "off"), "effects-confirmed", "fencing is off"),
])  # fmt: skip
def test_each_weakening_unguards_what_its_protection_guards(setting: tuple[str, str], name: str, reason: str) -> None:
    weak = ON.with_values(dict([setting]))
    assert props.unguarded_by(weak, name) == reason and not props.guarded(weak, name)
    assert props.guarded(ON, name) and props.unguarded_by(ON, name) is None
    # every other property keeps its guard (the pins-off gate case aside)
    for other in props.PROPERTIES:
        if other.guard is not None and other.guard.switch != setting[0] and setting[0] not in {
            g.switch for g in other.also
        } and setting != ("pins", "off"):
            assert other.guarded(weak), (setting, other.name)


def test_pins_off_and_the_gate() -> None:
    misused = props.BY_NAME["misused-dependant"]
    fail_open = ON.with_values({"pins": "off"})
    fail_closed = ON.with_values({"pins": "off", "gate": "fail-closed"})
    assert misused.unguarded_by(fail_open) == "pins is off and the gate fails open"
    assert not misused.guarded(fail_open)
    assert misused.guarded(fail_closed) and misused.unguarded_by(fail_closed) is None
    assert misused.remedies(fail_open) == ("pins=on", "gate=fail-closed")
    assert misused.remedies(fail_closed) == ()
    # the rule off as well: switching the rule on alone would not be enough
    both = fail_open.with_values({"rule": "any-accepted"})
    assert misused.unguarded_by(both) == "rule is off"
    assert misused.caveat(both) is not None and misused.caveat(fail_closed.with_values({"rule": "any-accepted"})) is None
    assert misused.remedies(both) == ("rule=current-accepted", "pins=on", "gate=fail-closed")
    assert misused.guard_text(ON) == "guarded by the newsletter rule current-accepted (on here)"


def test_verdict_words_are_said_once() -> None:
    assert (props.verdict(False), props.verdict(True)) == ("holds", "broken")
    assert props.verdict(False, bounded=True) == "holds within the bound"
    assert props.verdict(True, bounded=True) == "broken"


def test_trace_with_pins_off_names_only_what_would_have_stopped_each_break() -> None:
    result = CliRunner().invoke(cli, ["trace", "main", "--set", "pins=off", "--no-color", "--width", "200"])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    out = result.output
    broke = [line.split(" broke at ")[0] for line in out.splitlines() if " broke at t" in line]
    assert broke == ["misused-dependant", "wrong-acceptance"]
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith("stop")]
    assert lines == [
        "stop   not guarded here: the newsletter rule current-accepted is on but does not hold it, as pins is off "
        "and the gate fails open; pins=on or gate=fail-closed alone would have stopped it",
        "stop   guarded by version pins (off here: pins=off); pins=on alone would have stopped it",
    ]
    assert "current-accepted (on here)" not in out
    # with the fail-closed gate the rule holds again: nothing breaks it
    closed = CliRunner().invoke(cli, ["trace", "main", "--set", "pins=off", "--set", "gate=fail-closed", "--no-color"])
    assert "misused-dependant broke" not in closed.output
