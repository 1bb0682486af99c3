"""Reading an input file (a scenario or a workflow file): a regular file of at most
MAX_FILE_BYTES (docs/limits.md), strict UTF-8; anything else one line naming the file. And
telling a path from a shipped name (`is_path`), the same for both kinds of file. Apart
from the writer (files.py), so that `sim scenarios` does not import what writing needs."""

from __future__ import annotations

import errno
import re
import os
import stat
from pathlib import Path

from sim.base.errors import ScenarioError
from sim.base.limits import MAX_FILE_BYTES


def is_path(argument: str) -> bool:
    """Whether a scenario or workflow argument is a path by its spelling: it has a `/` or ends
    in `.toml`. Any other argument is a name when one is shipped, else a path when a file is
    there (docs/trace.md): a file or folder of a shipped name's name in the current folder
    never hides the shipped one (`./main` reads the file)."""
    return argument.endswith(".toml") or "/" in argument


def exists(path: Path) -> bool:
    """Whether something is at `path` (False when it cannot be looked at)."""
    try:
        return path.exists()
    except OSError:
        return False


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


# -- a dotted key, measured before the TOML parser sees it --------------------------------
#: the text's tokens: strings (multi-line first), comments, and runs of anything else
_TOKENS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[^"\'#]+|["\']')
#: what ends a dotted key: anything but a bare key's characters, a dot or blanks (a newline too)
_BREAK = re.compile(r"[^A-Za-z0-9_\-. \t]")


def longest_dotted_key(text: str) -> int:
    """The most dots in one dotted key (`a.b."c".d` has 3), in one linear pass. Python's TOML
    parser takes time and memory that grow with the square of a dotted key's length (80 KB of
    `a.a.a...` took 28 s and 6 GB), before any limit on nesting could be checked on what it
    returns; a dotted key longer than the nesting allowed is refused from this count instead.
    A string keeps the key it is part of going; a float's one dot counts too, harmlessly."""
    most = run = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token[0] in "\"'" and len(token) > 1:
            continue  # a quoted key part (or a value: then a break follows)
        if token[0] == "#":
            run = 0
            continue
        pieces = _BREAK.split(token)
        run += pieces[0].count(".")
        most = max(most, run)
        for piece in pieces[1:]:
            run = piece.count(".")
            most = max(most, run)
    return most
