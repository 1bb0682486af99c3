"""The command line: `sim scenarios`, `sim trace`, bad input and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sim.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_scenarios_lists_names_and_descriptions(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "scenarios")
    assert code == 0
    assert "main" in out and "interrupted, corrected, retried" in out


def test_scenarios_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "scenarios", "--json")
    names = [s["name"] for s in json.loads(out)]
    assert code == 0 and "superseded" in names


def test_trace_json_follows_spec_section_8(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "trace", "main", "--json")
    assert code == 0
    doc = json.loads(out)
    outcome = doc["outcome"]
    for field in (
        "model_calls", "model_calls_by_attempt", "steps_restored", "stale_writes_rejected",
        "stale_writes_applied", "posts_applied", "first_accepted_tick", "confirmed_tick",
        "newsletter", "violations", "finished",
    ):  # fmt: skip
        assert field in outcome
    assert outcome["model_calls_by_attempt"] == [3, 3, 0]
    assert outcome["newsletter"] == {"start_tick": 12, "digest": "d2", "quoted_revenue": "4.7"}
    assert doc["switches"]["fencing"] == "on"


def test_trace_set_changes_a_switch(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "trace", "main", "--set", "pins=off", "--json")
    assert code == 0
    violations = json.loads(out)["outcome"]["violations"]
    assert violations == [
        {"invariant": "misused-dependant", "tick": 12},
        {"invariant": "wrong-acceptance", "tick": 9},
    ]


@pytest.mark.parametrize("name", ["main", "main-end-only", "superseded", "versions-off"])
def test_trace_check_passes_for_the_published_scenarios(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, _, err = run_cli(capsys, "trace", name, "--check")
    assert code == 0, err


def test_trace_check_fails_with_the_differing_fields(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "wrong.toml"
    path.write_text("[expect]\nmodel_calls = 7\nfinished = true\n")
    code, _, err = run_cli(capsys, "trace", str(path), "--check")
    assert code == 1
    assert "model_calls: expected 7, got 6" in err


@pytest.mark.parametrize(
    ("args", "files", "message"),
    [
        (["trace", "nosuch"], {}, "unknown scenario 'nosuch'; named scenarios:"),
        (["trace", "bad.toml"], {"bad.toml": "[switches\n"}, "bad.toml: not valid TOML"),
        (["trace", "main", "--set", "fence=on"], {}, "unknown switch 'fence'; switches are: silent, fencing"),
        (["trace", "main", "--set", "fencing=maybe"], {}, "switch 'fencing' has no value 'maybe'; allowed: on, off"),
        (["trace", "main", "--set", "fencing"], {}, "expected name=value, got 'fencing'"),
        (
            ["trace", "wake.toml"],
            {"wake.toml": "[schedule]\nsilences = [{attempt = 1, at = 5, wake = 3}]\n"},
            "wake.toml: schedule.silences: attempt #1 wakes at t3, not after its silence at t5",
        ),
        (
            ["trace", "neg.toml"],
            {"neg.toml": "[schedule]\nchanges = [{at = -2, sections = [2]}]\n"},
            "neg.toml: schedule.changes: negative tick -2",
        ),
        (
            ["trace", "ghost.toml"],
            {"ghost.toml": "[schedule]\nsilences = [{attempt = 1, at = 3, wake = 8}, {attempt = 6, at = 9}]\n"},
            "ghost.toml: schedule: silence of attempt #6 at t9: attempt #6 was never admitted",
        ),
        (["trace", "missing/file.toml"], {}, "missing/file.toml: no such scenario file"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    files: dict[str, str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code, out, err = run_cli(capsys, *args)
    assert code == 2
    assert message in err
    assert "Traceback" not in err and out == ""
    assert len(err.strip().splitlines()) == 1


def test_unknown_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "trace", "main", "--colour")
    assert code == 2 and "No such option" in err


def test_console_script_output_does_not_depend_on_hash_seed() -> None:
    outputs = []
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-m", "sim", "trace", "main", "--set", "fencing=off", "--json"],
            capture_output=True, text=True, env=env, check=True,
        )  # fmt: skip
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])["outcome"]["stale_writes_applied"] == 2


def test_unreadable_scenario_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A file the user may not read (mode 000 as an unprivileged user) is named, not a traceback."""
    path = tmp_path / "secret.toml"
    path.write_text('description = "x"\n')
    real_open = open

    def refuse(file: object, *args: object, **kwargs: object) -> object:
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", refuse)
    code, _, err = run_cli(capsys, "trace", str(path))
    assert code == 2 and err.strip().splitlines() == [f"sim: error: {path}: cannot be read: permission denied"]


@pytest.mark.parametrize("command", [["check", "-k", "0", "-t", "2"], ["sweep"], ["explore", "--examples", "1"]])
def test_an_out_folder_that_looks_like_an_option_is_refused(command: list[str],
                                                            capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """`--out --json` forgot the folder: refused with one line, not a folder named --json."""
    code, out, err = run_cli(capsys, *command, "--out", "--json")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"sim: error: sim {command[0]}: Invalid value for '--out': expected a folder, got '--json', which looks like an option"
    ]


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    from sim.base.compiled import mode

    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and out == f"sim {version('sim')}, {mode()}\n"


def test_a_bare_sim_prints_its_help_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys)
    assert code == 0 and err == ""
    assert out.startswith("Usage: sim [OPTIONS] COMMAND") and "\nCommands:\n" in out
    assert out == (run_cli(capsys, "--help")[1])


def test_scenarios_check_runs_every_named_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    from sim.scenario import names

    code, out, _ = run_cli(capsys, "scenarios", "--check")
    assert code == 0
    assert out.splitlines()[-1] == f"{len(names())} of {len(names())} scenarios match their [expect] tables"
    code, out, _ = run_cli(capsys, "scenarios", "--check", "--json")
    assert json.loads(out)["failed"] == 0


def test_scenarios_check_fails_on_a_wrong_expect_table_and_on_none(capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:  # fmt: skip
    """A scenario whose [expect] table is wrong FAILS; one with no [expect] table compares
    nothing, so it fails too (as `sim trace FILE --check` does), not counted as a match."""
    from sim import scenario

    text = (scenario.scenarios_dir() / "main.toml").read_text(encoding="utf-8")
    assert "\nmodel_calls = 6\n" in text
    (tmp_path / "a-right.toml").write_text(text, encoding="utf-8")
    (tmp_path / "b-wrong.toml").write_text(text.replace("\nmodel_calls = 6\n", "\nmodel_calls = 7\n"), encoding="utf-8")
    (tmp_path / "c-none.toml").write_text(text[: text.index("[expect]")], encoding="utf-8")
    monkeypatch.setattr(scenario, "scenarios_dir", lambda: tmp_path)
    code, out, _ = run_cli(capsys, "scenarios", "--check")
    lines = out.splitlines()
    assert code == 1, out
    assert lines[0].startswith("a-right") and lines[0].split()[1] == "ok"
    assert lines[1].startswith("b-wrong") and lines[1].split()[1] == "FAILED"
    assert "model_calls: expected 7, got 6" in lines[2]
    assert lines[3].split(maxsplit=1) == ["c-none", "FAILED: no [expect] table"]
    assert lines[-1] == "1 of 3 scenarios match their [expect] tables"
    code, out, _ = run_cli(capsys, "scenarios", "--check", "--json")
    assert code == 1 and json.loads(out)["failed"] == 2


def test_an_empty_newsletter_table_in_expect_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`newsletter = {}` compares nothing: a check of it could not fail, so the loader refuses it
    (one line, exit 2); a newsletter table with a field is compared, each field a figure."""
    path = tmp_path / "vacuous.toml"
    path.write_text('[switches]\npins = "off"\n[expect]\nnewsletter = {}\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "trace", str(path), "--check")
    assert code == 2 and "expect.newsletter" in err and len(err.strip().splitlines()) == 1
    path.write_text('[switches]\npins = "off"\n[expect]\nnewsletter = {start_tick = 99, digest = "d9"}\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "trace", str(path), "--check")
    assert code == 1 and "newsletter.start_tick: expected 99" in err and "newsletter.digest" in err


def test_trace_help_lists_every_switch_and_knob_with_its_values(capsys: pytest.CaptureFixture[str]) -> None:
    from sim.model.knobs import KNOBS
    from sim.model.switches import SWITCHES

    code, out, _ = run_cli(capsys, "trace", "--help")
    text = " ".join(out.split()).replace("- ", "-")  # click may wrap a line after a hyphen
    assert code == 0
    for name, enum in SWITCHES.items():
        assert f"{name}={'|'.join(m.value for m in enum)}" in text
    for name, knob in KNOBS.items():
        assert f"{name}={'|'.join(knob.values)}" in text


def test_sim_help_gives_each_command_its_whole_first_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    from sim.commands import COMMANDS

    code, out, _ = run_cli(capsys, "--help")
    commands = out.split("Commands:")[1]
    assert code == 0 and "..." not in commands
    assert all(f"  {name} " in commands for name in COMMANDS)
    assert max(len(line) for line in out.splitlines()) <= 80


@pytest.mark.parametrize(("words", "expected"), [
    (["trace", "main-"], ["main-end-only"]),
    (["trace", "main", "--set", "fencing_b"], ["fencing_by="]),
    (["trace", "main", "--set", "zombie="], ["zombie=rereads", "zombie=from-memory"]),
    (["check", "--profile", "langgraph-e"], ["langgraph-exit"]),
    (["diff", "main", "stale-"], ["stale-write"]),
])  # fmt: skip
def test_shell_completion_offers_scenarios_settings_and_profiles(words: list[str], expected: list[str]) -> None:
    """`_SIM_COMPLETE=bash_complete sim ...` (click's completion protocol), run as a shell would."""
    env = {**os.environ, "_SIM_COMPLETE": "bash_complete", "COMP_WORDS": " ".join(["sim", *words]),
           "COMP_CWORD": str(len(words))}  # fmt: skip
    done = subprocess.run([str(Path(sys.executable).with_name("sim"))], env=env, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert [line.split(",", 1)[1] for line in done.stdout.splitlines()] == expected, done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_a_full_output_stream_is_one_line_not_a_bug_report() -> None:
    """Standard output that cannot take the output (/dev/full: no space left) is said in one
    line, exit 2; it was reported as an internal error, a bug in sim."""
    sim = str(Path(sys.executable).with_name("sim"))
    with open("/dev/full", "w", encoding="utf-8") as full:
        done = subprocess.run([sim, "trace", "main", "--json"], stdout=full, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 2, done.stderr
    assert done.stderr == "sim: error: cannot write the output (No space left on device)\n"


def test_an_empty_scenario_or_file_name_is_named_as_empty(capsys: pytest.CaptureFixture[str]) -> None:
    """An empty argument was read as the current folder (": is a folder, not a scenario file")."""
    assert main(["trace", ""]) == 2
    assert "scenario '': empty" in capsys.readouterr().err
    assert main(["trace", "main", "--html", ""]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "expected a file, got an empty name" in err


def test_trace_json_with_until_is_the_run_so_far(capsys: pytest.CaptureFixture[str]) -> None:
    """`--until T` cuts every view at T; the JSON document ignored it (the whole run, to t14).
    Its events and outcome are now those of the run up to T, the same as ITF's and the text's."""
    from sim.engine.run import run
    from sim.model.schedule import worked_example
    from sim.model.switches import Switches
    from sim.properties.outcome import outcome
    from sim.render.grid import truncated

    assert main(["trace", "main", "--until", "5", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    cut = truncated(run(Switches(), worked_example(Switches())), 5)
    assert doc["until"] == 5 and doc["outcome"] == outcome(cut).to_json()
    assert doc["events"] == cut.to_json() and max(e["tick"] for e in doc["events"]) <= 5
    assert main(["trace", "main", "--json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert "until" not in whole and whole["outcome"]["last_tick"] == 14


WRONG_EXPECT = """description = "pins off: no digest of the final report is accepted, but [expect] says one is at t10"
[switches]
pins = "off"
[expect]
first_accepted_tick = 10
model_calls = 5
[expect.newsletter]
start_tick = 12
digest = "d1"
"""


def test_trace_check_fails_when_the_run_has_none_where_a_figure_is_expected(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:  # fmt: skip
    """An expected tick the run never reached (None) is a difference, not a match, in the text
    and in the JSON view; and the ok line counts each figure of the newsletter's table."""
    path = tmp_path / "wrong.toml"
    path.write_text(WRONG_EXPECT)
    code, _, err = run_cli(capsys, "trace", str(path), "--check")
    assert code == 1
    assert "first_accepted_tick: expected 10, got None" in err
    code, out, _ = run_cli(capsys, "trace", str(path), "--check", "--json")
    assert code == 1
    assert json.loads(out)["check"]["ok"] is False
    right = tmp_path / "right.toml"
    right.write_text(WRONG_EXPECT.replace("first_accepted_tick = 10", 'first_accepted_tick = "null"')
                     .replace('digest = "d1"', 'digest = "d2"'))  # fmt: skip
    code, out, err = run_cli(capsys, "trace", str(right), "--check")
    assert (code, err) == (0, ""), err
    assert "check: ok (4 expected figures match)" in out


def test_a_summary_that_read_the_last_section_is_judged_too(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """reads=next-section: #1's s3 also read section 4, which changes at t5; #2 restores s3 by
    its key and the accepted digest is unfaithful (faithful-digest), as for section 2."""
    path = tmp_path / "sec4.toml"
    path.write_text(SECTION_4)
    code, out, _ = run_cli(capsys, "trace", str(path), "--json")
    assert code == 0
    assert [v["invariant"] for v in json.loads(out)["outcome"]["violations"]] == ["faithful-digest"]


SECTION_4 = """description = "reads=next-section, section 4 changed at t5 while #1 is paused"
[switches]
reads = "next-section"
[schedule]
silences = [{attempt = 1, at = 4, wake = 12}]
changes = [{at = 5, sections = [4]}]
"""
