"""Loopback ports for the engine servers `sim conform` starts (sim/conform/server_temporal.py,
sim/conform/server_restate.py): a free one to bind, and whether one answers."""

from __future__ import annotations

import random
import socket
from pathlib import Path

#: the only interface the servers and the harness listen on
LOOPBACK = "127.0.0.1"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing uses now, for a server that binds it a moment later.

    It is picked at random below the kernel's ephemeral range (`ip_local_port_range`), where
    no outgoing connection takes its port in the meantime (the harness makes many), and
    checked by binding it; where that range is unknown, the OS picks one."""
    low = ephemeral_low()
    for _ in range(200):
        port = random.randrange(FIRST_PORT, low) if low > FIRST_PORT + 1000 else 0
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((LOOPBACK, port))
            except OSError:
                continue
            chosen: int = sock.getsockname()[1]
            return chosen
    raise OSError("no free loopback port")


#: the lowest port `free_port` picks (above the ports services commonly use)
FIRST_PORT = 20000


def ephemeral_low() -> int:
    """The lowest port of the kernel's ephemeral range (0 where it cannot be read)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def accepts(port: int) -> bool:
    """Something accepts a TCP connection on the loopback interface's `port` now."""
    try:
        with socket.create_connection((LOOPBACK, port), timeout=1):
            return True
    except OSError:
        return False
