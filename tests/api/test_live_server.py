"""The API behind a real uvicorn server on a loopback port, spoken to over raw sockets
(issue 20): an oversized body is refused before it is read, a body without a declared
size is counted as it arrives, and after an unhandled error the keep-alive connection
still serves the next request (or the error said ``Connection: close``)."""

from __future__ import annotations

import http.client
import json
import select
import socket
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from scholarstream.settings import load_settings
from tests.web.live import LiveServer, serve

JSON_LIMIT = 4096


@pytest.fixture
def live(data_dir: Path) -> Iterator[LiveServer]:
    settings = load_settings(data_dir=data_dir, limits={"json_body_bytes": JSON_LIMIT})
    with serve(settings) as server:
        yield server


def connect(live: LiveServer) -> socket.socket:
    url = urlsplit(live.base_url)
    assert url.hostname and url.port
    return socket.create_connection((url.hostname, url.port), timeout=10)


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response with a Content-Length, read off the socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before a response: {data!r}"
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    length = int(headers["content-length"])
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk, "connection closed in the middle of the body"
        rest += chunk
    return status, headers, rest[:length]


def request_head(live: LiveServer, path: str, extra: str) -> bytes:
    host = urlsplit(live.base_url).netloc
    return (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{extra}\r\n"
    ).encode()


def test_a_declared_oversized_body_is_refused_before_it_is_sent(live: LiveServer) -> None:
    with connect(live) as sock:
        # 300 MB announced, not one byte of it sent: the answer comes anyway.
        sock.sendall(request_head(live, "/api/v1/tokens", "Content-Length: 300000000\r\n"))
        status, headers, body = read_response(sock)
    assert status == 413
    assert headers["connection"] == "close"
    error = json.loads(body)
    assert error["code"] == "too_large"
    assert error["request_id"] == headers["x-request-id"]


def test_a_chunked_oversized_body_is_refused_as_it_arrives(live: LiveServer) -> None:
    with connect(live) as sock:
        sock.sendall(request_head(live, "/api/v1/tokens", "Transfer-Encoding: chunked\r\n"))
        sent = 0
        chunk = b"x" * 1024
        # Up to twice the limit, never the terminating chunk: the server must answer without
        # it. Sending stops once the answer is there (the server closes after it, and a
        # write to a closed connection would lose the answer to a reset).
        while sent < 2 * JSON_LIMIT:
            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            sent += len(chunk)
            if select.select([sock], [], [], 0.05)[0]:
                break
        status, headers, body = read_response(sock)
        assert sent <= JSON_LIMIT + 2 * len(chunk), "the server read past its limit"
    assert status == 413
    assert headers["connection"] == "close"
    assert json.loads(body)["code"] == "too_large"


def test_the_connection_survives_an_unhandled_error(live: LiveServer, data_dir: Path) -> None:
    with sqlite3.connect(data_dir / "scholarstream.sqlite") as db:
        db.execute("DROP TABLE api_tokens")
    url = urlsplit(live.base_url)
    assert url.hostname and url.port
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        connection.request("GET", "/api/v1/tokens", headers={"X-Request-ID": "live-500"})
        first = connection.getresponse()
        body = json.loads(first.read())
        assert first.status == 500
        assert first.getheader("x-request-id") == "live-500"
        assert body["request_id"] == "live-500"
        assert body["code"] == "internal_error"
        closing = (first.getheader("connection") or "").lower() == "close"
        sock_before = connection.sock
        time.sleep(0.2)  # let a server that drops the connection do so
        # http.client reuses the socket unless the answer said Connection: close.
        connection.request("GET", "/health")
        second = connection.getresponse()
        assert second.status == 200
        assert json.loads(second.read())["status"] == "ok"
        assert closing or connection.sock is sock_before
    finally:
        connection.close()
