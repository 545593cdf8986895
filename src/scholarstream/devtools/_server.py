"""The development provider's HTTP server: OpenAI's chat-completions API on a loopback port,
one thread per request, scripted per model, with failure modes.

It answers ``GET /v1/models`` (and ``/v1/models/<id>``), ``GET /health`` and ``POST
/v1/chat/completions``, streaming (server-sent events in chunked transfer encoding, so a
``Cut`` reply is a real broken body) or not. While it waits or streams it watches the
client's socket: a client that leaves before the answer ends is recorded as a cancelled
request (``FakeOpenAI.cancelled``), as llama-server frees a slot when its client goes."""

from __future__ import annotations

import json
import math
import select
import socket
import threading
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

from scholarstream.devtools._answers import (
    Failure,
    Forever,
    Message,
    Plan,
    Silence,
    gate,
    plan,
    read_request,
)
from scholarstream.devtools._modes import Modes, parse_modes
from scholarstream.devtools._replies import Reply, Text

DEFAULT_MODELS = ("dev-model", "dev-small")
"""The model ids ``/v1/models`` lists besides the scripted ones."""

_WATCH = 0.05
"""Seconds between looks at the client's socket while the server waits."""


@dataclass
class Received:
    """One chat-completions request, as the server saw it."""

    model: str
    body: dict[str, Any]
    at: float
    status: int | None = None
    """The HTTP status answered (None: nothing was answered)."""
    cancelled: bool = False
    """The client left before the answer ended."""
    ended_at: float | None = None


@dataclass
class FakeOpenAI:
    """The server's state: scripts, defaults, modes, and every request received.

    Each request for a model takes the next reply of its script; when the script is used
    up, the model's default reply answers, else ``fallback`` (``Text("fake answer from
    <model>")`` when None, the tests' habit; the command line serves ``Auto()``)."""

    port: int = 0
    host: str = "127.0.0.1"
    models: tuple[str, ...] = DEFAULT_MODELS
    fallback: Reply | None = None
    api_key: str | None = None
    """When set, requests must carry ``Authorization: Bearer <api_key>`` (else HTTP 401)."""
    log: Callable[[str], None] | None = None
    """Called with one line per request (the command line prints them)."""
    received: list[Received] = field(default_factory=list)
    _scripts: dict[str, deque[Reply]] = field(default_factory=lambda: defaultdict(deque))
    _defaults: dict[str, Reply] = field(default_factory=dict)
    _modes: dict[str | None, Modes] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _changed: threading.Condition = field(init=False)

    def __post_init__(self) -> None:
        self._changed = threading.Condition(self._lock)

    @property
    def base_url(self) -> str:
        host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host  # noqa: S104
        return f"http://{host}:{self.port}/v1"

    def script(self, model: str, *replies: Reply) -> None:
        """Queues replies for the model's next requests, in order."""
        with self._lock:
            self._scripts[model].extend(replies)

    def default(self, model: str, reply: Reply) -> None:
        """What the model answers once its script is used up."""
        with self._lock:
            self._defaults[model] = reply

    def set_modes(self, *modes: str | Modes, model: str | None = None) -> None:
        """Turns failure modes on (``"no-tools"``, ``"slow=2"`` ...) for every model, or
        for one; replaces the modes set before for the same scope. No argument: none."""
        parsed = Modes()
        for mode in modes:
            parsed = mode if isinstance(mode, Modes) else parse_modes([mode], parsed)
        with self._lock:
            self._modes[model] = parsed

    def modes_for(self, model: str) -> Modes:
        with self._lock:
            return self._modes.get(model) or self._modes.get(None) or Modes()

    def reset(self) -> None:
        """Forgets every script, default, mode and request: a fresh server for the next test."""
        with self._lock:
            self._scripts.clear()
            self._defaults.clear()
            self._modes.clear()
            self.received.clear()

    def calls(self, model: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self.received if model is None or r.model == model)

    def cancelled(self, model: str | None = None) -> int:
        """How many requests (for ``model``) their client abandoned before the answer ended."""
        with self._lock:
            return sum(1 for r in self._of(model) if r.cancelled)

    def in_flight(self, model: str | None = None) -> int:
        """Requests still being answered: a server's busy slots."""
        with self._lock:
            return sum(1 for r in self._of(model) if r.ended_at is None)

    def wait_cancelled(
        self, model: str | None = None, *, count: int = 1, timeout: float = 5.0
    ) -> bool:
        """Waits until ``count`` requests were cancelled (the server notices a client that
        left within about 50 ms while it waits, or at its next write); False on timeout."""
        with self._changed:
            return self._changed.wait_for(
                lambda: sum(1 for r in self._of(model) if r.cancelled) >= count, timeout
            )

    def known_models(self) -> list[str]:
        with self._lock:
            scripted = [*self._scripts, *self._defaults]
        return list(dict.fromkeys([*self.models, *scripted]))

    def _of(self, model: str | None) -> list[Received]:
        return [r for r in self.received if model is None or r.model == model]

    def _receive(self, body: dict[str, Any]) -> Received:
        received = Received(str(body.get("model", "")), body, time.monotonic())
        with self._lock:
            self.received.append(received)
        return received

    def _take(self, model: str) -> Reply:
        with self._lock:
            script = self._scripts[model]
            if script:
                return script.popleft()
            return self._defaults.get(model) or self.fallback or Text(f"fake answer from {model}")

    def _end(self, received: Received, *, cancelled: bool = False) -> None:
        with self._changed:
            received.cancelled = received.cancelled or cancelled
            received.ended_at = time.monotonic()
            self._changed.notify_all()


class _ClientGoneError(Exception):
    """The client closed its connection before the answer ended."""


class _StoppingError(Exception):
    """The server is shutting down."""


class DevServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeOpenAI, address: tuple[str, int]) -> None:
        self.fake = fake
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def fake(self) -> FakeOpenAI:
        return cast("DevServer", self.server).fake

    def do_GET(self) -> None:
        if not self._authorised():
            return
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/v1/models", "/models"):
            data = [_model_entry(m) for m in self.fake.known_models()]
            self._send_json(200, {"object": "list", "data": data})
        elif path.startswith(("/v1/models/", "/models/")):
            wanted = path.rsplit("/", 1)[1]
            if wanted in self.fake.known_models():
                self._send_json(200, _model_entry(wanted))
            else:
                self._not_found(f"The model '{wanted}' does not exist", "model_not_found")
        elif path in ("/health", "/v1/health"):
            self._send_json(200, {"status": "ok"})
        else:
            self._not_found(f"no route {self.path}")
        self._log(f"GET {self.path}")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        if not self._authorised():
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        if not self.path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
            self._not_found(f"no route {self.path}")
            return
        if not isinstance(body, dict):
            body = {}
        fake = self.fake
        received = fake._receive(body)
        request = read_request(body)
        modes = fake.modes_for(request.model)
        refusal = gate(request, modes)
        answer = plan(request, refusal or fake._take(request.model), modes)
        started = time.monotonic()
        cancelled = False
        try:
            self._answer(answer, request.model, request.stream, received)
        except _ClientGoneError:
            cancelled = True
            self.close_connection = True
        except _StoppingError:
            self.close_connection = True
        finally:
            fake._end(received, cancelled=cancelled)
        outcome = "cancelled by the client" if cancelled else _describe(answer)
        self._log(
            f"POST {self.path} {request.model}{' stream' if request.stream else ''}"
            f" → {outcome} ({time.monotonic() - started:.2f} s)"
        )

    def _answer(self, answer: Plan, model: str, stream: bool, received: Received) -> None:
        if isinstance(answer, Failure):
            received.status = answer.status
            self._send_json(answer.status, answer.body, answer.headers)
            return
        self._pause(answer.first_delay)
        if isinstance(answer, Silence):
            self._pause(answer.seconds)
            self.close_connection = True  # nothing answered: the connection just ends
        elif isinstance(answer, Forever):
            if not stream:
                self._pause(None)
            received.status = 200
            self._stream_forever(model, answer)
        elif not stream:
            self._pause(answer.delay)
            if answer.cut_after is not None:
                self.close_connection = True  # dropped before any answer
                return
            received.status = 200
            self._send_json(200, _completion(model, answer))
        else:
            received.status = 200
            self._stream(model, answer)

    def _stream(self, model: str, answer: Message) -> None:
        chunk = _Chunks(model)
        self._start_events()
        self._send_event(chunk.delta({"role": "assistant"}))
        texts = [] if answer.content is None else _pieces(answer.content, answer.chunks)
        for sent, piece in enumerate(texts):
            if answer.cut_after is not None and sent >= answer.cut_after:
                self._write_raw(b"")
                self.close_connection = True
                return  # no terminating chunk: the body is broken off
            self._pause(answer.delay)
            self._send_event(chunk.delta({"content": piece}))
        for index, call in enumerate(answer.calls):
            head = {"index": index, "id": call.id, "type": "function"}
            head["function"] = {"name": call.name, "arguments": ""}
            self._send_event(chunk.delta({"tool_calls": [head]}))
            for piece in _pieces(call.arguments, answer.chunks):
                self._pause(answer.delay)
                part = {"index": index, "function": {"arguments": piece}}
                self._send_event(chunk.delta({"tool_calls": [part]}))
        self._send_event(chunk.delta({}, answer.finish_reason))
        usage = _usage(answer.prompt_tokens, answer.completion_tokens)
        self._send_event(chunk.final(usage))
        self._end_events()

    def _stream_forever(self, model: str, answer: Forever) -> None:
        chunk = _Chunks(model)
        self._start_events()
        self._send_event(chunk.delta({"role": "assistant"}))
        while True:
            self._pause(answer.interval)
            self._send_event(chunk.delta({"content": answer.text}))

    def _pause(self, seconds: float | None) -> None:
        """Waits ``seconds`` (None: until the client leaves) while watching the client."""
        deadline = math.inf if seconds is None else time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            if self.fake._stopping.is_set():
                raise _StoppingError
            if self._client_left(min(remaining, _WATCH)):
                raise _ClientGoneError

    def _client_left(self, timeout: float) -> bool:
        sock: socket.socket = self.connection
        try:
            readable, _, _ = select.select([sock], [], [], timeout)
            if not readable:
                return False
            if sock.recv(1, socket.MSG_PEEK) == b"":
                return True  # an orderly close: the client is gone
        except (OSError, ValueError):
            return True
        time.sleep(timeout)  # bytes of a next request: not ours to read now
        return False

    def _authorised(self) -> bool:
        key = self.fake.api_key
        if key is None or self.headers.get("authorization", "") == f"Bearer {key}":
            return True
        error = {
            "message": "Incorrect API key provided.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
        self._send_json(401, {"error": error})
        return False

    def _not_found(self, message: str, code: str = "not_found") -> None:
        error = {"message": message, "type": "invalid_request_error", "code": code}
        self._send_json(404, {"error": error})

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as gone:
            raise _ClientGoneError from gone

    def _start_events(self) -> None:
        try:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as gone:
            raise _ClientGoneError from gone

    def _send_event(self, event: dict[str, Any]) -> None:
        self._write_chunk(f"data: {json.dumps(event)}\n\n".encode())

    def _end_events(self) -> None:
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_raw(b"0\r\n\r\n")

    def _write_chunk(self, data: bytes) -> None:
        self._write_raw(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def _write_raw(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as gone:
            raise _ClientGoneError from gone

    def _log(self, line: str) -> None:
        if self.fake.log is not None:
            self.fake.log(line)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # one line per request goes to ``FakeOpenAI.log`` instead


class _Chunks:
    """The ``chat.completion.chunk`` events of one streamed answer."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        self.created = int(time.time())

    def _event(self, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": choices,
        }

    def delta(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return self._event([{"index": 0, "delta": delta, "finish_reason": finish}])

    def final(self, usage: dict[str, int]) -> dict[str, Any]:
        return {**self._event([]), "usage": usage}


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _completion(model: str, answer: Message) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.content}
    if answer.calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in answer.calls
        ]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": answer.finish_reason}],
        "usage": _usage(answer.prompt_tokens, answer.completion_tokens),
    }


def _model_entry(model: str) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": 0, "owned_by": "scholarstream-dev"}


def _pieces(text: str, count: int) -> list[str]:
    size = max(1, -(-len(text) // max(1, count)))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _describe(answer: Plan) -> str:
    if isinstance(answer, Failure):
        error = answer.body.get("error", {})
        return f"HTTP {answer.status} {error.get('message', '')}"
    if isinstance(answer, Silence):
        return "no answer"
    if isinstance(answer, Forever):
        return "endless answer"
    if answer.calls:
        return "tool call " + ", ".join(call.name for call in answer.calls)
    return f"text ({answer.completion_tokens} tokens, {answer.finish_reason})"


def start(fake: FakeOpenAI, host: str = "127.0.0.1", port: int = 0) -> DevServer:
    """Binds the server (an OSError if the port is taken) and records its port on ``fake``;
    the caller runs ``serve_forever``."""
    server = DevServer(fake, (host, port))
    fake.host = host
    fake.port = server.server_address[1]
    return server


@contextmanager
def fake_openai(
    *,
    fallback: Reply | None = None,
    modes: tuple[str, ...] = (),
    api_key: str | None = None,
) -> Iterator[FakeOpenAI]:
    """The development provider on a free loopback port, in a thread of this process:

    with fake_openai() as fake:
        fake.script("gpt-a", Status(429, retry_after=1), Text("the answer"))
        settings.llm.providers["fake"] = ProviderSettings(base_url=fake.base_url)
        ... "fake:gpt-a" ...
        assert fake.calls("gpt-a") == 2
    """
    fake = FakeOpenAI(fallback=fallback, api_key=api_key)
    if modes:
        fake.set_modes(*modes)
    server = start(fake)
    thread = threading.Thread(target=server.serve_forever, name="fake-openai", daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake._stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
