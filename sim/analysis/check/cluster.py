"""`sim check --scheduler`: the check's units of work on a Dask cluster (`dask.distributed`,
an optional dependency: `pip install -e '.[dask]'`).

`--scheduler HOST:PORT` (or `tcp://HOST:PORT`) connects to a running scheduler;
`--scheduler local:N` starts a `LocalCluster` of N single-threaded worker processes on the
loopback interface, on free ports, with no dashboard, and stops it afterwards. Either way the
units go to the cluster through the client's `concurrent.futures` executor, so `sim.analysis.check.check`
runs them exactly as it runs them on a local process pool. A unit is a pure function of its
input: when a worker dies, the scheduler runs its lost units again elsewhere, and the
merged result is the same.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from typing import Any

from sim.base.errors import SimError
from sim.base.limits import MAX_WORKERS, ascii_number

#: how long to wait for a remote scheduler to answer, in seconds
CONNECT_TIMEOUT = 10


class ClusterError(SimError):
    """A scheduler that cannot be used (one line, exit 2)."""


#: a host name's label (RFC 1123): letters, digits and hyphens, not at either end
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
#: the longest host name
MAX_HOST = 253


def parse_address(value: str) -> tuple[str, int | None]:
    """("local", N) for `local:N`, else (the address as Dask takes it, None). The address is
    HOST:PORT or tcp://HOST:PORT: HOST an IPv4 address, an IPv6 address in brackets or a
    host name, PORT 1-65535; anything else is a one-line `ClusterError` before any work."""
    local = re.fullmatch(r"local:([0-9]+)", value)
    if local:
        workers = ascii_number(local.group(1), 6)
        if workers is None or not 1 <= workers <= MAX_WORKERS:
            raise ClusterError(f"--scheduler {value[:80]}: the worker count must be between 1 and {MAX_WORKERS}")
        return "local", workers
    expected = "expected HOST:PORT, tcp://HOST:PORT ([IPv6]:PORT for an IPv6 address) or local:N"
    rest = value.removeprefix("tcp://")
    host, sep, port = rest.rpartition(":")
    if not sep or not (port.isascii() and port.isdigit()) or not host:  # not "²", which int() does not read
        raise ClusterError(f"--scheduler {value[:80]!r}: {expected}")
    if len(port) > 5 or not 1 <= int(port) <= 65535:
        raise ClusterError(f"--scheduler {value[:80]!r}: the port must be between 1 and 65535")
    if not _valid_host(host):
        raise ClusterError(f"--scheduler {value[:80]!r}: {host[:60]!r} is not an IP address or a host name; {expected}")
    return f"tcp://{rest}", None


def _valid_host(host: str) -> bool:
    """An IPv4 address, an IPv6 address in brackets, or a host name (RFC 1123)."""
    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return False
        return True
    if re.fullmatch(r"[\d.]+", host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return False
        return True
    labels = host.removesuffix(".").split(".")
    return len(host) <= MAX_HOST and all(_LABEL.fullmatch(label) for label in labels)


@contextmanager
def dask_executor(value: str) -> Iterator[tuple[Executor, int]]:
    """An executor on the cluster `--scheduler value` names, and how many units it runs at once."""
    address, local_workers = parse_address(value)
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise ClusterError("--scheduler needs dask.distributed: pip install -e '.[dask]'") from None
    cluster: Any = None
    client: Any = None
    try:
        # no dashboard, no spilling to disk, quiet logs: a check's units are small and pure
        with dask.config.set({"distributed.worker.memory.spill": False, "logging.distributed": "error"}):
            if local_workers is not None:
                cluster = LocalCluster(  # type: ignore[no-untyped-call]
                    n_workers=local_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                    scheduler_port=0, dashboard_address=None, worker_dashboard_address=None,
                )  # fmt: skip
                client = Client(cluster)  # type: ignore[no-untyped-call]
            else:
                client = Client(address, timeout=CONNECT_TIMEOUT)  # type: ignore[no-untyped-call]
        threads = sum(client.nthreads().values()) or 1
    except OSError as exc:
        close(client, cluster)
        raise ClusterError(f"--scheduler {value}: cannot reach the scheduler ({exc})") from None
    try:
        yield client.get_executor(pure=False), threads
    finally:
        close(client, cluster)


def close(client: Any, cluster: Any) -> None:
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()


__all__ = ["ClusterError", "dask_executor", "parse_address"]
