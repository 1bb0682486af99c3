"""Reading an input file (a scenario or a workflow file): a regular file of at most
MAX_FILE_BYTES (docs/limits.md), strict UTF-8; anything else one line naming the file. Apart
from the writer (files.py), so that `sim scenarios` does not import what writing needs."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from sim.base.errors import ScenarioError
from sim.base.limits import MAX_FILE_BYTES


def read_text(path: Path, shown: str, what: str = "scenario file") -> str:
    """An input file's text (a scenario or workflow file, `what`): a regular file of at most
    MAX_FILE_BYTES, strict UTF-8; anything else is a ScenarioError naming `shown`."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ScenarioError(f"{shown}: {_os_reason(exc, what)}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ScenarioError(f"{shown}: is a folder, not a {what}")
    if not stat.S_ISREG(info.st_mode):
        raise ScenarioError(f"{shown}: not a regular file (a FIFO, device or socket); give a .toml file")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ScenarioError(f"{shown}: cannot be read: {_os_reason(exc, what)}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ScenarioError(f"{shown}: larger than {MAX_FILE_BYTES:,} bytes; a {what} is a few lines of TOML")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{shown}: not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x}); a {what} is UTF-8 TOML") from None


def _os_reason(exc: OSError, what: str = "scenario file") -> str:
    reasons = {
        errno.ENOENT: f"no such {what}",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.ENAMETOOLONG: "file name too long",
        errno.ELOOP: "a loop of symbolic links",
        errno.ENOTDIR: "a part of the path is not a folder",
        errno.EISDIR: f"is a folder, not a {what}",
    }
    return reasons.get(exc.errno or 0, exc.strerror or type(exc).__name__)
