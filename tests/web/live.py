"""A real ScholarStream server on loopback for browser tests, and what a page may not do.

The server runs uvicorn in a background thread of the test process (so the loopback-only
socket guard of tests/conftest.py applies to it too), on a socket bound to 127.0.0.1 with a
port chosen by the kernel, and stops through ``Server.should_exit``.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import uvicorn
from dbos import DBOS
from playwright.sync_api import Page
from pydantic_ai.models import Model

from scholarstream.accounts import create_user
from scholarstream.bootstrap import build_engine, create_app
from scholarstream.db import upgrade
from scholarstream.runtime import build_runtime
from scholarstream.settings import Settings, load_settings
from tests.conftest import LEAKY_ENV

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost"})

_STARTUP_SECONDS = 20.0
_SHUTDOWN_SECONDS = 10.0


@dataclass(frozen=True)
class LiveServer:
    base_url: str
    settings: Settings

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"


NewPage = Callable[[LiveServer], Page]
"""The ``new_page`` fixture: a page in a fresh browser context against a server."""


@dataclass(frozen=True)
class Account:
    username: str
    password: str
    display_name: str


@dataclass
class PageProblems:
    """What went wrong in a page that a test did not ask about."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)

    def assert_none(self) -> None:
        assert self.page_errors == [], "uncaught JavaScript exceptions"
        assert self.console_errors == [], "errors in the browser console"
        assert self.foreign_requests == [], "the page tried to reach a non-local host"

    def expect_failed_loads(self, status: int) -> None:
        """Accept (and forget) Chromium's own console lines for responses with ``status``,
        which a test provoked on purpose; any other console error still counts."""
        expected = f"status of {status}"
        assert all(expected in line for line in self.console_errors), self.console_errors
        self.console_errors.clear()


class SourceStub:
    """Stands in for the hosts of the literature sources (through an ``httpx.MockTransport``
    given to the server): records every request the server sends and answers with
    ``handler``, which a test sets. Requests arrive on the server's thread."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.handler: Callable[[httpx.Request], httpx.Response] | None = None
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.handler = None

    def sent(self) -> list[httpx.Request]:
        with self._lock:
            return list(self.requests)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self._answer)

    def _answer(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            self.requests.append(request)
            handler = self.handler
        if handler is None:
            raise AssertionError(f"the test set no answer for {request.url}")
        return handler(request)


def is_foreign(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https", "ws", "wss") and parts.hostname not in LOCAL_HOSTS


def clean_settings(data_dir: Path, **overrides: Any) -> Settings:
    """Settings built with none of the developer's SCHOLARSTREAM_* or provider variables
    (and, unless ``semantic`` is given, without the embedding model: see tests/conftest.py)."""
    overrides.setdefault("semantic", {"enabled": False})
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name.startswith("SCHOLARSTREAM_") or name in LEAKY_ENV:
                mp.delenv(name)
        return load_settings(data_dir=data_dir, **overrides)


async def _create_accounts(settings: Settings, accounts: Sequence[Account]) -> None:
    # A runtime of its own: its engine belongs to this short event loop, not the server's.
    runtime = build_runtime(settings)
    try:
        async with runtime.database.session() as session:
            for account in accounts:
                await create_user(
                    session, account.username, account.password, display_name=account.display_name
                )
    finally:
        await runtime.close()


def _off_loop(function: Callable[[], None]) -> None:
    """Run set-up that calls asyncio.run() in a thread of its own: once a module's browser
    is up, Playwright's sync API keeps an event loop running in the main thread."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(function).result()


@contextmanager
def serve(
    settings: Settings,
    accounts: Sequence[Account] = (),
    *,
    source_transport: httpx.AsyncBaseTransport | None = None,
    engine: bool = False,
    models: Mapping[str, Model] | None = None,
) -> Iterator[LiveServer]:
    """Migrate, create ``accounts``, and serve the app with uvicorn until the block ends.
    ``source_transport`` answers the literature sources' requests instead of the network;
    ``models`` replaces the configured models by role (e.g. a scripted ``FunctionModel``);
    ``engine`` launches the durable engine (DBOS) with the app, as ``scholarstream serve``
    does. DBOS is one instance per process: one engine-backed server at a time."""
    _off_loop(lambda: upgrade(settings.app_database_url))
    if accounts:
        _off_loop(lambda: asyncio.run(_create_accounts(settings, accounts)))
    runtime = build_runtime(settings, model_overrides=models, source_transport=source_transport)
    if engine:
        DBOS.destroy(destroy_registry=False)
    app = create_app(runtime, engine=build_engine(runtime) if engine else None)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"uvicorn-{port}", daemon=True
    )
    thread.start()
    live = LiveServer(base_url=f"http://127.0.0.1:{port}", settings=settings)
    try:
        _wait_for_health(live, thread)
        yield live
    finally:
        server.should_exit = True
        thread.join(timeout=_SHUTDOWN_SECONDS)
        sock.close()
        if engine:
            DBOS.destroy(destroy_registry=False)
        assert not thread.is_alive(), f"uvicorn did not stop within {_SHUTDOWN_SECONDS} s"


def _wait_for_health(live: LiveServer, thread: threading.Thread) -> None:
    deadline = time.monotonic() + _STARTUP_SECONDS
    last_error = "no answer"
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if not thread.is_alive():
                raise RuntimeError("uvicorn exited during start-up; see the captured log")
            try:
                response = client.get(live.url("/health"))
            except httpx.TransportError as exc:
                last_error = repr(exc)
            else:
                if response.status_code == 200:
                    return
                last_error = f"HTTP {response.status_code}: {response.text[:200]}"
            time.sleep(0.05)
    raise RuntimeError(
        f"server at {live.base_url} not healthy after {_STARTUP_SECONDS} s: {last_error}"
    )


def import_into_library(live: LiveServer, client: httpx.Client, path: Path) -> None:
    """Imports the file at ``path`` into the live server's library, as the page does."""
    response = client.post(
        "/api/v1/library/imports",
        files={"file": (path.name, path.read_bytes())},
        headers={"Origin": live.base_url},
    )
    assert response.status_code == 201, response.text
