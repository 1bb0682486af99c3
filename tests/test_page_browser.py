"""The page of one run (`sim trace main --html FILE`) in a real browser: Debian's Chromium
driven by Playwright, as tests/test_explainer_browser.py drives the explainer.

Writes the page with the CLI, opens it from disk (file://, no server, no network), moves the
tick slider to t13 by keyboard and by setting its value, and checks what the page shows
there against the article: #2 UNKNOWN, d2 accepted, the announcement unconfirmed, each
changed item marked in words as well as by its class. Skips where /usr/bin/chromium or the
playwright package is missing; never downloads a browser.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# the explainer's browser test launches Chromium (or skips, saying why) and checks each page
# for script errors and network requests: its fixtures serve here too
from test_explainer_browser import browser, page  # noqa: F401

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("page") / "x.html"
    done = subprocess.run([sys.executable, "-m", "sim", "trace", "main", "--html", str(out)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture()
def pg(page: Any, page_file: Path) -> Any:  # noqa: F811
    page.goto(page_file.as_uri())
    page.wait_for_selector("html[data-ready=true]")
    return page


def item(p: Any, kind: str, key: str) -> dict[str, Any]:
    """An item of the state panel: its state, whether it is marked changed, and its text."""
    found: dict[str, Any] | None = p.evaluate(
        """([kind, key]) => {
             const li = [...document.querySelectorAll('#' + kind + ' li')].find(l => l.dataset.key === key);
             return li ? {state: li.dataset.state, changed: li.dataset.changed === 'true',
                          cls: li.className, text: li.innerText,
                          visible: li.getBoundingClientRect().height > 0} : null;
           }""",
        [kind, key],
    )
    assert found is not None, f"no {kind} item {key}"
    return found


def shown_tick(p: Any) -> int:
    return int(p.get_attribute("html", "data-tick"))


def at_tick(p: Any, t: int) -> None:
    """Wait for the page's own signal that tick `t` is shown (never for time)."""
    p.wait_for_function(f"document.documentElement.dataset.tick === '{t}'")


def assert_t13(p: Any) -> None:
    assert shown_tick(p) == 13
    assert p.inner_text("#tick-label") == "t13"
    attempt = item(p, "attempts", "#2")
    assert attempt["state"] == "UNKNOWN" and "UNKNOWN" in attempt["text"] and attempt["visible"]
    assert attempt["changed"] and "changed" in attempt["cls"] and "was running" in attempt["text"]
    digest = item(p, "artifacts", "d2")
    assert digest["state"] == "accepted" and "accepted" in digest["text"] and not digest["changed"]
    effect = item(p, "effects", "d2")
    assert effect["state"] == "unconfirmed" and "unconfirmed" in effect["text"] and not effect["changed"]
    successor = item(p, "attempts", "#3")
    assert successor["changed"] and "new" in successor["text"]
    # the current tick's column is highlighted in the swimlane, and only it
    columns = p.evaluate("() => [...document.querySelectorAll('#lane thead th.now')].map(th => th.innerText)")
    assert columns == ["t13"]


def test_the_slider_at_t13_by_keyboard(pg: Any) -> None:
    assert shown_tick(pg) == 14  # opens at the last tick
    pg.focus("#tick")
    pg.keyboard.press("Home")
    at_tick(pg, 0)
    assert item(pg, "attempts", "#1")["changed"]  # admitted at t0: new
    pg.keyboard.press("End")
    at_tick(pg, 14)
    pg.keyboard.press("ArrowLeft")
    at_tick(pg, 13)
    assert_t13(pg)
    pg.keyboard.press("ArrowRight")
    at_tick(pg, 14)
    assert item(pg, "effects", "d2")["state"] == "confirmed"


def test_the_slider_at_t13_by_value(pg: Any) -> None:
    pg.eval_on_selector("#tick", "s => { s.value = '13'; s.dispatchEvent(new Event('input', {bubbles: true})); }")
    at_tick(pg, 13)
    assert_t13(pg)
    # the keys work outside the slider too (not in the swimlane's scroll box)
    pg.click("h1")
    pg.keyboard.press("ArrowLeft")
    at_tick(pg, 12)
    assert item(pg, "attempts", "#2")["state"] == "running"
    pg.keyboard.press("ArrowLeft")
    at_tick(pg, 11)
    assert item(pg, "effects", "d2")["state"] == "applied"


def test_outcome_verdicts_and_swimlane_are_drawn(pg: Any) -> None:
    assert pg.inner_text("#outcome [data-field=model_calls]") == "6"
    assert pg.inner_text("#outcome [data-field=confirmed_tick]") == "t14"
    verdicts = pg.eval_on_selector_all("#invariants [data-verdict]", "vs => vs.map(v => v.dataset.verdict)")
    assert verdicts and set(verdicts) == {"holds"}
    assert pg.locator("#lane tbody tr").count() >= 10
    assert "#2 T42" in pg.inner_text("#lane")
