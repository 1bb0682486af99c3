"""The README's examples run: every TOML scenario in it passes `sim trace FILE --check`."""

from __future__ import annotations

import re
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
