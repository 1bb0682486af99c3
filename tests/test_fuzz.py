"""Fuzzing the command line as a hostile user would (issue 11): mutated scenario files and
mutated argument lists must give exit 0, 1 or 2, never a traceback, exit 2 with exactly one
non-empty line on stderr, one JSON document for `--json`/ITF, and no case over 10 s.

The inputs are made in `tests/fuzz_cases.py` (shared with `benchmarks/bench_fuzz.py`). Cases
run in-process (`sim.cli.main`, each in a fresh folder, under a 10 s alarm and a memory cap);
a small sample also runs as real processes of the venv's `sim`.

Profiles (this file's own; the rest of the suite keeps conftest.py's):

- `fuzz-default`: a few hundred cases, derandomized, about half a minute on two shared cores
  when the code is correct;
- `fuzz-thorough`: thousands of cases, fresh random ones each run: select it with
  `SIM_FUZZ_PROFILE=thorough`, or Hypothesis' `--hypothesis-profile=thorough` (or
  `HYPOTHESIS_PROFILE=thorough`, which conftest.py reads).

    .venv/bin/python -m pytest tests/test_fuzz.py -q
    SIM_FUZZ_PROFILE=thorough .venv/bin/python -m pytest tests/test_fuzz.py -q

A failure prints the shrunk case (`Case.describe`: the command line and the file's bytes)
and the result, so it can be replayed by hand. The `test_harness_*` tests check the harness
itself on well-formed inputs: they must pass whatever the state of the input boundary.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import fuzz_cases as fc
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

_COMMON: dict[str, Any] = {
    "database": None,
    "deadline": None,  # the harness times each case itself (fc.LIMIT_SECONDS)
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
}
settings.register_profile("fuzz-default", max_examples=1, derandomize=True, **_COMMON)
settings.register_profile("fuzz-thorough", max_examples=1, derandomize=False, **_COMMON)

#: examples per test: default profile, thorough profile
EXAMPLES = {
    "bytes": (150, 3000),
    "toml": (150, 3000),
    "arguments": (250, 4000),
    "subprocess": (6, 100),
    "completion": (60, 1000),
    "scheduler": (30, 300),
}


def thorough() -> bool:
    return os.environ.get("SIM_FUZZ_PROFILE") == "thorough" or settings.get_current_profile_name() == "thorough"


def fuzz_settings(target: str) -> settings:
    default, large = EXAMPLES[target]
    if thorough():
        return settings(settings.get_profile("fuzz-thorough"), max_examples=large)
    return settings(settings.get_profile("fuzz-default"), max_examples=default)


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> fc.Fixtures:
    return fc.make_fixtures(tmp_path_factory.mktemp("fuzz-fixtures"))


def explain(r: fc.Result) -> str:
    code = r.code if r.exception is None else r.exception
    return (
        f"\n{r.case.describe()}\nexit: {code}   {r.seconds:.2f} s\n"
        f"stderr ({len(r.err)} chars): {r.err[-1500:]!r}\nstdout ({len(r.out)} chars): {r.out[:300]!r}"
    )


#: tests in which a case has already run over fc.LIMIT_SECONDS: the test fails anyway, and
#: Hypothesis' shrinking would wait the full limit for each smaller case that still hangs
#: (up to its 300 s shrinking budget), so later cases there stop at SHRINK_LIMIT_SECONDS
_TIMED_OUT: set[str] = set()
SHRINK_LIMIT_SECONDS = 3.0


def run_fuzzed(case: fc.Case, test: str) -> fc.Result:
    limit = SHRINK_LIMIT_SECONDS if test in _TIMED_OUT else fc.LIMIT_SECONDS
    result = fc.run_case(case, limit)
    if result.exception is not None and result.exception.startswith("over"):
        _TIMED_OUT.add(test)
    assert_contract(result, limit)
    return result


def assert_contract(r: fc.Result, limit: float = fc.LIMIT_SECONDS) -> None:
    """One assertion per kind of failure, each on its own line: Hypothesis reports (and
    shrinks) each kind separately."""
    found = fc.problems(r, limit)
    kinds = {p.split(":", 1)[0] for p in found}
    assert "slow" not in kinds, f"over {limit:.0f} s: {found}" + explain(r)
    assert "exception" not in kinds, f"uncaught exception: {found}" + explain(r)
    assert "traceback" not in kinds, f"traceback: {found}" + explain(r)
    assert "exit-code" not in kinds, f"exit code outside 0, 1, 2: {found}" + explain(r)
    assert "internal" not in kinds, f"an internal error: {found}" + explain(r)
    assert "exit-2-lines" not in kinds, f"exit 2 without exactly one line on stderr: {found}" + explain(r)
    assert "json" not in kinds, f"--json output not one JSON document: {found}" + explain(r)
    assert not found, explain(r)


# -- the fuzz targets (acceptance tests of issue 11: they fail until the input boundary is fixed) --
@fuzz_settings("bytes")
@given(st.data())
def test_fuzz_scenario_files_mutated_bytes(data: st.DataObject) -> None:
    run_fuzzed(fc.scenario_case(fc.DataChooser(data), "bytes"), "bytes")


@fuzz_settings("toml")
@given(st.data())
def test_fuzz_scenario_files_mutated_toml(data: st.DataObject) -> None:
    run_fuzzed(fc.scenario_case(fc.DataChooser(data), "toml"), "toml")


@fuzz_settings("toml")
@given(st.data())
def test_fuzz_workflow_files(data: st.DataObject) -> None:
    """Mutated workflow files (bytes or TOML) under every command that reads one."""
    run_fuzzed(fc.workflow_case(fc.DataChooser(data)), "toml")


@fuzz_settings("arguments")
@given(st.data())
def test_fuzz_argument_lists(fixtures: fc.Fixtures, data: st.DataObject) -> None:
    run_fuzzed(fc.argument_case(fc.DataChooser(data), fixtures), "arguments")


@fuzz_settings("completion")
@given(st.data())
def test_fuzz_shell_completion(data: st.DataObject) -> None:
    """_SIM_COMPLETE with COMP_WORDS and COMP_CWORD drawn (missing, junk or as a shell sets
    them): a completion (exit 0) or one line and exit 2, never an internal error."""
    run_fuzzed(fc.completion_case(fc.DataChooser(data)), "completion")


@fuzz_settings("scheduler")
@given(st.data())
def test_fuzz_scheduler_addresses(data: st.DataObject) -> None:
    """`sim check --scheduler` with a value that is no address: exit 2, one line, no waiting."""
    r = run_fuzzed(fc.scheduler_case(fc.DataChooser(data)), "scheduler")
    assert r.code == 2 and "--scheduler" in r.err, explain(r)


def _special_ids() -> list[str]:
    return [f"{i:02d}-{fc.Case.describe(c, 40).splitlines()[0][4:60]}" for i, c in enumerate(_SPECIALS)]


_SPECIALS = fc.special_cases(fc.Fixtures(Path("/fixtures")))  # only for the count and ids


@pytest.mark.parametrize("index", range(len(_SPECIALS)), ids=_special_ids())
def test_fuzz_special_inputs(fixtures: fc.Fixtures, index: int) -> None:
    """Issue 11's hostile inputs, one each: special files, long names, --out targets, bounds."""
    assert_contract(fc.run_case(fc.special_cases(fixtures)[index]))


@settings(fuzz_settings("subprocess"), phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(st.data())
def test_fuzz_subprocess_sample(fixtures: fc.Fixtures, data: st.DataObject) -> None:
    """A few cases as real processes: what only a process shows (start-up, real streams).
    Not shrunk (each run is a process start; the in-process targets shrink the same inputs):
    the failure shows the case as drawn."""
    c = fc.DataChooser(data)
    case = fc.scenario_case(c) if c.integer(0, 1) else fc.argument_case(c, fixtures)
    assert_contract(fc.run_subprocess(case))


@pytest.mark.parametrize(
    "args",
    [
        ["trace", "\udcff.toml"],  # a file name that is not UTF-8, echoed into the error line
        ["trace", "main", "--set", "fencing=\udcff"],
        ["trace", "main", "--colour"],
        ["check", "-k", "0", "-t", "2", "-j", "16", "--out", "out"],  # more workers than the cap should allow
        ["trace", "x" * 300],
    ],
    ids=["non-utf8-name", "non-utf8-set", "unknown-option", "workers-16", "long-name"],
)
def test_fuzz_subprocess_special(args: list[str]) -> None:
    assert_contract(fc.run_subprocess(fc.Case(args)))


# -- the harness itself: must pass on well-formed inputs, whatever the state of sim/ ---------------
@pytest.mark.parametrize(("label", "text"), fc.BASES, ids=[label for label, _ in fc.BASES])
def test_harness_well_formed_scenarios_pass(label: str, text: str) -> None:
    for command in fc.SCENARIO_COMMANDS:
        args = [a.replace("{F}", "case.toml") for a in command]
        r = fc.run_case(fc.Case(args, {"case.toml": text.encode()}))
        assert r.exception is None and r.code in (0, 1), explain(r)
        assert fc.problems(r) == [], explain(r)


def test_harness_round_trips_the_bases_through_its_toml_writer() -> None:
    for _, text in fc.BASES:
        doc = tomllib.loads(text)
        assert tomllib.loads(fc.dump_toml(doc)) == doc


def test_harness_valid_bounded_commands_pass(fixtures: fc.Fixtures) -> None:
    import random

    seen = set()
    for seed in range(40):
        args = fc.base_command(fc.RandomChooser(random.Random(seed)), fixtures)
        if tuple(args) in seen:
            continue
        seen.add(tuple(args))
        r = fc.run_case(fc.Case(args))
        assert r.code in (0, 1) and fc.problems(r) == [], explain(r)
        assert r.seconds < 3, explain(r)  # CPU seconds (the clock stretches on a loaded machine)
        if fc.wants_json(args):
            json.loads(r.out)
    assert len(seen) >= 20


def test_harness_subprocess_runs_the_binary() -> None:
    r = fc.run_subprocess(fc.Case(["trace", "main", "--json"]))
    assert r.code == 0 and fc.problems(r) == [], explain(r)
    assert json.loads(r.out)["scenario"] == "main"
    r = fc.run_subprocess(fc.Case(["trace", "nosuch"]))
    assert r.code == 2 and fc.problems(r) == [], explain(r)


def test_harness_judge_sees_each_kind_of_failure() -> None:
    case = fc.Case(["trace", "main", "--json"])
    ok = fc.Result(case, 0, '{"a": 1}\n', "", 0.1)
    assert fc.problems(ok) == []
    assert fc.problems(fc.Result(fc.Case(["trace", "x"]), 2, "", "sim: error: x: no such scenario\n", 0.1)) == []
    bad = {
        "exit-code": fc.Result(case, 3, '{"a": 1}', "", 0.1),
        "internal": fc.Result(case, 1, '{"a": 1}', "sim: internal error (a bug in sim, please report it): KeyError: 'x'\n", 0.1),
        "traceback": fc.Result(case, 1, "", "Traceback (most recent call last):\n  File x\nValueError: y\n", 0.1),
        "exception": fc.Result(case, None, "", "", 0.1, "ValueError at sim/x.py:1: y"),
        "exit-2-lines": fc.Result(case, 2, "", "Usage: sim\nTry\n\nError: x\n", 0.1),
        "json": fc.Result(case, 0, "not json", "", 0.1),
        "slow": fc.Result(case, 0, '{"a": 1}', "", 11.0),
    }
    for kind, result in bad.items():
        assert [p.split(":")[0] for p in fc.problems(result)][:1] == [kind], kind
    assert fc.problems(fc.Result(case, 2, "", "", 0.1)) == ["exit-2-lines: 0 lines on stderr"]


def test_harness_stops_a_case_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    import sim.cli

    def forever(argv: list[str] | None = None) -> int:
        while True:
            pass

    monkeypatch.setattr(sim.cli, "main", forever)
    r = fc.run_case(fc.Case(["trace", "main"]), limit=0.3)
    assert r.exception is not None and fc.problems(r, limit=0.3)[0].startswith("slow")
    assert r.seconds < 2  # CPU seconds: stopped at its CPU limit


def test_harness_stops_a_case_that_hangs_without_working(monkeypatch: pytest.MonkeyPatch) -> None:
    """A case that waits (no CPU time) is stopped by the clock's backstop, WALL_FACTOR times
    its limit."""
    import time

    import sim.cli

    def waits(argv: list[str] | None = None) -> int:
        time.sleep(3600)
        return 0

    monkeypatch.setattr(sim.cli, "main", waits)
    r = fc.run_case(fc.Case(["trace", "main"]), limit=0.05)
    assert r.exception is not None and r.exception.startswith("over")
    assert fc.problems(r, limit=0.05)[0].startswith("slow")


def test_harness_mutators_are_deterministic_and_varied(fixtures: fc.Fixtures) -> None:
    import random

    def batch(seed: int) -> list[str]:
        c = fc.RandomChooser(random.Random(seed))
        return [fc.scenario_case(c).describe() for _ in range(20)] + [
            fc.argument_case(c, fixtures).describe() for _ in range(20)
        ]

    first = batch(7)
    assert first == batch(7)
    assert len(set(first)) > 30
