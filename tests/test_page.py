"""The state of a run at each tick (`sim.render.lifecycle`) and the page of one run
(`sim trace --html`, `sim.render.page`): the lifecycles against the article's main trace and
the swimlane `sim trace` draws, the page deterministic and self-contained, and `sim explore`
and `sim check` writing a page beside each counterexample. The page in Chromium:
tests/test_page_browser.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sim import scenario as scenarios
from sim.cli import main
from sim.render import grid as grids
from sim.render import itf
from sim.render.lifecycle import KINDS, STATES, TickState, lifecycles
from sim.render.page import is_page_of, page_path
from sim.run import run_scenario


def states_of(name: str, *sets: str) -> list[TickState]:
    loaded = scenarios.load(name)
    if sets:
        loaded = loaded.with_switches(dict(s.split("=", 1) for s in sets))
    trace, _ = run_scenario(loaded)
    return lifecycles(trace)


def state(s: TickState, kind: str, key: str) -> str:
    found = s.find(kind, key)
    return found.state if found is not None else "-"


# -- the per-tick state ------------------------------------------------------------------------
def test_main_at_t13_the_three_lifecycles_of_the_article() -> None:
    """docs/model.md §7: at t10 the digest is accepted, at t11 #2 records the intent, sends and
    dies after the send, at t13 #2 is UNKNOWN (and #3 is admitted), at t14 the announcement is
    confirmed; #1 is UNKNOWN from t5 and fenced at t8."""
    states = states_of("main")
    assert [s.tick for s in states] == list(range(15))
    t13 = states[13]
    assert state(t13, "attempts", "#2") == "UNKNOWN"
    assert state(t13, "artifacts", "d2") == "accepted"
    assert state(t13, "effects", "d2") == "unconfirmed"
    # what changed at t13: #2 (running -> UNKNOWN) and #3 (new); the digest and effect did not
    changed = {(k, i.key): i.before for k in KINDS for i in t13.items(k) if i.changed}
    assert changed == {("attempts", "#2"): "running", ("attempts", "#3"): ""}
    assert [state(states[t], "attempts", "#1") for t in (4, 5, 7, 8, 14)] == ["running", "UNKNOWN", "UNKNOWN",
                                                                              "fenced", "fenced"]  # fmt: skip
    assert [state(states[t], "artifacts", "d2") for t in (8, 9, 10)] == ["-", "candidate", "accepted"]
    assert [state(states[t], "effects", "d2") for t in (10, 11, 12, 13, 14)] == ["-", "applied", "unconfirmed",
                                                                                 "unconfirmed", "confirmed"]  # fmt: skip
    assert state(states[14], "attempts", "#3") == "done" and state(states[14], "attempts", "#2") == "UNKNOWN"
    assert states[4].report == 2 and states[13].owner == 3


def test_main_agrees_with_the_swimlane_sim_trace_draws(capsys: pytest.CaptureFixture[str]) -> None:
    """Tick by tick, the lifecycles say what the swimlane's marks say."""
    trace, _ = run_scenario(scenarios.load("main"))
    grid = grids.build(trace)
    rows = {r.key: r for r in grid.rows}
    states = lifecycles(trace)
    for s in states:
        for n in (1, 2, 3):
            legends = {m.legend for m in rows[f"attempt:{n}"].cells[s.tick].marks}
            if legends & {"unknown", "still-unknown"}:
                assert state(s, "attempts", f"#{n}") == "UNKNOWN", s.tick
            if "fenced" in legends or "done" in legends:
                assert state(s, "attempts", f"#{n}") in ("fenced", "done"), s.tick
        feed = {m.legend for m in rows["feed"].cells[s.tick].marks}
        if "unconfirmed" in feed:
            assert state(s, "effects", "d2") == "unconfirmed", s.tick
        if "confirmed" in feed:
            assert state(s, "effects", "d2") == "confirmed", s.tick
        if {m.legend for m in rows["digest"].cells[s.tick].marks} & {"accepted"}:
            assert state(s, "artifacts", "d2") == "accepted", s.tick
    assert main(["trace", "main", "--no-color", "--width", "160"]) == 0
    out = capsys.readouterr().out
    assert "t13  #2 UNKNOWN (2 missed heartbeats)" in out
    line = next(x for x in out.splitlines() if x.startswith("#2 T42"))
    assert "UNK" in line and line.rstrip().endswith("?")


def test_superseded_keeps_the_first_digest_accepted_as_history() -> None:
    states = states_of("superseded")
    # the correction arrives at t12, after d2 was accepted for v1
    assert [state(states[t], "artifacts", "d2") for t in (9, 11, 12, 18)] == ["accepted", "accepted", "superseded",
                                                                              "superseded"]  # fmt: skip
    assert state(states[17], "artifacts", "d4") == "accepted"
    assert state(states[18], "effects", "d4") == "confirmed"


def test_every_item_is_in_a_state_of_its_lifecycle() -> None:
    for name in scenarios.names():
        trace, _ = run_scenario(scenarios.load(name), strict=False)
        for s in lifecycles(trace):
            for kind in KINDS:
                assert all(i.state in STATES[kind] for i in s.items(kind)), (name, s.tick)


@pytest.mark.parametrize("name", scenarios.names())
def test_every_named_scenario_one_state_per_tick_and_changes_against_the_previous(name: str) -> None:
    trace, _ = run_scenario(scenarios.load(name), strict=False)
    states = lifecycles(trace)
    assert len(states) == trace.last_tick + 1
    before: dict[tuple[str, str], str] = {}
    for s in states:
        now = {(k, i.key): i.state for k in KINDS for i in s.items(k)}
        for k in KINDS:
            for i in s.items(k):
                assert i.before == before.get((k, i.key), "")
        before = now
    # the ITF export reads the same mapping of the engine's state: its attempts' statuses are the lifecycle's
    for s, doc in zip(states, itf.states(trace)):
        statuses = {f"#{n['#bigint']}": a["status"] for n, a in doc["attempts"]["#map"]}
        assert {i.key: i.state for i in s.attempts} == {
            k: ("replaced" if s.find("attempts", k).state == "replaced" else v)  # type: ignore[union-attr]
            for k, v in statuses.items()
        }


# -- the page ----------------------------------------------------------------------------------
def sim_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sim", *args], capture_output=True, text=True, check=False, cwd=cwd)


def test_page_is_deterministic_self_contained_and_holds_the_states(tmp_path: Path) -> None:
    a, b = tmp_path / "a.html", tmp_path / "b" / "x.html"
    b.parent.mkdir()
    assert main(["trace", "main", "--html", str(a)]) == 0
    done = sim_cli("trace", "main", "--html", "x.html", cwd=b.parent)
    assert done.returncode == 0, done.stderr
    assert "wrote x.html" in done.stdout
    text = a.read_text(encoding="utf-8")
    assert text == b.read_text(encoding="utf-8")  # another process, another folder: the same bytes
    assert not re.search(r"(https?:)?//[a-z]", text.replace("<!--", ""))  # no network
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", text)
    assert str(tmp_path) not in text
    assert '<input type="range" id="tick" min="0" max="14" value="14"' in text
    assert "<title>main: the worked example, all protections on</title>" in text
    assert "sim trace main</code>" in text
    data = json.loads(re.search(r'<script type="application/json" id="run-data">(.*?)</script>', text, re.S)
                      .group(1).replace("<\\/", "</"))  # type: ignore[union-attr]  # fmt: skip
    expected = states_of("main")
    assert len(data["states"]) == len(expected)
    attempts = dict((i[0], i[1]) for i in data["states"][13][2][0])
    assert attempts["#2"] == "UNKNOWN"
    assert data["outcome"]["model_calls"] == 6


def test_page_takes_the_switches_and_until_as_trace_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p.html"
    assert main(["trace", "main", "--set", "fencing=off", "--until", "8", "--html", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "main: fencing=off" in text and "sim trace main --set fencing=off" in text
    assert 'max="8"' in text
    assert main(["trace", "main", "--profile", "temporal", "--html", str(out)]) == 0
    assert main(["trace", "main", "--check", "--html", str(out)]) == 0
    assert "check: ok" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args",
    [["--html", "{tmp}/missing/x.html"], ["--html", "{tmp}"], ["--html", "{tmp}/x.html", "--json"],
     ["--html", "{tmp}/x.html", "--format", "itf"], ["--html", "{tmp}/x.html", "--step"]],
)  # fmt: skip
def test_page_bad_path_or_combination_is_one_line_exit_2(args: list[str], tmp_path: Path) -> None:
    done = sim_cli("trace", "main", *[a.format(tmp=tmp_path) for a in args])
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stdout == ""


def test_check_writes_a_page_beside_each_counterexample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["check", "-k", "1", "-t", "4", "-j", "1", "--set", "fencing=off", "--out", str(out)]) == 0
    assert "its page" in capsys.readouterr().out
    tomls = sorted(out.glob("*.toml"))
    assert tomls and sorted(out.glob("*.html")) == [page_path(t) for t in tomls]
    for toml in tomls:
        page = page_path(toml)
        assert is_page_of(page, "sim check counterexample:")
        again = tmp_path / "again.html"
        assert main(["trace", str(toml), "--html", str(again)]) == 0
        assert again.read_bytes() == page.read_bytes()  # what sim trace FILE --html writes
    (out / "mine.html").write_text("<p>mine</p>")
    assert not is_page_of(out / "mine.html", "sim check counterexample:")


def test_explore_writes_a_page_beside_each_counterexample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "--set", "key=none", "--seed", "1", "--examples", "200", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    toml = tmp_path / "duplicate-effect--key-none--seed1.toml"
    page = page_path(toml)
    assert f"its page: {page}" in out
    text = page.read_text(encoding="utf-8")
    assert "sim trace duplicate-effect--key-none--seed1.toml --set key=none" in text
    assert '"invariant":"duplicate-effect"' in text


def test_step_shows_the_same_state_at_each_tick(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`sim trace --step` prints, under each frame, the lifecycles the page shows."""
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("13\nq\n"))
    assert main(["trace", "main", "--step", "--no-color", "--width", "100"]) == 0
    frame = capsys.readouterr().out.split("(t13 of t0..t14)")[1].split("t13/t14")[0]
    assert "state at the end of t13 (* changed in this tick)" in frame
    assert "attempts  #1 fenced, *#2 UNKNOWN (was running), *#3 running (new)" in frame
    assert "digests   d2 accepted" in frame
    assert "effects   d2 unconfirmed" in frame


def test_every_page_starts_with_the_head_that_marks_it() -> None:
    from sim.render import page

    assert page._PAGE.startswith(page.HEAD)
