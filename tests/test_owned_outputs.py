"""Every command replaces only the files it wrote: a regular file of the user's at a name a
command writes (docs/sweep.md under `sim sweep --out docs`, a check.json, a schema, an explore
counterexample) is refused with one line, exit 2, before any work, and left as it was. Each
writer declares the head of its files (`sim.base.files.Head`); the writer checks it again
at the moment it writes. And `sim explore`'s names say every setting that changes what a
search writes, so one search never writes over another's counterexample."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from test_special_outputs import no_work  # every command's work fails loudly

from sim.base import files
from sim.base.files import OutError, written_by_sim
from sim.cli import main
from sim.render.report import report_names

ROOT = Path(__file__).resolve().parent.parent


def refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("sim: error: "), err
    assert "a file sim did not write is there" in err, err
    return err


# -- the heads match what sim writes, and nothing else ------------------------------------------------
def test_every_committed_report_starts_with_its_head() -> None:
    """`sim sweep --out reports` (and each workflow's) must go on replacing the committed reports."""
    from sim.commands.sweep import REPORT_HEADS

    assert sorted(REPORT_HEADS) == sorted(report_names())
    folders = [ROOT / "reports", *sorted((ROOT / "reports" / "workflows").iterdir())]
    for folder in folders:
        for name, head in REPORT_HEADS.items():
            assert written_by_sim(folder / name, head), folder / name
    assert not written_by_sim(ROOT / "docs" / "sweep.md", REPORT_HEADS["sweep.md"])


def test_the_committed_schemas_start_with_the_schema_head() -> None:
    from sim.commands.schema import head

    for path in sorted((ROOT / "docs" / "schema").glob("*.schema.json")):
        assert written_by_sim(path, head()), path


# -- each command, before any work --------------------------------------------------------------------
def test_sweep_out_docs_leaves_the_hand_written_sweep_md(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The reviewer's case: `sim sweep --out docs` replaced docs/sweep.md with the report."""
    no_work(monkeypatch)
    docs = tmp_path / "docs"
    docs.mkdir()
    mine = (ROOT / "docs" / "sweep.md").read_bytes()
    (docs / "sweep.md").write_bytes(mine)
    err = refused(["sweep", "--out", str(docs)], capsys)
    assert str(docs / "sweep.md") in err
    assert (docs / "sweep.md").read_bytes() == mine and os.listdir(docs) == ["sweep.md"]


@pytest.mark.parametrize("name", ["check.json", "all-on.per-step.stale-write.toml", "all-on.end-only.stale-write.html"])
def test_check_leaves_a_users_file_at_a_name_it_writes(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    no_work(monkeypatch)
    out = tmp_path / "ck"
    out.mkdir()
    (out / name).write_text("mine\n")
    err = refused(["check", "-k", "0", "-t", "1", "--out", str(out)], capsys)
    assert name in err
    assert (out / name).read_text() == "mine\n" and os.listdir(out) == [name]


def test_schema_leaves_a_users_file_and_replaces_its_own(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sc"
    out.mkdir()
    (out / "scenario.schema.json").write_text("mine\n")
    refused(["schema", "--out", str(out)], capsys)
    assert os.listdir(out) == ["scenario.schema.json"] and (out / "scenario.schema.json").read_text() == "mine\n"
    (out / "scenario.schema.json").unlink()
    for _ in range(2):  # and its own are written over
        assert main(["schema", "--out", str(out)]) == 0
    assert sorted(os.listdir(out)) == ["scenario.schema.json", "workflow.schema.json"]
    capsys.readouterr()


@pytest.mark.parametrize("name", ["stale-write--fencing-off--seed1.toml", "stale-write--fencing-off--seed1.html"])
def test_explore_leaves_a_users_file_at_a_counterexamples_name(name: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The reviewer's case: `sim explore ... --out ex3` replaced ex3/stale-write--fencing-off--seed1.toml."""
    no_work(monkeypatch)
    out = tmp_path / "ex3"
    out.mkdir()
    (out / name).write_text("mine\n")
    err = refused(["explore", "-n", "200", "--seed", "1", "--set", "fencing=off", "--out", str(out)], capsys)
    assert name in err
    assert (out / name).read_text() == "mine\n" and os.listdir(out) == [name]


def test_explore_and_check_write_over_their_own_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for _ in range(2):
        assert main(["explore", "-n", "200", "--seed", "1", "--set", "fencing=off", "--out", str(tmp_path / "ex")]) == 0
        assert main(["check", "-k", "1", "-t", "4", "-j", "1", "--set", "fencing=off", "--out",
                     str(tmp_path / "ck")]) == 0  # fmt: skip
    capsys.readouterr()
    assert sorted(os.listdir(tmp_path / "ex")) == ["stale-write--fencing-off--seed1.html",
                                                   "stale-write--fencing-off--seed1.toml"]  # fmt: skip
    assert len(os.listdir(tmp_path / "ck")) == 5


# -- the writer itself, at the moment it writes --------------------------------------------------------
HEAD = re.compile(rb"# written by sim [0-9]+\n")


def test_the_writer_replaces_only_a_file_that_starts_with_its_head(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    files.write_out(path, "# written by sim 1\n", head=HEAD)  # nothing there
    files.write_out(path, "# written by sim 2\n", head=HEAD)  # its own
    assert path.read_text() == "# written by sim 2\n"
    path.write_text("mine\n")
    with pytest.raises(OutError, match=r"^--out .*: cannot write a\.txt \(a file sim did not write is there; .*\)$"):
        files.write_out(path, "# written by sim 3\n", head=HEAD)
    with pytest.raises(OSError):
        files.atomic_write_many(tmp_path, {"b.txt": "x", "a.txt": "# written by sim 4\n"}, heads={"a.txt": HEAD})
    assert path.read_text() == "mine\n" and sorted(os.listdir(tmp_path)) == ["a.txt"]
    (tmp_path / "link").symlink_to(path)  # a symlink is replaced itself, never followed
    files.write_out(tmp_path / "link", "# written by sim 5\n", head=HEAD)
    assert path.read_text() == "mine\n"


def test_a_folder_replaced_as_a_whole_keeps_a_users_file_at_a_name_of_the_set(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "check.json").write_text("mine\n")
    with pytest.raises(OutError, match="cannot replace the folder \\(a file sim did not write is there"):
        files.replace_folder(files.prepare_folder(out), {"check.json": "{}\n"}, keep=lambda path: True,
                             heads={"check.json": b"{"})  # fmt: skip
    assert os.listdir(out) == ["check.json"] and (out / "check.json").read_text() == "mine\n"
    assert os.listdir(tmp_path) == ["out"]


def test_a_head_is_matched_from_the_start_of_a_regular_file_only(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"xx# written by sim 1\n")
    (tmp_path / "d").mkdir()
    assert not written_by_sim(tmp_path / "f", HEAD) and not written_by_sim(tmp_path / "d", b"")
    assert not written_by_sim(tmp_path / "none", b"")
    (tmp_path / "g").write_bytes(b"# written by sim 1\n" + b"x" * 10_000)
    assert written_by_sim(tmp_path / "g", HEAD) and files.has_head(b"abc", b"ab")


# -- explore's names: one per setting ------------------------------------------------------------------
def test_explore_on_a_workflow_keeps_the_articles_counterexample(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """The reviewer's case: the same seed and --set with --workflow chat-summary wrote
    stale-write--fencing-off--seed2.toml over the article's."""
    out = tmp_path / "exc"
    args = ["explore", "-n", "300", "--seed", "2", "--set", "fencing=off", "--out", str(out)]
    assert main(args) == 0
    article = (out / "stale-write--fencing-off--seed2.toml").read_bytes()
    assert main([*args, "--workflow", "chat-summary"]) == 0
    assert main([*args, "--max-faults", "2"]) == 0
    capsys.readouterr()
    assert (out / "stale-write--fencing-off--seed2.toml").read_bytes() == article
    assert (out / "stale-write--fencing-off--workflow-chat-summary--seed2.toml").is_file()
    assert (out / "stale-write--fencing-off--max-faults-2--seed2.toml").is_file()


def test_distinct_settings_give_distinct_names_and_the_defaults_keep_theirs() -> None:
    from sim.analysis.explore import ExploreBounds, counterexample_name, finding_key, longest_name, may_write
    from sim.model.switches import Switches

    switches = Switches().with_values({"fencing": "off"})
    settings = [ExploreBounds(), ExploreBounds(workflow="chat-summary"), ExploreBounds(workflow="digest"),
                ExploreBounds(workflow="/tmp/a/my wf.toml"), ExploreBounds(workflow="/tmp/b/my wf.toml"),
                ExploreBounds(faults="all"), ExploreBounds(max_faults=2), ExploreBounds(faults="all", max_faults=2),
                ExploreBounds(workflow="chat-summary", faults="all", max_faults=6)]  # fmt: skip
    keys = ["stale-write", finding_key("faithful-digest", (5,))]
    names = [counterexample_name(key, switches, 2, bounds) for bounds in settings for key in keys
             if bounds.faults == "all" or "--case-" not in key]  # fmt: skip
    assert len(names) == len(set(names)), names
    assert counterexample_name("stale-write", switches, 2) == "stale-write--fencing-off--seed2.toml"
    # --faults all's names with a case stay as docs/outside.md and docs/explore.md show them
    assert counterexample_name(keys[1], Switches(), 1, ExploreBounds(faults="all")) == (
        "faithful-digest--case-5--all-on--seed1.toml")
    for bounds in settings:
        may = may_write(switches, 2, bounds)
        mine = [counterexample_name(key, switches, 2, bounds) for key in keys
                if bounds.faults == "all" or "--case-" not in key]  # fmt: skip
        assert all(may(name) and may(name.replace(".toml", ".html")) for name in mine)
        assert all(not may(name) for name in names if name not in mine and "--case-" not in name)
        assert max(len(name.encode()) for name in mine) <= longest_name(switches, 2, bounds)


# -- the command lines sim prints, with a path that has a space ----------------------------------------
def test_the_rerun_and_replay_lines_quote_a_path_with_a_space(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`rerun with: sim explore ... --workflow /tmp/fz/my wf.toml` split into two words in a
    shell; so did the replay line's file in a folder with a space. Both are quoted now
    (shlex.quote), and the counterexample's description says the same command."""
    import shlex
    import tomllib

    workflow = tmp_path / "my wf.toml"
    workflow.write_text((ROOT / "workflows" / "chat-summary.toml").read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "out dir"
    assert main(["explore", "-n", "300", "--seed", "2", "--set", "fencing=off", "--workflow", str(workflow),
                 "--out", str(out)]) == 0  # fmt: skip
    printed = capsys.readouterr().out.splitlines()
    (rerun,) = [line for line in printed if line.startswith("rerun with: ")]
    args = shlex.split(rerun.removeprefix("rerun with: "))
    assert args[:2] == ["sim", "explore"] and args[args.index("--workflow") + 1] == str(workflow)
    replays = [line for line in printed if line.startswith("  replay: ")]
    assert replays
    for line in replays:
        args = shlex.split(line.removeprefix("  replay: ").split(" (its page: ")[0])
        assert args[:2] == ["sim", "trace"] and args[3:] == ["--check"] and Path(args[2]).parent == out
        described = tomllib.loads(Path(args[2]).read_text(encoding="utf-8"))["description"]
        found = shlex.split(described.split("Found by `", 1)[1].split("`", 1)[0])
        assert found[found.index("--workflow") + 1] == str(workflow)
