"""What `sim conform` writes into its output folders, and the checks made before it writes.

Every file goes through the project's atomic writer (sim/base/files.py: never through a
symlink, never over a folder, a FIFO, a device or a socket), and only where nothing is or over
an entry `sim conform` wrote itself, recognised by its first bytes; anything else at a path it
may write is refused with one line (exit 2) before any engine runs, and left as it was:

- `conformance.md` and `conformance.json` (`--out`): the reports (`report.TITLE`,
  `report.JSON_HEAD`);
- `schedules/NAME.toml` (`--explore` without `--all`): each drawn schedule's scenario file
  (`schedule.HEADER`), written again at every run, never trusted as it was left;
- `disagreement-ENGINE-NAME.toml`: a disagreement's scenario file (`schedule.HEADER`);
- `disagreement-ENGINE-NAME/`: the engine's records of each run of it (`run-N/`, regular files
  with the suffixes in `KEPT`, each `run-N` with the run's `plan.json`), built under a
  temporary name and put in place as a whole, the old folder removed.

NAME is any schedule name (`Schedule.from_name`): the names shrinking may write are not known
before the runs, so every entry with such a name is checked.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sim.base.files import OutError, refuse_special, temp_name, write_out, written_by_sim
from sim.conform.schedule import HEADER, Schedule, ScheduleTextError

#: the first bytes of every scenario file `sim conform` writes
SCHEDULE_MARK = HEADER.encode("utf-8")
#: the suffixes of a run's files kept in a disagreement's record folder
KEPT = (".sqlite", ".db", ".log", ".json")
#: a run's plan (sim/conform/harness.py `observe`), in every run folder of a record: its
#: first bytes (the first hit of every schedule is on w1)
PLAN = "plan.json"
PLAN_MARK = b'{"w1": ['
_RUN = re.compile(r"run-[1-9][0-9]*")


def _what(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISREG(mode):
        return "a file"
    return "a folder" if stat.S_ISDIR(mode) else "a special file"


def refuse_foreign(path: Path, mark: bytes, option: str = "--out") -> None:
    """One-line `OutError` unless nothing is at `path` or a regular file whose bytes begin with
    `mark` (one `sim conform` wrote): a folder, FIFO, device or socket in the writer's words; a
    symlink, or a file of someone else's, as not sim conform's."""
    refuse_special(path, option)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutError(f"{option} {path}: cannot use it ({exc.strerror or exc})") from None
    if stat.S_ISLNK(mode):
        why = "a symlink is there"
    elif not written_by_sim(path, mark):
        why = f"a file that does not begin with {mark.decode('utf-8', 'replace').strip()!r} is there"
    else:
        return
    raise OutError(f"{option} {path}: {why}; sim conform writes only over a file it wrote itself, so it "
                   f"leaves it alone (move it, or name another {option})")  # fmt: skip


def write_owned(path: Path, data: str | bytes, mark: bytes) -> None:
    """Write `path` through the atomic writer, only where nothing is or over a file whose bytes
    begin with `mark` (checked again at the moment of writing)."""
    refuse_foreign(path, mark)
    write_out(path, data, head=mark)


def spells_schedule(name: str) -> bool:
    try:
        Schedule.from_name(name)
    except ScheduleTextError:
        return False
    return True


def foreign_record(path: Path) -> str | None:
    """Why the entry at `path` is not a record folder `sim conform` wrote (None: it is one, or
    nothing is there): it must be a folder (not a symlink) of `run-N` folders, each holding
    only regular files with a kept suffix, among them the run's plan.json."""
    try:
        info = os.lstat(path)
        if not stat.S_ISDIR(info.st_mode):
            return f"{_what(info.st_mode)} is there"
        for run in sorted(os.listdir(path)):
            mode = os.lstat(path / run).st_mode
            if not _RUN.fullmatch(run) or not stat.S_ISDIR(mode):
                return f"{path / run} is not one of its run-N folders"
            names = sorted(os.listdir(path / run))
            for name in names:
                mode = os.lstat(path / run / name).st_mode
                if not stat.S_ISREG(mode):
                    return f"{_what(mode)} is at {path / run / name}"
                if not name.endswith(KEPT):
                    return f"{path / run / name} is not one of the records it keeps"
            if names and not written_by_sim(path / run / PLAN, PLAN_MARK):
                return f"{path / run} has no {PLAN} of a run of sim conform's"
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot read it ({exc.strerror or exc})"
    return None


def refuse_foreign_record(path: Path, option: str = "--out") -> None:
    why = foreign_record(path)
    if why is not None:
        raise OutError(f"{option} {path}: not a record folder sim conform wrote ({why}), so sim leaves it "
                       f"alone; move it or name another {option}")  # fmt: skip


def check_explore_out(out: Path, engine: str, schedules: bool, option: str = "--out") -> None:
    """Before any engine runs: every entry of `out` an exploration of `engine` may write (a
    disagreement's scenario file and record folder, and with `schedules` each drawn schedule's
    file in `out/schedules`) is absent or `sim conform`'s; else one line, exit 2."""
    prefix = f"disagreement-{engine}-"
    for name in _names(out):
        if not name.startswith(prefix):
            continue
        if name.endswith(".toml") and spells_schedule(name.removeprefix(prefix).removesuffix(".toml")):
            refuse_foreign(out / name, SCHEDULE_MARK, option)
        elif spells_schedule(name.removeprefix(prefix)):
            refuse_foreign_record(out / name, option)
    if schedules:
        folder = out / "schedules"
        _refuse_not_folder(folder, option)
        for name in _names(folder):
            if name.endswith(".toml") and spells_schedule(name.removesuffix(".toml")):
                refuse_foreign(folder / name, SCHEDULE_MARK, option)


def _names(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise OutError(f"--out {folder}: cannot read the folder ({exc.strerror or exc})") from None


def _refuse_not_folder(folder: Path, option: str) -> None:
    """A folder sim conform writes into: absent, or a folder (not a symlink to one)."""
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        raise OutError(f"{option} {folder}: {_what(mode)} is there, where sim conform keeps a folder of its "
                       "own; sim leaves it alone")  # fmt: skip


def own_folder(folder: Path, option: str = "--out") -> Path:
    """`folder` made if absent; refused (one line) if something other than a folder is there."""
    _refuse_not_folder(folder, option)
    try:
        folder.mkdir(exist_ok=True)
    except OSError as exc:
        raise OutError(f"{option} {folder}: cannot create the folder ({exc.strerror or exc})") from None
    return folder


@contextmanager
def staged_record(target: Path) -> Iterator[Path]:
    """A temporary folder beside `target` (not yet made) for a disagreement's records; once the
    block ends, it replaces `target` as a whole (the old folder, `sim conform`'s, checked
    again, is removed); if the block fails, it is removed. A kill leaves a temporary entry
    that the next run's `prepare_out` cleans (an old folder renamed aside is put back)."""
    staged = target.parent / temp_name("build", target.name)
    try:
        yield staged
        staged.mkdir(exist_ok=True)
        _install(staged, target)
    finally:
        if os.path.lexists(staged):
            shutil.rmtree(staged, ignore_errors=True)


def _install(staged: Path, target: Path) -> None:
    refuse_foreign_record(target)
    try:
        if not os.path.lexists(target):
            os.rename(staged, target)
            return
        old = target.parent / temp_name("old", target.name)
        os.rename(target, old)
        os.rename(staged, target)
        shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        raise OutError(f"--out {target.parent}: cannot write {target.name} ({exc.strerror or exc})") from None


def missing_folders(folder: Path) -> list[Path]:
    """`folder` and those of its parents that do not exist yet, the deepest first."""
    out: list[Path] = []
    for path in (folder, *folder.parents):
        if os.path.lexists(path):
            break
        out.append(path)
    return out


@contextmanager
def unused_removed(*folders: Path) -> Iterator[None]:
    """Each of `folders` (and its parents) that this block creates and leaves empty is removed
    when the block ends, however it ends: a folder nothing was written into is not left behind."""
    made = sorted({path for folder in folders for path in missing_folders(folder)}, key=lambda p: -len(p.parts))
    try:
        yield
    finally:
        for path in made:
            try:
                path.rmdir()
            except OSError:  # not empty (something was written into it), or already gone
                pass
