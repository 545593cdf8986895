"""``only_public_connections``: inside it, a socket is refused before it reaches a
non-public address (TCP connect, UDP datagram), a local socket, or a name it would resolve
on its own; so are the system log and starting programs. The rule follows the context
(copied into worker threads and tasks), and nothing outside it is affected."""

from __future__ import annotations

import asyncio
import contextvars
import socket
import subprocess
import syslog
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from scholarstream.public_connections import NonPublicConnectionError, only_public_connections
from tests.notify.listeners import allow_guard_to_see_private_addresses, listener


def connect(host: str, port: int) -> None:
    with socket.create_connection((host, port), timeout=5):
        pass


def test_a_connection_to_loopback_is_refused_before_it_is_made() -> None:
    with listener() as inside:
        with only_public_connections() as guard, pytest.raises(NonPublicConnectionError):
            connect("127.0.0.1", inside.tcp_port)
        assert guard.refused == ["127.0.0.1 is a non-public address"]
        assert not inside.reached()
        connect("127.0.0.1", inside.tcp_port)  # outside the guard: as before
        inside.wait_for(1)
        assert len(inside.connections) == 1


@pytest.mark.parametrize(
    "address",
    [
        "10.9.9.9",
        "192.168.7.7",
        "169.254.169.254",
        "100.64.0.1",  # shared address space (carrier-grade NAT)
        "0.0.0.0",  # noqa: S104 (an address connected to here, not bound)
        "::ffff:10.0.0.1",  # IPv4-mapped
        "fd00::1",
    ],
)
def test_private_and_internal_addresses_are_refused_at_connect(
    monkeypatch: pytest.MonkeyPatch, address: str
) -> None:
    allow_guard_to_see_private_addresses(monkeypatch)
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with (
        socket.socket(family, socket.SOCK_STREAM) as sock,
        only_public_connections() as guard,
        pytest.raises(NonPublicConnectionError),
    ):
        sock.connect((address, 443))
    assert guard.refused == [f"{address} is a non-public address"]


def test_a_public_address_is_let_through(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only as far as the test harness, which stops every packet that would leave
    loopback: the guard itself does not refuse it."""
    allow_guard_to_see_private_addresses(monkeypatch)
    with (
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock,
        only_public_connections() as guard,
        pytest.raises(RuntimeError, match="network"),
    ):
        sock.connect(("93.184.215.14", 443))
    assert guard.refused == []


def test_a_datagram_to_loopback_is_not_sent() -> None:
    with listener() as inside, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        with only_public_connections() as guard, pytest.raises(NonPublicConnectionError):
            sock.sendto(b"hello", ("127.0.0.1", inside.udp_port))
        assert guard.refused == ["127.0.0.1 is a non-public address"]
        assert not inside.reached()


def test_a_name_the_socket_would_resolve_itself_is_refused() -> None:
    with listener() as inside, socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        with only_public_connections() as guard, pytest.raises(NonPublicConnectionError):
            sock.connect(("localhost", inside.tcp_port))
        (reason,) = guard.refused
        assert reason == (
            "the service connects to localhost by name, which cannot be checked "
            "(use its IP address)"
        )
        assert not inside.reached()


def test_a_local_socket_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "service.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        server.listen()
        with (
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client,
            only_public_connections() as guard,
            pytest.raises(NonPublicConnectionError),
        ):
            client.connect(path)
    assert guard.refused == ["the service uses a local socket on this server"]


def test_the_system_log_and_programs_are_refused() -> None:
    with only_public_connections() as guard:
        with pytest.raises(NonPublicConnectionError):
            syslog.syslog(syslog.LOG_INFO, "from a user's notification")
        with pytest.raises(NonPublicConnectionError):
            subprocess.run(["true"], check=True)
    assert guard.refused == [
        "the service writes to this server's own system log",
        "the service runs a program on this server",
    ]


def test_the_rule_follows_the_context_into_threads_and_tasks() -> None:
    """Code run in a copy of the guarded context (what ``asyncio.to_thread`` and apprise's
    worker pool do) is held to it; another thread of the process is not."""
    with listener() as inside, ThreadPoolExecutor(max_workers=1) as pool:
        other_thread: list[BaseException | None] = []
        with only_public_connections() as guard:
            context = contextvars.copy_context()
            copied = pool.submit(context.run, connect, "127.0.0.1", inside.tcp_port)
            with pytest.raises(NonPublicConnectionError):
                copied.result(timeout=5)
            with pytest.raises(NonPublicConnectionError):
                asyncio.run(asyncio.to_thread(connect, "127.0.0.1", inside.tcp_port))

            def unguarded() -> None:
                try:
                    connect("127.0.0.1", inside.tcp_port)
                    other_thread.append(None)
                except BaseException as exc:  # reported to the test below
                    other_thread.append(exc)

            thread = threading.Thread(target=unguarded)
            thread.start()
            thread.join(timeout=5)
        assert other_thread == [None]
        assert guard.refused == ["127.0.0.1 is a non-public address"] * 2
        inside.wait_for(1)
        assert len(inside.connections) == 1  # the other thread's


def test_not_enforced_checks_nothing() -> None:
    with listener() as inside:
        with only_public_connections(enforce=False) as guard:
            connect("127.0.0.1", inside.tcp_port)
        assert guard.refused == []
        inside.wait_for(1)
        assert len(inside.connections) == 1
