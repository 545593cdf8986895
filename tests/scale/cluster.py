"""Real ScholarStream processes (``python -m scholarstream serve`` / ``worker``) sharing one
database, for the scale and crash tests.

They run outside the test socket guard, so their environment keeps them off the network:
every HTTP proxy variable points at a closed loopback port (what escapes the loopback
fails at once), models go to the fake OpenAI-compatible server of ``tests/fake_openai.py``
on loopback, title generation and report sharing are off, and the tests give streams and
searches only the local library as a source. Each process's output goes to a file (a
pipe could fill up and block it) and is shown when a test fails.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import sqlalchemy as sa
from dbos import DBOSClient

T = TypeVar("T")

# Generous: a healthy process on a busy two-core machine starts in a few seconds.
START_TIMEOUT_SEC = 90.0
POLL_SEC = 0.05
_CLOSED_PORT_PROXY = "http://127.0.0.1:9"
_EXECUTOR = re.compile(r"durable engine started \([^,]+, executor (\S+), queues")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def process_env(data_dir: Path, database_url: str | None, **extra: str) -> dict[str, str]:
    """The environment of a product process: the test's, without any SCHOLARSTREAM_
    variable or model key, plus the data directory, the database and ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("SCHOLARSTREAM_")
        and not k.endswith("_API_KEY")
        and k.lower() not in {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
    }
    env.update(
        {
            "SCHOLARSTREAM_DATA_DIR": str(data_dir),
            "SCHOLARSTREAM_RESEARCH__TITLE_ROLE": "",
            "SCHOLARSTREAM_RESEARCH__SHARE_REPORTS": "false",
            "HTTP_PROXY": _CLOSED_PORT_PROXY,
            "HTTPS_PROXY": _CLOSED_PORT_PROXY,
            "ALL_PROXY": _CLOSED_PORT_PROXY,
            "NO_PROXY": "127.0.0.1,localhost",
            "PYTHONUNBUFFERED": "1",
        }
    )
    if database_url:
        env["SCHOLARSTREAM_DATABASE_URL"] = database_url
    env.update(extra)
    return env


class Process:
    """One product process; ``base_url`` set for ``serve``."""

    def __init__(self, name: str, args: list[str], env: Mapping[str, str], log: Path) -> None:
        self.name = name
        self.args = args
        self.env = dict(env)
        self.log = log
        self.base_url: str | None = None
        # A restarted process appends to its predecessor's log: this run starts here.
        self.offset = log.stat().st_size if log.exists() else 0
        with log.open("ab") as out:
            self.popen = subprocess.Popen(
                [sys.executable, "-m", "scholarstream", *args],
                env=dict(env),
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    def text(self) -> str:
        """What this run of the process has written."""
        with self.log.open("rb") as log:
            log.seek(self.offset)
            return log.read().decode(errors="replace")

    def output(self) -> str:
        return f"--- {self.name} (pid {self.pid}, exit {self.popen.poll()}):\n{self.text()}"

    @property
    def executor_id(self) -> str:
        """The executor id its engine logged at launch (the latest, if restarted)."""
        found = _EXECUTOR.findall(self.text())
        if not found:
            pytest.fail(f"{self.name} logged no executor id\n{self.output()}")
        executor: str = found[-1]
        return executor

    def ready(self) -> bool:
        if self.base_url is None:
            return "ScholarStream worker running" in self.text()
        try:
            health = httpx.get(f"{self.base_url}/health", timeout=2)
        except httpx.TransportError:
            return False
        return health.status_code == 200 and health.json()["engine"] == "running"

    def kill(self) -> None:
        """SIGKILL: no shutdown of any kind."""
        os.kill(self.pid, signal.SIGKILL)
        assert self.popen.wait(timeout=20) == -signal.SIGKILL

    def stop(self) -> None:
        if not self.alive:
            return
        self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(timeout=10)


class Cluster:
    """Starts processes sharing ``env`` (each may add its own), waits until they are
    ready, and stops every one still running at the end."""

    def __init__(self, directory: Path, env: Mapping[str, str]) -> None:
        self.directory = directory
        self.env = dict(env)
        self.processes: list[Process] = []

    def _start(self, name: str, args: list[str], extra: Mapping[str, str]) -> Process:
        log = self.directory / f"{name}.log"
        process = Process(name, args, {**self.env, **extra}, log)
        self.processes.append(process)
        return process

    def serve(self, name: str, *args: str, **extra: str) -> Process:
        port = free_port()
        process = self._start(name, ["serve", "--port", str(port), *args], extra)
        process.base_url = f"http://127.0.0.1:{port}"
        return process

    def worker(self, name: str, *args: str, **extra: str) -> Process:
        return self._start(name, ["worker", *args], extra)

    def command(self, name: str, *args: str, **extra: str) -> Process:
        """Any other command, e.g. ``research "PROMPT" --models ...``."""
        return self._start(name, list(args), extra)

    def restart(self, process: Process) -> Process:
        """The same command again (same port, same arguments), after it died."""
        assert not process.alive
        again = Process(process.name, process.args, process.env, process.log)
        again.base_url = process.base_url
        self.processes.append(again)
        return again

    def wait_ready(self, *processes: Process) -> None:
        wait_for(
            lambda: all(p.ready() for p in processes),
            "the processes to be ready",
            START_TIMEOUT_SEC,
            self,
        )

    def outputs(self) -> str:
        return "\n".join(p.output() for p in self.processes)

    def check_alive(self) -> None:
        for process in self.processes:
            if process.popen.poll() not in (None, -signal.SIGKILL, -signal.SIGTERM, 0):
                pytest.fail(f"{process.name} exited unexpectedly\n{self.outputs()}")

    def close(self) -> None:
        for process in self.processes:
            process.stop()


@contextmanager
def cluster(directory: Path, env: Mapping[str, str]) -> Iterator[Cluster]:
    running = Cluster(directory, env)
    try:
        yield running
    finally:
        running.close()


def wait_for(
    condition: Callable[[], T | None],
    what: str,
    timeout: float,
    running: Cluster | None = None,
) -> T:
    """Polls ``condition`` until it returns something truthy, which is returned; fails
    with every process's output when ``timeout`` passes or a process dies unexpectedly."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if running is not None:
            running.check_alive()
        if time.monotonic() > deadline:
            outputs = running.outputs() if running is not None else ""
            pytest.fail(f"{what}: not within {timeout:g} s\n{outputs}")
        time.sleep(POLL_SEC)


def api(process: Process, method: str, path: str, **kwargs: Any) -> Any:
    """A JSON call to a ``serve`` process; fails the test on an error status."""
    assert process.base_url is not None
    response = httpx.request(method, f"{process.base_url}/api/v1{path}", timeout=30, **kwargs)
    if response.status_code >= 400:
        pytest.fail(f"{method} {path}: {response.status_code} {response.text}")
    return response.json()


def sync_url(url: str) -> str:
    """The app database's URL for a synchronous SQLAlchemy engine in the test process."""
    return url.replace("+asyncpg", "+psycopg", 1).replace("+aiosqlite", "", 1)


@contextmanager
def app_database(url: str) -> Iterator[sa.Engine]:
    """Reads what the processes stored, as it is in the database right now."""
    engine = sa.create_engine(sync_url(url), poolclass=sa.pool.NullPool)
    try:
        yield engine
    finally:
        engine.dispose()


@contextmanager
def dbos_client(system_database_url: str) -> Iterator[DBOSClient]:
    client = DBOSClient(system_database_url=system_database_url)
    try:
        yield client
    finally:
        client.destroy()
