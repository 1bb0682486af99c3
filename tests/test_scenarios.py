"""Named scenarios: each carries its expected figures, and each invariant scenario breaks its invariant."""

from __future__ import annotations

import pytest

from sim.model.switches import FAULT_SWITCHES

from sim import scenario as scenarios
from sim.base.errors import ScenarioError, ScheduleError
from sim.model.faults import PosterDeath, ReportChange, Silence
from sim.properties import ARTICLE_NAMES as NAMES  # the article's invariants (beyond it: docs/outside.md)
from sim.run import run_scenario
from sim.model.switches import Switches

PUBLISHED = ["main", "main-end-only", "superseded", "versions-off"]


def test_every_named_scenario_is_listed_with_a_description() -> None:
    names = scenarios.names()
    for name in PUBLISHED + list(NAMES):
        assert name in names
    for name in names:
        assert scenarios.load(name).description


@pytest.mark.parametrize("name", scenarios.names())
def test_named_scenario_meets_its_expect_table(name: str) -> None:
    loaded = scenarios.load(name)
    assert loaded.expect, f"{name} has no [expect] table"
    _, result = run_scenario(loaded)
    assert scenarios.differences(loaded.expect, result.to_json()) == []


@pytest.mark.parametrize("name", [n for n in NAMES if n != "two-acceptances"])
def test_invariant_scenario_breaks_exactly_its_invariant(name: str) -> None:
    _, result = run_scenario(scenarios.load(name))
    assert result.broken == (name,)


def test_two_acceptances_needs_a_second_writer_so_stale_write_breaks_with_it() -> None:
    _, result = run_scenario(scenarios.load("two-acceptances"))
    assert result.broken == ("stale-write", "two-acceptances")
    assert dict(result.violations)["two-acceptances"] == 10


def test_published_scenarios_break_nothing_except_versions_off() -> None:
    for name in ["main", "main-end-only", "superseded"]:
        _, result = run_scenario(scenarios.load(name))
        assert result.violations == () and result.finished


def test_differences_name_each_field_that_does_not_match() -> None:
    expect = {"model_calls": 7, "newsletter": {"start_tick": 12, "quoted_revenue": "4.1"}, "finished": True}
    actual = {"model_calls": 6, "newsletter": {"start_tick": 12, "quoted_revenue": "4.7"}, "finished": True}
    assert scenarios.differences(expect, actual) == [
        "model_calls: expected 7, got 6",
        "newsletter.quoted_revenue: expected '4.1', got '4.7'",
    ]


def test_null_is_written_as_the_string_null() -> None:
    assert scenarios.differences({"first_accepted_tick": "null"}, {"first_accepted_tick": None}) == []


def test_set_changes_switches_and_drops_expectations() -> None:
    changed = scenarios.load("main").with_switches({"fencing": "off"})
    assert changed.switches == Switches().with_values({"fencing": "off"})
    assert changed.expect == {}


def test_schedule_overrides_replace_the_worked_example_faults() -> None:
    text = """
[schedule]
heartbeat_limit = 3
silences = [{attempt = 1, at = 2}]
changes = [{at = 5, sections = [1, 4]}]
"""
    loaded = scenarios.parse(text, "x.toml", "x")
    schedule = loaded.schedule
    assert schedule.heartbeat_limit == 3
    assert schedule.of(Silence) == (Silence(1, 2, None),)
    assert schedule.of(ReportChange)[0].sections == (1, 4)
    assert len(schedule.of(PosterDeath)) == 1  # still built from post_death=yes


def test_dump_round_trips_a_schedule() -> None:
    loaded = scenarios.load("superseded")
    text = scenarios.dump("round trip", loaded.switches, loaded.schedule, {"violations": []})
    again = scenarios.parse(text, "dumped.toml", "dumped")
    # the file says only what runs: the schedule, and the switches other than the three that
    # only shape the worked example's faults (which the schedule replaces)
    assert again.schedule == loaded.schedule
    assert {k: v for k, v in again.switches.as_dict().items() if k not in FAULT_SWITCHES} == {
        k: v for k, v in loaded.switches.as_dict().items() if k not in FAULT_SWITCHES}  # fmt: skip
    assert not any(f"\n{name} = " in text for name in FAULT_SWITCHES)
    assert again.expect == {"violations": []}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[switches\n", "x.toml: not valid TOML"),
        ("[switches]\nfencing = 'maybe'\n", "switch 'fencing' has no value 'maybe'; allowed: on, off"),
        ("[switches]\nfence = 'on'\n", "x.toml: switches.fence: unknown switch; switches are: silent, fencing"),
        ("colour = 1\n", "x.toml: colour: unknown key; allowed: description, workflow, switches, schedule, expect"),
        ("[schedule]\nsilences = [{attempt = 1, at = 5, wake = 4}]\n", "wakes at t4, not after its silence at t5"),
        ("[schedule]\nchanges = [{at = -1}]\n", "negative tick -1"),
        ("[schedule]\nsilences = [{attempt = 0, at = 3}]\n", "attempt #0 does not exist"),
        ("[schedule]\nchanges = [{at = 3, sections = [9]}]\n", "section 9 at t3 is outside 1..4"),
        ("[schedule]\npauses = []\n", "schedule.pauses: unknown key; allowed: sections"),
        ("[schedule]\nposter_deaths = [{point = 'midway'}]\n", "'midway' is not a death point; allowed: before-intent"),
        ("[expect]\nmodel_cals = 3\n", "expect.model_cals: unknown key; allowed: model_calls"),
        ("[schedule]\nsilences = [" + ", ".join(["{attempt = 1, at = 3}"] * 101) + "]\n",
         "x.toml: schedule.silences: a list of 101 entries; at most 100 are allowed"),
        ("[expect]\nviolations = [" + ", ".join(["{invariant = 'stale-write', tick = 1}"] * 101) + "]\n",
         "x.toml: expect.violations: a list of 101 entries"),
        ("x = " + "[" * 12 + "1" + "]" * 12 + "\n", "x.toml: x[0][0][0][0][0][0][0][0]: tables or arrays nested too deeply"),
    ],
)
def test_bad_scenario_files_name_the_file_and_the_key(text: str, message: str) -> None:
    with pytest.raises((ScenarioError, ScheduleError)) as err:
        scenarios.parse(text, "x.toml", "x")
    assert message in str(err.value)
    assert "x.toml" in str(err.value)


def test_unknown_scenario_name_lists_the_named_ones() -> None:
    with pytest.raises(ScenarioError, match=r"unknown scenario 'mian'; did you mean 'main'\? named scenarios: .*main"):
        scenarios.load("mian")
