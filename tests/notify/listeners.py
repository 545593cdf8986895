"""Loopback servers that say whether anything reached them, a small SMTP server, and a
stand-in for the system's resolver (so that a name such as ``org.zulip.example`` points
where a test says, as a wildcard DNS service would, without asking any DNS server)."""

from __future__ import annotations

import _socket
import contextlib
import ipaddress
import select
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest


@dataclass
class Listener:
    """A TCP port and a UDP port on loopback that record every connection and datagram
    (each connection is accepted and closed at once)."""

    tcp: socket.socket
    udp: socket.socket
    connections: list[tuple[str, int]] = field(default_factory=list)
    datagrams: list[bytes] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def tcp_port(self) -> int:
        port: int = self.tcp.getsockname()[1]
        return port

    @property
    def udp_port(self) -> int:
        port: int = self.udp.getsockname()[1]
        return port

    def reached(self) -> bool:
        """Whether anything arrived, including what is still waiting to be accepted."""
        self.collect()
        with self.lock:
            return bool(self.connections or self.datagrams)

    def wait_for(self, connections: int) -> None:
        deadline = time.monotonic() + 5
        while len(self.connections) < connections and time.monotonic() < deadline:
            self.collect()
            time.sleep(0.01)

    def collect(self) -> None:
        with self.lock:
            with contextlib.suppress(BlockingIOError, OSError):
                while True:
                    conn, peer = self.tcp.accept()
                    self.connections.append(peer)
                    conn.close()
            with contextlib.suppress(BlockingIOError, OSError):
                while True:
                    self.datagrams.append(self.udp.recv(65536))


@contextmanager
def listener(host: str = "127.0.0.1") -> Iterator[Listener]:
    tcp = socket.create_server((host, 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind((host, 0))
    tcp.setblocking(False)
    udp.setblocking(False)
    found = Listener(tcp, udp)
    stop = threading.Event()

    def serve() -> None:  # so that a client never waits on an unaccepted connection
        while not stop.is_set():
            ready, _, _ = select.select([tcp, udp], [], [], 0.05)
            if ready:
                found.collect()

    thread = threading.Thread(target=serve, name="listener", daemon=True)
    thread.start()
    try:
        yield found
    finally:
        stop.set()
        thread.join(timeout=5)
        tcp.close()
        udp.close()


@dataclass
class SmtpServer:
    port: int
    messages: list[str] = field(default_factory=list)


@contextmanager
def smtp_server() -> Iterator[SmtpServer]:
    """Enough of SMTP for ``smtplib`` without TLS or login: records each message's data."""
    smtp = SmtpServer(port=0)

    class Handler(socketserver.StreamRequestHandler):
        def reply(self, line: str) -> None:
            self.wfile.write(line.encode() + b"\r\n")

        def handle(self) -> None:
            self.reply("220 loopback ESMTP")
            while line := self.rfile.readline():
                command = line.decode().strip().upper()
                if command.startswith(("EHLO", "HELO")):
                    self.reply("250 loopback")
                elif command == "DATA":
                    self.reply("354 go on")
                    data = []
                    while (body := self.rfile.readline()) not in (b".\r\n", b""):
                        data.append(body.decode())
                    smtp.messages.append("".join(data))
                    self.reply("250 queued")
                elif command == "QUIT":
                    self.reply("221 bye")
                    return
                else:  # MAIL FROM, RCPT TO, RSET, NOOP
                    self.reply("250 ok")

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    smtp.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, name="smtp", daemon=True)
    thread.start()
    try:
        yield smtp
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def fake_dns(monkeypatch: pytest.MonkeyPatch, answers: dict[str, str]) -> None:
    """The system's resolver answers ``answers`` (name to address) and numeric addresses;
    any other name does not resolve (no DNS server is asked)."""
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name in answers:
            return real(answers[name], port, *args, **kwargs)
        try:
            ipaddress.ip_address(str(name))
        except ValueError:
            raise socket.gaierror(socket.EAI_NONAME, f"{name} is unknown to this test") from None
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


_net_stop_installed = False


def _net_stop(event: str, args: tuple[Any, ...]) -> None:
    if event not in ("socket.connect", "socket.sendto"):
        return
    address = args[1]
    if isinstance(address, tuple) and address:
        if address[0] in ("localhost", ""):
            return
        try:
            if ipaddress.ip_address(str(address[0]).partition("%")[0]).is_loopback:
                return
        except ValueError:
            pass
        raise RuntimeError(f"Tests must not reach the network (tried {address!r}).")


def allow_guard_to_see_private_addresses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lets a connection to a private address reach the socket call, where the connection
    guard refuses it, instead of stopping it in Python first (tests/conftest.py): a second
    audit hook, added after the guard's, still stops anything the guard lets through, so no
    packet ever leaves loopback."""
    global _net_stop_installed
    from scholarstream.public_connections import only_public_connections

    with only_public_connections():
        pass  # the guard's hook is in place, so it runs before the stop below
    if not _net_stop_installed:
        sys.addaudithook(_net_stop)
        _net_stop_installed = True
    monkeypatch.setattr(socket.socket, "connect", _socket.socket.connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _socket.socket.connect_ex)
