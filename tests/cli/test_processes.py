"""The real commands in real processes: what a user runs."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

PUBLIC_HOST = "0.0.0.0"  # noqa: S104 (only to check that serve refuses it)

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARSTREAM_")}
    env.update({"SCHOLARSTREAM_DATA_DIR": str(data_dir), **extra})
    return env


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "scholarstream", *args]


@pytest.fixture
def server(data_dir: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = _free_port()
    proc = subprocess.Popen(
        _cli("serve", "--port", str(port)),
        env=_env(data_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"serve exited early:\n{proc.stdout.read() if proc.stdout else ''}")
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("serve did not answer /health within 60 s")
    yield base, proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_serve_answers_health_shell_docs_and_openapi(
    server: tuple[str, subprocess.Popen[str]], data_dir: Path
) -> None:
    base, proc = server
    health = httpx.get(f"{base}/health").json()
    assert health["engine"] == "running"
    assert health["database"] == "sqlite"
    shell = httpx.get(f"{base}/")
    assert shell.status_code == 200
    assert "<nav" in shell.text
    assert "ScholarStream" in shell.text
    assert "swagger-ui-bundle.js" in httpx.get(f"{base}/docs").text
    assert httpx.get(f"{base}/openapi.json").json()["info"]["title"] == "ScholarStream"
    assert (data_dir / "scholarstream.sqlite").exists()
    assert (data_dir / "dbos.sqlite").exists()
    assert (data_dir / "secret.key").stat().st_mode & 0o077 == 0
    proc.send_signal(signal.SIGTERM)
    # uvicorn re-raises the signal after a graceful shutdown, so the status is the signal's.
    assert proc.wait(timeout=20) in (0, -signal.SIGTERM)
    output = proc.stdout.read() if proc.stdout else ""
    assert "durable engine started" in output
    assert "Application shutdown complete" in output


def test_worker_runs_until_stopped(data_dir: Path) -> None:
    proc = subprocess.Popen(
        _cli("worker"),
        env=_env(data_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    lines = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if "worker running" in line or not line:
            break
    assert any("worker running" in line for line in lines), "".join(lines)
    # It serves no page, so the links it sends can only guess the address: it says so (on
    # as many lines as the terminal's width makes).
    said: list[str] = []
    while not said or ("people open" not in said[-1] and said[-1]):
        said.append(proc.stdout.readline())
    warning = " ".join(line.strip() for line in said)
    assert "server.public_url is not set" in warning, warning
    assert "point to http://127.0.0.1:8000" in warning
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0


def test_errors_are_plain_messages_with_a_next_step(data_dir: Path) -> None:
    result = subprocess.run(
        _cli("serve", "--host", PUBLIC_HOST),
        env=_env(data_dir),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "Error: Refusing to listen on 0.0.0.0" in result.stderr
    assert "What to do:" in result.stderr
    assert "Traceback" not in result.stderr
    bad = subprocess.run(
        _cli("config", "show"),
        env=_env(data_dir, SCHOLARSTREAM_SERVER__PORT="eighty"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2
    assert "server.port" in bad.stderr
    assert "Traceback" not in bad.stderr
    unreachable = subprocess.run(
        _cli("db", "upgrade"),
        env=_env(
            data_dir,
            SCHOLARSTREAM_DATABASE_URL=f"postgresql+asyncpg://x@127.0.0.1:{_free_port()}/x",
        ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert unreachable.returncode == 1
    assert "Cannot open the database" in unreachable.stderr
    assert "Traceback" not in unreachable.stderr
