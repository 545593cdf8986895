"""A webhook receiver on loopback (apprise's ``json://`` URLs, research webhooks): records
what each POST carried, and answers slowly on ``/slow`` (to test timeouts) and 500 on
``/broken``."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SLOW_SECONDS = 3.0


@dataclass(frozen=True)
class Posted:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]  # names in lower case
    raw: bytes  # the body as sent (what a signature covers)


@dataclass
class HookServer:
    port: int
    posted: list[Posted] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str = "/hook", scheme: str = "json") -> str:
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    def received(self) -> list[Posted]:
        with self.lock:
            return list(self.posted)


@contextmanager
def hook_server() -> Iterator[HookServer]:
    hooks = HookServer(port=0)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            headers = {name.lower(): value for name, value in self.headers.items()}
            with hooks.lock:
                hooks.posted.append(Posted(self.path, json.loads(raw or b"{}"), headers, raw))
            if self.path.startswith("/slow"):
                time.sleep(SLOW_SECONDS)
            status = 500 if self.path.startswith("/broken") else 200
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the test output clean

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    hooks.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, name="hooks", daemon=True)
    thread.start()
    try:
        yield hooks
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def refused_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
