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

from sim.sweep import run_id
from sim.switches import SWEPT, SWITCHES, Switches

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


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 1200})
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


def check_outcome(pg: Any, run: dict[str, Any]) -> None:
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
    broke = {v["invariant"]: v["tick"] for v in o["violations"]}
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
    # one change at a time: every single flip, each pointing at its neighbour run
    flips = pg.eval_on_selector_all("#flips [data-flip]", "els => els.map(e => [e.dataset.flip, +e.dataset.run])")
    s = Switches().with_values(run["switches"])
    want = [
        (f"{n}={m.value}", run_id(s.with_values({n: m.value})))
        for n in SWEPT for m in SWITCHES[n] if m is not getattr(s, n)
    ]  # fmt: skip
    assert [tuple(f) for f in flips] == want


def flip_to(pg: Any, values: dict[str, str]) -> None:
    """Click the radios (by their labels) that differ from what is shown."""
    now = checked(pg)
    for name in SWEPT:
        value = values.get(name, getattr(Switches(), name).value)
        if now[name] != value:
            pg.click(f"#switches label:has(input[name='{name}'][value='{value}'])")


def test_the_main_trace_is_shown_on_opening(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    open_page(page)
    check_outcome(page, sweep_runs[0])
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
    page.screenshot(path=str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size > 10_000


def test_flipping_switches_shows_the_matching_run(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    open_page(page)
    for values in COMBOS:
        flip_to(page, values)
        rid = run_id(Switches().with_values(values))
        page.wait_for_function(f"document.getElementById('run').dataset.run === '{rid}'")
        check_outcome(page, sweep_runs[rid - 1])
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
    check_outcome(page, sweep_runs[run_id(want) - 1])
    page.click("#switches label:has(input[name='fencing'][value='on'])")  # a control: the hash follows
    values["fencing"] = "on"
    page.wait_for_function(f"location.hash === {json.dumps(hash_of(values))}")
    check_outcome(page, sweep_runs[run_id(Switches().with_values(values)) - 1])
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
    check_outcome(page, sweep_runs[rid - 1])


def test_the_switches_work_from_the_keyboard(page: Any, sweep_runs: list[dict[str, Any]]) -> None:
    open_page(page)
    page.focus("input[name='fencing'][value='on']")
    page.keyboard.press("ArrowRight")  # within a radio group the arrows choose
    page.wait_for_function("document.getElementById('run').dataset.run === '217'")
    assert checked(page)["fencing"] == "off"
    page.keyboard.press("Tab")  # and Tab moves to the next group
    assert page.evaluate("document.activeElement.name") == "checkpoints"
    page.keyboard.press("ArrowRight")
    rid = run_id(Switches().with_values({"fencing": "off", "checkpoints": "end-only"}))
    page.wait_for_function(f"document.getElementById('run').dataset.run === '{rid}'")
    check_outcome(page, sweep_runs[rid - 1])


def test_a_phone_width_screen(browser: Any) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
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
    finally:
        context.close()
