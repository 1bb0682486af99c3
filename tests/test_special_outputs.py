"""Never harm what is at an output path: a folder, a FIFO, a character device or a socket
where a command would write a file is refused with one line and exit 2, before any work
starts, and is left exactly as it was (the same inode, type, device and times)."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main

KINDS = ["fifo", "chardev", "socket", "folder"]


@contextlib.contextmanager
def inside(folder: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def make(kind: str, path: Path) -> Any:
    """Put a `kind` at `path`; returns what keeps it alive (the socket), if anything."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "chardev":
        try:
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # the numbers of /dev/null
        except PermissionError:
            pytest.skip("making a character device needs CAP_MKNOD (root); this process may not")
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with inside(path.parent):  # a relative name: a socket's path is limited to 108 bytes
            sock.bind(path.name)
        return sock
    else:
        path.mkdir()
        (path / "mine.txt").write_text("not sim's\n")
    return None


def fingerprint(path: Path) -> tuple[Any, ...]:
    info = os.lstat(path)
    inside_folder = sorted(os.listdir(path)) if stat.S_ISDIR(info.st_mode) else None
    return (info.st_ino, info.st_mode, info.st_rdev, info.st_size, info.st_mtime_ns, inside_folder)


def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every command's work fail loudly: a refusal must come before it."""

    def started(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the work started before the output path was checked")

    import sim.commands.check as check_cmd
    import sim.commands.conform as conform_cmd
    import sim.commands.explore as explore_cmd
    import sim.commands.sweep as sweep_cmd
    import sim.commands.trace as trace_cmd

    monkeypatch.setattr(trace_cmd, "run_scenario", started)
    monkeypatch.setattr(sweep_cmd, "run_sweep", started)
    monkeypatch.setattr(check_cmd.checker, "check", started)
    monkeypatch.setattr(explore_cmd, "run_search", started)
    monkeypatch.setattr(conform_cmd, "run_conform", started)


#: (command line with OUT for the output folder, the path the special entry goes at)
CASES: list[tuple[list[str], str]] = [
    (["trace", "main", "--html", "OUT/page.html"], "page.html"),
    *[(["sweep", "--out", "OUT"], name) for name in
      ("sweep.json", "sweep.csv", "sweep.md", "explainer.html", "sweep-map.svg")],
    (["check", "-k", "0", "-t", "2", "--out", "OUT"], "check.json"),
    (["check", "-k", "0", "-t", "2", "--out", "OUT"], "all-on.per-step.stale-write.toml"),
    (["check", "-k", "0", "-t", "2", "-p", "key=none", "--out", "OUT"], "key=none.end-only.duplicate-effect.html"),
    (["explore", "--seed", "1", "--examples", "5", "--out", "OUT"], "duplicate-effect--all-on--seed1.toml"),
    (["explore", "--seed", "1", "--examples", "5", "--set", "key=none", "--out", "OUT"],
     "stale-write--case-4--key-none--seed1.html"),
    (["conform", "langgraph", "--out", "OUT"], "conformance.json"),
]  # fmt: skip
#: the output folder itself
FOLDER_CASES: list[list[str]] = [
    ["sweep", "--out", "OUT"],
    ["check", "-k", "0", "-t", "2", "--out", "OUT"],
    ["explore", "--seed", "1", "--examples", "5", "--out", "OUT"],
    ["conform", "langgraph", "--out", "OUT"],
]


def refused(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    with inside(tmp_path):
        code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("sim: error: "), err
    return err


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("args", "name"), CASES, ids=[f"{a[0]}-{n}" for a, n in CASES])
def test_a_special_file_at_an_output_path_is_refused_and_kept(
    kind: str, args: list[str], name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    if args[0] == "conform":
        pytest.importorskip("langgraph", reason="sim conform langgraph needs the langgraph extra")
    no_work(monkeypatch)
    target = tmp_path / "OUT" / name
    keep = make(kind, target)
    before = fingerprint(target)
    try:
        err = refused([a.replace("OUT", str(tmp_path / "OUT")) for a in args], tmp_path, capsys)
        assert str(target) in err or name in err, err
        assert fingerprint(target) == before
        assert sorted(os.listdir(tmp_path / "OUT")) == [name]  # nothing else written beside it
    finally:
        if keep is not None:
            keep.close()


@pytest.mark.parametrize("kind", ["fifo", "chardev", "socket"])
@pytest.mark.parametrize("args", FOLDER_CASES, ids=[a[0] for a in FOLDER_CASES])
def test_a_special_file_where_the_output_folder_goes_is_refused_and_kept(
    kind: str, args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    if args[0] == "conform":
        pytest.importorskip("langgraph", reason="sim conform langgraph needs the langgraph extra")
    no_work(monkeypatch)
    target = tmp_path / "OUT"
    keep = make(kind, target)
    before = fingerprint(target)
    try:
        err = refused([a.replace("OUT", str(target)) for a in args], tmp_path, capsys)
        assert "not a folder" in err, err
        assert fingerprint(target) == before
    finally:
        if keep is not None:
            keep.close()


def test_the_writer_itself_refuses_what_a_command_did_not_check(tmp_path: Path) -> None:
    """The last guard: the writer, at the moment it writes, refuses a FIFO at a target."""
    from sim.base.files import OutError, atomic_write, write_out

    fifo = tmp_path / "x.txt"
    os.mkfifo(fifo)
    before = fingerprint(fifo)
    with pytest.raises(OSError, match="named pipe"):
        atomic_write(fifo, "data")
    with pytest.raises(OutError, match=r"^--html .*: cannot write x\.txt \(a named pipe \(FIFO\) is there"):
        write_out(fifo, "data", option="--html")
    assert fingerprint(fifo) == before and os.listdir(tmp_path) == ["x.txt"]


def test_a_page_of_sims_and_a_symlink_are_written_over(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What may be written over still is: a page sim wrote, and a symlink (replaced itself,
    its target left alone). A regular file that is not a page of sim's (the scenario file
    itself, a README) is not: one line, exit 2, the file as it was (it was replaced, so
    `sim trace mine.toml --html mine.toml` lost the scenario)."""
    target = tmp_path / "elsewhere.txt"
    target.write_text("kept\n")
    (tmp_path / "link.html").symlink_to(target)
    (tmp_path / "file.html").write_text("old\n")
    (tmp_path / "mine.toml").write_text('[switches]\npins = "off"\n')
    with inside(tmp_path):
        assert main(["trace", "main", "--html", "link.html"]) == 0
        assert main(["trace", "main", "--html", "page.html"]) == 0
        assert main(["trace", "main", "--set", "pins=off", "--html", "page.html"]) == 0
        capsys.readouterr()
        assert main(["trace", "main", "--html", "file.html"]) == 2
        assert "file.html: a file sim did not write is there" in capsys.readouterr().err
        assert main(["trace", "mine.toml", "--html", "mine.toml"]) == 2
    capsys.readouterr()
    assert target.read_text() == "kept\n"
    assert not (tmp_path / "link.html").is_symlink()
    assert (tmp_path / "link.html").read_text().startswith("<!DOCTYPE html>")
    assert "pins=off" in (tmp_path / "page.html").read_text()
    assert (tmp_path / "file.html").read_text() == "old\n"
    assert (tmp_path / "mine.toml").read_text() == '[switches]\npins = "off"\n'


@pytest.mark.parametrize("value", ["--json", "-x"])
def test_an_option_like_html_file_is_refused(value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(["trace", "main", "--html", value], tmp_path, capsys)
    assert "looks like an option" in err
    assert os.listdir(tmp_path) == []


