"""The explainer page (sim/render/explainer.py), without a browser: self-contained, small,
deterministic, and its embedded data reads back to exactly what sweep.json holds."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from sim import scenario as scenarios
from sim.analysis import sweep as sweep_mod
from sim.properties import BY_NAME, unguarded_by
from sim.render import grid as grid_mod
from sim.render.explainer import caveat, decode, render_explainer
from sim.render.grid import CLASSES
from sim.render.report import WRITERS, render_all
from sim.analysis.sweep import Sweep, run_id
from sim.model.switches import PROTECTIONS, SWEPT, SWITCHES, Switches

ROOT = Path(__file__).resolve().parent.parent


def guard_of(name: str) -> str:
    guard = BY_NAME[name].guard
    assert guard is not None
    return guard.switch


@pytest.fixture(scope="module")
def result() -> Sweep:
    return sweep_mod.sweep(view=grid_mod.shared)


@pytest.fixture(scope="module")
def doc(result: Sweep) -> dict[str, Any]:
    return result.document()


@pytest.fixture(scope="module")
def page(result: Sweep, doc: dict[str, Any]) -> str:
    assert result.views is not None
    return render_explainer(doc, result.views)


def embedded(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="sweep-data">(.*?)</script>', page, re.DOTALL)
    assert found, "no embedded data"
    data: dict[str, Any] = json.loads(found.group(1))
    return data


@pytest.fixture(scope="module")
def data(page: str) -> dict[str, Any]:
    return embedded(page)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(page)
    return parser.tags


# -- the file --------------------------------------------------------------------------------
def test_the_page_is_self_contained(page: str) -> None:
    found = tags(page)
    for tag, attrs in found:
        for name in ("src", "href", "action", "srcset", "data", "poster"):
            value = attrs.get(name) or ""
            assert not re.match(r"\s*(https?:)?//", value, re.IGNORECASE), (
                f"<{tag} {name}={value!r}> loads from elsewhere"
            )
        assert tag not in ("link", "iframe", "object", "embed", "img"), f"<{tag}> in a self-contained page"
        if tag == "script":
            assert "src" not in attrs, "scripts are inline"
    assert "http://" not in page and "https://" not in page
    assert "@import" not in page and "url(" not in page  # no fonts or images from anywhere
    assert "@font-face" not in page
    assert str(ROOT) not in page and "/tmp" not in page  # no paths of the machine that wrote it


def test_the_page_weighs_under_a_megabyte(page: str) -> None:
    assert len(page.encode("utf-8")) < 1_000_000


def test_the_page_is_the_same_from_two_workers_and_another_hash_seed(tmp_path: Path, page: str) -> None:
    env = dict(os.environ, PYTHONHASHSEED="4242")
    done = subprocess.run(
        [sys.executable, "-m", "sim", "sweep", "--workers", "2", "--out", str(tmp_path)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "explainer.html").read_text(encoding="utf-8") == page


def test_sim_sweep_writes_the_page() -> None:
    assert "explainer.html" in [w.filename for w in WRITERS]


def test_render_all_leaves_the_page_out_without_grids(doc: dict[str, Any]) -> None:
    assert list(render_all(doc)) == ["sweep.json", "sweep.csv", "sweep-map.svg", "sweep.md"]


def test_the_data_cannot_close_its_script(page: str) -> None:
    start = page.index('id="sweep-data">')
    end = page.index("</script>", start)
    assert "<!--" not in page[start:end]
    assert page[end:].startswith("</script>\n<script>")  # the data ends where the code begins


# -- the data ------------------------------------------------------------------------------
def test_embedded_runs_read_back_as_sweep_json(doc: dict[str, Any], data: dict[str, Any]) -> None:
    """Every run's id, switches, outcome and needed, for all 864 runs."""
    runs = decode(data)
    assert len(runs) == 864
    for got, want in zip(runs, doc["runs"]):
        assert got == want, f"run {want['id']}"


WORKFLOW_PAGES = sorted((Path(__file__).parent.parent / "reports" / "workflows").glob("*/explainer.html"))


@pytest.mark.parametrize("page_path", WORKFLOW_PAGES, ids=lambda p: p.parent.name)
def test_each_workflows_page_reads_back_as_its_sweep_json(page_path: Path) -> None:
    """A workflow's page (committed, and checked fresh by the reports' tests) decodes to its own
    sweep.json, run by run, including the invariants beyond the article its runs break (the
    decoder read only the article's five and failed on three workflows' pages)."""
    runs = decode(embedded(page_path.read_text(encoding="utf-8")))
    want = json.loads((page_path.parent / "sweep.json").read_text(encoding="utf-8"))["runs"]
    assert len(runs) == len(want) == 864
    for got, expected in zip(runs, want):
        assert got == expected, f"{page_path.parent.name} run {expected['id']}"


def test_embedded_outcomes_decoded_by_hand(doc: dict[str, Any], data: dict[str, Any]) -> None:
    """The outcome table read independently of `decode`: the format docs/explainer.md gives."""
    fields = data["outcome_fields"]
    invariants = [i[0] for i in data["invariants"]]
    for run, want in zip(data["runs"], doc["runs"]):
        values = dict(zip(fields, data["outcomes"][run[1]]))
        o = want["outcome"]
        assert values["model_calls"] == o["model_calls"]
        assert values["model_calls_by_attempt"] == o["model_calls_by_attempt"]
        assert values["first_accepted_tick"] == o["first_accepted_tick"]
        assert values["finished"] is o["finished"]
        assert values["newsletter"] == [o["newsletter"][k] for k in ("start_tick", "digest", "quoted_revenue")]
        assert [(invariants[i], t) for i, t in values["violations"]] == [
            (v["invariant"], v["tick"]) for v in o["violations"]
        ]


def test_embedded_grids_are_the_runs_swimlanes(result: Sweep, data: dict[str, Any]) -> None:
    """Rows, symbols, classes, legend, story and violations: the terminal view's grid."""
    assert result.views is not None
    invariants = [i[0] for i in data["invariants"]]
    for run, grid in zip(data["runs"], result.views):
        rows, legend, story, violations = data["grids"][run[0]]
        shown = []
        for r in rows:
            key, label, group, cells = data["rows"][r]
            shown.append((key, label, group, [
                [tuple(data["marks"][m]) for m in data["cells"][c][0]] for c in cells
            ]))  # fmt: skip
        assert shown == [
            (r.key, r.label, r.group, [[(m.text, m.cls, m.legend) for m in c.marks] for c in r.cells])
            for r in grid.rows
        ]
        assert [tuple(data["legend"][e]) for e in legend] == [
            (e.key, e.group, e.symbol, e.cls, e.meaning) for e in grid.legend
        ]
        assert [(t, data["texts"][s]) for t, s in story] == list(grid.story)
        assert [(invariants[v[0]], v[1], data["texts"][v[3]]) for v in violations] == [
            (v.invariant, v.tick, v.why) for v in grid.violations
        ]


def test_every_class_has_a_style(page: str, data: dict[str, Any]) -> None:
    for cls in CLASSES:
        assert f".k-{cls}{{" in page, cls
    assert {m[1] for m in data["marks"]} <= set(CLASSES)


def test_the_verdicts_caveats(doc: dict[str, Any], data: dict[str, Any]) -> None:
    """A broken invariant carries a caveat exactly when its usual guard, switched on, would
    still not guard it (`sim.properties.unguarded_by`): misused-dependant with pins off, where
    the fail-open gate lets current-accepted admit as any-accepted (run 19, versions-off)."""
    invariants = [i[0] for i in data["invariants"]]
    assert [i[2] for i in data["invariants"]] == [guard_of(n) for n in invariants]
    seen = set()
    for run, want in zip(data["runs"], doc["runs"]):
        s = Switches().with_values(want["switches"])
        assert [invariants[x[0]] for x in run[3]] == list(want["needed"]["prevented_by"])
        for x in run[3]:
            name, guard = invariants[x[0]], guard_of(invariants[x[0]])
            expected = unguarded_by(s.with_values({guard: PROTECTIONS[guard].value}), name)
            assert (len(x) == 3) == (expected is not None), (want["id"], name)
            if len(x) == 3:
                assert data["texts"][x[2]] == caveat(want["switches"], name)
                seen.add((want["id"], name, getattr(s, guard) is PROTECTIONS[guard]))
    assert (19, "misused-dependant", True) in seen  # guard on here, and still broke
    assert any(not on for _, _, on in seen)  # guard off here, and switching it on alone would not help
    assert {name for _, name, _ in seen} == {"misused-dependant"}
    run19 = data["runs"][18]
    (text,) = [data["texts"][x[2]] for x in run19[3] if len(x) == 3]
    assert "no version to compare" in text and "fail-open" in text and "any-accepted" in text


def test_the_data_is_interned(data: dict[str, Any]) -> None:
    for table in ("texts", "marks", "cells", "rows", "legend", "outcomes", "grids"):
        values = [json.dumps(v) for v in data[table]]
        assert len(values) == len(set(values)), f"{table} holds a value twice"
    assert len(data["grids"]) < 864 and len(data["rows"]) < 864


# -- the controls ----------------------------------------------------------------------------
def test_eight_radio_groups_default_to_the_worked_example(page: str) -> None:
    found = tags(page)
    fieldsets = [a["data-switch"] for t, a in found if t == "fieldset"]
    assert fieldsets == list(SWEPT)
    assert page.count("<legend>") == 8
    for name in SWEPT:
        radios = [a for t, a in found if t == "input" and a.get("name") == name]
        assert [a["type"] for a in radios] == ["radio"] * len(radios)
        assert [a["value"] for a in radios] == [m.value for m in SWITCHES[name]]
        assert ["checked" in a for a in radios] == [True] + [False] * (len(radios) - 1)
    # the protection's on value is marked once, with a word that is not the value again
    assert "(on)" not in page[page.index('<form class="switches"'):page.index("</form>")]
    for name in SWEPT:
        group = re.search(rf'<fieldset data-switch="{name}">(.*?)</fieldset>', page, re.DOTALL)
        assert group
        marked = re.findall(r'value="([^"]+)"[^>]*> [^<]*<span class="on"[^>]*>protected</span>', group.group(1))
        assert marked == ([PROTECTIONS[name].value] if name in PROTECTIONS else []), name


def test_the_page_has_a_status_bar_and_a_scroll_cue(page: str) -> None:
    """The narrow-screen status bar (filled by the script) and the swimlane's scroll hint."""
    assert '<div class="status" id="status"><span id="status-text"></span>' in page
    assert '<span class="scroll-hint" id="scroll-hint" hidden>' in page
    assert ".grid-wrap.more-right::after{opacity:1}" in page
    narrow = page[page.index("@media (max-width:999px){"):]
    assert ".status{display:flex;position:fixed;" in narrow.split("}\n@media")[0] + "}"
    assert "#results{order:1}" in narrow and "#legend{order:2}" in narrow


def test_presets_are_the_named_scenarios_in_the_sweep(data: dict[str, Any], page: str) -> None:
    by_name = {p["name"]: p for p in data["presets"]}
    assert list(by_name)[:4] == ["main", "main-end-only", "superseded", "versions-off"]
    assert set(by_name) == set(scenarios.names())
    inside = [p["name"] for p in data["presets"] if not p["outside"]]
    assert inside == [
        "main", "main-end-only", "superseded", "versions-off",
        "duplicate-effect", "lost-announcement", "misused-dependant", "stale-write", "two-acceptances",
    ]  # fmt: skip
    assert by_name["wrong-acceptance"]["outside"] == ["gate=fail-closed"]
    assert "<code>wrong-acceptance</code> needs gate=fail-closed" in page
    for name in inside:
        s = scenarios.load(name)
        assert by_name[name]["switches"] == {k: v for k, v in s.switches.as_dict().items() if k in SWEPT}
        assert f'data-preset="{data["presets"].index(by_name[name])}"' in page
    assert run_id(scenarios.load("main").switches) == 1


def test_the_cases_beyond_the_article_are_listed_with_their_scenarios_swimlanes(page: str, data: dict[str, Any]) -> None:
    """The last section lists each case of sim.model.cases with the swimlane of each named
    scenario: the same grid `sim trace NAME` draws, encoded as the runs' grids are."""
    from sim.model.cases import CASES
    from sim.run import run_scenario

    assert [number for number, _ in data["cases"]] == [c.number for c in CASES]
    rows = {i: row for i, row in enumerate(data["rows"])}
    for case, (_, views) in zip(CASES, data["cases"]):
        assert f'id="case-{case.number}"' in page
        assert [v[0] for v in views] == list(case.scenarios)
        for name, label, broken, lane in views:
            trace, outcome = run_scenario(scenarios.load(name))
            assert broken == list(outcome.broken)
            built = grid_mod.build(trace)
            encoded = data["grids"][lane]
            assert [rows[r][1] for r in encoded[0]] == [row.label for row in built.rows]
            assert [data["texts"][t] for _, t in encoded[2]] == [line for _, line in built.story]
            assert f"<code>sim trace {name}</code>" in page
