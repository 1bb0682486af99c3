"""Memory: how much a process (and its workers) hold, and the `--max-memory` bound.

`sim check` keeps a visited set per level of its search; on a large bound it grows until
the machine is full, and the kernel's OOM killer would end it (or something else) without a
word. So the check takes `--max-memory` (default: `DEFAULT_SHARE` of the machine's memory)
and stops itself, as Ctrl-C stops it, before its processes together pass it.

The measure is the resident set (RSS, `/proc/PID/statm`): what the processes really hold, the
figure the OOM killer goes by. Reading it costs a few microseconds, so the search reads it
every `CHECK_EVERY` transitions.
"""

from __future__ import annotations

import gc
import math
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

from sim.base.errors import SimError

#: the default bound, as a share of the machine's memory
DEFAULT_SHARE = 0.5
#: how many transitions of a search between two looks at its memory
CHECK_EVERY = 2048
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_SIZE = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(?:i?B)?", re.IGNORECASE | re.ASCII)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class SizeError(SimError):
    """A --max-memory value that is not a size (one line, exit 2)."""


def machine_memory() -> int:
    """The machine's memory in bytes (MemTotal), or 0 if it cannot be read."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0


def default_limit() -> int:
    """`DEFAULT_SHARE` of the machine's memory (0, no bound, if it cannot be read)."""
    return int(machine_memory() * DEFAULT_SHARE)


def parse_size(text: str, option: str = "--max-memory") -> int:
    """`500M`, `2G`, `1.5G`, `800000K`, `512MiB` or a number of bytes, as bytes; at least 64 MB
    (a search cannot start in less) and at most the machine's memory."""
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise SizeError(f"{option} {text[:60]!r}: expected a size such as 500M or 2G")
    number = float(match.group(1)) * _UNITS[match.group(2).upper()]  # 309 nines or more: inf
    size = int(number) if math.isfinite(number) else -1
    total = machine_memory()
    if size < 64 << 20 or (total and size > total) or size > 1 << 60:
        most = f"{total / 2**30:.1f}G, the machine's memory" if total else "the machine's memory"
        raise SizeError(f"{option} {text[:60]}: allowed from 64M to {most}")
    return size


def rss(pid: int | None = None) -> int:
    """The resident memory of a process (this one by default) in bytes; 0 if it is gone."""
    try:
        with open(f"/proc/{'self' if pid is None else pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def tree_rss(pid: int | None = None) -> int:
    """The resident memory of a process and all its descendants, in bytes."""
    root = os.getpid() if pid is None else pid
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    tree, frontier = {root}, {root}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - tree
        tree |= frontier
    return sum(rss(p) for p in tree)


def megabytes(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"


__all__ = ["CHECK_EVERY", "DEFAULT_SHARE", "SizeError", "default_limit", "machine_memory", "megabytes", "parse_size", "rss",
           "tree_rss"]


@contextmanager
def collector_paused(freeze: bool = False) -> Iterator[None]:
    """No cyclic garbage collection inside: for work that allocates many small objects and keeps
    most of them (the sweep's outcomes and views, the search's visited states), so that a
    collection finds little and scans everything (measured: about 20 % of the sweep's CPU with
    grids; 40 % of `sim check -k 2 -t 10 -p all-on`'s). Neither makes reference cycles on its hot
    path, so memory stays the same (docs/check.md, "Measured performance"). The previous state
    is restored afterwards.

    With `freeze`, what was made inside is frozen at the end (`gc.freeze`), for work whose
    results live until the process ends (`sim sweep`): re-enabled over the young generation
    it built, the collector would scan all of it at the next allocations and find little."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was:
            gc.enable()
