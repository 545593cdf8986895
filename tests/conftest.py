"""Test harness: no network but loopback, no real model requests, fresh data directories,
and every database-facing test run on SQLite and, when SCHOLARSTREAM_TEST_POSTGRES_URL is
set, on that real PostgreSQL server (in a throwaway database)."""

from __future__ import annotations

import gc
import ipaddress
import os
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pydantic_ai.models
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from scholarstream.settings import Settings, load_settings

POSTGRES_URL = os.environ.get("SCHOLARSTREAM_TEST_POSTGRES_URL")
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

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
        raise RuntimeError(f"Tests must not reach the network (tried {address!r}).")
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if not _is_local(address):
        raise RuntimeError(f"Tests must not reach the network (tried {address!r}).")
    return _real_connect_ex(self, address)


def pytest_configure(config: pytest.Config) -> None:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign,assignment]
    pydantic_ai.models.ALLOW_MODEL_REQUESTS = False
    # The CLI's rich consoles take their width when created: one width for every test,
    # whatever runs them (a terminal, a pipe, an xdist worker), so wrapping is the same.
    os.environ["COLUMNS"] = "200"


def pytest_collection_finish(session: pytest.Session) -> None:
    # Browser tests serve from a thread of this process, so a full collection's pause stalls
    # their pages; what is loaded by now (modules, collected tests) lives to the end anyway.
    gc.collect()
    gc.freeze()


LEAKY_ENV = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENROUTER_API_KEY",
)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own configuration never leaks into a test."""
    for name in list(os.environ):
        if name.startswith("SCHOLARSTREAM_") or name in LEAKY_ENV:
            monkeypatch.delenv(name)
    # The embedding model that ships is loaded only by the tests of semantic search, which
    # turn it on: elsewhere every import would embed its records in the background.
    monkeypatch.setenv("SCHOLARSTREAM_SEMANTIC__ENABLED", "false")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def settings(data_dir: Path) -> Settings:
    """SQLite settings in a fresh data directory (not migrated)."""
    return load_settings(data_dir=data_dir)


def _sync_url(url: str) -> str:
    return url.replace("+asyncpg", "+psycopg", 1)


IN_CI = bool(os.environ.get("CI"))


def skip_or_fail(reason: str) -> None:
    """Outside CI a missing service skips; in CI it fails, so nothing is silently skipped."""
    if IN_CI:
        pytest.fail(f"{reason}; CI must provide it (see .ci/run)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_server_url() -> str:
    if not POSTGRES_URL:
        skip_or_fail("SCHOLARSTREAM_TEST_POSTGRES_URL is not set")
    assert POSTGRES_URL is not None
    return POSTGRES_URL


@pytest.fixture(scope="session")
def pgvector_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL server with the pgvector extension, run from the ``pgserver``
    wheel (the machine's own server has no pgvector package), stopped at the end."""
    try:
        from pgserver.postgres_server import get_server
    except ImportError:
        skip_or_fail("pgserver (PostgreSQL with pgvector) is not installed")
    directory = tmp_path_factory.mktemp("pgvector")
    server = get_server(directory, cleanup_mode="stop")
    try:
        yield f"postgresql+asyncpg://postgres@/postgres?host={directory}"
    finally:
        server.cleanup()


@contextmanager
def throwaway_postgres_database(server_url: str) -> Iterator[str]:
    """The URL of a new database on the real server, dropped afterwards."""
    name = f"ss_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(_sync_url(server_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"),
                {"n": name},
            )
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()


@pytest.fixture
def postgres_url(postgres_server_url: str) -> Iterator[str]:
    """A throwaway database on the real server, dropped afterwards."""
    with throwaway_postgres_database(postgres_server_url) as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, data_dir: Path) -> str:
    """Each test that takes this runs once per database backend."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{data_dir / 'scholarstream.sqlite'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def db_settings(data_dir: Path, database_url: str) -> Settings:
    """Migrated settings on each backend."""
    from scholarstream.db import upgrade

    settings = load_settings(data_dir=data_dir, database_url=database_url)
    upgrade(settings.app_database_url)
    return settings
