"""`sim diff`: one change at a time (sim.render.diff, sim.commands.diff)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from rich.cells import cell_len
from test_swimlane import check_golden  # one way to compare with the golden files

from sim.cli import cli, main
from sim.commands.common import load_scenario
from sim.render import diff as diffs
from sim.run import run_scenario


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), standalone_mode=False)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.return_value, result.output


def compare(a: str, b: str, *sets: str) -> diffs.Comparison:
    ta, oa = run_scenario(load_scenario(a, ()))
    tb, ob = run_scenario(load_scenario(b, sets))
    return diffs.compare(diffs.side(a, ta, oa), diffs.side(b, tb, ob))


def test_pins_off_diverges_at_t6_and_breaks_two_invariants() -> None:
    c = compare("main", "main", "pins=off")
    assert c.divergence == 6
    assert c.records_diverge == 0  # #1's pin differs from t0 without changing what happens
    assert [(v.invariant, v.tick) for v in c.appeared] == [("misused-dependant", 12), ("wrong-acceptance", 9)]
    assert c.disappeared == () and c.both == ()
    assert ("journal:2", 6, "v2", "↺") in c.cells
    assert ("newsletter", 12, "4.7", "4.1!") in c.cells
    figures = {f.field: f for f in c.figures}
    assert (figures["model_calls"].a, figures["model_calls"].b, figures["model_calls"].delta) == (6, 5, "-1")
    assert figures["first_accepted_tick"].shown_b == "-"
    assert figures["newsletter.quoted_revenue"].delta == "changed"
    assert not figures["stale_writes_rejected"].changed


def test_cli_names_the_divergence_and_the_new_violations() -> None:
    code, out = invoke("diff", "main", "--set", "pins=off", "--width", "100")
    assert code == 0
    assert out.splitlines()[:2] == ["A  main", "B  main --set pins=off"]
    assert "First divergence at t6" in out
    assert "+ in B   misused-dependant breaks at t12" in out
    assert "+ in B   wrong-acceptance breaks at t9" in out
    assert "[✓d2!]" in out and "[4.1!]" in out
    assert "model calls            6        5        -1" in out


def test_two_scenarios_and_a_vanishing_violation() -> None:
    code, out = invoke("diff", "stale-write", "main", "--width", "120")
    assert code == 0
    assert out.splitlines()[:2] == ["A  stale-write (fencing=off)", "B  main"]
    assert "- in B   stale-write (broke at t8 in A) holds" in out
    assert "First divergence at t8" in out


def test_identical_runs() -> None:
    c = compare("main", "main")
    assert c.divergence is None and c.records_diverge is None and c.cells == ()
    _, out = invoke("diff", "main", "main", "--width", "80")
    assert "The two runs are identical, tick by tick." in out
    assert "Invariants: all hold in both runs" in out


def test_json_document() -> None:
    code, out = invoke("diff", "main", "--set", "key=none", "--json")
    doc = json.loads(out)
    assert code == 0
    assert doc["first_divergence"] == 14
    assert doc["invariants"]["appeared"][0]["invariant"] == "duplicate-effect"
    assert doc["a"]["outcome"]["posts_applied"] == 1 and doc["b"]["outcome"]["posts_applied"] == 2
    assert {"row": "feed", "tick": 14, "a": "=P1 ✓", "b": "P2! ✓"} in doc["cells"]


def test_a_second_scenario_or_a_setting_is_required() -> None:
    assert main(["diff", "main"]) == 2
    assert main(["diff", "main", "--set", "pins=maybe"]) == 2
    assert main(["diff", "main", "no-such-scenario"]) == 2


@pytest.mark.parametrize("width", (80, 120))
def test_golden_diff(width: int) -> None:
    code, out = invoke("diff", "main", "--set", "pins=off", "--width", str(width), "--no-color")
    assert code == 0 and "\x1b" not in out
    for line in out.splitlines():
        assert cell_len(line) <= width, line
    check_golden(f"diff-main-pins-off-{width}.txt", out)


def test_an_invariant_both_runs_break_at_the_same_tick_is_said_once_for_both() -> None:
    """versions-off and wrong-acceptance both break wrong-acceptance at t9: the diff says so
    on one "= both" line (a break common to the two runs is not dropped for being equal)."""
    result = CliRunner().invoke(cli, ["diff", "versions-off", "wrong-acceptance", "--no-color"])
    assert result.exit_code == 0, result.output
    assert "= both   wrong-acceptance breaks at t9" in result.output
