"""The README's examples run: every TOML scenario in it passes `sim trace FILE --check`, and
every `sim` command it shows runs as written (a doc test: the README cannot drift from the tool)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sim.cli import main

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
TOML = re.findall(r"```toml\n(.*?)```", README, re.DOTALL)


def test_the_readme_has_a_scenario_example() -> None:
    assert TOML


@pytest.mark.parametrize("text", TOML, ids=[f"toml-{i + 1}" for i in range(len(TOML))])
def test_each_toml_example_in_the_readme_checks(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "example.toml"
    path.write_text(text, encoding="utf-8")
    code = main(["trace", str(path), "--check", "--no-color"])
    out, err = capsys.readouterr()
    assert code == 0, out[-600:] + err


# -- every shell command of the README runs ---------------------------------------------------
#: a command line of a code block, or a command in backticks in the prose
SIM = r"(?:\.venv/bin/)?sim(?=[ `]|$)(?: [^`\n#]*)?"
#: words that stand for something the reader fills in (a synopsis, not a command)
PLACEHOLDER = re.compile(r"\b(?:NAME|FILE|ENGINE|A B|N|S|K|T|DIR|SET|ADDRESS)\b|\[|\\\||\.\.\.")


def readme_commands() -> list[str]:
    """Every `sim` command the README shows, in order, once each: the lines of its code blocks
    that start with `sim` (their comments cut off) and every `sim ...` in backticks in the
    prose, less synopses with placeholders (`sim trace NAME|FILE`, `sim explore [--seed S]`)."""
    found: list[str] = []
    for block in re.findall(r"```\w*\n(.*?)```", README, re.DOTALL):
        found += [m.group(0) for m in (re.match(SIM, line) for line in block.splitlines()) if m]
    found += re.findall(rf"`({SIM})`", README)
    commands = [" ".join(c.split()) for c in found]
    return list(dict.fromkeys(c for c in commands if not PLACEHOLDER.search(c)))


#: commands whose exit code is not 0, and why (docs: exit 1 is "a check failed")
EXIT = {
    "sim check --faults all": 1,  # with every fault kind, two properties break (README: "Beyond")
    "sim check --faults all -k 1 -t 12": 1,  # the same two, by one fault each
    # an undeclared read: the article's report changes break faithful-digest with all-on
    "sim check -k 1 -t 8 --set reads=next-section": 1,
    # a command named in the prose without what it needs: one line saying what is missing
    "sim trace": 2,
    "sim conform": 2,
}
#: commands that take more than a few seconds on the project's 2-core machine (measured
#: under load 2-5): run with `pytest -m slow`
SLOW = {
    "sim check": "28 s",
    "sim check --faults all": "170 s",
    "sim check --max-faults 2 --protections each": "95-117 s",
    "sim check -k 3 -t 12 -p each -j 2": "6.4-8.5 min",
    "sim check -k 3 -t 12 -p each": "6.4-8.5 min",
    "sim check -k 4 -t 10 -p all-on --yes": "6.5-8 min",
    "sim explore": "10,000 schedules, about 30 s",
    "sim explore --faults all": "about 35 s",
    "sim explore --faults all --seed 1": "about 35 s",
    "sim explore --faults all --seed 1 --set retention=2": "about 160 s",
    ".venv/bin/sim conform langgraph": "about 30 s",
    "sim conform langgraph": "about 30 s",
    ".venv/bin/sim conform dbos --explore 5 --seed 1": "15 runs, 1-3 min",
}
#: commands that need the engine servers of the second documented command (`pytest -m servers`)
SERVERS = {".venv/bin/sim conform --all --runs 3 --explore 20 --seed 24 --out reports", ".venv/bin/sim conform temporal",
           "sim conform --all"}
#: what a command reads on stdin (the step mode quits at once)
STDIN = {"sim trace main --step": "q\n"}
COMMANDS = readme_commands()


def test_the_readme_commands_are_found_and_every_exception_names_one_of_them() -> None:
    assert "sim trace main" in COMMANDS and "sim sweep" in COMMANDS and "sim --version" in COMMANDS
    assert set(EXIT) <= set(COMMANDS) and set(SLOW) <= set(COMMANDS) and set(STDIN) <= set(COMMANDS)
    assert SERVERS <= set(COMMANDS)
    # a command that needs the Temporal or Restate server runs only with them (`-m servers`)
    needs_servers = {c for c in COMMANDS if re.search(r"conform (?:temporal|restate|--all)", c)}
    assert needs_servers <= SERVERS, needs_servers - SERVERS


@pytest.mark.parametrize(
    "command",
    [pytest.param(c, marks=pytest.mark.servers) if c in SERVERS else pytest.param(c, marks=pytest.mark.slow)
     if c in SLOW else c for c in COMMANDS],
)
def test_each_readme_command_runs_as_written(command: str, tmp_path: Path) -> None:
    """Each command as a new user types it, in a fresh folder (so `--out reports` writes
    there), with the README's scenario example as `my-scenario.toml`."""
    (tmp_path / "my-scenario.toml").write_text(TOML[0], encoding="utf-8")
    words = command.split()
    sim = str(Path(sys.executable).parent / "sim")
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    done = subprocess.run(
        [sim, *words[1:]], cwd=tmp_path, env=env, input=STDIN.get(command, ""), capture_output=True, text=True,
        timeout=3600,
    )
    assert done.returncode == EXIT.get(command, 0), f"{command}: {done.stderr[-800:] or done.stdout[-800:]}"
    assert "Traceback" not in done.stderr
    if done.returncode == 2:
        assert done.stdout == "" and done.stderr.count("\n") == 1 and done.stderr.startswith("sim: error: ")
    else:
        assert done.stdout.strip(), f"{command} printed nothing"


# -- the Layout names every package, module and test file -----------------------------------
ROOT = Path(__file__).resolve().parent.parent


def layout_entries() -> dict[str, str]:
    """The README's Layout block as {first word of an entry: its text}; an entry's later lines
    are indented."""
    block = re.search(r"## Layout\n.*?```\n(.*?)```", README, re.DOTALL)
    assert block is not None
    entries: dict[str, str] = {}
    last = ""
    for line in block[1].splitlines():
        if line.startswith(" "):
            entries[last] = entries.get(last, "") + " " + line.strip()
        else:
            last, _, text = line.partition(" ")
            entries[last] = text
    return entries


def unnamed(entries: dict[str, str]) -> list[str]:
    """Each package of sim/ without its entry (`sim/__init__.py` has its own), each module named neither by its path nor as
    `name.py` in its package's entry, each tests/ file not named in the tests/ entry."""
    text = " ".join(f"{k} {v}" for k, v in entries.items())
    missing = []
    for path in sorted((ROOT / "sim").rglob("*.py")):
        where = path.relative_to(ROOT)
        folder = f"{where.parent}/"
        if path.name == "__init__.py":
            missing += [] if folder in entries or str(where) in entries else [folder]
        elif not re.search(rf"(?<![\w/]){re.escape(str(where))}\b", text) and not re.search(
            rf"(?<![\w/]){re.escape(path.name)}\b", entries.get(folder, "")
        ):
            missing.append(str(where))
    tests = entries.get("tests/", "")
    missing += [f"tests/{p.name}" for p in sorted((ROOT / "tests").glob("*.py")) if p.name not in tests]
    return missing


def test_the_layout_names_every_package_module_and_test_file() -> None:
    assert unnamed(layout_entries()) == []


def test_the_layout_check_would_catch_a_module_left_out() -> None:
    entries = layout_entries()
    entries["sim/model/"] = entries["sim/model/"].replace("cases.py", "the cases")
    del entries["sim/base/"]
    assert unnamed(entries) == ["sim/base/", "sim/base/compiled.py", "sim/base/errors.py", "sim/base/files.py", "sim/base/inputs.py",
                                "sim/base/lean_import.py", "sim/base/limits.py", "sim/base/memory.py",
                                "sim/model/cases.py"]  # fmt: skip
