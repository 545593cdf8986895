"""``scholarstream serve`` on a port that is already in use fails before anything starts:
no migration, no durable engine (so no executor id taken, no queued work picked up), and a
plain message naming the port and what to do. Started with ``--host/--port``, the app is
given that address for the links it makes with no request to go by (``server.public_url``
still wins)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import scholarstream.bootstrap
import scholarstream.gc_tuning
from scholarstream.cli import app
from scholarstream.settings import Settings

pytestmark = pytest.mark.slow


@pytest.fixture
def occupied_port() -> Iterator[int]:
    """A port another program listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port: int = sock.getsockname()[1]
        yield port


def _serve(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARSTREAM_")}
    env["SCHOLARSTREAM_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [sys.executable, "-m", "scholarstream", "serve", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )


def test_serve_on_a_port_in_use_fails_before_the_engine_starts(
    data_dir: Path, occupied_port: int
) -> None:
    started = time.monotonic()
    result = _serve(data_dir, "--port", str(occupied_port))
    assert time.monotonic() - started < 60
    assert result.returncode == 2, result.stdout + result.stderr
    error = " ".join(result.stderr.split())
    assert f"127.0.0.1:{occupied_port}" in error and "already in use" in error, error
    assert "What to do:" in error and "--port" in error, error
    assert "Traceback" not in result.stderr and "Errno" not in result.stderr
    # Nothing started: the durable engine never created its system database (nor took an
    # executor id in it), and the app database was not even migrated.
    assert not (data_dir / "dbos.sqlite").exists()
    assert not (data_dir / "scholarstream.sqlite").exists()
    assert "ScholarStream on" not in result.stdout


@pytest.mark.parametrize(
    ("public_url", "base"),
    [
        (None, "http://127.0.0.1:{port}"),
        ("https://scholar.example.org", "https://scholar.example.org"),
    ],
)
def test_serve_gives_the_app_the_address_it_listens_on(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, public_url: str | None, base: str
) -> None:
    import uvicorn

    given: list[Settings] = []

    def serve_app(settings: Settings, **_: object) -> object:
        given.append(settings)
        return object()

    monkeypatch.setattr(scholarstream.bootstrap, "serve_app", serve_app)
    monkeypatch.setattr(scholarstream.gc_tuning, "tune_for_serving", lambda: None)
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    with socket.socket() as probe:  # a free port, not the configured 8000
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    env = {"SCHOLARSTREAM_SERVER__PUBLIC_URL": public_url} if public_url else {}
    result = CliRunner().invoke(
        app, ["--data-dir", str(data_dir), "serve", "--port", str(port)], env=env
    )
    assert result.exit_code == 0, result.output
    (settings,) = given
    assert settings.server.port == port
    assert settings.server.base_url == base.format(port=port)
