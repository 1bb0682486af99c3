"""Bad input a reviewer found past the boundary (docs/limits.md): each is one line on stderr
and exit 2, never a traceback, an internal error or a silent surprise; and the output sides
that went with them (a closed pipe, COLUMNS, a terminal's escapes in a file)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.base.errors import SwitchError
from sim.cli import main
from sim.model.switches import SWITCHES, parse_value

ROOT = Path(__file__).resolve().parent.parent
SIM = str(Path(sys.executable).with_name("sim"))
DIGEST = (ROOT / "workflows" / "digest.toml").read_text(encoding="utf-8")
#: the shipped workflow's description line, to replace
DESCRIBED = next(line for line in DIGEST.splitlines() if line.startswith("description = "))


def one_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run `sim ARGS`: exit 2 with one line on stderr, `sim: error: ...` (returned)."""
    code = main(list(args))
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("sim: error: "), err
    return err


# -- 1. a named scenario is not hidden by a file or folder of its name --------------------------
def test_a_name_is_not_hidden_by_a_file_or_folder_of_that_name_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cd /work && sim trace main` said "main: is a folder"; a non-TOML `stale-write` here made
    `sim trace stale-write` "not valid TOML". A name is a name; `./NAME` is the file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "main").mkdir()
    (tmp_path / "stale-write").write_text("not toml", encoding="utf-8")
    (tmp_path / "digest").write_text("not toml", encoding="utf-8")
    for args in (["trace", "main", "--json"], ["trace", "stale-write", "--json"], ["diff", "main", "stale-write", "--json"],
                 ["trace", "main", "--workflow", "digest", "--json"], ["workflows", "digest", "--json"]):  # fmt: skip
        assert main(args) == 0, capsys.readouterr().err
        capsys.readouterr()
    assert "./stale-write: not valid TOML" in one_error(capsys, "trace", "./stale-write")
    assert "./main: is a folder" in one_error(capsys, "trace", "./main")


def test_a_bare_argument_that_names_nothing_shipped_is_a_path_for_scenarios_and_workflows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same rule for NAME|FILE everywhere: a bare argument that is no shipped name is read
    as a path when a file is there (a workflow's was refused as an unknown name)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").write_text('[switches]\nfencing = "off"\n', encoding="utf-8")
    (tmp_path / "mywf").write_text(DIGEST, encoding="utf-8")
    assert main(["trace", "mine", "--workflow", "mywf", "--json"]) == 0
    capsys.readouterr()
    assert main(["workflows", "mywf"]) == 0
    assert "(mywf)" in capsys.readouterr().out
    assert "unknown scenario 'nothing'" in one_error(capsys, "trace", "nothing")
    assert "unknown workflow 'nothing'" in one_error(capsys, "workflows", "nothing")


# -- 2. integers past Python's 4,300 decimal digits ----------------------------------------------
def _long(prefix: str, digit: str, count: int) -> str:
    return prefix + digit * count


SCENARIOS = {
    "decimal horizon": f"[schedule]\nhorizon = {_long('', '1', 4301)}\n",
    "hex horizon": f"[schedule]\nhorizon = {_long('0x', 'f', 4000)}\n",
    "binary at": f"[schedule]\nsilences = [{{attempt = 1, at = {_long('0b', '1', 20000)}}}]\n",
    "octal model_calls": f"[expect]\nmodel_calls = {_long('0o', '7', 5000)}\n",
    "hex in a list": f"[expect]\nmodel_calls_by_attempt = [{_long('0x', 'f', 5000)}]\n",
}


@pytest.mark.parametrize("text", SCENARIOS.values(), ids=SCENARIOS.keys())
def test_an_integer_too_long_for_python_in_a_scenario_is_one_line(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ValueError: Exceeds the limit (4300 digits)` was an internal error, from the parser (a
    decimal integer) or from the message quoting the number (a hex, octal or binary one)."""
    monkeypatch.chdir(tmp_path)
    Path("x.toml").write_text(text, encoding="utf-8")
    assert one_error(capsys, "trace", "x.toml").startswith("sim: error: x.toml: ")
    assert one_error(capsys, "diff", "main", "x.toml").startswith("sim: error: x.toml: ")


WORKFLOWS = {
    "decimal ready": ("ready = 12", f"ready = {_long('', '1', 4301)}"),
    "hex ready": ("ready = 12", f"ready = {_long('0x', 'f', 4000)}"),
    "hex retention": ('receiver = "dedup"', f'receiver = "dedup"\nretention = {_long("0x", "f", 4000)}'),
    "octal calls": ('reads = ["report.section-1"]', f'reads = ["report.section-1"]\ncalls = {_long("0o", "7", 5000)}'),
}


@pytest.mark.parametrize("change", WORKFLOWS.values(), ids=WORKFLOWS.keys())
def test_an_integer_too_long_for_python_in_a_workflow_is_one_line(
    change: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert change[0] in DIGEST
    Path("w.toml").write_text(DIGEST.replace(change[0], change[1], 1), encoding="utf-8")
    Path("s.toml").write_text('workflow = "w.toml"\n', encoding="utf-8")
    assert one_error(capsys, "workflows", "w.toml").startswith("sim: error: w.toml: ")
    assert one_error(capsys, "trace", "main", "--workflow", "w.toml").startswith("sim: error: w.toml: ")
    assert one_error(capsys, "trace", "s.toml").startswith("sim: error: s.toml: workflow: w.toml: ")


def test_quote_says_the_size_of_an_integer_it_cannot_write() -> None:
    from sim.base.limits import quote

    assert quote(int("f" * 4000, 16)) == "an integer of about 4,817 digits"
    assert quote([int("f" * 4000, 16)]).startswith("a list holding an integer of more than 4,300 digits")


# -- 3. digits that str.isdigit() takes and int() does not ---------------------------------------
@pytest.mark.parametrize("line", ["²", "①", "t²", "5" * 5000])
def test_step_reads_only_ascii_tick_numbers(
    line: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`printf '²\\nq\\n' | sim trace main --step` was an internal error (int('²')); 5,000
    digits too. A superscript is not a command; a number past the last tick goes to it."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{line}\nq\n"))
    assert main(["trace", "main", "--step", "--no-color"]) == 0
    out = capsys.readouterr().out
    if line.isascii():
        assert "t14/t14 (last)" in out
    else:
        assert f"{line!r} is not a command" in out


def test_step_with_stdin_closed_quits(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", None)
    assert main(["trace", "main", "--step", "--no-color"]) == 0
    assert "t0/t14" in capsys.readouterr().out


@pytest.mark.parametrize("size", ["9" * 309, "9" * 5000, "9" * 400 + ".5G", "²", "٣G"])
def test_max_memory_of_huge_or_unicode_digits_is_one_line(size: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--max-memory <309 nines>` was an OverflowError (float infinity to int)."""
    from sim.base.memory import SizeError, parse_size

    with pytest.raises(SizeError):
        parse_size(size)
    assert "--max-memory" in one_error(capsys, "check", "-k", "0", "--max-memory", size)


@pytest.mark.parametrize("address", ["localhost:²", "1.2.3.4:" + "9" * 5000, "local:" + "9" * 5000, "local:²", "h:٣"])
def test_scheduler_of_huge_or_unicode_digits_is_one_line(address: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--scheduler localhost:²` was a ValueError from int()."""
    from sim.analysis.check.cluster import ClusterError, parse_address

    with pytest.raises(ClusterError):
        parse_address(address)
    assert "--scheduler" in one_error(capsys, "check", "-k", "0", "--scheduler", address)


@pytest.mark.parametrize("index", ["²", "9" * 5000])
def test_completion_word_index_of_unicode_or_huge_digits_is_one_line(
    index: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("_SIM_COMPLETE", "bash_complete")
    monkeypatch.setenv("COMP_WORDS", "sim trace")
    monkeypatch.setenv("COMP_CWORD", index)
    assert "COMP_CWORD=" in one_error(capsys)


# -- 4. COLUMNS ---------------------------------------------------------------------------------
@pytest.mark.parametrize("columns", ["0", "10", "²", "x"])
def test_columns_below_40_or_invalid_do_not_narrow_piped_output(
    columns: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """COLUMNS=0 printed nothing (exit 0); COLUMNS=10 drew piped output at 10 columns. Output
    that is not a terminal is 80 columns wide, as without COLUMNS."""
    monkeypatch.delenv("COLUMNS", raising=False)
    for command in (["trace", "main"], ["diff", "main", "--set", "fencing=off"]):
        assert main(command) == 0
        plain = capsys.readouterr().out
        monkeypatch.setenv("COLUMNS", columns)
        assert main(command) == 0
        assert capsys.readouterr().out == plain
        monkeypatch.delenv("COLUMNS")


def test_a_terminal_narrower_than_40_columns_gets_40(monkeypatch: pytest.MonkeyPatch) -> None:
    """--width refuses below 40; COLUMNS=10 on a terminal drew at 10. Now 40, the least."""
    from sim.commands.trace import make_console

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

        def fileno(self) -> int:
            raise OSError("no size")

    monkeypatch.setattr(sys, "stdout", Terminal())
    monkeypatch.setenv("COLUMNS", "10")
    assert make_console(True, None).width == 40
    monkeypatch.setenv("COLUMNS", "120")
    assert make_console(True, None).width == 120
    assert make_console(True, 60).width == 60


# -- 5 and 6. workflow paths: not UTF-8, and written into counterexample files ----------------------
def test_a_workflow_path_that_is_not_utf8_is_refused_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--workflow $'\\xffw.toml' --html p.html` ran, then failed writing the page
    (UnicodeEncodeError: surrogates not allowed, exit 1)."""
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"\xffw.toml")
    Path(name).write_text(DIGEST, encoding="utf-8")
    err = one_error(capsys, "trace", "main", "--workflow", name, "--html", "p.html")
    assert "not valid UTF-8" in err and not Path("p.html").exists()
    assert "not valid UTF-8" in one_error(capsys, "workflows", name)


@given(st.text())
def test_toml_string_reads_back_as_the_same_string(text: str) -> None:
    """A newline was written as a space, and an escape character raw (invalid TOML)."""
    from sim.scenario import _toml_string

    assert tomllib.loads(f"x = {_toml_string(text)}")["x"] == text


@pytest.mark.parametrize("name", ["w\x1bf.toml", "w\nn.toml", 'w"q\\.toml'])
def test_a_counterexample_names_any_workflow_path_so_that_it_replays(name: str, tmp_path: Path) -> None:
    """A counterexample file with a workflow path holding an escape character was invalid
    TOML; a newline became a space, and the replay named another file."""
    from sim.model.switches import Switches
    from sim.run import counterexample
    from sim.scenario import parse
    from sim.workflow import load

    path = tmp_path / name
    path.write_text(DIGEST, encoding="utf-8")
    switches = Switches().with_values({"fencing": "off"})
    scenario = parse(f'workflow = {_quoted(str(path))}\n[switches]\nfencing = "off"\n', "s.toml", "s")
    text = counterexample("found\nby a test", switches, scenario.schedule, str(path))
    replayed = parse(text, "c.toml", "c")
    assert replayed.workflow is not None and replayed.workflow.source == str(path)
    assert replayed.description == "found\nby a test" and load(str(path)).source == str(path)


def _quoted(text: str) -> str:
    from sim.scenario import _toml_string

    return _toml_string(text)


# -- 7. one line: no note before an error ----------------------------------------------------------
def test_an_error_in_a_scenario_with_an_inert_knob_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A two-line `sim: note:` about replay=strict came before the error (three lines, exit 2)."""
    monkeypatch.chdir(tmp_path)
    Path("n.toml").write_text('[switches]\nreplay = "strict"\n[schedule]\nhorizon = 10\n', encoding="utf-8")
    assert "death of post 1" in one_error(capsys, "trace", "n.toml")
    err = one_error(capsys, "trace", "main", "--set", "replay=strict", "--html", "missing/p.html")
    assert "--html" in err
    assert main(["trace", "main", "--set", "replay=strict", "--no-color"]) == 0  # the note is still said
    assert "sim: note: replay=strict has no effect" in capsys.readouterr().err


# -- 8. a scenario's `workflow =`: the file and the key ---------------------------------------------
@pytest.mark.parametrize(("ref", "said"), [
    ("nope", "x.toml: workflow: unknown workflow 'nope'"),
    ("/dev/null", "x.toml: workflow: /dev/null: not a regular file"),
    ("x.toml", "x.toml: workflow: found 'x.toml', this scenario file itself"),
    ("missing.toml", "x.toml: workflow: missing.toml: no such workflow file"),
])  # fmt: skip
def test_a_scenarios_workflow_error_names_the_file_and_the_key(
    ref: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("x.toml").write_text(f'workflow = "{ref}"\n', encoding="utf-8")
    assert one_error(capsys, "trace", "x.toml").startswith(f"sim: error: {said}")


# -- 9. one value per name ------------------------------------------------------------------------
def test_a_setting_given_twice_with_two_values_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """`--set fencing=off --set fencing=on` kept the last; the same value twice is fine."""
    from sim.base.errors import SwitchError
    from sim.model.switches import parse_assignments

    assert "fencing is given twice" in one_error(capsys, "trace", "main", "--set", "fencing=off", "--set", "fencing=on")
    assert "retention is given twice" in one_error(capsys, "diff", "main", "--set", "retention=3", "--set", "retention=4")
    assert parse_assignments(["fencing=off", "fencing=off"]) == {"fencing": "off"}
    with pytest.raises(SwitchError):
        parse_assignments(["key=none", "key = step"])


def test_a_protections_row_giving_a_protection_two_values_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """`-p 'fencing=off+fencing=on'` collapsed into the all-on row."""
    from sim.analysis.check.check import configurations
    from sim.base.errors import SwitchError
    from sim.model.switches import Checkpoints, Switches

    with pytest.raises(SwitchError, match="two values"):
        configurations(Switches(), "fencing=off+fencing=on", [Checkpoints.PER_STEP])
    same = configurations(Switches(), "fencing=off+fencing=off", [Checkpoints.PER_STEP])
    assert [c.protections for c in same] == ["fencing=off"]
    assert "--protections" in one_error(capsys, "check", "-k", "0", "-p", "all-on,fencing=off+fencing=on")


# -- 10. --html DIR/ -------------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["newdir/", "x.html/"])
def test_html_refuses_a_path_ending_in_a_slash(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--html newdir/` wrote a file named newdir (click.Path dropped the slash)."""
    monkeypatch.chdir(tmp_path)
    assert "ends in a slash" in one_error(capsys, "trace", "main", "--html", target)
    assert list(tmp_path.iterdir()) == []


# -- 11. what a file says is shown, not obeyed ----------------------------------------------------------
def test_workflows_shows_a_descriptions_terminal_escapes_as_escapes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A description with `\\u001b]0;title\\u0007` set the terminal's title."""
    monkeypatch.chdir(tmp_path)
    Path("w.toml").write_text(DIGEST.replace(DESCRIBED, 'description = "a \\u001b]0;title\\u0007 b \\u202e c"'),
                              encoding="utf-8")  # fmt: skip
    assert main(["workflows", "w.toml"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "a \\x1b]0;title\\x07 b \\u202e c" in out
    Path("t\x1b]0;x\x07.toml").write_text("", encoding="utf-8")
    assert main(["trace", "t\x1b]0;x\x07.toml", "--no-color"]) == 0
    assert "\x1b" not in capsys.readouterr().out


def test_an_error_shows_a_paths_terminal_escapes_as_escapes(capsys: pytest.CaptureFixture[str]) -> None:
    """An error naming a path as typed wrote its escape characters to the terminal raw."""
    err = one_error(capsys, "trace", "a\x1b]0;t\x07/x.toml")
    assert "\x1b" not in err and "\x07" not in err and "a\\x1b]0;t\\x07/x.toml" in err


def test_a_character_stdout_cannot_encode_is_escaped_not_an_internal_error(tmp_path: Path) -> None:
    """`PYTHONIOENCODING=latin-1 sim workflows uni.toml` (a ✓ in the description) was an
    internal error (UnicodeEncodeError)."""
    (tmp_path / "uni.toml").write_text(DIGEST.replace(DESCRIBED, 'description = "checked ✓"'), encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": "latin-1"}
    done = subprocess.run([SIM, "workflows", "uni.toml"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          encoding="latin-1")  # fmt: skip
    assert done.returncode == 0 and done.stderr == ""
    assert "checked \\u2713" in done.stdout


# -- 12. a closed pipe, a closed stdout ----------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["workflows", "workflows/digest.toml"],
    ["trace", "main", "--no-color"],
    ["trace", "main"],
    ["trace", "main", "--format", "itf"],
    ["trace", "main", "--json"],
    ["diff", "main", "--set", "fencing=off"],
    ["scenarios"],
    ["trace", "--help"],
    ["--help"],
])  # fmt: skip
def test_a_closed_pipe_ends_quietly_with_exit_0(args: list[str]) -> None:
    """`sim trace main --no-color | head -c1` exited 1 ("a check failed") with no message:
    click (and Rich) turned the broken pipe into exit 1 before sim's own handler saw it. The
    reader is gone before sim writes anything, so every write meets the closed pipe."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([SIM, *args], cwd=ROOT, stdout=write, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, "")


def test_a_closed_stdout_is_one_line_exit_2() -> None:
    """`sim trace main --json >&-` was an internal error (AttributeError: 'NoneType' object
    has no attribute 'write')."""
    done = subprocess.run(["sh", "-c", '"$0" trace main --json >&-', SIM], capture_output=False, stderr=subprocess.PIPE,
                          text=True)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == "sim: error: standard output is closed; redirect it to a file or /dev/null instead\n"


# -- a switch's value is found by its spelling, whatever TOML or --set gives ---------------------
_TOML_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@given(
    name=st.sampled_from(sorted(SWITCHES)),
    value=_TOML_VALUES | st.sampled_from(["on", "off", "per-step", "crashed", "paused", "during", "none", "unique"]),
)
def test_a_switch_value_is_the_member_spelled_so_or_one_error(name: str, value: object) -> None:
    """`parse_value` finds a member by the enum's own lookup by value: the member a scan of the
    switch's members for an equal value finds, and for any other value (an unhashable list or
    table among them) a SwitchError naming the switch and the allowed values, never a
    TypeError or a ValueError."""
    scanned = [m for m in SWITCHES[name] if m.value == value]
    if scanned:
        assert parse_value(name, value, "--set") is scanned[0]
    else:
        with pytest.raises(SwitchError, match=f"switch '{name}' has no value .*; allowed: "):
            parse_value(name, value, "--set")
