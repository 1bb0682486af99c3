"""The swimlane as data (sim.render.grid): the drawing's story, cell by cell."""

from __future__ import annotations

import json

import pytest

from sim import scenario as scenarios
from sim.commands.common import load_scenario
from sim.properties.outcome import outcome
from sim.render import grid as grids
from sim.run import run_scenario, simulate
from sim.model.schedule import worked_example
from sim.model.switches import COMBINATIONS
from sim.engine.trace import Trace


def run(name: str, *sets: str) -> Trace:
    return run_scenario(load_scenario(name, sets))[0]


@pytest.fixture(scope="module")
def main() -> grids.Grid:
    return grids.build(run("main"))


def text(g: grids.Grid, row: str, tick: int) -> str:
    return g.cell(row, tick).text


def test_rows_are_the_drawings(main: grids.Grid) -> None:
    assert [r.label for r in main.rows] == [
        "Report", "#1 T41", "#2 T42", "#3 T43",
        "Journal s1", "Journal s2", "Journal s3", "Journal s4",
        "Digest", "Feed post", "Newsletter",
    ]  # fmt: skip
    assert main.ticks == tuple(range(15))
    assert all(len(r.cells) == 15 for r in main.rows)


def test_main_tells_the_story_at_a_glance(main: grids.Grid) -> None:
    assert text(main, "report", 0) == "v1" and text(main, "report", 4) == "v2"
    # #1 silent at t3, UNKNOWN at t5, fenced when it wakes at t8
    assert text(main, "attempt:1", 3) == "s3…"
    assert text(main, "attempt:1", 4) == "…"
    assert text(main, "attempt:1", 5) == "UNK"
    assert text(main, "attempt:1", 8) == "fenced"
    assert text(main, "attempt:1", 9) == ""
    # #2 admitted with token 42, restores s1 and redoes s2..s4
    assert text(main, "attempt:2", 5) == "T42"
    assert [text(main, "attempt:2", t) for t in (6, 7, 8, 9)] == ["s2", "s3", "s4", "asm"]
    assert main.cell("journal:1", 6).marks[0].cls == "restored"
    assert text(main, "journal:1", 6) == "↺"
    # the stale write of #1's s3 is rejected at t8
    stale = main.cell("journal:3", 8)
    assert stale.text == "✗v1" and stale.cls == "rejected"
    assert text(main, "journal:3", 7) == "v2"
    # acceptance at t10 for v2, the post at t11, #2 dies and is UNKNOWN at t13
    assert text(main, "digest", 9) == "◇d2"
    assert text(main, "digest", 10) == "✓v2"
    assert main.cell("digest", 10).cls == "accepted"
    assert text(main, "feed", 11) == "i P1"
    assert text(main, "attempt:2", 11) == "died"
    assert text(main, "attempt:2", 13) == "UNK"
    # #3 resends; the feed answers with the same post (repeat style), then confirmation
    assert text(main, "attempt:3", 13) == "T43"
    assert text(main, "attempt:3", 14) == "done"
    resend = main.cell("feed", 14)
    assert resend.text == "=P1 ✓"
    assert [m.cls for m in resend.marks] == ["repeat", "confirmed"]
    # the newsletter starts at t12 on 4.7
    assert text(main, "newsletter", 12) == "4.7"
    assert main.cell("newsletter", 12).cls == "started"
    assert main.violations == ()


def test_violations_are_marked_where_they_broke() -> None:
    g = grids.build(run("versions-off"))
    accepted = g.cell("digest", 9)
    assert accepted.text == "✓d2!" and accepted.cls == "violation"
    assert accepted.broke == ("wrong-acceptance",)
    letter = g.cell("newsletter", 12)
    assert letter.text == "4.1!" and letter.broke == ("misused-dependant",)
    found = {v.invariant: v for v in g.violations}
    assert found["wrong-acceptance"].tick == 9 and found["wrong-acceptance"].row == "digest"
    assert found["wrong-acceptance"].guarded_by == "pins"
    assert "section 2 from v1" in found["wrong-acceptance"].why
    assert found["misused-dependant"].row == "newsletter"


def test_stale_writes_and_stale_workers() -> None:
    g = grids.build(run("stale-write"))
    assert text(g, "journal:3", 8) == "v1!"
    assert g.cell("journal:3", 8).broke == ("stale-write",)
    assert text(g, "attempt:1", 8) == "wake"
    assert g.cell("attempt:1", 9).marks[0].cls == "stale"
    assert text(g, "digest", 10) == "✗d1 ✓v2"
    assert text(g, "attempt:1", 10) == "stop"


def test_end_only_writes_the_steps_with_the_candidate() -> None:
    g = grids.build(run("main-end-only"))
    assert text(g, "attempt:1", 9) == "s4"
    assert text(g, "attempt:1", 10) == "fenced"
    assert text(g, "digest", 10) == "✗◇d1 ◇d2"
    assert [text(g, f"journal:{s}", 10) for s in (1, 2, 3, 4)] == ["✗v1 v2"] * 4
    assert text(g, "digest", 11) == "✓v2"


def test_newsletter_waits_for_its_gate() -> None:
    g = grids.build(run("superseded"))
    assert [text(g, "newsletter", t) for t in range(12, 18)] == ["·"] * 5 + ["4.7"]
    assert text(g, "newsletter", 11) == ""


def test_until_cuts_the_grid_and_its_violations() -> None:
    trace = run("versions-off")
    g = grids.build(trace, until=10)
    assert g.ticks == tuple(range(11))
    assert [v.invariant for v in g.violations] == ["wrong-acceptance"]
    assert g.last_tick == trace.last_tick
    assert all(t <= 10 for t, _ in g.story)
    assert grids.build(trace, until=999).ticks == tuple(range(trace.last_tick + 1))


def test_truncated_outcome_is_the_run_so_far() -> None:
    trace = run("main")
    early = outcome(grids.truncated(trace, 8))
    assert early.model_calls == 6 and early.posts_applied == 0 and not early.finished
    assert outcome(grids.truncated(trace, trace.last_tick)) == outcome(trace)


def test_json_is_renderer_independent_data(main: grids.Grid) -> None:
    doc = json.loads(json.dumps(main.to_json()))
    assert doc["ticks"] == list(range(15))
    assert [r["key"] for r in doc["rows"]][:3] == ["report", "attempt:1", "attempt:2"]
    cell = doc["rows"][0]["cells"][4]
    assert cell["text"] == "v2" and cell["class"] == "changed"
    assert set(cell) == {"text", "class", "marks", "events", "broke"}
    assert {e["key"] for e in doc["legend"]} <= set(grids.LEGEND)
    assert doc["story"][0] == {"tick": 0, "text": "#1 admitted with token 41 = new epoch, pinned to v1"}
    for row in doc["rows"]:
        for c in row["cells"]:
            assert c["class"] in grids.CLASSES or c["class"] == "empty"


@pytest.mark.parametrize("name", scenarios.names())
def test_every_event_shows_in_some_cell(name: str) -> None:
    trace = run(name)
    g = grids.build(trace)
    shown = {i for row in g.rows for cell in row.cells for i in cell.events}
    assert shown == set(range(len(trace.events)))
    legend = {e.key for e in g.legend}
    used = {m.legend for row in g.rows for cell in row.cells for m in cell.marks}
    assert used <= legend


def test_breaks_agree_with_the_invariants_over_the_sweep() -> None:
    """The grid's per-event marks and `sim.properties` agree on every one of the 864 runs."""
    for switches in COMBINATIONS:
        trace, result = simulate(switches, worked_example(switches))
        g = grids.build(trace)
        assert [(v.invariant, v.tick) for v in g.violations] == list(result.violations), switches
        for v in g.violations:
            assert v.row, (switches, v)
            assert v.invariant in g.cell(v.row, v.tick).broke
