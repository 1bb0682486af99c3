"""The sweep reports (sim/render/report.py), and the committed reports/ folder."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from sim.analysis import sweep as sweep_mod
from sim.cli import main
from sim.base.files import atomic_write
from sim.render import report
from sim.render.report import (
    WRITERS,
    render_all,
    render_csv,
    reproduce,
)

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "reports"


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return sweep_mod.sweep().document()


@pytest.fixture(scope="module")
def texts(doc: dict[str, Any]) -> dict[str, str]:
    return render_all(doc)


def _first_difference(a: str, b: str) -> str:
    for n, (x, y) in enumerate(zip(a.splitlines(), b.splitlines()), 1):
        if x != y:
            return f"line {n}:\n  committed:   {x[:200]}\n  regenerated: {y[:200]}"
    return f"lengths differ: {len(a.splitlines())} vs {len(b.splitlines())} lines"


def test_committed_reports_are_up_to_date(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Regenerate the reports with `sim sweep --out TMP` and compare them with reports/."""
    assert main(["sweep", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    for writer in WRITERS:
        committed = COMMITTED / writer.filename
        assert committed.is_file(), f"reports/{writer.filename} is missing: run `sim sweep`"
        old = committed.read_text(encoding="utf-8")
        new = (tmp_path / writer.filename).read_text(encoding="utf-8")
        assert old == new, (
            f"reports/{writer.filename} is stale, run `sim sweep` to regenerate it; "
            + _first_difference(old, new)
        )


def test_json_report_is_the_document(doc: dict[str, Any], texts: dict[str, str]) -> None:
    assert json.loads(texts["sweep.json"]) == doc
    assert texts["sweep.json"].endswith("}\n")


def test_csv_has_a_row_per_run(doc: dict[str, Any]) -> None:
    rows = list(csv.DictReader(io.StringIO(render_csv(doc))))
    assert [int(r["id"]) for r in rows] == list(range(1, 865))
    first = rows[0]
    assert first["silent"] == "paused" and first["gate"] == "fail-open"
    assert first["model_calls"] == "6" and first["model_calls_by_attempt"] == "3 3 0"
    assert first["finished"] == "true" and first["stale-write"] == ""
    assert first["needed"] == "fencing pins key"
    stale = rows[216]  # run 217: fencing off
    assert stale["fencing"] == "off" and stale["stale-write"] == "8"
    assert stale["prevented_by"] == "stale-write:fencing"


def test_reports_hold_no_paths_or_timestamps(texts: dict[str, str]) -> None:
    for name, text in texts.items():
        assert str(ROOT) not in text, name
        assert "/tmp" not in text, name
        assert "\r" not in text, name


def test_markdown_tells_how_to_reproduce(texts: dict[str, str]) -> None:
    md = texts["sweep.md"]
    for heading in (
        "## Invariants",
        "## All four protections on",
        "## One protection weakened (per-step checkpoints)",
        "## Minimal protection sets",
        "## Fail-open or fail-closed",
    ):
        assert heading in md
    assert "`sim trace main --set fencing=off`" in md


def test_reproduce_command() -> None:
    assert reproduce({"fencing": "on"}) == "sim trace main"
    assert reproduce({"fencing": "off", "key": "none"}) == "sim trace main --set fencing=off --set key=none"


def test_atomic_write_replaces_only_when_complete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "sweep.md"
    atomic_write(target, "old\n")
    assert target.read_text() == "old\n"

    def fail(src: str, dst: str, **dir_fds: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        atomic_write(target, "new\n")
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["sweep.md"]  # the temporary file is gone


def test_rewriting_leaves_the_same_files_and_no_temporary_ones(tmp_path: Path, texts: dict[str, str]) -> None:
    report.write_reports(texts, tmp_path)
    first = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    report.write_reports(texts, tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == first
    assert sorted(first) == ["sweep-map.svg", "sweep.csv", "sweep.json", "sweep.md"]
