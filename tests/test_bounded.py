"""Work that is large is said up front and bounded: `sim check` and `sim explore` estimate
their work before they start and ask for --yes past an hour; `sim check` stops at its memory
bound (--max-memory) with the table so far and exit 3, never in the kernel's OOM killer."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sim.analysis.check import check as checker
from sim.cli import main
from sim.base.memory import SizeError, parse_size, tree_rss
from sim.model.switches import Checkpoints

SIM = str(Path(sys.executable).with_name("sim"))


def test_a_check_past_an_hour_is_not_started_without_yes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "-k", "6", "-t", "199", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "sim check of 6 fault(s) by t199 on 2 row(s) is estimated to take" in err and "rerun with --yes" in err
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_the_estimate_is_the_first_line_and_exact_when_the_sample_is_the_bound(capsys: pytest.CaptureFixture[str],
                                                                              tmp_path: Path) -> None:  # fmt: skip
    assert main(["check", "-k", "2", "-t", "8", "-p", "all", "--set", "checkpoints=per-step", "-j", "1",
                 "--json", "--out", str(tmp_path)]) == 0  # fmt: skip
    out, err = capsys.readouterr()
    lines = err.splitlines()
    said = [lines[0], *[line for line in lines[1:3] if line.startswith("    ")]]  # the estimate, wrapped
    assert all(len(line) <= 80 for line in said), said
    first = " ".join(line.strip() for line in said)
    import json

    transitions = json.loads(out)["results"][0]["transitions"]
    assert first.startswith("sim check: estimated ") and f"(about {transitions:,} transitions)" in first


@pytest.mark.parametrize(("faults", "horizon", "protections"), [
    pytest.param(3, 9, "all-on", marks=pytest.mark.slow), pytest.param(3, 8, "fencing=off", marks=pytest.mark.slow),
    (1, 30, "key=none"), (2, 11, "pins=off"), (2, 10, "fencing=off"),
])  # fmt: skip
def test_the_estimate_is_within_a_factor_of_two_of_the_work(faults: int, horizon: int, protections: str) -> None:
    """Held-out bounds (not the ones the constants were measured on): the estimated transitions
    are within a factor of two of the search's own count."""
    configs = checker.configurations(checker.base_switches({}), protections, [Checkpoints.PER_STEP])
    bound = checker.CheckBound(max_faults=faults, horizon=horizon)
    guess = checker.estimate(configs, bound)
    (result,) = checker.check(configs, bound)
    assert 0.5 <= guess.transitions / result.transitions <= 2.0, (guess.transitions, result.transitions)


@pytest.mark.parametrize("text", ["x", "10M", "-1", "500Q", "1" + "0" * 40 + "G"])
def test_a_bad_memory_bound_is_refused(text: str) -> None:
    with pytest.raises(SizeError):
        parse_size(text)


def test_memory_sizes() -> None:
    assert parse_size("500M") == 500 << 20 and parse_size("1.5G") == 3 << 29 and parse_size("512MiB") == 512 << 20


def test_the_check_stops_at_its_memory_bound_with_the_table_so_far(tmp_path: Path, procs: list[subprocess.Popen[bytes]]) -> None:
    """`sim check -k 6 -t 199 --yes --max-memory 500M`: the table so far (rows not exhaustive),
    exit 3, nothing written; its processes together never hold more than 10 % over the bound
    (sampled from /proc while it runs)."""
    proc = subprocess.Popen([SIM, "check", "-k", "6", "-t", "199", "--yes", "--max-memory", "500M",
                             "--out", str(tmp_path / "o")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    procs.append(proc)  # type: ignore[arg-type]
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss(proc.pid))
            done.wait(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=900)
    finally:
        done.set()
        sampler.join()
    assert proc.returncode == 3, err
    text = out.decode()
    assert "not exhaustive" in text
    assert "stopped at the memory bound" in err.decode() and "no files written" in err.decode()
    assert peak[0] <= 1.1 * (500 << 20), peak[0] / 2**20
    assert not (tmp_path / "o").exists() or not any(p.suffix == ".toml" for p in (tmp_path / "o").iterdir())


def test_each_worker_gets_a_share_of_the_bound() -> None:
    assert checker.unit_memory(0, 2) == 0
    assert checker.unit_memory(1 << 30, 1) == 1 << 30
    share = checker.unit_memory(1 << 30, 2)
    assert share < 1 << 29 and share >= 64 << 20


def test_an_explicit_bound_stops_an_inline_search(tmp_path: Path) -> None:
    """In this process (one worker): the search itself looks at its memory and stops."""
    configs = checker.configurations(checker.base_switches({}), "all", [Checkpoints.PER_STEP])
    bound = checker.CheckBound(max_faults=3, horizon=12)
    limit = tree_rss(os.getpid()) + (4 << 20)
    with pytest.raises(checker.OutOfMemory) as stop:
        checker.check(configs, bound, max_memory=max(limit, 64 << 20))
    assert stop.value.results[0].complete is False and stop.value.done == 0


def _steps_workflow(path: Path, steps: int) -> Path:
    """A workflow of `steps` steps, each reading a part of its own (a wide, flat pipeline)."""
    parts = ", ".join(f'"p{i}"' for i in range(steps))
    text = (f'name = "wide"\ndescription = "{steps} steps"\n[[inputs]]\nname = "r"\nparts = [{parts}]\n'
            + "".join(f'[[steps]]\nname = "s{i}"\nreads = ["r.p{i}"]\n' for i in range(steps))
            + '[artifact]\nname = "art"\nassembles = [' + ", ".join(f'"s{i}"' for i in range(steps)) + ']\n'
            + 'figure = ["r.p1"]\n[[effects]]\nname = "post"\nreceiver = "dedup"\n'
            + '[[dependants]]\nname = "dep"\nready = 12\n')  # fmt: skip
    path.write_text(text, encoding="utf-8")
    return path


def test_report_changes_over_too_many_steps_are_refused_before_any_search(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """A report change is offered over every non-empty set of the steps at every tick: 2^N - 1.
    A workflow of more than MAX_CHANGE_SECTIONS steps is refused in one line (a 16-step one grew
    to 24 GB in the estimate, past --max-memory, until the kernel killed it); one of that many
    is accepted."""
    from sim.base.limits import MAX_CHANGE_SECTIONS
    from sim.model.schedule import Schedule

    with pytest.raises(checker.BoundError, match="2,047 a tick"):
        checker.CheckBound(1, 4, setting=Schedule(sections=MAX_CHANGE_SECTIONS + 1))
    checker.CheckBound(1, 4, setting=Schedule(sections=MAX_CHANGE_SECTIONS))
    wide = _steps_workflow(tmp_path / "wide.toml", 16)
    assert main(["check", "--workflow", str(wide), "-k", "1", "-t", "4", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "65,535 a tick" in err and f"at most {MAX_CHANGE_SECTIONS} steps" in err


def test_the_estimates_sample_stops_at_its_cap_and_says_at_least(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sample that passes SAMPLE_CAP transitions stops there, and the estimate is a lower
    bound, marked as one (`capped`), not a figure scaled as if the sample were whole."""
    configs = checker.configurations(checker.base_switches({}), "all-on", [Checkpoints.PER_STEP])
    bound = checker.CheckBound(max_faults=2, horizon=8)
    whole = checker.estimate(configs, bound)
    assert whole.exact and not whole.capped
    monkeypatch.setattr(checker, "SAMPLE_CAP", 2_000)
    capped = checker.estimate(configs, bound)
    assert capped.capped and not capped.exact
    assert 2_000 <= capped.transitions < whole.transitions


@pytest.mark.parametrize("text", [
    ".".join(["a"] * 40_000) + " = 1\n",                      # 80 KB: 28 s and 6 GB in the parser
    "[" + ".".join(["a"] * 40_000) + "]\n",                   # a table header
    ".".join(['a."b"'] * 20_000) + " = 1\n",                  # quoted parts keep the key going
    "[switches]\npins = 'off'\n" + "x = {" + ".".join(["a"] * 40_000) + " = 1}\n",  # inside an inline table
])  # fmt: skip
def test_a_long_dotted_key_is_refused_before_the_parser(text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """Python's TOML parser takes time and memory that grow with the square of a dotted key's
    length; a key longer than the nesting allowed is refused from one linear pass over the text,
    one line, exit 2, for a scenario file and a workflow file alike: the parser is never called."""
    import tomllib

    def parser_called(_: str) -> None:
        raise AssertionError("the TOML parser was called")

    monkeypatch.setattr(tomllib, "loads", parser_called)
    path = tmp_path / "deep.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["trace", str(path)]) == 2
    assert main(["workflows", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and err.count("nested too deeply") == 2, err


def test_the_dotted_key_count_reads_keys_not_strings_comments_or_floats() -> None:
    from sim.base.inputs import longest_dotted_key

    assert longest_dotted_key('a.b."c.x".d = 1') == 3
    assert longest_dotted_key("[a.b.c]\nx.y = 2\n") == 2
    assert longest_dotted_key('x = 1.5\ny = [1.5, 2.5]\ns = "a.b.c.d.e.f.g.h.i"\n# a.b.c.d.e.f.g.h.i\n') == 1
    assert longest_dotted_key('d = """\na.b.c.d.e.f.g.h.i\n"""\n') == 0


def test_a_counterexample_name_too_long_for_the_file_system_is_refused_before_the_search(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """The names say the settings and the seed: a 250-digit seed makes them longer than a file
    system allows, found before any schedule is drawn (it was found at the first write, after
    the search had started), one line, exit 2; the bound it checks holds every name a search
    writes (`--faults all`, two settings off)."""
    from sim.analysis.explore import ExploreBounds, longest_name
    from sim.model.switches import Switches

    out = tmp_path / "o"
    assert main(["explore", "-n", "100", "--seed", "7" * 250, "--set", "fencing=off", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "file name would be up to" in err
    assert not out.exists() or not any(out.iterdir())
    assert main(["explore", "-n", "300", "--seed", "3", "--faults", "all", "--set", "fencing=off", "--set",
                 "pins=off", "--out", str(out)]) in (0, 1)  # fmt: skip
    capsys.readouterr()
    switches = Switches().with_values({"fencing": "off", "pins": "off"})
    written = [len(p.name.encode()) for p in out.iterdir()]
    assert written and max(written) <= longest_name(switches, 3, ExploreBounds(faults="all"))
