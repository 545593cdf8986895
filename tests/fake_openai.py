"""An OpenAI-compatible chat-completions server on loopback, scripted per model, for
driving the real client stack (pydantic-ai's OpenAI model, the openai SDK, httpx) through
the faults providers really produce. It runs in a thread of the test process; processes
the tests start reach it through ``SCHOLARSTREAM_LLM__PROVIDERS__<NAME>__BASE_URL``.

    with fake_openai() as fake:
        fake.script("gpt-a", Status(429, retry_after=1), Text("the answer"))
        settings.llm.providers["fake"] = ProviderSettings(base_url=fake.base_url)
        ... "fake:gpt-a" ...
        assert fake.calls("gpt-a") == 2

Each request for a model takes the next reply of its script; when the script is used up,
the model's default reply answers (``Text("fake answer from <model>")`` unless set).
Streaming requests (``"stream": true``) get server-sent events in chunked transfer
encoding, so a ``Cut`` reply is a real broken body (no terminating chunk), not a short
answer."""

from __future__ import annotations

import json
import math
import threading
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Text:
    """A whole answer, streamed in ``chunks`` pieces ``delay`` seconds apart (or at once)."""

    text: str
    delay: float = 0.0
    chunks: int = 4


@dataclass(frozen=True)
class Status:
    """An HTTP error, e.g. ``Status(429, retry_after=2)`` or ``Status(500)``.

    A whole ``retry_after`` is sent as ``Retry-After: <seconds>`` (the only number the
    header allows); a fractional one as OpenAI and Anthropic send it, ``retry-after-ms``
    (which clients read first) with ``Retry-After`` rounded up next to it."""

    code: int
    retry_after: float | None = None
    message: str = "fake provider error"
    error_code: str | None = None
    """The error's ``code``, as OpenAI names it (``insufficient_quota`` ...); else the status."""


@dataclass(frozen=True)
class Hang:
    """Accepts the request and answers nothing for ``seconds`` (past the client's timeout)."""

    seconds: float = 30.0


@dataclass(frozen=True)
class Cut:
    """Starts streaming ``text`` and drops the connection after ``after`` of its chunks.
    A request that does not stream gets its connection dropped before any answer."""

    text: str
    after: int = 2
    chunks: int = 4


Reply = Text | Status | Hang | Cut


@dataclass
class Received:
    model: str
    body: dict[str, Any]
    at: float


@dataclass
class FakeOpenAI:
    port: int = 0
    received: list[Received] = field(default_factory=list)
    _scripts: dict[str, deque[Reply]] = field(default_factory=lambda: defaultdict(deque))
    _defaults: dict[str, Reply] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, model: str, *replies: Reply) -> None:
        """Queues replies for the model's next requests, in order."""
        with self._lock:
            self._scripts[model].extend(replies)

    def default(self, model: str, reply: Reply) -> None:
        """What the model answers once its script is used up."""
        with self._lock:
            self._defaults[model] = reply

    def reset(self) -> None:
        """Forgets every script, default and request: a fresh server for the next test."""
        with self._lock:
            self._scripts.clear()
            self._defaults.clear()
            self.received.clear()

    def calls(self, model: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self.received if model is None or r.model == model)

    def _next(self, body: dict[str, Any]) -> Reply:
        model = str(body.get("model", ""))
        with self._lock:
            self.received.append(Received(model, body, time.monotonic()))
            script = self._scripts[model]
            if script:
                return script.popleft()
            return self._defaults.get(model, Text(f"fake answer from {model}"))


def _retry_after_headers(seconds: float | None) -> dict[str, str]:
    if seconds is None:
        return {}
    if float(seconds).is_integer():
        return {"retry-after": str(int(seconds))}
    return {"retry-after-ms": f"{seconds * 1000:.0f}", "retry-after": str(math.ceil(seconds))}


def _pieces(text: str, count: int) -> list[str]:
    size = max(1, -(-len(text) // max(1, count)))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _completion(model: str, text: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _chunk(model: str, completion_id: str, delta: dict[str, Any], finish: str | None) -> bytes:
    event = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(event)}\n\n".encode()


@contextmanager
def fake_openai() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {}
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._json(404, {"error": {"message": f"no route {self.path}"}})
                return
            reply = fake._next(body)
            model = str(body.get("model", ""))
            if isinstance(reply, Status):
                headers = _retry_after_headers(reply.retry_after)
                code = reply.error_code or reply.code
                error = {"message": reply.message, "type": "fake_error", "code": code}
                self._json(reply.code, {"error": error}, headers)
            elif isinstance(reply, Hang):
                fake._stopping.wait(reply.seconds)  # cut short when the server stops
                self.close_connection = True
            elif not body.get("stream"):
                if isinstance(reply, Cut):
                    self.close_connection = True
                    return
                time.sleep(reply.delay)
                self._json(200, _completion(model, reply.text))
            else:
                self._stream(model, reply)

        def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, model: str, reply: Text | Cut) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            completion_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
            pieces = _pieces(reply.text, reply.chunks)
            self._send_chunk(_chunk(model, completion_id, {"role": "assistant"}, None))
            for index, piece in enumerate(pieces):
                if isinstance(reply, Cut) and index >= reply.after:
                    self.wfile.flush()
                    self.close_connection = True
                    return  # no terminating chunk: the body is broken off
                if isinstance(reply, Text) and reply.delay:
                    time.sleep(reply.delay)
                self._send_chunk(_chunk(model, completion_id, {"content": piece}, None))
            self._send_chunk(_chunk(model, completion_id, {}, "stop"))
            usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            final = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [],
                "usage": usage,
            }
            self._send_chunk(f"data: {json.dumps(final)}\n\n".encode())
            self._send_chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _send_chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the test output clean

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, name="fake-openai", daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake._stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
