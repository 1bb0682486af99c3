"""The explainer page in a real browser: Debian's Chromium driven by Playwright.

Opens the committed `reports/explainer.html` from disk (file://, no server, no network),
flips switches the way a reader does, and checks what the page shows against
`reports/sweep.json`. Saves a screenshot of the main trace to `reports/explainer-main.png`.
Skips, saying why, where /usr/bin/chromium or the playwright package is missing; `.ci/run`
installs Chromium, so CI runs it. Never downloads a browser (`playwright install`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import BACKSTOP

from sim.analysis.sweep import run_id
from sim.model.switches import FAULT_SWITCHES, PROTECTIONS, SWEPT, SWITCHES, Switches

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "reports"
PAGE = REPORTS / "explainer.html"
SCREENSHOT = REPORTS / "explainer-main.png"
ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-extensions", "--disable-default-apps",
]  # fmt: skip

if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium; .ci/run does)", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed (pip install -e '.[test]')"
)

#: a dozen combinations: the article's traces, one per weakened protection, and others
COMBOS: list[dict[str, str]] = [
    {},  # run 1: the main trace
    {"change": "after"},  # the second trace (superseded)
    {"pins": "off"},  # versions off
    {"checkpoints": "end-only"},
    {"fencing": "off"},
    {"key": "none"},
    {"change": "after", "rule": "any-accepted"},
    {"fencing": "off", "pins": "off", "change": "never"},
    {"silent": "crashed", "post_death": "no", "key": "per-attempt"},
    {"silent": "crashed", "fencing": "off", "checkpoints": "end-only", "change": "after", "pins": "off",
     "rule": "latest-finished", "post_death": "no", "key": "none"},  # run 864
    {"pins": "off", "rule": "latest-finished", "change": "after"},
    {"checkpoints": "end-only", "fencing": "off", "key": "per-attempt", "rule": "any-accepted"},
]  # fmt: skip


@pytest.fixture(scope="module")
def sweep_runs() -> list[dict[str, Any]]:
    if not PAGE.is_file():
        pytest.fail("reports/explainer.html is missing: run `sim sweep`")
    runs: list[dict[str, Any]] = json.loads((REPORTS / "sweep.json").read_text(encoding="utf-8"))["runs"]
    return runs


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        yield b
        b.close()


def new_context(browser: Any, **options: Any) -> Any:
    """A browser context whose waits give up only at the test suite's backstop (`BACKSTOP`),
    not at Playwright's 30 s: every wait is for the page's own signal, so a loaded machine
    makes a passing test slower, never a failing one."""
    context = browser.new_context(**options)
    context.set_default_timeout(BACKSTOP * 1000)
    return context


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    context = new_context(browser, viewport={"width": 1280, "height": 1200})
    pg = context.new_page()
    errors: list[str] = []
    requests: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("request", lambda r: requests.append(r.url))
    yield pg
    context.close()
    assert errors == [], errors
    remote = [u for u in requests if not u.startswith(("file:", "data:", "about:"))]
    assert remote == [], f"the page asked the network for {remote}"


def url(hash_: str = "") -> str:
    return PAGE.as_uri() + hash_


def open_page(pg: Any, hash_: str = "") -> None:
    pg.goto(url(hash_))
    pg.wait_for_selector("html[data-ready=true]")


def hash_of(values: dict[str, str]) -> str:
    s = Switches().with_values(values)
    return "#" + "&".join(f"{n}={getattr(s, n).value}" for n in SWEPT)


def shown_run(pg: Any) -> int:
    return int(pg.get_attribute("#run", "data-run"))


def checked(pg: Any) -> dict[str, str]:
    values: dict[str, str] = pg.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('#switches input:checked')].map(i => [i.name, i.value]))"
    )
    return values


def field(pg: Any, name: str) -> str:
    text: str = pg.inner_text(f"[data-field='{name}']")
    return text


def tick(t: int | None, none: str = "none") -> str:
    return none if t is None else f"t{t}"


def flips_of(run: dict[str, Any]) -> list[tuple[str, str, int]]:
    """Every single flip of a run: (switch, value, neighbour run id), in switch order."""
    s = Switches().with_values(run["switches"])
    return [
        (n, m.value, run_id(s.with_values({n: m.value})))
        for n in SWEPT for m in SWITCHES[n] if m is not getattr(s, n)
    ]  # fmt: skip


def status_text(run: dict[str, Any]) -> str:
    """The narrow screen's status bar for a run, from sweep.json."""
    o = run["outcome"]
    broken = sorted(o["violations"], key=lambda v: (v["tick"], v["invariant"]))
    verdict = "broken: " + ", ".join(f"{v['invariant']} t{v['tick']}" for v in broken) if broken else "all invariants hold"
    return f"Run {run['id']} · {verdict} · {'finished' if o['finished'] else 'not finished'}"


def fix_hint(run: dict[str, Any], runs: list[dict[str, Any]]) -> list[str]:
    """The flips the page may offer as a fix: a protection's, to a run where every invariant holds."""
    if not run["outcome"]["violations"]:
        return []
    return [
        f"{n}={v}" for n, v, other in flips_of(run)
        if n in PROTECTIONS and not runs[other - 1]["outcome"]["violations"]
    ]  # fmt: skip


def check_verdicts(pg: Any, run: dict[str, Any]) -> None:
    """Each broken invariant's "would have been prevented by" is the run's needed.prevented_by
    (the protections and the runs linked), and its usual guard is named."""
    shown = pg.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('#invariants [data-invariant]')].map(r => {"
        " const p = r.querySelector('[data-prevented-by]');"
        " return [r.dataset.invariant, p ? [p.dataset.preventedBy,"
        "   [...p.querySelectorAll('a')].map(a => a.textContent)] : null]; }))"
    )
    want = {
        name: [" ".join(b["protection"] for b in by), [f"run {b['run']}" for b in by]]
        for name, by in run["needed"]["prevented_by"].items()
        if name in shown  # the article's five (a workflow's run may break others too)
    }
    assert {k: v for k, v in shown.items() if v is not None} == want
    assert set(shown) - set(want) == {k for k, v in shown.items() if v is None}
    for name, (by, _) in want.items():
        text = pg.inner_text(f"[data-invariant='{name}'] [data-prevented-by]")
        if not by:
            assert text == "no single protection switched on would have prevented it."
        else:
            assert text.startswith("would have been prevented by ")
            for b in run["needed"]["prevented_by"][name]:
                assert f"{b['protection']}={PROTECTIONS[b['protection']].value} alone (run {b['run']})" in text


def check_outcome(pg: Any, run: dict[str, Any], runs: list[dict[str, Any]]) -> None:
    """The figures, verdicts and protections shown are those of this run in sweep.json."""
    o = run["outcome"]
    assert shown_run(pg) == run["id"]
    assert pg.inner_text("#run-title") == f"Run {run['id']} of 864"
    expect = {
        "model_calls": str(o["model_calls"]),
        "model_calls_by_attempt": ", ".join(f"#{k + 1} {n}" for k, n in enumerate(o["model_calls_by_attempt"])),
        "steps_restored": str(o["steps_restored"]),
        "stale_writes_rejected": str(o["stale_writes_rejected"]),
        "stale_writes_applied": str(o["stale_writes_applied"]),
        "posts_applied": str(o["posts_applied"]),
        "first_accepted_tick": tick(o["first_accepted_tick"]),
        "confirmed_tick": tick(o["confirmed_tick"]),
        "newsletter.start_tick": tick(o["newsletter"]["start_tick"], "never"),
        "finished": "yes" if o["finished"] else "no",
        "last_tick": tick(o["last_tick"]),
    }
    if o["newsletter"]["start_tick"] is not None:
        expect["newsletter.digest"] = o["newsletter"]["digest"]
        expect["newsletter.quoted_revenue"] = o["newsletter"]["quoted_revenue"]
    assert {name: field(pg, name) for name in expect} == expect
    verdicts = pg.evaluate(
        "() => [...document.querySelectorAll('#invariants [data-invariant]')].map(r => {"
        " const v = r.querySelector('[data-verdict]');"
        " return [r.dataset.invariant, v.dataset.verdict, v.dataset.tick || null]; })"
    )
    shown = {name for name, _, _ in verdicts}  # the article's five (a workflow's run may break others too)
    broke = {v["invariant"]: v["tick"] for v in o["violations"] if v["invariant"] in shown}
    assert len(verdicts) == 5
    assert {name: int(t) for name, verdict, t in verdicts if verdict == "broke"} == broke
    needed = pg.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('#needed [data-protection]')]"
        ".map(li => [li.dataset.protection, li.dataset.needed]))"
    )
    assert needed == {
        p: str(run["needed"]["protections"][p]["needed"]).lower() if p in run["needed"]["protections"] else "off"
        for p in ("fencing", "pins", "key", "rule")
    }
    prevented = pg.eval_on_selector_all("#needed [data-prevented]", "els => els.map(e => e.dataset.prevented)")
    assert prevented == list(run["needed"]["prevented_by"])
    check_verdicts(pg, run)
    # one change at a time: every single flip, each pointing at its neighbour run, the
    # protections' first (the only ones a fix may name), then the events and checkpoints
    flips = pg.eval_on_selector_all(
        "#flips [data-flip]", "els => els.map(e => [e.dataset.flip, +e.dataset.run, e.dataset.kind])"
    )
    want = [(f"{n}={v}", other) for n, v, other in flips_of(run)]
    kinds = {n: "protection" if n in PROTECTIONS else "event" if n in FAULT_SWITCHES else "cost" for n in SWEPT}
    want = [f for f in want if f[0].split("=")[0] in PROTECTIONS] + [
        f for f in want if f[0].split("=")[0] not in PROTECTIONS
    ]
    assert [(f, r) for f, r, _ in flips] == want
    assert [k for f, _, k in flips] == [kinds[f.split("=")[0]] for f, _ in want]
    assert pg.get_attribute("#flip-summary", "data-fixes").split() == fix_hint(run, runs)
    assert pg.text_content("#status-text") == status_text(run)


def flip_to(pg: Any, values: dict[str, str]) -> None:
    """Click the radios (by their labels) that differ from what is shown, waiting after each
    click for the page to draw the run it asked for."""
    now = checked(pg)
    for name in SWEPT:
        value = values.get(name, getattr(Switches(), name).value)
        if now[name] != value:
            pg.click(f"#switches label:has(input[name='{name}'][value='{value}'])")
            now[name] = value
            pg.wait_for_function(f"document.getElementById('run').dataset.run === '{run_id(Switches().with_values(now))}'")


def test_the_main_trace_is_shown_on_opening(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    open_page(page)
    check_outcome(page, sweep_runs[0], sweep_runs)
    assert checked(page) == {n: getattr(Switches(), n).value for n in SWEPT}
    # the swimlane: the terminal view's rows and symbols
    labels = page.eval_on_selector_all("#lane tbody th", "els => els.map(e => e.textContent)")
    assert labels == ["Report", "#1 T41", "#2 T42", "#3 T43", "Journal s1", "Journal s2", "Journal s3",
                      "Journal s4", "Digest", "Feed post", "Newsletter"]  # fmt: skip
    row = page.eval_on_selector_all("#lane tr[data-row='attempt:1'] td", "els => els.map(e => e.textContent)")
    assert row[:9] == ["T41", "s1", "s2", "s3…", "…", "UNK", "?", "?", "fenced"]
    feed = page.eval_on_selector_all("#lane tr[data-row='feed'] td", "els => els.map(e => e.textContent)")
    assert feed[11] == "i P1" and feed[14] == "=P1 ✓"
    assert page.inner_text("#lane tr[data-row='journal:3'] td:nth-child(10)") == "✗v1"
    assert "↺" in page.inner_text("#legend") and "restored, not redone" in page.inner_text("#legend")
    assert page.get_attribute("button[data-preset='0']", "aria-pressed") == "true"
    page.set_viewport_size({"width": 1280, "height": 1400})  # the switches, the swimlane, the outcome
    page.evaluate("document.getElementById('run-head').scrollIntoView({block: 'start'})")  # under the map
    page.screenshot(path=str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size > 10_000


def test_flipping_switches_shows_the_matching_run(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    open_page(page)
    for values in COMBOS:
        flip_to(page, values)
        rid = run_id(Switches().with_values(values))
        page.wait_for_function(f"document.getElementById('run').dataset.run === '{rid}'")
        check_outcome(page, sweep_runs[rid - 1], sweep_runs)
        assert page.evaluate("location.hash") == (hash_of(values) if values else "")  # {}: nothing flipped yet


def test_the_article_traces(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    open_page(page, hash_of({"change": "after"}))  # the second trace
    assert field(page, "newsletter.start_tick") == "t17"
    assert field(page, "model_calls_by_attempt") == "#1 3, #2 2, #3 0, #4 1"
    open_page(page, hash_of({"pins": "off"}))  # versions off: wrong, and the newsletter uses it
    assert field(page, "newsletter.quoted_revenue") == "4.1"
    assert page.get_attribute("[data-invariant='wrong-acceptance'] [data-verdict]", "data-tick") == "9"


def test_the_hash_round_trip(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    values = {"silent": "crashed", "fencing": "off", "key": "none", "rule": "latest-finished"}
    open_page(page, hash_of(values))  # a link with a combination: the controls reflect it
    want = Switches().with_values(values)
    assert checked(page) == {n: getattr(want, n).value for n in SWEPT}
    check_outcome(page, sweep_runs[run_id(want) - 1], sweep_runs)
    page.click("#switches label:has(input[name='fencing'][value='on'])")  # a control: the hash follows
    values["fencing"] = "on"
    page.wait_for_function(f"location.hash === {json.dumps(hash_of(values))}")
    check_outcome(page, sweep_runs[run_id(Switches().with_values(values)) - 1], sweep_runs)
    page.evaluate("location.hash = '#pins=off'")  # a partial hash: the rest at the worked example's values
    page.wait_for_function("document.getElementById('run').dataset.run === '19'")
    assert checked(page)["pins"] == "off" and checked(page)["silent"] == "paused"
    page.go_back()  # the browser's history holds the views
    page.wait_for_function(f"location.hash === {json.dumps(hash_of(values))}")
    assert shown_run(page) == run_id(Switches().with_values(values))


def test_presets_and_neighbour_links(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    open_page(page)
    page.click("button:text-is('superseded')")
    page.wait_for_function("document.getElementById('run').dataset.run === '73'")
    assert page.get_attribute("button:text-is('superseded')", "aria-pressed") == "true"
    assert "Scenario superseded" in page.inner_text("#scenario")
    assert page.locator("button:text-is('wrong-acceptance')").count() == 0  # needs gate=fail-closed
    page.click("#flips [data-flip='pins=off'] a")  # one change at a time, by its link
    rid = run_id(Switches().with_values({"change": "after", "pins": "off"}))
    page.wait_for_function(f"document.getElementById('run').dataset.run === '{rid}'")
    check_outcome(page, sweep_runs[rid - 1], sweep_runs)


def test_the_switches_work_from_the_keyboard(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    open_page(page)
    page.focus("input[name='fencing'][value='on']")
    page.keyboard.press("ArrowRight")  # within a radio group the arrows choose
    page.wait_for_function("document.getElementById('run').dataset.run === '217'")
    assert checked(page)["fencing"] == "off"
    page.keyboard.press("Tab")  # and Tab moves to the next group
    page.wait_for_function("document.activeElement && document.activeElement.name === 'checkpoints'")
    page.keyboard.press("ArrowRight")
    rid = run_id(Switches().with_values({"fencing": "off", "checkpoints": "end-only"}))
    page.wait_for_function(f"document.getElementById('run').dataset.run === '{rid}'")
    check_outcome(page, sweep_runs[rid - 1], sweep_runs)


def test_verdicts_say_what_would_have_prevented_them(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    """The verdict block reads "what would have prevented it" from the run's needed.prevented_by,
    and says why a guard that is on did not hold (versions off: the rule has no version)."""
    open_page(page)
    for rid in (19, 235, 25, 97, 265, 343, 2, 217):
        run = sweep_runs[rid - 1]
        page.evaluate(f"location.hash = {json.dumps(hash_of(run['switches']))}")
        page.wait_for_function(f"document.getElementById('run').dataset.run === '{rid}'")
        check_verdicts(page, run)
    guard = "[data-invariant='misused-dependant'] [data-guard]"
    open_page(page, hash_of({"pins": "off"}))  # run 19: the rule is on here, yet it broke
    assert shown_run(page) == 19
    assert page.get_attribute("[data-invariant='misused-dependant'] [data-prevented-by]", "data-prevented-by") == "pins"
    text = page.inner_text(guard)
    assert text.startswith("usually guarded by the newsletter rule current-accepted: on here, but with pins off")
    assert "no version to compare" in text and "fail-open gate" in text and "any-accepted" in text
    assert "(on here)" not in text
    assert page.inner_text("[data-invariant='stale-write'] [data-guard]") == "usually guarded by fencing tokens (on here)"
    open_page(page, hash_of({"fencing": "off", "pins": "off"}))  # run 235: two protections each alone
    assert shown_run(page) == 235
    assert page.get_attribute("[data-invariant='two-acceptances'] [data-prevented-by]", "data-prevented-by") == "fencing pins"
    open_page(page, hash_of(sweep_runs[24]["switches"]))  # run 25: rule off, and on alone would not help
    assert sweep_runs[24]["switches"]["rule"] != "current-accepted" and sweep_runs[24]["switches"]["pins"] == "off"
    assert "switched on alone it would not have helped: with pins off" in page.inner_text(guard)
    open_page(page)  # run 1: nothing broke, nothing to prevent
    assert page.locator("#invariants [data-prevented-by]").count() == 0


def test_fix_hints_offer_only_protections(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    """For all 864 runs: the hint proposes only a protection's flip (never silent, change,
    post_death or checkpoints), exactly those that leave every invariant holding."""
    others = {n for n in SWEPT if n not in PROTECTIONS}
    assert others == {"silent", "checkpoints", "change", "post_death"}
    # the filter matters: some runs are fixed by an event or a checkpoint flip alone
    fixed_by_other = [
        r["id"] for r in sweep_runs if r["outcome"]["violations"] and any(
            n in others and not sweep_runs[o - 1]["outcome"]["violations"] for n, _, o in flips_of(r)
        )
    ]  # fmt: skip
    assert len(fixed_by_other) > 10
    open_page(page)
    shown = page.evaluate(  # each run through the page's own hashchange handler, synchronously
        """(items) => items.map(([id, h]) => {
          history.replaceState(null, "", h);
          window.dispatchEvent(new HashChangeEvent("hashchange"));
          const s = document.getElementById('flip-summary');
          return [+document.getElementById('run').dataset.run, s.dataset.fixes, s.textContent];
        })""",
        [[r["id"], hash_of(r["switches"])] for r in sweep_runs],
    )
    assert [x[0] for x in shown] == list(range(1, 865))
    for (_, fixes, text), run in zip(shown, sweep_runs):
        assert fixes.split() == fix_hint(run, sweep_runs), run["id"]
        if run["outcome"]["violations"]:
            assert not any(f"{n}=" in text for n in others), (run["id"], text)
            if fixes:
                assert text == f"One protection change fixes every broken invariant: {' or '.join(fixes.split())}."
            else:
                assert text.startswith("No single protection change fixes")


#: one of the runs whose swimlane (to t20) is wider than the run's column at 1280 px
WIDE = 181


def test_the_desktop_layout(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    """At 1280 px: no status bar (the switches stay beside the run), the legend under the
    swimlane, and the scroll hint only when the swimlane is wider than its column."""
    open_page(page)
    assert page.is_hidden("#status")
    assert page.is_hidden("#scroll-hint")  # the main trace fits
    top = page.evaluate("id => document.getElementById(id).getBoundingClientRect().top", "legend")
    assert top < page.evaluate("id => document.getElementById(id).getBoundingClientRect().top", "results")
    open_page(page, hash_of(sweep_runs[WIDE - 1]["switches"]))  # a run to t20 is wider than the column
    assert page.is_visible("#scroll-hint")
    assert "more-right" in page.get_attribute("#grid-wrap", "class")


def test_a_phone_width_screen(browser: Any, sweep_runs: list[dict[str, Any]]) -> None:
    context = new_context(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    pg = context.new_page()
    try:
        open_page(pg)
        # nothing wider than the screen but the grid, which scrolls inside its own box
        assert pg.evaluate("document.documentElement.scrollWidth") <= 390
        box = pg.evaluate(
            "() => { const b = document.getElementById('grid-box');"
            " return [b.clientWidth, b.scrollWidth, getComputedStyle(b).overflowX]; }"
        )
        assert box[0] <= 390 and box[1] > box[0] and box[2] == "auto"
        # ... and says so: a hint, and a shade on the edge that hides more, until scrolled to the end
        assert pg.is_visible("#scroll-hint") and pg.inner_text("#scroll-hint") == "scroll sideways →"
        assert "more-right" in pg.get_attribute("#grid-wrap", "class")
        pg.evaluate("() => { const b = document.getElementById('grid-box'); b.scrollLeft = b.scrollWidth; }")
        pg.wait_for_function("!document.getElementById('grid-wrap').classList.contains('more-right')")
        # the outcome comes before the legend
        tops = pg.evaluate("ids => ids.map(id => document.getElementById(id).getBoundingClientRect().top)",
                           ["grid-box", "results", "legend"])  # fmt: skip
        assert tops[0] < tops[1] < tops[2]
        # the status bar at the foot of the screen follows every change
        def bar() -> tuple[str, dict[str, float]]:
            return pg.inner_text("#status-text"), pg.locator("#status").bounding_box()

        text, where = bar()
        assert text == status_text(sweep_runs[0]) == "Run 1 · all invariants hold · finished"
        pg.tap("#switches label:has(input[name='pins'][value='off'])")
        pg.wait_for_function("document.getElementById('run').dataset.run === '19'")
        text, where = bar()
        assert text == status_text(sweep_runs[18])
        assert text.startswith("Run 19 · broken: wrong-acceptance t9, misused-dependant t12 · ")
        assert where["y"] + where["height"] <= 844 + 0.5 and where["y"] > 844 - 120  # in view, at the bottom
        assert pg.evaluate("getComputedStyle(document.getElementById('status')).position") == "fixed"
        pg.tap("#switches label:has(input[name='key'][value='none'])")
        rid = run_id(Switches().with_values({"pins": "off", "key": "none"}))
        pg.wait_for_function(f"document.getElementById('run').dataset.run === '{rid}'")
        assert bar()[0] == status_text(sweep_runs[rid - 1])
        pg.tap("#status-go")  # the bar's button brings the run into view
        pg.wait_for_function("Math.abs(document.getElementById('run-title').getBoundingClientRect().top) < 5")
        assert pg.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        context.close()


def test_the_cases_beyond_the_article_draw_their_swimlanes(page: Any) -> None:
    """Each case's scenarios are drawn as swimlanes in the last section, with the same
    row labels the terminal view has."""
    from sim import scenario as scenarios
    from sim.model.cases import CASES
    from sim.render.grid import build
    from sim.run import run_scenario

    open_page(page)
    for case in CASES:
        boxes = page.query_selector_all(f"#case-{case.number} .case-lane")
        assert len(boxes) == len(case.scenarios)
        for box, name in zip(boxes, case.scenarios):
            labels = box.eval_on_selector_all("tbody th", "els => els.map(e => e.textContent)")
            trace, _ = run_scenario(scenarios.load(name))
            assert labels == [row.label for row in build(trace).rows], name
    page.locator("#case-10").scroll_into_view_if_needed()
    assert page.locator("#case-10 .case-lane table").first.is_visible()


def test_a_profile_sets_the_engines_switches_and_says_what_the_application_adds(page: Any) -> None:
    """Picking an engine profile shows the run with the swept switches that engine gives by
    itself (the events as they were), and names what the application must add."""
    from sim.model.profiles import get

    open_page(page)
    page.click("button[data-profile]:text-is('temporal')")
    temporal = get("temporal")
    swept = {k: v for k, v in temporal.settings().items() if k in SWEPT}
    rid = run_id(Switches().with_values(swept))
    page.wait_for_function(f"document.getElementById('run').dataset.run === '{rid}'")
    note = page.inner_text("#profile-note")
    assert "the application adds pins=on, key=per-operation, rule=current-accepted" in note
    assert "fencing_scope=attempt" in note


# -- the layout at two screen sizes, measured ------------------------------------------------
BOX = "sel => { const b = document.querySelector(sel).getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; }"


def box(pg: Any, selector: str) -> list[float]:
    """An element's box on the screen: [left, top, right, bottom] (CSS px, the viewport's origin)."""
    found: list[float] = pg.evaluate(BOX, selector)
    return found


def on_screen(b: list[float], width: int, height: int) -> bool:
    return b[0] >= -0.5 and b[1] >= -0.5 and b[2] <= width + 0.5 and b[3] <= height + 0.5


def screen(browser: Any, width: int, height: int) -> Any:
    phone = width < 500
    return new_context(browser, viewport={"width": width, "height": height}, is_mobile=phone, has_touch=phone)


def test_at_1280x800_the_switches_and_the_run_fit_the_screen(browser: Any, sweep_runs: list[dict[str, Any]]) -> None:
    """A link to a run opens at the run: its heading at the top, the eight switch groups
    beside it, every one on screen and no scroll box of their own, the swimlane down to the
    Newsletter row on screen; the second trace's swimlane fits its column through t18."""
    context = screen(browser, 1280, 800)
    pg = context.new_page()
    try:
        open_page(pg, hash_of({}))  # main, as a link gives it
        assert abs(box(pg, "#run-head")[1]) < 2  # the run's heading at the top
        side = pg.evaluate(
            "() => { const s = document.querySelector('.side'); const c = getComputedStyle(s);"
            " return [s.scrollHeight, s.clientHeight, c.position, c.overflowY]; }"
        )
        assert side[0] <= side[1] and side[2] == "sticky"  # nothing to scroll inside it
        groups = pg.eval_on_selector_all("#switches fieldset", "els => els.map(e => e.dataset.switch)")
        assert groups == list(SWEPT)
        for name in SWEPT:
            assert on_screen(box(pg, f"fieldset[data-switch='{name}']"), 1280, 800), name
            for value in [m.value for m in SWITCHES[name]]:
                label = f"#switches label:has(input[name='{name}'][value='{value}'])"
                assert on_screen(box(pg, label), 1280, 800), (name, value)
        assert box(pg, "#lane tr[data-row='newsletter']")[3] <= 800  # the Newsletter row on screen
        assert on_screen(box(pg, "#lane tr[data-row='newsletter'] td:last-child"), 1280, 800)
        assert pg.evaluate("document.documentElement.scrollWidth") <= 1280
        # the second trace: every tick to t18 in the column, no sideways scroll, no hint
        open_page(pg, hash_of({"change": "after"}))
        heads = pg.eval_on_selector_all("#lane thead th", "els => els.map(e => e.textContent)")
        assert heads[-1] == "t18" and sweep_runs[72]["outcome"]["last_tick"] == 18
        grid = pg.evaluate(
            "() => { const b = document.getElementById('grid-box'); return [b.scrollWidth, b.clientWidth]; }"
        )
        assert grid[0] <= grid[1]
        last = box(pg, "#lane thead th:last-child")
        assert last[2] <= box(pg, "#grid-box")[2] + 0.5 and last[2] <= 1280
        assert on_screen(box(pg, "#lane tr[data-row='newsletter'] td:last-child"), 1280, 800)
        assert pg.is_hidden("#scroll-hint")
        for name in SWEPT:  # the switches are still all on screen
            assert on_screen(box(pg, f"fieldset[data-switch='{name}']"), 1280, 800), name
        # a longer run (to t20) does not fit: it says so and shades the edge
        open_page(pg, hash_of(sweep_runs[WIDE - 1]["switches"]))
        assert pg.is_visible("#scroll-hint") and "more-right" in pg.get_attribute("#grid-wrap", "class")
        assert pg.evaluate("getComputedStyle(document.getElementById('grid-box')).overflowX") == "auto"
        assert pg.evaluate("document.documentElement.scrollWidth") <= 1280
        # opened without a hash, the page starts with the map, whole on the screen's width
        open_page(pg)
        assert pg.evaluate("window.scrollY") == 0
        m = box(pg, "#map")
        assert m[1] < 400 and m[2] <= 1280
        assert pg.evaluate("(() => { const s = document.getElementById('map'); return s.getBoundingClientRect().width; })()") >= 1000
    finally:
        context.close()


def test_at_390x844_the_page_is_usable(browser: Any, sweep_runs: list[dict[str, Any]]) -> None:
    """A phone: nothing wider than the screen (the map is scaled to fit it), every switch and
    preset within the screen's width, the swimlane in its own sideways scrolling box with the
    hint; a link opens at the run."""
    context = screen(browser, 390, 844)
    pg = context.new_page()
    try:
        open_page(pg, hash_of({"change": "after"}))
        assert abs(box(pg, "#run-head")[1]) < 2
        assert pg.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]") == [390, 390]
        m = box(pg, "#map")
        assert m[0] >= 0 and m[2] <= 390
        for name in SWEPT:
            for value in [m.value for m in SWITCHES[name]]:
                b = box(pg, f"#switches label:has(input[name='{name}'][value='{value}'])")
                assert b[0] >= 0 and b[2] <= 390, (name, value)
        for b in pg.eval_on_selector_all(
            "button[data-preset], button[data-profile]",
            "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; })",
        ):
            assert b[0] >= 0 and b[1] <= 390
        grid = pg.evaluate(
            "() => { const b = document.getElementById('grid-box'); const r = b.getBoundingClientRect();"
            " return [b.scrollWidth, b.clientWidth, getComputedStyle(b).overflowX, r.left, r.right]; }"
        )
        assert grid[0] > grid[1] and grid[2] == "auto" and grid[3] >= 0 and grid[4] <= 390
        assert pg.is_visible("#scroll-hint") and "more-right" in pg.get_attribute("#grid-wrap", "class")
        hint = box(pg, "#scroll-hint")
        assert hint[2] <= 390 and hint[3] <= box(pg, "#grid-box")[1] + 1  # above the box, on the screen's width
        # the swimlane's row labels stay pinned while it scrolls
        pg.evaluate("() => { const b = document.getElementById('grid-box'); b.scrollLeft = 200; }")
        assert abs(box(pg, "#lane tr[data-row='newsletter'] th")[0] - grid[3]) < 2
        pg.tap("#switches label:has(input[name='pins'][value='off'])")  # a control deep down the page
        rid = run_id(Switches().with_values({"change": "after", "pins": "off"}))
        pg.wait_for_function(f"document.getElementById('run').dataset.run === '{rid}'")
        assert pg.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        context.close()


# -- the overview map --------------------------------------------------------------------------
def test_the_map_has_a_cell_per_run_named_in_words(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    open_page(page)
    cells = page.eval_on_selector_all(
        "#map g[data-run]", "els => els.map(e => [+e.dataset.run, e.querySelector('title').textContent])"
    )
    assert [c[0] for c in cells] == list(range(1, 865))
    for (rid, title), run in zip(cells, sweep_runs):
        label = Switches().with_values(run["switches"]).label()
        assert title.startswith(f"Run {rid} ({label or 'the worked example'}): "), title
        o = run["outcome"]
        broken = sorted(o["violations"], key=lambda v: (v["tick"], v["invariant"]))
        verdict = "breaks " + ", ".join(f"{v['invariant']} t{v['tick']}" for v in broken) if broken else "all invariants hold"
        assert title.endswith(f": {verdict}; " + ("finishes" if o["finished"] else "does not finish")), title
    # the worked example is framed on opening
    assert page.get_attribute("#map-sel", "data-run") == "1"


def test_hovering_a_map_cell_names_the_run_and_clicking_opens_it(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    open_page(page)
    for rid in (19, 235, 73, WIDE, 864):
        run = sweep_runs[rid - 1]
        cell = page.locator(f"#map g[data-run='{rid}']")
        cell.scroll_into_view_if_needed()
        cell.hover()
        title = cell.locator("title").text_content()
        page.wait_for_function(f"document.getElementById('map-info').textContent === {json.dumps(title)}")
        cell.click()
        page.wait_for_function(f"document.getElementById('run').dataset.run === '{rid}'")
        assert page.evaluate("location.hash") == hash_of(run["switches"])
        check_outcome(page, run, sweep_runs)
        heads = page.eval_on_selector_all("#lane thead th", "els => els.map(e => e.textContent)")
        assert heads[-1] == f"t{run['outcome']['last_tick']}"  # the run drawn is that run
        assert page.get_attribute("#map-sel", "data-run") == str(rid)
        assert abs(box(page, "#run-head")[1]) < 2  # the run is brought into view
    page.go_back()  # a map click is a history entry like any other change
    page.wait_for_function(f"document.getElementById('run').dataset.run === '{WIDE}'")


def shows_run(pg: Any, rid: int) -> None:
    """Wait for the page's own signal that run `rid` is drawn (never for time)."""
    pg.wait_for_function(f"document.getElementById('run').dataset.run === '{rid}'")


def test_the_map_works_from_the_keyboard(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    """Tab reaches the map; an arrow opens the neighbouring run (one switch flip), Enter
    brings the run into view. After each key the test waits for the page to draw its run."""
    open_page(page)
    page.focus("#map")
    page.wait_for_function("document.activeElement && document.activeElement.id === 'map'")
    page.keyboard.press("ArrowRight")  # the innermost column switch: pins
    shows_run(page, 19)
    assert page.inner_text("#map-info").startswith("Run 19 (pins=off): ")
    page.keyboard.press("ArrowDown")  # the innermost row switch: checkpoints
    rid = run_id(Switches().with_values({"pins": "off", "checkpoints": "end-only"}))
    shows_run(page, rid)
    assert page.get_attribute("#map-sel", "data-run") == str(rid)
    page.keyboard.press("ArrowUp")
    shows_run(page, 19)
    page.keyboard.press("ArrowLeft")
    shows_run(page, 1)
    page.keyboard.press("ArrowLeft")  # the edge: nothing further
    page.keyboard.press("Enter")
    page.wait_for_function("Math.abs(document.getElementById('run-head').getBoundingClientRect().top) < 2")
    assert page.evaluate("location.hash") == hash_of({})  # keys are handled in order: the edge asked for nothing
    assert shown_run(page) == 1


def test_keys_faster_than_the_page_draws_land_where_they_say(page: Any) -> None:
    """Two arrows within one task of the page (no hashchange can be drawn between them): the
    second steps from the run the first asked for, not from the one still drawn."""
    open_page(page)
    page.focus("#map")
    page.evaluate(
        "() => { const m = document.getElementById('map');"
        " for (const key of ['ArrowRight', 'ArrowDown'])"
        "   m.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true, cancelable: true})); }"
    )
    rid = run_id(Switches().with_values({"pins": "off", "checkpoints": "end-only"}))
    shows_run(page, rid)
    assert page.evaluate("location.hash") == hash_of({"pins": "off", "checkpoints": "end-only"})


@pytest.mark.parametrize("name", ["chat-summary", "release-notes", "code-change", "research-brief"])
def test_a_workflows_page_shows_its_own_runs(browser: Any, name: str) -> None:
    """reports/workflows/NAME/explainer.html, written by `sim sweep --workflow NAME`: it opens on
    the workflow's run 1, flips to other runs of its own sweep.json, replays with --workflow,
    offers the workflow's named scenario and leaves out the article's cases."""
    folder = REPORTS / "workflows" / name
    runs: list[dict[str, Any]] = json.loads((folder / "sweep.json").read_text(encoding="utf-8"))["runs"]
    context = new_context(browser, viewport={"width": 1280, "height": 1200})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        pg.goto((folder / "explainer.html").as_uri())
        pg.wait_for_selector("html[data-ready=true]")
        check_outcome(pg, runs[0], runs)
        assert pg.inner_text("h1") == f"Your own workflow: {name}"
        assert pg.inner_text("#run-command") == f"sim trace main --workflow {name}"
        assert pg.query_selector("#beyond") is None
        buttons = pg.eval_on_selector_all(".preset-buttons button", "els => els.map(e => e.textContent)")
        listed = pg.text_content(".presets")  # a scenario with settings beyond the 864 is listed with them
        assert any(b.startswith(f"workflow-{name}") for b in buttons) or f"workflow-{name}-" in listed
        assert "workflow-chat-summary" not in buttons or name == "chat-summary"  # its own scenarios only
        for values in ({"key": "none"}, {"fencing": "off", "change": "after"}):
            flip_to(pg, values)
            check_outcome(pg, runs[run_id(Switches().with_values(values)) - 1], runs)
            assert pg.inner_text("#run-command").startswith(f"sim trace main --workflow {name} --set ")
    finally:
        context.close()
    assert errors == [], errors
