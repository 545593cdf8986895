"""``scholarstream serve`` on a port that is already in use fails before anything starts:
no migration, no durable engine (so no executor id taken, no queued work picked up), and a
plain message naming the port and what to do."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

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
