"""The one writer: every file the CLI writes goes through here, so that no run loses a file.

- `atomic_write(path, data)`: the data goes to a temporary file in the target's folder, is
  flushed and fsynced, replaces the target with one `rename` and then the folder is fsynced.
  The target is never opened nor followed: a symlink there is replaced by the file, and
  whatever it pointed to is left alone. `write_out` is the same, with an `OSError` turned
  into a one-line `OutError` naming the option and the file.
- `replace_folder(target, files, keep)`: a *set* of files replaced as a whole. The new set
  is built in a sibling temporary folder (with the entries of the old folder that `keep`
  says are not part of the set carried over as hard links), fsynced, and swapped with the
  old folder in one `renameat2(RENAME_EXCHANGE)`; where that is unavailable, two renames,
  and an interrupted swap is finished at the next run (see `clean_leftovers`). A kill at
  any moment leaves the complete old set or the complete new set.
- `refuse_special(path)` / `refuse_special_in(folder, names)`: nothing but a regular file or
  a symlink may be at a path the writer writes; a folder, a FIFO, a device or a socket there
  is refused with one line (exit 2), by the commands before any work and by the writer again
  at the moment it writes. The tool never destroys what it did not create.
- `prepare_out(out)` / `prepare_folder(out)`: the `--out` checks made before any work (the
  folder exists or can be created, is a folder, can be written: a probe file with the
  temporary prefix, removed at once), and the leftovers of killed runs cleaned.

Every temporary name starts with `TEMP_PREFIX` and carries the writer's pid:
`.sim-tmp-<pid>-<random>-<kind>[-<name>]`. `clean_leftovers(folder)` removes those whose pid
is no longer alive (or that are older than `STALE_SECONDS`, the pid having been reused), and
nothing else: a name without that prefix and a pid is never removed, whatever it looks like
(`tempfile.mkdtemp(prefix=".data.", suffix=".tmp")` makes names like the ones an older
writer used, `LEGACY`, so those are left alone too).
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
import secrets
import shutil
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from sim.base.errors import SimError

TEMP_PREFIX = ".sim-tmp-"
#: a temporary entry this old is a leftover even if a process with its pid is alive
STALE_SECONDS = 15 * 60
#: the names the writer before this one used. No longer removed nor skipped: nothing in them
#: says that sim made them (Python's `tempfile` makes such names), so they are the user's
LEGACY = re.compile(r"^\.probe-[a-z0-9_]{8}$|^\..+\.[a-z0-9_]{8}\.tmp$")
_TEMP = re.compile(re.escape(TEMP_PREFIX) + r"(\d+)-[0-9a-f]+-(file|probe|build|new|old)(?:-(.*))?$", re.S)
#: the longest part of a target's name kept in a temporary folder's name (NAME_MAX is 255)
_NAME_KEPT = 180

_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class OutError(SimError):
    """An output folder or file that cannot be written (reported as one line, exit 2)."""


# -- names -------------------------------------------------------------------------------------
@contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) back while the block runs, and deliver it after: a file written
    and the record that it was written happen together or not at all, so a program that
    stops on Ctrl-C never leaves a file its report does not list. The signal's Python handler
    is swapped for one that only notes it (a process-directed signal may reach any thread,
    but its Python handler runs in the main thread, so masking one thread would not hold it);
    the old handler is put back and called after the block. Outside the main thread (where
    Python takes no signal and sets no handler) it holds nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[tuple[int, FrameType | None]] = []
    old = signal.signal(signal.SIGINT, lambda signum, frame: caught.append((signum, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
        if caught and callable(old):
            old(*caught[0])  # the default handler raises KeyboardInterrupt here
        elif caught and old == signal.SIG_DFL:
            raise KeyboardInterrupt


def temp_name(kind: str, name: str = "") -> str:
    """A fresh temporary name: `.sim-tmp-<pid>-<random>-<kind>[-<name>]`."""
    tail = f"-{name[:_NAME_KEPT]}" if name else ""
    return f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(6)}-{kind}{tail}"


def is_temp(name: str) -> bool:
    """Whether `name` is one of this module's temporary names."""
    return _TEMP.match(name) is not None


# -- one file ----------------------------------------------------------------------------------
@contextmanager
def _folder(path: Path) -> Iterator[int]:
    fd = os.open(path, _DIR_FLAGS)
    try:
        yield fd
    finally:
        os.close(fd)


def _create(folder: int, name: str, data: bytes) -> None:
    """Create `name` (which must not exist) in the open folder with `data`, fsynced."""
    fd = os.open(name, _FILE_FLAGS, 0o644, dir_fd=folder)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fchmod(handle.fileno(), 0o644)
        os.fsync(handle.fileno())


def _bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def atomic_write(path: Path, data: str | bytes) -> None:
    """Replace `path` with `data` (text is UTF-8) atomically: a reader sees the old file or
    the new one, whole, and a kill leaves one of them. A symlink at `path` is replaced
    itself, never followed. Raises `OSError`; the temporary file is gone either way."""
    atomic_write_many(path.parent, {path.name: data})


def atomic_write_many(folder_path: Path, files: Mapping[str, str | bytes]) -> None:
    """Replace several files of one folder: every new file is written and fsynced under a
    temporary name first, then all are renamed over their targets in a row, then the folder
    is fsynced. Each file is whole, old or new, at any moment; a kill can leave a mix only
    during the renames themselves (microseconds), not while files are written."""
    with _folder(folder_path) as folder:
        for name in files:
            _refuse_special_at(folder, name, folder_path)
        staged: list[tuple[str, str]] = []
        try:
            for name, data in files.items():
                tmp = temp_name("file", name)
                staged.append((tmp, name))  # before it exists: a failed create is cleaned too
                _create(folder, tmp, _bytes(data))
            for tmp, name in staged:
                _refuse_special_at(folder, name, folder_path)  # nothing special came meanwhile
                os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            for tmp, _ in staged:
                try:
                    os.unlink(tmp, dir_fd=folder)
                except FileNotFoundError:
                    pass
            raise
        os.fsync(folder)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


# -- what may be written over ----------------------------------------------------------------------
def kind_of(mode: int) -> str:
    """What a file of this mode is, in words."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):  # fmt: skip
        if test(mode):
            return name
    return "a special file"


def replaceable(mode: int) -> bool:
    """Whether the writer may put a file where an entry of this mode is: over a regular file,
    or over a symlink (replaced itself, never followed); never over a folder, a FIFO, a
    device or a socket, which the tool did not create and must not destroy."""
    return stat.S_ISREG(mode) or stat.S_ISLNK(mode)


def refuse_special(path: Path, option: str = "--out") -> None:
    """Raise a one-line `OutError` if something other than a regular file or a symlink is at
    `path` (nothing there is fine). Never opens it: a FIFO is not waited on."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutError(f"{option} {path}: cannot use it ({_reason(exc)})") from None
    if not replaceable(info.st_mode):
        raise OutError(f"{option} {path}: {kind_of(info.st_mode)} is there; sim writes only over a regular "
                       "file (or a symlink, which it replaces), so it leaves it alone")  # fmt: skip


def refuse_special_in(folder: Path, names: Callable[[str], bool], option: str = "--out") -> None:
    """`refuse_special` for every entry of `folder` whose name `names` accepts: the files a
    command may write there, checked before its work starts."""
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return
    for name in entries:
        if names(name):
            refuse_special(folder / name, option)


def _refuse_special_at(folder: int, name: str, where: Path) -> None:
    """At the moment of writing: `name` in the open folder must be absent, a regular file or
    a symlink (the last guard; the commands check their output paths before any work)."""
    try:
        mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return
    if not replaceable(mode):  # an OSError: each writer's caller names its option and the file
        raise OSError(errno.EISDIR if stat.S_ISDIR(mode) else errno.EPERM,
                      f"{kind_of(mode)} is there; sim writes only over a regular file (or a symlink, which it "
                      "replaces), so it leaves it alone", str(where / name))  # fmt: skip


def write_out(path: Path, data: str | bytes, option: str = "--out") -> Path:
    """`atomic_write`, with a failure reported as one line naming `option` and the file."""
    try:
        atomic_write(path, data)
    except OSError as exc:
        raise OutError(f"{option} {path.parent}: cannot write {path.name} ({_reason(exc)})") from None
    return path


def starts_with(path: Path, prefix: bytes) -> bool:
    """Whether `path` is a regular file (never followed if a symlink) whose bytes begin with
    `prefix`: how a command tells the files it wrote from others in a folder it replaces."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return False
        return handle.read(len(prefix)) == prefix


# -- the --out checks, before any work -----------------------------------------------------------
def prepare_out(out: Path, option: str = "--out") -> Path:
    """Check `out` before the work starts: it is a folder or can be created as one, and a
    file can be created in it (a probe with the temporary prefix, removed at once). Then
    clean the leftovers of killed runs there. Raises `OutError` (one line)."""
    try:
        if out.exists() and not out.is_dir():
            kind = "a file" if out.is_file() else kind_of(out.stat().st_mode)
            raise OutError(f"{option} {out}: not a folder ({kind} is there)")
    except OSError as exc:  # e.g. a name too long, a symlink loop
        raise OutError(f"{option} {out}: cannot use it as a folder ({_reason(exc)})") from None
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutError(f"{option} {out}: cannot create the folder ({_reason(exc)})") from None
    probe(out, option)
    clean_leftovers(out)
    return out


def probe(folder: Path, option: str = "--out") -> None:
    """Create and remove a probe file in `folder`; `OutError` if that cannot be done."""
    try:
        with _folder(folder) as fd:
            name = temp_name("probe")
            os.close(os.open(name, _FILE_FLAGS, 0o600, dir_fd=fd))
            os.unlink(name, dir_fd=fd)
    except OSError as exc:
        raise OutError(f"{option} {folder}: cannot write there ({_reason(exc)})") from None


def prepare_folder(out: Path, option: str = "--out") -> Path:
    """`prepare_out` for a folder that `replace_folder` will replace as a whole: also its
    parent must take the new folder, and the folder may not be a mount point nor hold the
    current directory. A symlink to a folder is followed (the folder it names is replaced).
    Returns the absolute path of the folder that will be replaced."""
    prepare_out(out, option)
    target = Path(os.path.realpath(out))
    cwd = Path(os.path.realpath(os.getcwd()))
    if os.path.ismount(target):
        raise OutError(f"{option} {out}: a mount point; it is replaced as a whole, so name a folder inside it")
    if cwd == target or target in cwd.parents:
        raise OutError(f"{option} {out}: holds the current folder; it is replaced as a whole, so name another")
    probe(target.parent, option)
    clean_leftovers(target.parent)
    return target


# -- leftovers --------------------------------------------------------------------------------------
def pid_alive(pid: int) -> bool:
    """Whether a process with this pid is alive (this process is; someone else's counts)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _remove(folder: int, name: str) -> None:
    info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(name, dir_fd=folder)  # never follows a symlink inside
    else:
        os.unlink(name, dir_fd=folder)


def _exists(folder: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def clean_leftovers(folder: Path, now: float | None = None) -> list[str]:
    """Remove the temporary entries a killed run left in `folder` and finish an interrupted
    two-rename swap (a complete new set whose target is missing is renamed into place).
    Entries of a live process are left alone unless older than `STALE_SECONDS`. Returns the
    names removed or renamed. Best effort: an entry that cannot be removed stays."""
    now = time.time() if now is None else now
    done: list[str] = []
    try:
        with _folder(folder) as fd:
            # the new halves of interrupted swaps first: an old half is then only removed
            # once the new one is in place
            names = sorted(os.listdir(fd), key=lambda n: (_kind(n) != "new", n))
            for name in names:
                try:
                    if _clean_one(fd, name, now):
                        done.append(name)
                except OSError:
                    continue
            if done:
                os.fsync(fd)
    except OSError:
        pass
    return done


def _kind(name: str) -> str:
    match = _TEMP.match(name)
    return match.group(2) if match else ""


def _clean_one(folder: int, name: str, now: float) -> bool:
    match = _TEMP.match(name)
    if match is None:  # not a name of this module's: never touched, whatever it looks like
        return False
    age = now - os.stat(name, dir_fd=folder, follow_symlinks=False).st_mtime
    if pid_alive(int(match.group(1))) and age < STALE_SECONDS:
        return False
    if match.group(2) in ("new", "old"):
        target = match.group(3) or ""
        if len(target) >= _NAME_KEPT:
            return False  # a cut name: which folder it belongs to is not known for sure
        if not _exists(folder, target):
            # killed between the two renames of a swap: put the complete new set in place
            # (or, without one, the old set back)
            os.rename(name, target, src_dir_fd=folder, dst_dir_fd=folder)
            return True
    _remove(folder, name)
    return True


# -- a set of files, replaced as a whole ---------------------------------------------------------------
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_libc: ctypes.CDLL | None
try:
    _libc = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover - no C library to load
    _libc = None


def exchange(folder: int, a: str, b: str) -> bool:
    """Swap the entries `a` and `b` of the open folder in one step (Linux
    `renameat2(RENAME_EXCHANGE)`). False when the system or file system cannot."""
    call = getattr(_libc, "renameat2", None) if _libc is not None else None
    if call is None:
        return False
    result = call(folder, os.fsencode(a), folder, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), b)


def _carry(src: int, dst: int, name: str) -> None:
    """Hard-link the entry `name` (a file, a symlink itself, or a folder's tree) into `dst`."""
    info = os.stat(name, dir_fd=src, follow_symlinks=False)
    if not stat.S_ISDIR(info.st_mode):
        os.link(name, name, src_dir_fd=src, dst_dir_fd=dst, follow_symlinks=False)
        return
    os.mkdir(name, stat.S_IMODE(info.st_mode), dir_fd=dst)
    sub_src = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=src)
    try:
        sub_dst = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=dst)
        try:
            for child in os.listdir(sub_src):
                _carry(sub_src, sub_dst, child)
            os.fsync(sub_dst)
        finally:
            os.close(sub_dst)
    finally:
        os.close(sub_src)


#: `keep(path)`: whether an entry of the old folder is carried into the new one
Keep = Callable[[Path], bool]


def replace_folder(target: Path, files: Mapping[str, str | bytes], keep: Keep | None = None,
                   option: str = "--out") -> None:  # fmt: skip
    """Replace the folder `target` (absolute, from `prepare_folder`) with one holding `files`
    (name -> content) and the entries of the old folder for which `keep(path)` is true (not
    the names in `files`, not temporary ones), as a whole: a kill at any moment leaves the
    old folder or the new one, each complete. Raises `OutError` (one line)."""
    try:
        _replace_folder(target, files, keep)
    except OSError as exc:
        raise OutError(f"{option} {target}: cannot replace the folder ({_reason(exc)})") from None


def _replace_folder(target: Path, files: Mapping[str, str | bytes], keep: Keep | None) -> None:
    name = target.name
    with _folder(target.parent) as parent:
        build = temp_name("build", name)
        old_mode = 0o755
        if _exists(parent, name):
            old_mode = stat.S_IMODE(os.stat(name, dir_fd=parent).st_mode)
        os.mkdir(build, 0o700, dir_fd=parent)
        try:
            _fill(parent, build, target, files, keep)
            os.chmod(build, old_mode, dir_fd=parent)
            _swap(parent, build, name)
        except BaseException:
            if _exists(parent, build):
                shutil.rmtree(build, dir_fd=parent)
            raise


def _fill(parent: int, build: str, target: Path, files: Mapping[str, str | bytes], keep: Keep | None) -> None:
    if _exists(parent, target.name):  # nothing special where a new file goes: it would be lost
        with _folder_at(parent, target.name) as old:
            for file in files:
                _refuse_special_at(old, file, target)
    with _folder_at(parent, build) as new:
        for file, data in files.items():
            _create(new, file, _bytes(data))
        if keep is not None and _exists(parent, target.name):
            with _folder_at(parent, target.name) as old:
                for entry in sorted(os.listdir(old)):
                    if entry in files or is_temp(entry):
                        continue
                    if keep(target / entry):
                        _carry(old, new, entry)
        os.fsync(new)


@contextmanager
def _folder_at(parent: int, name: str) -> Iterator[int]:
    fd = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=parent)
    try:
        yield fd
    finally:
        os.close(fd)


def _swap(parent: int, build: str, name: str) -> None:
    """Put the complete folder `build` at `name`, and remove what was there."""
    if not _exists(parent, name):
        os.rename(build, name, src_dir_fd=parent, dst_dir_fd=parent)
        os.fsync(parent)
        return
    if exchange(parent, build, name):
        os.fsync(parent)
        _remove_old(parent, build)  # now the old folder
        return
    # two renames; a kill between them is finished by clean_leftovers at the next run
    new, old = temp_name("new", name), temp_name("old", name)
    os.rename(build, new, src_dir_fd=parent, dst_dir_fd=parent)
    os.fsync(parent)
    os.rename(name, old, src_dir_fd=parent, dst_dir_fd=parent)
    os.rename(new, name, src_dir_fd=parent, dst_dir_fd=parent)
    os.fsync(parent)
    _remove_old(parent, old)


def _remove_old(parent: int, name: str) -> None:
    """Remove the old folder once the new one stands: the work is done, so a part that cannot
    be removed (an immutable file in it) is left for `clean_leftovers`, not reported as a
    failure of a write that succeeded."""
    try:
        shutil.rmtree(name, dir_fd=parent)
    except OSError:
        pass


__all__ = [
    "LEGACY",
    "STALE_SECONDS",
    "TEMP_PREFIX",
    "OutError",
    "atomic_write",
    "clean_leftovers",
    "exchange",
    "is_temp",
    "prepare_folder",
    "prepare_out",
    "probe",
    "replace_folder",
    "temp_name",
    "write_out",
]
