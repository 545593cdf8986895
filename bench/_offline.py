"""No network for a benchmark, as in the tests: connections to anything but loopback
(SQLite files, the local PostgreSQL, the app under test) are refused and recorded, and
pydantic-ai refuses real model requests."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

blocked: list[str] = []
"""The connections refused so far (repr of their addresses)."""
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_local(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if not _is_local(address):
        blocked.append(repr(address))
        raise RuntimeError(f"the benchmark must not reach the network (tried {address!r})")
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if not _is_local(address):
        blocked.append(repr(address))
        raise RuntimeError(f"the benchmark must not reach the network (tried {address!r})")
    return _real_connect_ex(self, address)


def forbid_network() -> None:
    """As the tests do: loopback only (SQLite, the local PostgreSQL), no real model requests."""
    import pydantic_ai.models

    socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign,assignment]
    pydantic_ai.models.ALLOW_MODEL_REQUESTS = False
