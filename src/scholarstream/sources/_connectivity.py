"""Is this machine offline? One run's view of the network, shared by every remote source
searched in it.

A connection that fails before any answer (the name does not resolve, the network is
unreachable, the connection is refused) is *unreachable*. Within one run (a
``SourceHub.search_each`` fan-out, or any code inside ``connectivity_scope()``) the first
unreachable source, while no source has answered yet, marks the run as probably offline:
that source is not retried, and no other remote source retries either, so an offline
machine costs one attempt per source instead of four. One answer from any source (even an
error status) proves the network is up, and retries go on as usual.

Outside a scope (a single call to ``SourceHttp.get``) nothing changes: every failure is
retried by the ``RetryPolicy``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import httpx

from scholarstream.sources._failures import SourceUnreachableError

__all__ = [
    "OFFLINE_NOTICE",
    "OFFLINE_NO_LIBRARY_NOTICE",
    "Connectivity",
    "SourceUnreachableError",
    "connectivity_scope",
    "current_connectivity",
    "unreachable",
]

OFFLINE_NOTICE = "You appear to be offline: searching your library only."
OFFLINE_NO_LIBRARY_NOTICE = "You appear to be offline: no source could be reached."

# Words of a ConnectError that reached a server and failed in the TLS handshake: the
# network is up, the server's certificate or protocol is the problem.
_NOT_OFFLINE_WORDS = ("ssl", "certificate", "tls", "handshake")


def unreachable(exc: BaseException) -> bool:
    """True for a failure to connect at all: DNS resolution, network unreachable,
    connection refused (httpx raises each as ``ConnectError``); False for timeouts,
    dropped connections and TLS failures, which come from a network that works."""
    if not isinstance(exc, httpx.ConnectError):
        return False
    text = f"{exc} {exc.__cause__ or ''}".lower()
    return not any(word in text for word in _NOT_OFFLINE_WORDS)


class Connectivity:
    """What one run has learnt about the network so far."""

    def __init__(self) -> None:
        self.answered = False
        self.unreachable_sources: list[str] = []

    def record_answer(self) -> None:
        """A source answered (any HTTP status): the network is up."""
        self.answered = True

    def record_unreachable(self, source: str) -> None:
        if source not in self.unreachable_sources:
            self.unreachable_sources.append(source)

    @property
    def probably_offline(self) -> bool:
        """A source was unreachable and none has answered: do not retry."""
        return bool(self.unreachable_sources) and not self.answered


_CURRENT: ContextVar[Connectivity | None] = ContextVar("scholarstream_connectivity", default=None)


def current_connectivity() -> Connectivity | None:
    """The run's connectivity, inside ``connectivity_scope()``; else ``None``."""
    return _CURRENT.get()


@contextmanager
def connectivity_scope() -> Iterator[Connectivity]:
    """One run's shared view of the network; the enclosing run's when already inside one.
    Tasks started inside the scope (``asyncio.gather``) share it."""
    existing = _CURRENT.get()
    if existing is not None:
        yield existing
        return
    connectivity = Connectivity()
    token = _CURRENT.set(connectivity)
    try:
        yield connectivity
    finally:
        _CURRENT.reset(token)
