"""The flake check (benchmarks/flake.py) reports a test that fails in only some runs, counts
a JUnit report right, and stops its CPU hog by the hog's process ids."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import benchmark, live

flake = benchmark("flake")

REPORT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.test_a" name="test_ok" time="0.1"/>
<testcase classname="tests.test_a" name="test_bad" time="0.1"><failure message="x">x</failure></testcase>
<testcase classname="tests.test_b" name="test_setup" time="0.1"><error message="y">y</error></testcase>
<testcase classname="tests.test_b" name="test_skip" time="0.1"><skipped message="z">z</skipped></testcase>
</testsuite></testsuites>"""


def test_a_junit_report_is_counted(tmp_path: Path) -> None:
    report = tmp_path / "r.xml"
    report.write_text(REPORT, encoding="utf-8")
    counts, failed = flake.failures_in(report)
    assert counts == {"passed": 1, "failed": 2, "skipped": 1}
    assert failed == ["tests/test_a.py::test_bad", "tests/test_b.py::test_setup"]
    assert flake.failures_in(tmp_path / "missing.xml") == ({"passed": 0, "failed": 0, "skipped": 0}, [])


def test_the_hog_is_busy_while_it_runs_and_gone_after() -> None:
    with flake.hog(2) as pids:
        assert len(pids) == 2 and live(pids) == pids
    assert live(pids) == []


def test_a_test_that_fails_once_is_reported_with_its_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A test that fails in its first run only: the check exits 1 and names it, with run 1."""
    marker = tmp_path / "ran-once"
    test_file = tmp_path / "test_sometimes.py"
    test_file.write_text(
        "from pathlib import Path\n"
        f"MARK = Path({str(marker)!r})\n"
        "def test_fine():\n    pass\n"
        "def test_first_time_only():\n"
        "    first = not MARK.exists()\n"
        "    MARK.write_text('x')\n"
        "    assert not first\n",
        encoding="utf-8",
    )
    code = flake.main(["--runs", "2", "--hog", "1", "--json", "--", "-n", "0", f"--rootdir={tmp_path}", str(test_file)])
    out = capsys.readouterr().out
    import json

    found = json.loads(out)
    assert code == 1
    assert [(r["passed"], r["failed"]) for r in found["runs"]] == [(1, 1), (2, 0)]
    (name, where), = found["failed"].items()
    assert name.endswith("test_sometimes.py::test_first_time_only") and where == [1]


def test_bad_arguments_exit_2() -> None:
    with pytest.raises(SystemExit) as stop:
        flake.main(["--runs", "0"])
    assert stop.value.code == 2


def test_it_counts_the_cpus_it_may_use() -> None:
    assert flake.cores() == len(os.sched_getaffinity(0))
