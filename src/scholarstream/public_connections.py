"""Connections that third-party code opens on a user's behalf, held to the public-address
rule at the moment they are made.

Checking the host a URL names is not enough when a library builds the server's name from
other parts (apprise's ``zulip://bot@org.example/...`` posts to ``https://org.example``),
follows redirects, or resolves the name again after we looked it up (DNS rebinding). So the
check happens where every such connection passes: Python's ``socket.connect``,
``socket.sendto`` and ``socket.sendmsg``, seen through an audit hook (``sys.addaudithook``)
with the numeric address the socket is about to reach. Inside ``only_public_connections()``
a connection to a loopback, private, link-local or otherwise non-public address, to a local
(``AF_UNIX``) socket, or to a name (which the socket would resolve on its own, unchecked) is
refused before any packet leaves; so are writing to this server's system log and starting a
program. HTTP (``requests``, ``httpx``), SMTP (``smtplib``), raw sockets and asyncio all go
through these calls.

The rule follows the ``contextvars`` context: code run in a copy of it (``asyncio`` tasks,
``asyncio.to_thread``, apprise's worker threads) is held to it; other threads and tasks of
the process are not. Limits: a thread started without the context (``threading.Thread``),
and C libraries that open their own sockets (D-Bus), are not seen; through an HTTP proxy
(``HTTPS_PROXY``) the proxy's address is what is checked."""

from __future__ import annotations

import errno
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from scholarstream.public_addresses import ip_of, is_public

__all__ = ["ConnectionGuard", "NonPublicConnectionError", "only_public_connections"]


class NonPublicConnectionError(PermissionError):
    """Raised inside the socket call that was refused. An ``OSError`` on purpose: it goes
    through third-party code (urllib3, smtplib, apprise's plugins), which treats it as the
    connection failing. It never reaches a user: read ``ConnectionGuard.refused``."""


@dataclass
class ConnectionGuard:
    """One guarded run: what it refused, in order, each a sentence fragment safe to show
    ("10.9.9.9 is a non-public address")."""

    refused: list[str] = field(default_factory=list)


_active: ContextVar[ConnectionGuard | None] = ContextVar(
    "scholarstream_connection_guard", default=None
)
_installed = False
_install_lock = threading.Lock()

_INET_FAMILIES = frozenset({socket.AF_INET, socket.AF_INET6})


def _peer(args: tuple[object, ...]) -> str | None:
    """Why the address a socket is about to reach is refused, or None. ``args`` is the
    audit event's: the socket and the address (None for ``sendmsg`` on a connected socket,
    whose peer was checked when it connected)."""
    sock, address = args[0], args[1]
    if address is None:
        return None
    if getattr(sock, "family", None) not in _INET_FAMILIES:
        return "the service uses a local socket on this server"
    host = address[0] if isinstance(address, tuple) and address else None
    if not isinstance(host, str):
        return "the service's address cannot be read"
    ip = ip_of(host)
    if ip is None:
        # The socket resolved the name on its own and shows us only the name.
        return (
            f"the service connects to {host} by name, which cannot be checked (use its IP address)"
        )
    if not is_public(ip):
        return f"{host} is a non-public address"
    return None


def _always(reason: str) -> Callable[[tuple[object, ...]], str]:
    return lambda _args: reason


_SYSLOG = _always("the service writes to this server's own system log")
_PROGRAM = _always("the service runs a program on this server")

# Audit events (https://docs.python.org/3/library/audit_events.html) and their check.
_CHECKS: dict[str, Callable[[tuple[object, ...]], str | None]] = {
    "socket.connect": _peer,
    "socket.sendto": _peer,
    "socket.sendmsg": _peer,
    "syslog.openlog": _SYSLOG,
    "syslog.syslog": _SYSLOG,
    "subprocess.Popen": _PROGRAM,
    "os.system": _PROGRAM,
    "os.exec": _PROGRAM,
    "os.posix_spawn": _PROGRAM,
    "os.spawn": _PROGRAM,
}


def _audit(event: str, args: tuple[object, ...]) -> None:
    # Called for every audit event of the process: return at once for the others.
    check = _CHECKS.get(event)
    if check is None:
        return
    guard = _active.get()
    if guard is None:
        return
    reason = check(args)
    if reason is not None:
        guard.refused.append(reason)
        raise NonPublicConnectionError(errno.EACCES, f"Refused: {reason}.")


def _install() -> None:
    """Adds the audit hook, once per process (a hook cannot be removed; outside a guarded
    context it returns at once)."""
    global _installed
    with _install_lock:
        if not _installed:
            sys.addaudithook(_audit)
            _installed = True


@contextmanager
def only_public_connections(*, enforce: bool = True) -> Iterator[ConnectionGuard]:
    """Holds the code run inside (and in contexts copied from it) to public addresses; see
    the module's docstring. ``enforce=False`` checks nothing (single-user mode, or an
    administrator who allows private hosts) and yields a guard that refuses nothing."""
    guard = ConnectionGuard()
    if not enforce:
        yield guard
        return
    _install()
    token = _active.set(guard)
    try:
        yield guard
    finally:
        _active.reset(token)
