"""`sim trace` as a swimlane: golden screens at 80 and 120 columns, --step, --until, colour.

Golden files live in tests/golden/: the plain text of `sim trace NAME --width W --no-color`
for every named scenario. After an intended change to the rendering or the model,
regenerate them with

    SIM_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_swimlane.py tests/test_diff.py

and review the diff of tests/golden/ like any other change.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from sim import scenario as scenarios
from sim.cli import cli
from sim.commands.common import load_scenario
from sim.render import grid as grids
from sim.render import swimlane
from sim.run import run_scenario

GOLDEN = Path(__file__).parent / "golden"
WIDTHS = (80, 120)


def invoke(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), input=input, env=env, standalone_mode=False)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    code = result.return_value if isinstance(result.return_value, int) else result.exit_code
    return code, result.output


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("SIM_UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing: run with SIM_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", scenarios.names())
def test_golden_screens(name: str, width: int) -> None:
    code, out = invoke("trace", name, "--width", str(width), "--no-color")
    assert code == 0
    assert "\x1b" not in out
    for line in out.splitlines():
        assert cell_len(line) <= width, line
    check_golden(f"trace-{name}-{width}.txt", out)


def test_main_screen_tells_the_story() -> None:
    _, out = invoke("trace", "main", "--width", "120")
    lines = out.splitlines()
    assert lines[0] == "main: the worked example, all protections on  (t0..t14)"
    header = lines[2].split()
    assert header == [f"t{t}" for t in range(15)]  # one page at 120 columns
    row = {line[:10].strip(): line[12:] for line in lines[3:14]}
    assert row["#1 T41"].split() == ["T41", "s1", "s2", "s3…", "…", "UNK", "?", "?", "fenced"]
    assert row["#2 T42"].split() == ["T42", "s2", "s3", "s4", "asm", "·", "died", "…", "UNK", "?"]
    assert row["#3 T43"].split() == ["T43", "done"]
    assert row["Journal s1"].split() == ["v1", "↺"]
    assert row["Journal s3"].split() == ["v2", "✗v1"]
    assert row["Digest"].split() == ["◇d2", "✓v2"]
    # between the intent (t11) and the confirmation (t14) the effect is unconfirmed: "?"
    assert row["Feed post"].split() == ["i", "P1", "?", "?", "=P1", "✓"]
    assert row["Newsletter"].split() == ["4.7"]
    assert "invariants           all hold" in out
    assert "t14  #3 sends the announcement of d2 (key announce/d2); feed knows the key: answers with" in out


def test_narrow_terminals_get_pages_of_ticks() -> None:
    trace, result = run_scenario(load_scenario("main", ()))
    g = grids.build(trace)
    for width, count in ((80, 2), (100, 1), (120, 1), (40, 3)):
        lay = swimlane.layout([g], g.ticks)
        got = swimlane.pages(lay, list(g.ticks), width)
        assert [t for page in got for t in page] == list(g.ticks)
        assert len(got) == count, (width, got)
        for page in got:
            assert lay.span(page) <= width or len(page) == 1
    text = swimlane.plain(swimlane.screen(trace, result, g, title="main", width=100))
    assert max(cell_len(line) for line in text.splitlines()) <= 100


def test_broken_invariants_name_tick_event_and_protection() -> None:
    _, out = invoke("trace", "versions-off", "--width", "120")
    assert "BROKEN               misused-dependant (t12), wrong-acceptance (t9)" in out
    block = out[out.index("wrong-acceptance broke at t9") :]
    assert "event  t9 digest d2 of #2 accepted (no version recorded)" in block
    assert "why    it was built with section 2 from v1 (says 4.1) while the report was v2" in block
    assert "guarded by version pins (off here: pins=off); pins=on alone would have stopped it" in block
    _, out = invoke("trace", "misused-dependant", "--width", "120")
    assert "rule=current-accepted alone would have stopped it" in " ".join(out.split())


def test_until_stops_the_replay_with_the_outcome_so_far() -> None:
    code, out = invoke("trace", "main", "--until", "8", "--width", "120")
    assert code == 0
    assert "(t0..t8 of t0..t14)" in out
    assert "Outcome so far (t0..t8 of t0..t14)" in out
    assert "t9 " not in out.split("Outcome")[0]
    assert "posts applied        0" in out
    # what has not happened by t8 is "not by t8", not "never": the newsletter is ready at t12
    assert "newsletter           not started by t8 (it may start from t12)" in out
    assert "first acceptance     not by t8" in out and "finished             not yet" in out
    assert "never started" not in out


def test_step_is_driven_by_lines_on_stdin() -> None:
    code, out = invoke("trace", "main", "--step", "--width", "100", input="\n\nq\n")
    assert code == 0
    frames = out.count("main: the worked example, all protections on  (t")
    assert frames == 3
    assert "(t0 of t0..t14)" in out and "(t2 of t0..t14)" in out and "(t3 of" not in out
    assert "t0/t14  Enter: next" in out
    assert "Outcome" not in out


def test_step_back_jump_and_to_the_end() -> None:
    _, out = invoke("trace", "main", "--step", "--width", "120", input="\nb\n13\n\n")
    titles = [line for line in out.splitlines() if line.startswith("main:")]
    assert [t.split("(")[1].split()[0] for t in titles] == ["t0", "t1", "t0", "t13", "t14"]
    assert "Outcome" in out and "invariants           all hold" in out
    # a step frame fills the grid up to its tick and hides attempts not yet admitted
    frame = out.split("(t13 of t0..t14)")[1].split("t13/t14")[0]
    assert "#3 T43" in frame and "=P1" not in frame
    first = out.split("(t1 of t0..t14)")[1].split("t1/t14")[0]
    assert "#2 T42" not in first


def test_step_stops_at_end_of_input_and_respects_until() -> None:
    code, out = invoke("trace", "main", "--step", input="")
    assert code == 0 and out.count("main:") == 1
    _, out = invoke("trace", "main", "--step", "--until", "2", input="\n\n\n")
    assert "(t2 of t0..t2)" in out and "Outcome so far (t0..t2 of t0..t14)" in out


def test_step_in_a_real_process_reading_a_pipe() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sim", "trace", "main", "--step", "--width", "90"],
        input="\n" * 3 + "q\n", capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("main: the worked example") == 4
    assert "\x1b" not in done.stdout


def test_colour_only_on_request_and_never_with_no_color() -> None:
    _, forced = invoke("trace", "main", "--width", "120", env={"FORCE_COLOR": "1", "NO_COLOR": ""})
    assert "\x1b[" in forced
    _, plain = invoke("trace", "main", "--width", "120", "--no-color", env={"FORCE_COLOR": "1", "NO_COLOR": ""})
    assert "\x1b" not in plain
    _, env_off = invoke("trace", "main", "--width", "120", env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b" not in env_off
    assert plain == env_off


def test_ascii_fallback_for_terminals_that_cannot_encode_the_symbols() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    con = swimlane.console(width=120, color=False, file=stream)
    trace, result = run_scenario(load_scenario("main", ()))
    swimlane.emit(con, swimlane.screen(trace, result, grids.build(trace), title="main", width=120))
    stream.flush()
    text = raw.getvalue().decode("ascii")
    assert "s3~" in text and "+v2" in text and "=P1 +" in text


def test_json_and_check_are_unchanged() -> None:
    import json

    code, out = invoke("trace", "main", "--json")
    doc = json.loads(out)
    assert code == 0 and set(doc) == {"scenario", "switches", "outcome", "events"}
    code, out = invoke("trace", "main", "--check", "--width", "80")
    assert code == 0 and "check: ok" in out


@pytest.mark.parametrize("args", [["--step", "--json"], ["--json", "--format", "itf"], ["--step", "--format", "itf"]])
def test_conflicting_options_are_bad_input(args: list[str]) -> None:
    from sim.cli import main

    assert main(["trace", "main", *args]) == 2


def test_step_answers_unknown_input_and_lets_the_last_tick_go_back() -> None:
    """An unknown line does not advance: it is answered with the commands. At the last tick
    the replay waits: `b` goes back, Enter shows the outcome."""
    _, out = invoke("trace", "main", "--step", "--width", "100", input="x\n14\nb\n\n\n")
    assert "'x' is not a command: Enter, b, a tick number (or tN), or q" in out
    prompts = [line.split("  ")[0] for line in out.splitlines() if "Enter:" in line]
    assert prompts[:2] == ["t0/t14", "t0/t14"]  # the unknown line did not advance
    assert prompts[2:] == ["t14/t14 (last)", "t13/t14", "t14/t14 (last)"]
    assert "Outcome" in out.split("t14/t14 (last)")[-1]


def test_the_swimlane_docs_trace_quotes_is_what_the_command_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/trace.md quotes the main trace's swimlane; it had drifted (the feed's two '?')."""
    from sim.cli import main

    doc = (Path(__file__).parent.parent / "docs" / "trace.md").read_text(encoding="utf-8")
    block = doc.split("## The swimlane\n\n```\n", 1)[1].split("```", 1)[0]
    assert main(["trace", "main", "--width", "100", "--no-color"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[2 : 2 + len(block.splitlines())] == block.splitlines()
