"""The ten cases beyond the article's model (sim/model/cases.py) stay in step with the named
scenarios, the fault kinds and knobs, and the README's section."""

from __future__ import annotations

from pathlib import Path

from sim import scenario as scenarios
from sim.model.cases import CASES, runs_with
from sim.run import run_scenario

ROOT = Path(__file__).resolve().parent.parent


def readme_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Beyond the article's model")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_each_case_is_listed_once_in_number_order() -> None:
    numbers = [c.number for c in CASES]
    assert numbers == sorted(set(numbers)) and set(numbers) <= set(range(1, 11))


def test_each_case_names_real_kinds_knobs_and_scenarios_that_check() -> None:
    names = set(scenarios.names())
    for case in CASES:
        assert runs_with(case.number), f"no fault kind or knob declares case {case.number}"
        for name in case.scenarios:
            assert name in names, name
            loaded = scenarios.load(name)
            assert loaded.expect, f"{name} has no [expect] table"
            _, outcome = run_scenario(loaded)
            assert scenarios.differences(loaded.expect, outcome.to_json()) == [], name


def test_the_readme_section_names_each_case_and_its_scenarios() -> None:
    section = readme_section()
    for case in CASES:
        assert f"**{case.number}. " in section, case.number
        for name in case.scenarios:
            assert f"`{name}`" in section or name in section, name
