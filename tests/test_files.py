"""The one writer (sim/base/files.py) and the workers (sim/analysis/workers.py): symlinks at a target are
never followed, temporary files never stay, a replaced set is swapped as a whole, `--out` is
checked before the work, workers are capped, die with their parent, and a failure to start
them is one line."""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import processes, until
from test_special_outputs import no_work  # every command's work fails loudly

from sim.base import files
from sim.cli import main
from sim.base.files import (
    TEMP_PREFIX,
    OutError,
    atomic_write,
    clean_leftovers,
    prepare_folder,
    prepare_out,
    replace_folder,
    temp_name,
)
from sim.analysis.workers import MAX_WORKERS

ROOT = Path(__file__).resolve().parent.parent


def tree(folder: Path) -> dict[str, bytes | str]:
    """Every entry under `folder`: a file's bytes, a symlink as "-> target", a folder as "/"."""
    out: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            out[name] = "-> " + os.readlink(path)
        elif path.is_dir():
            out[name] = "/"
        else:
            out[name] = path.read_bytes()
    return out


def dead_pid() -> int:
    """The pid of a process that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# -- one file ------------------------------------------------------------------------------------
def test_a_symlink_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("precious\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "check.json").symlink_to(elsewhere)
    atomic_write(out / "check.json", "{}\n")
    assert not (out / "check.json").is_symlink()
    assert (out / "check.json").read_text() == "{}\n"
    assert elsewhere.read_text() == "precious\n"
    assert sorted(os.listdir(out)) == ["check.json"]


def test_a_dangling_symlink_at_the_target_is_not_created_through(tmp_path: Path) -> None:
    (tmp_path / "sweep.md").symlink_to(tmp_path / "nowhere")
    atomic_write(tmp_path / "sweep.md", "x")
    assert not (tmp_path / "nowhere").exists()
    assert (tmp_path / "sweep.md").read_text() == "x"


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    target = tmp_path / "a.toml"
    atomic_write(target, "old\n")

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError):
        atomic_write(target, "new\n")
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["a.toml"]


def test_write_out_is_one_line_naming_the_option_and_file(tmp_path: Path) -> None:
    (tmp_path / "sweep.md").mkdir()  # a folder where the file should go
    with pytest.raises(OutError, match=r"^--out .*: cannot write sweep\.md \(.*\)$"):
        files.write_out(tmp_path / "sweep.md", "x")
    assert not [n for n in os.listdir(tmp_path) if n.startswith(TEMP_PREFIX)]


def test_temporary_names_carry_the_prefix_and_the_pid() -> None:
    name = temp_name("file")
    assert name.startswith(f"{TEMP_PREFIX}{os.getpid()}-") and files.is_temp(name)
    assert files.is_temp(temp_name("build", "check")) and not files.is_temp("check.json")


# -- leftovers ------------------------------------------------------------------------------------
def test_leftovers_of_a_dead_process_are_cleaned_and_a_live_ones_kept(tmp_path: Path,
                                                                       procs: list[subprocess.Popen[bytes]]) -> None:  # fmt: skip
    dead = dead_pid()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    procs.append(live)
    (tmp_path / f"{TEMP_PREFIX}{dead}-ab12-file").write_text("half")
    (tmp_path / f"{TEMP_PREFIX}{dead}-ab13-probe").write_text("")
    build = tmp_path / f"{TEMP_PREFIX}{dead}-ab14-build-check"
    build.mkdir()
    (build / "a.toml").write_text("x")
    (build / "link").symlink_to(tmp_path / "keep.txt")  # rmtree removes the link, not its target
    (tmp_path / f"{TEMP_PREFIX}{live.pid}-cd12-file").write_text("in use")
    (tmp_path / "keep.txt").write_text("mine")
    removed = clean_leftovers(tmp_path)
    assert len(removed) == 3
    assert sorted(os.listdir(tmp_path)) == sorted([f"{TEMP_PREFIX}{live.pid}-cd12-file", "keep.txt"])
    # the live process's file too, once it is older than the limit (its pid reused)
    later = time.time() + 2 * files.STALE_SECONDS
    assert clean_leftovers(tmp_path, now=later) == [f"{TEMP_PREFIX}{live.pid}-cd12-file"]
    assert os.listdir(tmp_path) == ["keep.txt"]


def test_names_without_the_prefix_and_a_pid_are_never_cleaned(tmp_path: Path) -> None:
    """Only a name this module made (the prefix, a pid) is a leftover. The names an older writer
    used (`.probe-XXXXXXXX`, `.NAME.XXXXXXXX.tmp`) are what Python's `tempfile` makes too: a
    user's folder of that name, however old, was removed with everything in it."""
    import tempfile

    made = Path(tempfile.mkdtemp(prefix=".dataset.", suffix=".tmp", dir=tmp_path))
    (made / "big.bin").write_text("x")
    (tmp_path / ".probe-abcd1234").write_text("mine")
    (tmp_path / ".sweep.json.k2j4h5g6.tmp").write_text("{")
    for path in (made, tmp_path / ".probe-abcd1234", tmp_path / ".sweep.json.k2j4h5g6.tmp"):
        os.utime(path, (time.time() - 2 * files.STALE_SECONDS,) * 2)
    before = tree(tmp_path)
    assert clean_leftovers(tmp_path, now=time.time() + 10 * files.STALE_SECONDS) == []
    assert tree(tmp_path) == before


def test_a_users_tmp_named_folder_beside_or_in_check_out_stays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """The reviewer's case: `sim check --out results` cleans the folder above results (and the
    set it replaces skipped such names), so a `.dataset.*.tmp` folder 20 minutes old went."""
    import tempfile

    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    made = [Path(tempfile.mkdtemp(prefix=".dataset.", suffix=".tmp", dir=d)) for d in (tmp_path, tmp_path / "results")]
    for folder in made:
        (folder / "big.bin").write_text("x")
        os.utime(folder, (time.time() - 20 * 60,) * 2)
    assert main(["check", "-k", "0", "-t", "1", "-j", "1", "--out", "results"]) == 0
    capsys.readouterr()
    for folder in made:
        assert (folder / "big.bin").read_text() == "x"


def test_an_interrupted_two_rename_swap_is_finished(tmp_path: Path) -> None:
    dead = dead_pid()
    new = tmp_path / f"{TEMP_PREFIX}{dead}-aa-new-check"
    old = tmp_path / f"{TEMP_PREFIX}{dead}-ff-old-check"
    for folder, mark in ((new, "new"), (old, "old")):
        folder.mkdir()
        (folder / "check.json").write_text(f'"{mark}"')
    clean_leftovers(tmp_path)  # killed after check -> old, before new -> check
    assert os.listdir(tmp_path) == ["check"]
    assert (tmp_path / "check" / "check.json").read_text() == '"new"'
    # with no new half, the old one goes back
    old.mkdir()
    (old / "check.json").write_text('"old"')
    (tmp_path / "check" / "check.json").unlink()
    (tmp_path / "check").rmdir()
    clean_leftovers(tmp_path)
    assert (tmp_path / "check" / "check.json").read_text() == '"old"'


# -- a set replaced as a whole ----------------------------------------------------------------------
def _old_set(out: Path, elsewhere: Path) -> None:
    out.mkdir()
    (out / "check.json").symlink_to(elsewhere)  # a symlink where the set's file goes
    (out / "old.toml").write_text("old counterexample\n")
    (out / "notes.txt").write_text("mine\n")
    (out / "mine.toml").symlink_to(elsewhere)
    (out / "sub").mkdir()
    (out / "sub" / "deep.txt").write_text("deep\n")


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_a_set_is_swapped_as_a_whole_and_other_files_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          exchange: bool) -> None:  # fmt: skip
    if not exchange:
        monkeypatch.setattr(files, "exchange", lambda *args: False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("precious\n")
    out = tmp_path / "out"
    _old_set(out, elsewhere)
    os.chmod(out, 0o750)
    target = prepare_folder(out)
    replace_folder(target, {"check.json": "{}\n", "new.toml": "new\n"}, keep=lambda p: p.name != "old.toml")
    assert tree(out) == {
        "check.json": b"{}\n",
        "mine.toml": f"-> {elsewhere}",
        "new.toml": b"new\n",
        "notes.txt": b"mine\n",
        "sub": "/",
        "sub/deep.txt": b"deep\n",
    }
    assert elsewhere.read_text() == "precious\n"
    assert oct(os.stat(out).st_mode & 0o777) == oct(0o750)
    assert sorted(os.listdir(tmp_path)) == ["elsewhere", "out"]  # no temporary folder left


def test_a_failed_swap_leaves_the_old_set_and_no_temporary_folder(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.toml").write_text("old\n")

    def fail(*args: object) -> bool:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(files, "exchange", fail)
    with pytest.raises(OutError, match="cannot replace the folder"):
        replace_folder(prepare_folder(out), {"new.toml": "new\n"})
    assert tree(out) == {"old.toml": b"old\n"}
    assert os.listdir(tmp_path) == ["out"]


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "two-renames"])
def test_an_old_folder_that_cannot_be_removed_does_not_fail_the_swap(
        exchange: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The new set stands once swapped; an old folder that cannot be removed (an immutable file
    in it) is left for the next run's clean-up, not reported as a failed write (which said
    'cannot replace the folder', exit 2, after the folder had been replaced)."""
    import shutil

    out = tmp_path / "out"
    out.mkdir()
    (out / "old.toml").write_text("old\n")
    if not exchange:
        monkeypatch.setattr(files, "exchange", lambda *args: False)

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(shutil, "rmtree", refuse)
    replace_folder(prepare_folder(out), {"new.toml": "new\n"})
    assert tree(out) == {"new.toml": b"new\n"}


def test_a_set_into_a_missing_folder(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    replace_folder(prepare_folder(target), {"check.json": "1\n"})
    assert tree(target) == {"check.json": b"1\n"}


# -- what the new folder keeps is left as it was ------------------------------------------------------
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file another owner needs root")
NOBODY = 65534


def identity(path: Path) -> tuple[int, int, int, int]:
    """What a carried entry must keep: its inode, its mode (with the special bits), owner, group."""
    info = os.lstat(path)
    return info.st_ino, info.st_mode, info.st_uid, info.st_gid


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_a_kept_folder_is_moved_whole_and_the_folder_keeps_its_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     exchange: bool) -> None:  # fmt: skip
    """A kept subfolder was made anew (os.mkdir under the umask, no set-group-ID bit, the
    caller's owner) and the folder itself lost its special bits: now the subfolder is moved
    with one rename (its inode, so all of it, as it was) and the new folder gets the old one's
    mode, set-group-ID and sticky bits included."""
    if not exchange:
        monkeypatch.setattr(files, "exchange", lambda *args: False)
    out = tmp_path / "ck"
    (out / "sub" / "deeper").mkdir(parents=True)
    (out / "sub" / "deeper" / "f.txt").write_text("deep\n")
    (out / "notes.txt").write_text("mine\n")
    os.chmod(out / "sub", 0o3777)  # set-group-ID and sticky, group and others may write: the umask drops those
    os.chmod(out, 0o2750)
    kept = {name: identity(out / name) for name in ("sub", "sub/deeper", "sub/deeper/f.txt", "notes.txt")}
    mode = os.stat(out).st_mode
    target = prepare_folder(out)
    replace_folder(target, {"check.json": "{}\n"}, keep=lambda path: True)
    assert {name: identity(out / name) for name in kept} == kept
    assert os.stat(out).st_mode == mode
    assert (out / "check.json").read_text() == "{}\n"
    assert sorted(os.listdir(tmp_path)) == ["ck"]


def test_a_process_working_in_a_kept_folder_stays_in_it(tmp_path: Path, procs: list[subprocess.Popen[bytes]]) -> None:
    """A kept folder made anew left a process working in it in a removed folder; moved, the
    process is still in the folder at its path."""
    out = tmp_path / "ck"
    (out / "sub").mkdir(parents=True)
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], cwd=out / "sub",
                            stdin=subprocess.PIPE)  # fmt: skip
    procs.append(proc)
    replace_folder(prepare_folder(out), {"check.json": "{}\n"}, keep=lambda path: True)
    assert os.readlink(f"/proc/{proc.pid}/cwd") == str(out / "sub")
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait()


def test_a_process_working_in_the_folder_itself_is_refused_before_the_work(
        tmp_path: Path, procs: list[subprocess.Popen[bytes]]) -> None:  # fmt: skip
    """The folder itself is replaced: a process working in it would be left in the removed one."""
    out = tmp_path / "ck"
    out.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], cwd=out, stdin=subprocess.PIPE)
    procs.append(proc)
    until(lambda: os.readlink(f"/proc/{proc.pid}/cwd") == str(out))
    with pytest.raises(OutError, match=rf"^--out {out}: process {proc.pid} has it as its current folder; .*$"):
        prepare_folder(out)
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait()


@ROOT_ONLY
def test_check_leaves_owners_and_modes_as_they_were(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The reviewer's case, run as root: every owner became root and ck/sub drwxr-xr-x."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "home" / "alice" / ".ssh").mkdir(parents=True)
    (tmp_path / "home" / "alice" / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA\n")
    for path in (tmp_path / "home", *(tmp_path / "home").rglob("*")):
        os.chown(path, NOBODY, NOBODY)
    os.chmod(tmp_path / "home" / "alice", 0o700)
    (tmp_path / "ck" / "sub").mkdir(parents=True)
    os.chmod(tmp_path / "ck" / "sub", 0o2777)
    os.chown(tmp_path / "ck", NOBODY, -1)
    before = {str(p): identity(p) for root in ("home", "ck") for p in [tmp_path / root, *(tmp_path / root).rglob("*")]}
    for out in ("home", "ck"):
        assert main(["check", "-k", "0", "-t", "1", "-j", "1", "--out", out]) == 0
    capsys.readouterr()
    after = {str(p): identity(p) for p in map(Path, before)}
    top = {str(tmp_path / "home"), str(tmp_path / "ck")}  # the folders themselves are new: their mode and owner
    assert {p: v[1:] for p, v in after.items() if p in top} == {p: v[1:] for p, v in before.items() if p in top}
    assert {p: v for p, v in after.items() if p not in top} == {p: v for p, v in before.items() if p not in top}


@ROOT_ONLY
def test_a_folder_whose_owner_cannot_be_given_is_refused_before_the_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A caller who may not give the new folder the old one's owner (no CAP_CHOWN) is told
    before the work, not after it (the old code gave the folder the caller's owner)."""
    out = tmp_path / "ck"
    out.mkdir()
    os.chown(out, NOBODY, NOBODY)

    def no_chown(*args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "fchown", no_chown)
    no_work(monkeypatch)
    assert main(["check", "-k", "0", "-t", "1", "-j", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be given this one's owner" in err, err
    assert (os.stat(out).st_uid, os.stat(out).st_gid) == (NOBODY, NOBODY)
    assert sorted(os.listdir(tmp_path)) == ["ck"]


def test_a_folder_that_cannot_be_moved_is_refused_before_the_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Moving a kept folder needs write permission on it: when the caller has none, that is
    said before the work (`sim check` found it only after the whole search: "cannot replace
    the folder (Permission denied)", exit 2, the results lost)."""
    out = tmp_path / "ck"
    (out / "sub").mkdir(parents=True)
    real = os.access

    def no_write(path: object, mode: int, **kwargs: object) -> bool:
        return False if path == "sub" and mode == os.W_OK else real(path, mode, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", no_write)
    no_work(monkeypatch)
    assert main(["check", "-k", "0", "-t", "1", "-j", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sub cannot be carried into the new folder" in err, err
    assert sorted(os.listdir(tmp_path)) == ["ck"] and os.listdir(out) == ["sub"]


def as_nobody(folder: Path, args: list[str]) -> tuple[int, str]:
    """`sim ARGS` in a child of this process that gave up root for `nobody` (fork, no exec: the
    interpreter here may sit where nobody can read). Everything `sim check` imports is loaded
    first, by one run here."""
    warm = folder / "warm"
    assert main(["check", "-k", "0", "-t", "1", "-j", "1", "--out", str(warm)]) == 0
    err = folder / "err.txt"
    with open(err, "w") as handle:
        os.chown(err, NOBODY, NOBODY)
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            code = 1
            try:
                os.setgroups([])
                os.setresgid(NOBODY, NOBODY, NOBODY)
                os.setresuid(NOBODY, NOBODY, NOBODY)
                sys.stderr = handle
                code = main(args)
                handle.flush()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), err.read_text()


@ROOT_ONLY
def test_an_unreadable_subfolder_is_refused_before_the_work_not_after(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """The reviewer's case, as a caller without CAP_DAC_OVERRIDE: a subfolder of --out it
    cannot read (another user's, mode 000) failed the carry-over after the whole search."""
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(dir="/tmp"))  # not under pytest's root-only folder
    try:
        os.chmod(base, 0o755)
        out = base / "ck"
        (out / "sub").mkdir(parents=True)
        os.chmod(out / "sub", 0)
        for path in (base, out):
            os.chown(path, NOBODY, NOBODY)
        code, err = as_nobody(base, ["check", "-k", "0", "-t", "1", "-j", "1", "--out", str(out)])
        capsys.readouterr()
        assert code == 2, err
        assert err.count("\n") == 1 and "sub cannot be carried into the new folder" in err, err
        assert os.listdir(out) == ["sub"] and os.stat(out / "sub").st_mode & 0o7777 == 0
    finally:
        shutil.rmtree(base)


# -- a kill while the kept folders are in the build ---------------------------------------------------
KILLED_IN_THE_SWAP = """
import os, sys
from pathlib import Path
from sim.base import files
files._swap = lambda *args: os._exit(9)  # killed after the build, before the swap
out = Path(sys.argv[1])
files.replace_folder(files.prepare_folder(out), {"new.toml": "new"}, keep=lambda p: True)
"""


def test_folders_carried_into_a_killed_build_are_given_back(tmp_path: Path) -> None:
    out = tmp_path / "ck"
    (out / "sub").mkdir(parents=True)
    (out / "sub" / "deep.txt").write_text("deep\n")
    (out / "old.toml").write_text("old\n")
    sub = identity(out / "sub")
    proc = subprocess.run([sys.executable, "-c", KILLED_IN_THE_SWAP, str(out)], timeout=120)
    assert proc.returncode == 9
    assert sorted(os.listdir(out)) == ["old.toml"]  # the old set, complete; sub in the build
    (build,) = [name for name in os.listdir(tmp_path) if name != "ck"]
    assert "-build-ck" in build and os.listdir(tmp_path / build / "sub") == ["deep.txt"]
    clean_leftovers(tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["ck"]
    assert tree(out) == {"old.toml": b"old\n", "sub": "/", "sub/deep.txt": b"deep\n"}
    assert identity(out / "sub") == sub


def test_a_leftover_holding_a_folder_that_cannot_go_back_is_never_removed(tmp_path: Path) -> None:
    dead = dead_pid()
    out = tmp_path / "ck"
    (out / "sub").mkdir(parents=True)
    build = tmp_path / f"{TEMP_PREFIX}{dead}-ab12-build-ck"
    (build / "sub").mkdir(parents=True)  # the name is taken in ck: it cannot go back
    (build / "sub" / "mine.txt").write_text("mine\n")
    (build / "new.toml").write_text("new\n")
    assert clean_leftovers(tmp_path) == []
    assert (build / "sub" / "mine.txt").read_text() == "mine\n"


@pytest.mark.parametrize("way", ["exchange", "two-renames"])
def test_a_failed_swap_puts_the_kept_folders_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str) -> None:
    """A swap that fails leaves the old folder in place with its subfolders back in it (with
    two renames, the old folder was left aside and the new one nowhere, until the next run)."""
    out = tmp_path / "ck"
    (out / "sub").mkdir(parents=True)
    (out / "old.toml").write_text("old\n")

    def fail(*args: object) -> bool:
        raise OSError(5, "Input/output error")

    real = os.rename

    def rename(src: str, dst: str, **kwargs: object) -> None:
        if "-new-" in src and dst == "ck":  # the new folder into place, the old one already aside
            fail()
        real(src, dst, **kwargs)  # type: ignore[arg-type]

    if way == "exchange":
        monkeypatch.setattr(files, "exchange", fail)  # after the build, the kept folder moved into it
    else:
        monkeypatch.setattr(files, "exchange", lambda *args: False)
        monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OutError, match="cannot replace the folder"):
        replace_folder(out, {"new.toml": "new\n"}, keep=lambda path: True)
    assert tree(out) == {"old.toml": b"old\n", "sub": "/"}
    assert os.listdir(tmp_path) == ["ck"]


# -- the --out checks ----------------------------------------------------------------------------
def test_prepare_out_probes_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "new" / "folder"
    assert prepare_out(out) == out and out.is_dir() and os.listdir(out) == []


@pytest.mark.parametrize("make", ["file", "under-a-file"])
def test_prepare_out_refuses_a_file(tmp_path: Path, make: str) -> None:
    (tmp_path / "afile").write_text("")
    out = tmp_path / "afile" if make == "file" else tmp_path / "afile" / "sub"
    with pytest.raises(OutError, match=r"^--out .*afile.*: "):
        prepare_out(out)


def test_a_folder_replaced_as_a_whole_is_not_the_current_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for out in (Path("."), tmp_path.parent):
        with pytest.raises(OutError, match="holds the current folder"):
            prepare_folder(out)


@pytest.mark.parametrize("command", [["check", "-k", "1", "-t", "4"], ["sweep"], ["explore", "-n", "50"]])
def test_a_bad_out_is_one_line_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:  # fmt: skip
    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("the work started")

    monkeypatch.setattr(importlib.import_module("sim.analysis.check.check"), "check", no_work)
    monkeypatch.setattr(importlib.import_module("sim.commands.sweep"), "run_sweep", no_work)
    monkeypatch.setattr(importlib.import_module("sim.commands.explore"), "run_search", no_work)
    (tmp_path / "afile").write_text("")
    assert main([*command, "--out", str(tmp_path / "afile" / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("sim: error: --out ") and "afile" in err, err


def test_check_out_symlink_is_not_followed_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("precious\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "check.json").symlink_to(elsewhere)
    (out / "notes.txt").write_text("mine\n")
    assert main(["check", "-k", "1", "-t", "4", "-j", "1", "--set", "fencing=off", "--out", str(out)]) == 0
    assert elsewhere.read_text() == "precious\n"
    names = sorted(os.listdir(out))
    assert names == ["check.json", "fencing=off.end-only.stale-write.html", "fencing=off.end-only.stale-write.toml",
                     "fencing=off.per-step.stale-write.html", "fencing=off.per-step.stale-write.toml",
                     "notes.txt"]  # fmt: skip
    # a run that finds nothing takes the old counterexamples away and keeps the rest
    assert main(["check", "-k", "1", "-t", "4", "-j", "1", "--out", str(out)]) == 0
    assert sorted(os.listdir(out)) == ["check.json", "notes.txt"]
    assert sorted(os.listdir(tmp_path)) == ["elsewhere", "out"]
    capsys.readouterr()


# -- workers --------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [["check", "-k", "1", "-t", "4", "-j"], ["sweep", "--workers"]])
def test_workers_are_capped(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    assert main([*command, str(MAX_WORKERS + 1), "--out", str(tmp_path)]) == 2
    assert str(MAX_WORKERS) in capsys.readouterr().err
    assert os.listdir(tmp_path) == []


FAIL_FORK = """
import os, sys
real, calls = os.fork, []
def fork():
    calls.append(1)
    if len(calls) > 1:  # the first worker starts, the second cannot
        raise BlockingIOError(11, "Resource temporarily unavailable")
    return real()
os.fork = fork
from sim.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("command", [["check", "-k", "1", "-t", "4", "-j", "3"], ["sweep", "--workers", "3"]])
def test_a_failure_to_start_workers_is_one_line_and_no_hang(tmp_path: Path, command: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-c", FAIL_FORK, *command, "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "cannot start the worker processes" in proc.stderr, proc.stderr
    assert "Resource temporarily unavailable" in proc.stderr


def children(pid: int) -> set[int]:
    return {child for child, fields in processes() if int(fields[1]) == pid}


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_workers_die_with_their_parent(tmp_path: Path, procs: list[subprocess.Popen[bytes]]) -> None:
    sim = Path(sys.executable).parent / "sim"
    # a bound of minutes even compiled (docs/compiled.md): the workers are killed long before its end
    proc = subprocess.Popen([str(sim), "check", "-k", "3", "-t", "10", "-j", "2", "--out", str(tmp_path / "o")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    procs.append(proc)
    workers: set[int] = set()

    def started() -> bool:
        workers.clear()
        workers.update(children(proc.pid))
        return len(workers) >= 2

    until(lambda: started() or proc.poll() is not None)  # an early end fails now, not at the backstop
    assert len(workers) >= 2 and proc.poll() is None, f"the workers did not start (exit {proc.poll()})"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    until(lambda: not any(alive(w) for w in workers))
    left = [w for w in workers if alive(w)]
    for w in left:  # never leave one behind, even when the test fails
        os.kill(w, signal.SIGKILL)
    assert left == []


@pytest.mark.parametrize("pid", [0, 1 << 22, 10**20])
def test_a_leftover_whose_pid_no_process_can_have_is_cleaned_not_an_internal_error(tmp_path: Path, pid: int) -> None:
    """A temporary name whose pid is 0 or past any pid Linux gives (`os.kill` would raise
    OverflowError for the largest, or signal the process group for 0) is no live writer's."""
    name = f"{files.TEMP_PREFIX}{pid}-ab-file-x"
    (tmp_path / name).write_text("left")
    assert not files.pid_alive(pid)
    assert files.clean_leftovers(tmp_path) == [name]
