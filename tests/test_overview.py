"""The overview map (sim/render/overview.py): its geometry, and reports/sweep-map.svg."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from sim.render import overview
from sim.render.report import WRITERS
from sim.model.switches import SWEPT, SWITCHES

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "reports"


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REPORTS / "sweep.json").read_text(encoding="utf-8"))
    return data


def position(values: tuple[str, ...], switches: tuple[str, ...]) -> list[int]:
    return [[m.value for m in SWITCHES[n]].index(v) for n, v in zip(switches, values)]


@pytest.mark.parametrize("axis", [overview.ROW_SWITCHES, overview.COLUMN_SWITCHES])
def test_neighbours_on_an_axis_differ_by_one_flip(axis: tuple[str, ...]) -> None:
    order = overview.gray(axis)
    assert len(set(order)) == len(order) == (24 if axis == overview.ROW_SWITCHES else 36)
    for a, b in zip(order, order[1:]):
        diff = [abs(x - y) for x, y in zip(position(a, axis), position(b, axis)) if x != y]
        assert diff == [1], (a, b)


def test_the_axes_hold_the_eight_switches_once() -> None:
    assert sorted(overview.ROW_SWITCHES + overview.COLUMN_SWITCHES) == sorted(SWEPT)


def test_one_cell_per_run_with_its_verdicts(doc: dict[str, Any]) -> None:
    ov = overview.build(doc)
    assert [c.run for c in ov.cells] == list(range(1, 865))
    assert len({(c.row, c.column) for c in ov.cells}) == 864
    for cell, run in zip(ov.cells, doc["runs"]):
        s = run["switches"]
        assert ov.rows[cell.row] == tuple(s[n] for n in overview.ROW_SWITCHES)
        assert ov.columns[cell.column] == tuple(s[n] for n in overview.COLUMN_SWITCHES)
        assert dict(cell.broken) == {v["invariant"]: v["tick"] for v in run["outcome"]["violations"]}
        assert cell.finished is run["outcome"]["finished"]
    assert ov.cells[0].title() == "Run 1 (the worked example): all invariants hold; finishes"
    assert ov.cells[18].title().startswith("Run 19 (pins=off): breaks wrong-acceptance t9, misused-dependant t12; ")
    # the headings: each level's spans cover the axis once, the outermost widest
    for spans, size in ((ov.row_spans, 24), (ov.column_spans, 36)):
        for level in spans:
            assert sum(s.count for s in level) == size
        assert [len(level) for level in spans] == sorted(len(level) for level in spans)


def test_the_svg_names_every_run_in_words(doc: dict[str, Any]) -> None:
    svg = (REPORTS / "sweep-map.svg").read_text(encoding="utf-8")
    assert svg == overview.render_map(doc)  # what `sim sweep` writes (test_reports: from a new sweep)
    cells = re.findall(r'<g data-run="(\d+)" transform="translate\((\d+) (\d+)\)"><title>([^<]*)</title>', svg)
    assert [int(c[0]) for c in cells] == list(range(1, 865))
    assert len({(c[1], c[2]) for c in cells}) == 864
    for (_, _, _, title), run in zip(cells, doc["runs"]):
        assert title.startswith(f"Run {run['id']} ")
        for v in run["outcome"]["violations"]:
            assert f"{v['invariant']} t{v['tick']}" in title
        assert title.endswith("; finishes" if run["outcome"]["finished"] else "; does not finish")
    unfinished = sum(1 for r in doc["runs"] if not r["outcome"]["finished"])
    assert svg.count('class="ov-u"') == unfinished + 1  # and the legend's
    for name in doc["summary"]["invariants"]:
        assert f">{name}</text>" in svg  # the legend names each colour
    assert "http://www.w3.org/2000/svg" in svg and "href" not in svg and "<script" not in svg


def test_sweep_md_shows_the_map_before_its_tables() -> None:
    md = (REPORTS / "sweep.md").read_text(encoding="utf-8")
    image = md.index("](sweep-map.svg)")
    assert image < md.index("|") and image < md.index("## Definitions")
    assert "does not finish" in md[image : md.index("## Definitions")]
    assert "sweep-map.svg" in [w.filename for w in WRITERS]


def test_the_explainer_opens_with_the_same_map() -> None:
    """The page's map is the file's (the same cells, titles and legend), placed before the run."""
    svg = (REPORTS / "sweep-map.svg").read_text(encoding="utf-8")
    page = (REPORTS / "explainer.html").read_text(encoding="utf-8")
    start = page.index('<svg id="map"')
    inline = page[start : page.index("</svg>", start) + len("</svg>")]
    body = svg[svg.index("<style>") :]
    assert inline.replace('<rect id="map-sel" class="ov-sel" x="0" y="0" width="22" height="22" visibility="hidden"/>\n', "").endswith(
        body.rstrip("\n")
    )
    assert start < page.index('id="switches"') < page.index('id="run-head"')
    assert inline.count("<g data-run=") == 864
