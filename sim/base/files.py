"""The one writer: every file the CLI writes goes through here, so that no run loses a file.

- `atomic_write(path, data)`: the data goes to a temporary file in the target's folder, is
  flushed and fsynced, replaces the target with one `rename` and then the folder is fsynced.
  The target is never opened nor followed: a symlink there is replaced by the file, and
  whatever it pointed to is left alone. `write_out` is the same, with an `OSError` turned
  into a one-line `OutError` naming the option and the file.
- `replace_folder(target, files, keep)`: a *set* of files replaced as a whole. The new set
  is built in a sibling temporary folder, fsynced, and swapped with the old folder in one
  `renameat2(RENAME_EXCHANGE)`; where that is unavailable, two renames, and an interrupted
  swap is finished at the next run (see `clean_leftovers`). A kill at any moment leaves the
  complete old set or the complete new set. The entries of the old folder that `keep` says
  are not part of the set are left as they are: a file or symlink is carried as a hard link
  (the same inode), a folder by one rename (the same inode: nothing in it is read or made
  anew, a process working in it stays in it), and the new folder is given the old one's
  owner, group, mode (its set-group-ID and sticky bits too) and extended attributes, checked
  after. No kept entry is made anew, so none can come out different; the folder itself is
  new (a process working in it is refused before the work). `refuse_uncarried` tries all that
  before the work (one line, exit 2, if this user cannot: another owner, a folder it may not
  move), so the swap fails only if something changes meanwhile. The kept folders are moved
  into the new folder last, right before the swap: a kill between the two leaves the old set
  complete and those folders in the temporary one, which the next run's `clean_leftovers`
  gives back (a temporary folder that holds a folder is never removed).
- `refuse_special(path)`: nothing but a regular file or
  a symlink may be at a path the writer writes; a folder, a FIFO, a device or a socket there
  is refused with one line (exit 2), by the commands before any work and by the writer again
  at the moment it writes. The tool never destroys what it did not create.
- `Head`, `refuse_foreign(path, head)` / `refuse_foreign_in(folder, heads)`: a regular file
  is written over only if sim wrote it. Each writer declares how each file it writes begins
  (bytes, or a pattern matched from the start of its first `HEAD_BYTES`), and a file there
  that does not begin so (the user's own, at a name sim writes) is refused with one line
  (exit 2), by the commands before any work and by the writer again at the moment it writes
  (`write_out(..., head=)`, `atomic_write_many(..., heads=)`, `replace_folder(..., heads=)`).
  A command removes only files whose head says sim wrote them (`written_by_sim`).
- `prepare_out(out)` / `prepare_folder(out)`: the `--out` checks made before any work (the
  folder exists or can be created, is a folder, can be written: a probe file with the
  temporary prefix, removed at once; for a folder replaced as a whole, no process has it as
  its current folder), and the leftovers of killed runs cleaned.

Every temporary name starts with `TEMP_PREFIX` and carries the writer's pid:
`.sim-tmp-<pid>-<random>-<kind>[-<name>]`. `clean_leftovers(folder)` removes those whose pid
is no longer alive (or that are older than `STALE_SECONDS`, the pid having been reused), and
nothing else: a name without that prefix and a pid is never removed, whatever it looks like
(`tempfile.mkdtemp(prefix=".data.", suffix=".tmp")` makes names like the ones an older
writer used, `LEGACY`, so those are left alone too).
"""

from __future__ import annotations

import errno
import functools
import os
import re
import shutil
import signal
import stat
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from sim.base.errors import SimError

TEMP_PREFIX = ".sim-tmp-"
#: past Linux's largest process id (4,194,304): no process has it, and `os.kill` cannot take it
PID_LIMIT = 1 << 22
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
    return f"{TEMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}-{kind}{tail}"


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


def atomic_write(path: Path, data: str | bytes, head: Head | None = None) -> None:
    """Replace `path` with `data` (text is UTF-8) atomically: a reader sees the old file or
    the new one, whole, and a kill leaves one of them. A symlink at `path` is replaced
    itself, never followed. With `head`, a regular file there is replaced only if it starts
    with it (`refuse_foreign`). Raises `OSError`; the temporary file is gone either way."""
    atomic_write_many(path.parent, {path.name: data}, None if head is None else {path.name: head})


def atomic_write_many(folder_path: Path, files: Mapping[str, str | bytes],
                      heads: Mapping[str, Head] | None = None) -> None:  # fmt: skip
    """Replace several files of one folder: every new file is written and fsynced under a
    temporary name first, then all are renamed over their targets in a row, then the folder
    is fsynced. Each file is whole, old or new, at any moment; a kill can leave a mix only
    during the renames themselves (microseconds), not while files are written. A file named
    in `heads` replaces only a file sim wrote (checked before and again at each rename)."""
    heads = heads or {}
    with _folder(folder_path) as folder:
        for name in files:
            _refuse_at(folder, name, heads.get(name), folder_path)
        staged: list[tuple[str, str]] = []
        try:
            for name, data in files.items():
                tmp = temp_name("file", name)
                staged.append((tmp, name))  # before it exists: a failed create is cleaned too
                _create(folder, tmp, _bytes(data))
            for tmp, name in staged:
                _refuse_at(folder, name, heads.get(name), folder_path)  # nothing came meanwhile
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
        raise OutError(f"{option} {path}: {_SPECIAL.format(kind_of(info.st_mode))}")


def _refuse_at(folder: int, name: str, head: Head | None, where: Path) -> None:
    """At the moment of writing: `name` in the open folder must be absent, a symlink, or a
    regular file (one sim wrote, with `head`). An `OSError` otherwise: each writer's caller
    names its option and the file."""
    why = _why_not(folder, name, head)
    if why is not None:
        raise OSError(why[0], why[1], str(where / name))


def write_out(path: Path, data: str | bytes, option: str = "--out", head: Head | None = None) -> Path:
    """`atomic_write`, with a failure reported as one line naming `option` and the file."""
    try:
        atomic_write(path, data, head)
    except OSError as exc:
        raise OutError(f"{option} {path.parent}: cannot write {path.name} ({_reason(exc)})") from None
    return path


# -- what sim wrote --------------------------------------------------------------------------------
#: How a command knows a file it wrote, so that it replaces no other (`refuse_foreign`): the
#: bytes such a file starts with, or a pattern its first `HEAD_BYTES` bytes match from their
#: start. Each writer declares the head of each file it writes, beside the code that writes it.
Head = bytes | re.Pattern[bytes]
#: how many of a file's first bytes a head is matched against
HEAD_BYTES = 4096
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def has_head(data: bytes, head: Head) -> bool:
    """Whether a file's first bytes, `data`, are those of `head`."""
    return data.startswith(head) if isinstance(head, bytes) else head.match(data) is not None


def _start(folder: int | None, name: str | Path) -> bytes | None:
    """The first `HEAD_BYTES` bytes of the regular file `name` (never followed if a symlink),
    or None when it is not one. Raises `OSError` when it cannot be read."""
    fd = os.open(name, _READ_FLAGS, dir_fd=folder)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None  # before reading: a folder opens too, and reading it fails
        chunks: list[bytes] = []
        size = HEAD_BYTES
        while size > 0 and (chunk := os.read(fd, size)):
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def written_by_sim(path: Path, head: Head) -> bool:
    """Whether `path` is a regular file (never followed if a symlink) that starts with `head`:
    a file sim wrote, which it may replace or remove."""
    try:
        data = _start(None, path)
    except OSError:
        return False
    return data is not None and has_head(data, head)


_SPECIAL = "{} is there; sim writes only over a regular file (or a symlink, which it replaces), so it leaves it alone"
_FOREIGN = ("a file sim did not write is there; sim replaces only the files it wrote, so it leaves it alone: move it, "
            "or choose another name or folder")  # fmt: skip


def _why_not(folder: int | None, name: str | Path, head: Head | None) -> tuple[int, str] | None:
    """Why the writer may not put a file at `name` (an errno and the words), or None: nothing
    is there, a symlink (replaced itself, never followed), a regular file (with `head`: one
    that starts with it). A folder, FIFO, device or socket never; it is not opened."""
    try:
        mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None
    if not replaceable(mode):
        return errno.EISDIR if stat.S_ISDIR(mode) else errno.EPERM, _SPECIAL.format(kind_of(mode))
    if head is None or stat.S_ISLNK(mode):
        return None
    try:
        data = _start(folder, name)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return errno.EEXIST, (f"a file sim cannot read is there ({_reason(exc)}), so it cannot tell that it wrote "
                              "it, and leaves it alone")  # fmt: skip
    if data is None or not has_head(data, head):
        return errno.EEXIST, _FOREIGN
    return None


def refuse_foreign(path: Path, head: Head, option: str = "--out") -> None:
    """Raise a one-line `OutError` unless `path` may be written over by a writer whose file
    starts with `head`: nothing there, a symlink, or a regular file that starts with `head`
    (one sim wrote). A regular file of the user's, a folder, a FIFO, a device or a socket is
    left alone. Never opens what is not a regular file (a FIFO is not waited on)."""
    try:
        why = _why_not(None, path, head)
    except OSError as exc:
        raise OutError(f"{option} {path}: cannot use it ({_reason(exc)})") from None
    if why is not None:
        raise OutError(f"{option} {path}: {why[1]}")


def refuse_foreign_in(folder: Path, heads: Callable[[str], Head | None], option: str = "--out") -> None:
    """`refuse_foreign` for every entry of `folder` to which `heads` gives a head: the files a
    command may write there, checked before its work starts."""
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return
    for name in entries:
        head = heads(name)
        if head is not None:
            refuse_foreign(folder / name, head, option)


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
    current directory, nor any other process's (which would be left in a removed folder). A
    symlink to a folder is followed (the folder it names is replaced). Returns the absolute
    path of the folder that will be replaced. What carrying the kept entries needs is tried by
    `refuse_uncarried`, once the command has checked the names it writes."""
    prepare_out(out, option)
    target = Path(os.path.realpath(out))
    cwd = Path(os.path.realpath(os.getcwd()))
    if os.path.ismount(target):
        raise OutError(f"{option} {out}: a mount point; it is replaced as a whole, so name a folder inside it")
    if cwd == target or target in cwd.parents:
        raise OutError(f"{option} {out}: holds the current folder; it is replaced as a whole, so name another")
    probe(target.parent, option)
    clean_leftovers(target.parent)
    _refuse_a_process_in(target, option)
    return target


def _refuse_a_process_in(target: Path, option: str) -> None:
    """Another process whose current folder is `target` would be left in the removed old
    folder: refused (best effort: the processes whose /proc entry this user may read)."""
    try:
        pids = [entry for entry in os.listdir("/proc") if entry.isdigit() and int(entry) != os.getpid()]
    except OSError:
        return
    for pid in pids:
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if cwd == str(target):
            raise OutError(f"{option} {target}: process {pid} has it as its current folder; the folder is replaced "
                           "as a whole, which would leave that process in a removed folder, so sim stops before "
                           "the work: name another folder, or let that process leave it first")  # fmt: skip


def refuse_uncarried(target: Path, keep: Keep, replaced: Collection[str] = (), option: str = "--out") -> None:
    """Try, before the work, what `replace_folder(target, files, keep)` will do to the entries
    it keeps (`replaced`: every name `files` may hold, which are not kept) and to the new
    folder, in a probe folder beside `target` (removed at once): each kept
    file or symlink is hard-linked into it (and unlinked), each kept folder is checked movable
    (the same mount, not a mount point, writable by this user, the sticky bit's rule), and the
    probe folder is given the old one's owner, group, mode and extended attributes
    (`_give_attributes`). What fails is one line naming it (`OutError`)."""
    if not target.is_dir():
        return  # nothing to carry, nothing to match
    try:
        with _folder(target.parent) as parent, _folder_at(parent, target.name) as old:
            trial = temp_name("probe", target.name)
            os.mkdir(trial, 0o700, dir_fd=parent)
            try:
                with _folder_at(parent, trial) as fd:
                    mounts = _mount_points()
                    for entry in _kept(old, replaced, keep, target):
                        _try_carry(old, fd, target / entry, mounts, option)
                    _try_attributes(fd, old, target, option)
            finally:
                _remove_tree(parent, trial)
    except OSError as exc:
        raise OutError(f"{option} {target}: cannot try what replacing the folder needs ({_reason(exc)})") from None


def _try_attributes(trial: int, old: int, target: Path, option: str) -> None:
    """`refuse_uncarried` for the folder itself: the probe folder given the old one's owner,
    group, mode and extended attributes, as the new folder will be."""
    try:
        _give_attributes(trial, old)
    except OSError as exc:
        raise OutError(f"{option} {target}: the new folder cannot be given this one's owner, group, mode and "
                       f"extended attributes ({_reason(exc)}); sim replaces the folder as a whole, so it stops "
                       "before the work: name a folder of your own") from None  # fmt: skip


def _try_carry(old: int, trial: int, path: Path, mounts: set[Path], option: str) -> None:
    """`refuse_uncarried` for one kept entry: a file or symlink is hard-linked into the open
    probe folder and unlinked; a folder is checked movable, as `_move_folders` will move it."""
    entry = path.name
    try:
        info = os.stat(entry, dir_fd=old, follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode):
            os.link(entry, entry, src_dir_fd=old, dst_dir_fd=trial, follow_symlinks=False)
            os.unlink(entry, dir_fd=trial)
            return
        here = os.fstat(old)
        if info.st_dev != here.st_dev or path in mounts:
            raise OSError(errno.EXDEV, "a mount point, which cannot be moved")
        if not os.access(entry, os.W_OK, dir_fd=old, effective_ids=True, follow_symlinks=False):
            raise OSError(errno.EACCES, "moving a folder needs write permission on it, which this user has not")
        if here.st_mode & stat.S_ISVTX and os.geteuid() not in (0, info.st_uid, here.st_uid):
            raise OSError(errno.EPERM, "the folder holding it has the sticky bit, and neither is this user's")
    except FileNotFoundError:
        return  # gone meanwhile: nothing to carry
    except OSError as exc:
        raise OutError(f"{option} {path.parent}: {entry} cannot be carried into the new folder ({_reason(exc)}); sim "
                       "replaces the folder as a whole, keeping what is not its own, so it stops before the work: "
                       f"move {entry} elsewhere, or name another folder") from None  # fmt: skip


def _mount_points() -> set[Path]:
    """The mount points of this process's namespace (none when /proc cannot say)."""
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="surrogateescape").splitlines()
    except OSError:
        return set()
    unescape = re.compile(r"\\([0-7]{3})")
    fields = [line.split() for line in lines]
    return {Path(unescape.sub(lambda m: chr(int(m.group(1), 8)), f[4])) for f in fields if len(f) > 4}


# -- leftovers --------------------------------------------------------------------------------------
def pid_alive(pid: int) -> bool:
    """Whether a process with this pid is alive (this process is; someone else's counts)."""
    if pid == os.getpid():
        return True
    if not 0 < pid < PID_LIMIT:  # no process has it
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _exists(folder: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _is_folder(folder: int, name: str) -> bool:
    """Whether `name` in the open folder is a folder (a symlink to one is not)."""
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return False


def clean_leftovers(folder: Path, now: float | None = None) -> list[str]:
    """Remove the temporary entries a killed run left in `folder` and finish an interrupted
    two-rename swap (a complete new set whose target is missing is renamed into place).
    Entries of a live process are left alone unless older than `STALE_SECONDS`. A temporary
    folder that holds a folder (one carried out of its target, `replace_folder`) first gives it
    back to its target, and is never removed while it holds one. Returns the names removed or
    renamed. Best effort: an entry that cannot be removed stays."""
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
    info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    if pid_alive(int(match.group(1))) and now - info.st_mtime < STALE_SECONDS:
        return False
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(name, dir_fd=folder)
        return True
    kind, target = match.group(2), match.group(3) or ""
    if kind in ("build", "new", "old"):
        if len(target) >= _NAME_KEPT:
            return False  # a cut name: which folder it belongs to is not known for sure
        if kind != "build" and not _exists(folder, target):
            # killed between the two renames of a swap: put the complete new set in place
            # (or, without one, the old set back)
            os.rename(name, target, src_dir_fd=folder, dst_dir_fd=folder)
            return True
        _give_back(folder, name, target)
    return _remove_tree(folder, name)


def _remove_tree(folder: int, name: str) -> bool:
    """Remove the temporary folder `name` unless it holds a folder: sim's sets are files, so a
    folder in one is the user's, carried out of its target, and stays where it is until it
    can go back (`_give_back`). True when removed."""
    try:
        with _folder_at(folder, name) as fd:
            if any(_is_folder(fd, entry) for entry in os.listdir(fd)):
                return False
        shutil.rmtree(name, dir_fd=folder)  # never follows a symlink inside
    except OSError:
        return False
    return True


def _give_back(parent: int, half: str, target: str) -> None:
    """Move each folder in the temporary folder `half` back into the folder `target` of the
    open `parent`, where that name is free: a build that failed, a swap that was killed, an old
    folder that a folder reached while the set was swapped."""
    with _folder_at(parent, half) as src:
        folders = [entry for entry in sorted(os.listdir(src)) if _is_folder(src, entry)]
        if not folders or not _is_folder(parent, target):
            return
        with _folder_at(parent, target) as dst:
            for entry in folders:
                if not _exists(dst, entry):
                    os.rename(entry, entry, src_dir_fd=src, dst_dir_fd=dst)
            os.fsync(dst)


# -- a set of files, replaced as a whole ---------------------------------------------------------------
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """The C library's `renameat2`, loaded when first needed (`ctypes` costs a few
    milliseconds of every command's start); None where there is none."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - no C library to load
        return None
    return getattr(libc, "renameat2", None)


def exchange(folder: int, a: str, b: str) -> bool:
    """Swap the entries `a` and `b` of the open folder in one step (Linux
    `renameat2(RENAME_EXCHANGE)`). False when the system or file system cannot."""
    call = _renameat2()
    if call is None:
        return False
    result = call(folder, os.fsencode(a), folder, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    import ctypes

    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), b)


def _kept(old: int, files: Collection[str], keep: Keep, target: Path) -> list[str]:
    """The entries of the open old folder carried into the new one: not a name of the new
    set, not a temporary name, and `keep` says so."""
    return [e for e in sorted(os.listdir(old)) if e not in files and not is_temp(e) and keep(target / e)]


def _link_files(old: int, new: int, names: list[str]) -> list[str]:
    """Hard-link each kept entry that is not a folder (a file, a symlink itself) into `new`:
    the same inode, so its contents, mode and owner stay as they were. Returns the kept
    folders, which are moved whole instead (`_move_folders`)."""
    folders = []
    for name in names:
        if _is_folder(old, name):
            folders.append(name)
            continue
        try:
            os.link(name, name, src_dir_fd=old, dst_dir_fd=new, follow_symlinks=False)
        except FileNotFoundError:
            continue  # gone meanwhile
    return folders


def _move_folders(old: int, new: int, folders: list[str]) -> None:
    """Move each kept folder into the new one with one rename: its inode, mode, owner and
    contents stay as they are (nothing inside it is read), and a process working in it stays
    in it. The last step before the swap: a kill between the two leaves the old set complete
    in place and these folders in the build, which `clean_leftovers` gives back."""
    for name in folders:
        try:
            os.rename(name, name, src_dir_fd=old, dst_dir_fd=new)
        except FileNotFoundError:
            continue  # gone meanwhile


def _xattrs(fd: int) -> dict[str, bytes]:
    """The extended attributes of the open file (an ACL is one), by name."""
    try:
        names = os.listxattr(fd)
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            return {}
        raise
    out = {}
    for name in names:
        try:
            out[name] = os.getxattr(fd, name)
        except OSError as exc:
            if exc.errno != errno.ENODATA:
                raise
    return out


def _give_attributes(folder: int, like: int) -> None:
    """Make the open folder `folder` the twin of the open folder `like` in all but its contents:
    owner and group, extended attributes (ACLs among them), mode with its set-group-ID and
    sticky bits. Raises `OSError` when the result differs (this user may not give that owner
    or group, or the kernel dropped a bit)."""
    want, have = os.fstat(like), os.fstat(folder)
    uid = want.st_uid if want.st_uid != have.st_uid else -1
    gid = want.st_gid if want.st_gid != have.st_gid else -1
    if uid != -1 or gid != -1:
        os.fchown(folder, uid, gid)
    wanted, had = _xattrs(like), _xattrs(folder)
    for name in sorted(had.keys() - wanted.keys()):
        os.removexattr(folder, name)
    for name, value in wanted.items():
        if had.get(name) != value:
            os.setxattr(folder, name, value)
    os.fchmod(folder, stat.S_IMODE(want.st_mode))
    got = os.fstat(folder)
    if (got.st_uid, got.st_gid) != (want.st_uid, want.st_gid):
        raise OSError(errno.EPERM, f"owner {got.st_uid}:{got.st_gid} instead of {want.st_uid}:{want.st_gid}")
    if stat.S_IMODE(got.st_mode) != stat.S_IMODE(want.st_mode):
        raise OSError(errno.EPERM, f"mode {stat.S_IMODE(got.st_mode):o} instead of {stat.S_IMODE(want.st_mode):o}")
    if _xattrs(folder) != wanted:
        raise OSError(errno.EPERM, "other extended attributes")


#: `keep(path)`: whether an entry of the old folder is carried into the new one
Keep = Callable[[Path], bool]


def replace_folder(target: Path, files: Mapping[str, str | bytes], keep: Keep | None = None,
                   option: str = "--out", heads: Mapping[str, Head] | None = None) -> None:  # fmt: skip
    """Replace the folder `target` (absolute, from `prepare_folder`) with one holding `files`
    (name -> content) and the entries of the old folder for which `keep(path)` is true (not
    the names in `files`, not temporary ones), as a whole: a kill at any moment leaves the
    old set or the new one, each complete. A kept file or symlink is carried as a hard link, a
    kept folder by one rename (`_move_folders`); the new folder gets the old one's owner,
    group, mode and extended attributes (`_give_attributes`), so all that is kept is as it was.
    A file of the old folder at a name of `files` that `heads` gives a head to must start with
    it (sim wrote it). Raises `OutError` (one line)."""
    try:
        _replace_folder(target, files, keep, heads or {})
    except OSError as exc:
        raise OutError(f"{option} {target}: cannot replace the folder ({_reason(exc)})") from None


def _replace_folder(target: Path, files: Mapping[str, str | bytes], keep: Keep | None,
                    heads: Mapping[str, Head]) -> None:  # fmt: skip
    name = target.name
    with _folder(target.parent) as parent:
        build = temp_name("build", name)
        os.mkdir(build, 0o700, dir_fd=parent)
        try:
            _fill(parent, build, target, files, keep, heads)
            _swap(parent, build, name)
        except BaseException:
            _abandon(parent, build, name)
            raise


def _fill(parent: int, build: str, target: Path, files: Mapping[str, str | bytes], keep: Keep | None,
          heads: Mapping[str, Head]) -> None:  # fmt: skip
    """The new set in the open folder `build`, with what the old folder keeps; the kept folders
    moved in last, right before the swap."""
    with _folder_at(parent, build) as new:
        if not _exists(parent, target.name):
            for file, data in files.items():
                _create(new, file, _bytes(data))
            os.fchmod(new, 0o755)
            os.fsync(new)
            return
        with _folder_at(parent, target.name) as old:
            for file in files:  # nothing special nor the user's where a new file goes: it would be lost
                _refuse_at(old, file, heads.get(file), target)
            for file, data in files.items():
                _create(new, file, _bytes(data))
            folders = _link_files(old, new, _kept(old, files, keep, target)) if keep is not None else []
            _give_attributes(new, old)
            _move_folders(old, new, folders)
            os.fsync(new)


def _abandon(parent: int, build: str, name: str) -> None:
    """A build that failed goes, after the folders moved into it went back; one that cannot go
    back keeps the build in place (for `clean_leftovers`): it is never removed with it."""
    try:
        if _exists(parent, build):
            _give_back(parent, build, name)
            _remove_tree(parent, build)
    except OSError:
        pass


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
        _remove_old(parent, build, name)  # now the old folder
        return
    # two renames; a kill between them is finished by clean_leftovers at the next run, a
    # failure is undone here (the old folder back in place, the build back under its name
    # for the caller to take apart)
    new, old = temp_name("new", name), temp_name("old", name)
    os.rename(build, new, src_dir_fd=parent, dst_dir_fd=parent)
    os.fsync(parent)
    try:
        os.rename(name, old, src_dir_fd=parent, dst_dir_fd=parent)
        try:
            os.rename(new, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            os.rename(old, name, src_dir_fd=parent, dst_dir_fd=parent)
            raise
    except BaseException:
        os.rename(new, build, src_dir_fd=parent, dst_dir_fd=parent)
        raise
    os.fsync(parent)
    _remove_old(parent, old, name)


def _remove_old(parent: int, old: str, name: str) -> None:
    """Remove the old folder once the new one stands (a folder that reached it while the set
    was swapped goes to the new one first). The work is done, so a part that cannot be removed
    (an immutable file in it) is left for `clean_leftovers`, not reported as a failure of a
    write that succeeded."""
    try:
        _give_back(parent, old, name)
    except OSError:
        pass
    _remove_tree(parent, old)


__all__ = [
    "HEAD_BYTES",
    "LEGACY",
    "STALE_SECONDS",
    "TEMP_PREFIX",
    "Head",
    "OutError",
    "atomic_write",
    "clean_leftovers",
    "exchange",
    "has_head",
    "is_temp",
    "prepare_folder",
    "prepare_out",
    "probe",
    "refuse_foreign",
    "refuse_foreign_in",
    "refuse_uncarried",
    "replace_folder",
    "temp_name",
    "write_out",
    "written_by_sim",
]
