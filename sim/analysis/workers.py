"""Worker processes for `sim check` and `sim sweep`: capped, tied to their parent, started up
front so that a failure to start them is a one-line error and never a hang.

- `MAX_WORKERS` is 4 times the CPU count: more processes than that only cost memory.
- `pool(workers)` is a `ProcessPoolExecutor` whose processes are all started before it is
  handed out; each one asks the kernel to SIGKILL it when its parent dies
  (`prctl(PR_SET_PDEATHSIG)`, Linux), so a killed `sim` leaves no worker behind. A process
  that cannot be started (`fork` failing under a process limit, out of memory) or a worker
  that dies during the work is a `WorkerError`; the workers already started are killed.
"""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any

from sim.base.errors import SimError
from sim.base.limits import CPUS, MAX_WORKERS
_PR_SET_PDEATHSIG = 1


class WorkerError(SimError):
    """Worker processes that could not be started or died (one line, exit 2)."""


def die_with_parent(parent: int) -> None:
    """A worker's initializer: be killed when the parent dies (and exit at once if it already has)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    if os.getppid() != parent:
        os._exit(1)


def _ready() -> int:
    return os.getpid()


def _kill(executor: ProcessPoolExecutor) -> None:
    processes: dict[int, Any] = getattr(executor, "_processes", None) or {}
    for process in list(processes.values()):
        try:
            process.kill()
        except (OSError, ValueError, AttributeError):
            pass
    executor.shutdown(wait=False, cancel_futures=True)


@contextmanager
def pool(workers: int, option: str = "--workers") -> Iterator[ProcessPoolExecutor]:
    """A process pool of `workers` processes, all started and tied to this process."""
    if not 1 <= workers <= MAX_WORKERS:
        raise WorkerError(f"{option} {workers}: must be between 1 and {MAX_WORKERS} (4 x {CPUS} CPUs)")
    executor = ProcessPoolExecutor(max_workers=workers, initializer=die_with_parent, initargs=(os.getpid(),))
    try:
        started = [executor.submit(_ready) for _ in range(workers)]
        for future in started:
            future.result()
    except (OSError, BrokenProcessPool) as exc:
        _kill(executor)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        raise WorkerError(f"{option} {workers}: cannot start the worker processes ({reason})") from None
    except BaseException:
        _kill(executor)
        raise
    try:
        yield executor
    except BrokenProcessPool as exc:
        _kill(executor)
        raise WorkerError(f"{option} {workers}: a worker process died ({exc})") from None
    except BaseException:
        _kill(executor)
        raise
    executor.shutdown(wait=True)


__all__ = ["CPUS", "MAX_WORKERS", "WorkerError", "die_with_parent", "pool"]
