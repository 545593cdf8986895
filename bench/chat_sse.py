"""Chat streaming overhead: what the server adds to a model's token stream, over real HTTP.

A child process serves the app exactly as ``scholarstream serve`` does (settings and
logging as the CLI builds them, a fresh data directory migrated with
``scholarstream.db.upgrade``, ``build_runtime`` + ``create_app(runtime, engine=build_engine(...))``,
``tune_for_serving()``, uvicorn on 127.0.0.1) with one difference: the ``default`` model
role is a pydantic-ai ``FunctionModel`` whose stream function yields TOKENS tokens on a
fixed schedule: token i is due PACE * i after the model was called, as a provider streams
at its own pace whatever the reader does. Token 0 carries the call time
(``"tok0@<ns> "``, then ``"tok1 "`` ...), so the client knows when each token was due
(both processes read CLOCK_MONOTONIC).

The client (this process, on uvloop: a minimal HTTP/1.1 client, ``Connection``, that takes
each arrival time as the bytes reach it; one keep-alive connection per concurrent
conversation, opened before the level starts) posts ``POST /api/v1/chat/messages`` with
``{"message": ..., "context": {"current_page": PAGE}}`` (single-user mode, loopback, no
Origin header), each message a fresh conversation, and reads the SSE stream. A level of
CONCURRENCY runs that many users, each sending its next message as soon as its last answer
is complete, ROUNDS messages each; they start one after another over the length of one
answer (PACE * TOKENS), so that arrivals are spread as a real user population's are, not
all in the same millisecond. The figures are taken over the steady state: conversations
that started once every user was in, without each user's last (when users leave). Errors count
over every conversation. A warm-up runs first and is not counted.

    python bench/chat_sse.py [--levels 1,50,200] [--pace 0.01] [--tokens 200]
                             [--rounds 4] [--out bench/results/chat_sse.json]

The JSON goes to --out, the server's log beside it (``.server.log``); the table says whether
the targets hold (added p50 under 5 ms at 50 concurrent conversations, no errors at 200).
``DEFINITIONS`` (printed with the table) says what the figures mean.

Finding out why: ``--cprofile FILE`` profiles the server's event-loop thread;
``--diag-pool-size N``, ``--diag-no-engine`` and ``--diag-no-agent`` change the server on
purpose (a bigger database connection pool; no durable engine; the model's tokens published
without the pydantic-ai agent run) to test a suspected cause; their tables are not results
of ``scholarstream serve``. ``--register-missing-page`` registers a bare chat
page named --page if the product has none (for running before the page configs exist).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import httpx

if TYPE_CHECKING:
    from scholarstream.db import Database

T = TypeVar("T")

DEFAULT_OUT = Path("bench/results/chat_sse.json")
MESSAGE = "Summarise what is on this page."
MESSAGES_PATH = "/api/v1/chat/messages"
TARGET_CONCURRENCY = 50
TARGET_ADDED_P50_MS = 5.0
ERROR_FREE_CONCURRENCY = 200

DEFINITIONS = """\
Model schedule: token 0 is yielded as soon as the model is called; token i is due
PACE * i after the call (an absolute schedule: a late token does not delay the next).
first-delta added = arrival of the first text_delta - sending of the request. All of it is
  the server's (request handling, storing the message, resolving the model, building the
  prompt, starting the agent run), since the model's first-token delay is 0.
token added = arrival of the text_delta holding token i - the time token i was due, for
  every token after the first, pooled over the conversations. It includes the event
  loop's lateness in waking the model's timer (as it would be late reading a provider's
  socket) and everything after: the agent run, the marker filter, the turn, the SSE write.
status            = arrival of the status event (the message is stored, the turn started)
  - sending of the request.
complete added (JSON only) = arrival of complete - sending of the request - PACE * (TOKENS-1).
Arrival times are taken when the client's socket read returns the chunk holding the event.
Errors: an HTTP error, an error event, no complete event, tokens missing or out of order,
or a final message that is not the tokens (every conversation of the level counts).
srv CPU = the server process's CPU time during the level / wall time (100% = one core);
  loop = the same for its event-loop thread alone (near 100%: the loop is saturated and
  every event waits); in the JSON also per text_delta (all the server's work / deltas).
wait    = the time the server's event-loop thread was runnable but had no CPU (the machine
  is shared), as a share of the wall time; the JSON has the client's too.
cli lag = the client's own event-loop lag (p95 oversleep of a 1 ms timer): when large, the
  client, not the server, delays the arrivals."""


# --- the server child -----------------------------------------------------------------------


def serve_child(args: argparse.Namespace) -> None:
    """``scholarstream serve`` (src/scholarstream/cli/server_cmd.py), with the paced model,
    plus the diagnostic changes the options ask for (none by default)."""
    import uvicorn
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from scholarstream.bootstrap import build_engine, create_app
    from scholarstream.db import upgrade
    from scholarstream.gc_tuning import tune_for_serving
    from scholarstream.logs import configure_logging
    from scholarstream.runtime import build_runtime
    from scholarstream.settings import load_settings

    tokens: int = args.tokens
    pace: float = args.pace

    async def paced_tokens(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
        called = time.monotonic_ns()
        yield f"tok0@{called} "
        for i in range(1, tokens):
            due = called + round(i * pace * 1e9)
            await asyncio.sleep(max(0.0, (due - time.monotonic_ns()) / 1e9))
            yield f"tok{i} "

    settings = load_settings(None, data_dir=args.data_dir)
    configure_logging(settings.logging, secrets=settings.secret_values())
    upgrade(settings.app_database_url)
    model = FunctionModel(stream_function=paced_tokens, model_name="bench-paced")
    runtime = build_runtime(settings, model_overrides={"default": model})
    if args.diag_no_agent:
        _stream_without_agent(paced_tokens)
    if args.diag_pool_size:
        _replace_pool(runtime.database, args.diag_pool_size)
    app = create_app(runtime, engine=None if args.diag_no_engine else build_engine(runtime))
    if args.register_missing_page:
        from scholarstream.chat.pages import pages, register_page

        if args.page not in {p.page for p in pages()}:
            register_page(args.page)
    tune_for_serving()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=args.port, log_config=None, proxy_headers=True)
    )
    # uvicorn re-raises the SIGINT it stopped on, once it has shut down: the expected end.
    with contextlib.suppress(KeyboardInterrupt):
        if args.cprofile is None:
            server.run()
            return
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
        try:
            server.run()
        finally:
            profiler.disable()
            profiler.dump_stats(args.cprofile)


def _stream_without_agent(tokens: Callable[..., AsyncIterator[str]]) -> None:
    """Diagnostic: the chat publishes the paced model's tokens itself instead of running the
    pydantic-ai agent (no agent, no graph, no tools): what everything else costs."""
    from scholarstream.chat import Assistant, ChatMessageIn, StartedTurn, Turn, TurnTranscript
    from scholarstream.chat.continuity import TurnContinuity
    from scholarstream.chat.core import TextDeltaEvent
    from scholarstream.chat.pages import Resolution
    from scholarstream.chat.tools import ToolContext

    async def run_model(
        self: Assistant,
        turn: Turn,
        request: ChatMessageIn,
        resolution: Resolution,
        context: ToolContext,
        started: StartedTurn,
        transcript: TurnTranscript,
        continuity: TurnContinuity | None,
    ) -> None:
        async for token in tokens([], None):
            transcript.text += token
            turn.publish(TextDeltaEvent(text=token))

    Assistant._run_model = run_model  # type: ignore[method-assign]


def _replace_pool(database: Database, size: int) -> None:
    """Diagnostic: the same engine options with a connection pool of ``size``."""
    from sqlalchemy import event
    from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

    from scholarstream.db._session import _sqlite_pragmas

    database.engine = create_async_engine(
        database.url, pool_pre_ping=True, pool_size=size, max_overflow=0
    )
    if database.engine.dialect.name == "sqlite":
        event.listen(database.engine.sync_engine, "connect", _sqlite_pragmas)
    database.sessionmaker = async_sessionmaker(database.engine, expire_on_commit=False)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _cpu_seconds(pid: int, *, main_thread: bool = False) -> float:
    """User + system CPU time of a process (all its threads), or of its main thread (the
    one uvicorn runs the event loop in)."""
    path = f"/proc/{pid}/task/{pid}/stat" if main_thread else f"/proc/{pid}/stat"
    fields = Path(path).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _runqueue_wait_seconds(pid: int, tid: int) -> float:
    """How long a thread has waited for a CPU while runnable (other processes had them)."""
    return int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[1]) / 1e9


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextlib.contextmanager
def serve(args: argparse.Namespace, work_dir: Path) -> Iterator[Server]:
    port = _free_port()
    log = work_dir / "server.log"
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--serve-child",
        "--port",
        str(port),
        "--data-dir",
        str(work_dir / "data"),
        "--tokens",
        str(args.tokens),
        "--pace",
        str(args.pace),
    ]
    if args.cprofile:
        command += ["--cprofile", str(args.cprofile.resolve())]
    if args.register_missing_page:
        command += ["--register-missing-page", "--page", args.page]
    if args.diag_pool_size:
        command += ["--diag-pool-size", str(args.diag_pool_size)]
    if args.diag_no_engine:
        command += ["--diag-no-engine"]
    if args.diag_no_agent:
        command += ["--diag-no-agent"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARSTREAM_")}
    with log.open("wb") as sink:
        process = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT)
    server = Server(process, port, log)
    try:
        _wait_healthy(server)
        yield server
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_healthy(server: Server) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise SystemExit(f"the server exited during start-up:\n{_tail(server.log)}")
        try:
            if httpx.get(server.base_url + "/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise SystemExit(f"the server was not healthy within 120 s:\n{_tail(server.log)}")


def _tail(log: Path, lines: int = 60) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def server_problems(log: Path) -> list[str]:
    """The lines of the server's log that start a traceback or an ERROR/WARNING record."""
    problems = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("Traceback") or " ERROR " in line or " WARNING " in line:
            problems.append(line[:300])
    return problems


# --- the client ------------------------------------------------------------------------------


@dataclass
class Conversation:
    started: float = 0.0
    ended: float = 0.0
    status_ms: float | None = None
    first_delta_ms: float | None = None
    complete_ms: float | None = None
    token_added_ms: list[float] = field(default_factory=list)
    tokens: int = 0
    error: str | None = None


class _Reader:
    """Consumes one SSE response: ``data:`` lines joined per event, a blank line ends one.
    Times are ``time.monotonic()`` seconds."""

    def __init__(self, started: float, tokens: int, pace: float) -> None:
        self.started = started
        self.tokens = tokens
        self.pace = pace
        self.result = Conversation(started=started)
        self.called: float | None = None  # the model's call time, from token 0
        self.text = ""  # streamed text not yet split into whole tokens
        self.streamed: list[str] = []
        self.data: list[bytes] = []
        self.partial = b""

    def feed(self, chunk: bytes, now: float) -> None:
        lines = (self.partial + chunk).split(b"\n")
        self.partial = lines.pop()
        for raw in lines:
            line = raw.removesuffix(b"\r")
            if not line:
                if self.data:
                    self._event(b"\n".join(self.data), now)
                    self.data = []
            elif line.startswith(b"data:"):
                value = line[5:]
                self.data.append(value[1:] if value.startswith(b" ") else value)

    def _event(self, data: bytes, now: float) -> None:
        result = self.result
        event = json.loads(data)
        kind = event.get("type")
        if kind == "text_delta":
            self._delta(event["text"], now)
        elif kind == "status" and result.status_ms is None:
            result.status_ms = (now - self.started) * 1000
        elif kind == "complete":
            result.complete_ms = (now - self.started) * 1000
            message = event["payload"]["message"]
            if message != "".join(self.streamed).strip():
                self._fail(f"final message differs from the streamed text: {message[:80]!r}...")
        elif kind == "error":
            self._fail(f"error event: {event.get('code')}: {event.get('message')}")
        elif kind != "status":
            self._fail(f"unexpected {kind} event")

    def _delta(self, text: str, now: float) -> None:
        result = self.result
        if result.first_delta_ms is None:
            result.first_delta_ms = (now - self.started) * 1000
        self.streamed.append(text)
        self.text += text
        *whole, self.text = self.text.split(" ")
        for token in whole:
            self._token(token, now)

    def _token(self, token: str, now: float) -> None:
        name, _, called = token.partition("@")
        index = int(name.removeprefix("tok"))
        if index != self.result.tokens:
            self._fail(f"token {index} arrived when token {self.result.tokens} was expected")
        self.result.tokens += 1
        if index == 0:
            self.called = int(called) / 1e9
        elif self.called is not None:
            due = self.called + index * self.pace
            self.result.token_added_ms.append((now - due) * 1000)

    def _fail(self, error: str) -> None:
        if self.result.error is None:
            self.result.error = error

    def finish(self) -> Conversation:
        result = self.result
        result.ended = time.monotonic()
        if result.complete_ms is None:
            self._fail("the stream ended without a complete event")
        elif result.tokens != self.tokens:
            self._fail(f"{result.tokens} tokens streamed of {self.tokens}")
        return result


class Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection to the server that reads each answer as its bytes
    arrive: the arrival time is taken when the socket's data reaches the protocol, before
    anything is parsed, and the parse (chunked framing, then SSE) costs a few microseconds
    per chunk. (An HTTP client library costs tens per chunk: at 50 streams the client's own
    work then queued the arrivals it measured.)"""

    def __init__(self) -> None:
        self.transport: asyncio.WriteTransport | None = None
        self.buffer = bytearray()
        self.reader: _Reader | None = None
        self.done: asyncio.Future[None] | None = None
        self.status: int | None = None
        self.length: int | None = None  # a body with a Content-Length (an error answer)
        self.error_body = bytearray()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # TCP_NODELAY is asyncio's and uvloop's default. (uvloop's transports are not
        # subclasses of asyncio's.)
        self.transport = cast("asyncio.WriteTransport", transport)

    def send(self, request: bytes, reader: _Reader) -> asyncio.Future[None]:
        assert self.transport is not None
        self.reader, self.status, self.length = reader, None, None
        self.error_body.clear()
        self.done = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self.done

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        self.buffer += data
        if self.status is None and not self._head():
            return
        if self.length is not None:
            if len(self.buffer) >= self.length:
                self.error_body += self.buffer[: self.length]
                del self.buffer[: self.length]
                self._finish()
            return
        while (line_end := self.buffer.find(b"\r\n")) >= 0:
            size = int(bytes(self.buffer[:line_end]).split(b";")[0], 16)
            end = line_end + 2 + size + 2
            if len(self.buffer) < end:
                return
            chunk = bytes(self.buffer[line_end + 2 : end - 2])
            del self.buffer[:end]
            if size == 0:
                self._finish()
                return
            if self.status == 200 and self.reader is not None:
                self.reader.feed(chunk, now)
            else:
                self.error_body += chunk

    def _head(self) -> bool:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return False
        lines = bytes(self.buffer[:end]).split(b"\r\n")
        del self.buffer[: end + 4]
        self.status = int(lines[0].split(b" ", 2)[1])
        headers = dict(line.lower().split(b": ", 1) for line in lines[1:] if b": " in line)
        if headers.get(b"transfer-encoding") != b"chunked":
            self.length = int(headers.get(b"content-length", b"0"))
        return True

    def _finish(self) -> None:
        if self.done is not None and not self.done.done():
            self.done.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.done is not None and not self.done.done():
            self.done.set_exception(ConnectionError(f"the server closed the connection: {exc}"))


def chat_request(host: str, page: str) -> bytes:
    body = json.dumps({"message": MESSAGE, "context": {"current_page": page}}).encode()
    head = (
        f"POST {MESSAGES_PATH} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def converse(
    connection: Connection, request: bytes, tokens: int, pace: float
) -> Conversation:
    started = time.monotonic()
    reader = _Reader(started, tokens, pace)
    try:
        await asyncio.wait_for(connection.send(request, reader), 120)
    except (OSError, TimeoutError) as exc:
        reader.result.error = f"{type(exc).__name__}: {exc}"
        reader.result.ended = time.monotonic()
        return reader.result
    if connection.status != 200:
        text = bytes(connection.error_body).decode(errors="replace")
        reader.result.error = f"HTTP {connection.status}: {text[:300]}"
        reader.result.ended = time.monotonic()
        return reader.result
    return reader.finish()


class LoopLag:
    """The client's own event-loop lag: how late a 1 ms timer fires."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.001)
            self.samples.append((time.monotonic() - before - 0.001) * 1000)

    def __enter__(self) -> LoopLag:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *_: object) -> None:
        if self._task is not None:
            self._task.cancel()


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass
class Level:
    concurrency: int
    conversations: int
    measured: int
    errors: int
    first_delta_added_ms_p50: float | None
    first_delta_added_ms_p95: float | None
    token_added_ms_p50: float | None
    token_added_ms_p95: float | None
    token_added_ms_max: float | None
    status_ms_p50: float | None
    status_ms_p95: float | None
    complete_added_ms_p50: float | None
    wall_seconds: float
    server_cpu_percent: float
    server_loop_cpu_percent: float
    server_loop_cpu_wait_percent: float
    server_cpu_us_per_delta: float | None
    client_cpu_percent: float
    client_cpu_wait_percent: float
    client_loop_lag_ms_p95: float | None
    error_samples: list[str]


async def _users(
    connections: Sequence[Connection], request: bytes, rounds: int, tokens: int, pace: float
) -> list[Conversation]:
    """One user per connection, each sending ``rounds`` messages one after another; user k
    starts k/users of one answer's length after the first."""
    ramp = tokens * pace
    users = len(connections)

    async def user(k: int) -> list[Conversation]:
        await asyncio.sleep(ramp * k / users)
        return [await converse(connections[k], request, tokens, pace) for _ in range(rounds)]

    per_user = await asyncio.gather(*(user(k) for k in range(users)))
    return [c for conversations in per_user for c in conversations]


def steady_state(conversations: Sequence[Conversation], users: int) -> list[Conversation]:
    """Those that started once every user was in, but not a user's last (when users leave
    the load falls). ``conversations`` are grouped per user, in order."""
    if users == 1:
        return list(conversations)
    rounds = len(conversations) // users
    everyone_in = max(conversations[u * rounds].started for u in range(users))
    return [
        c
        for u in range(users)
        for c in conversations[u * rounds : (u + 1) * rounds - 1]
        if c.started >= everyone_in
    ]


@contextlib.asynccontextmanager
async def _connections(server: Server, count: int) -> AsyncIterator[list[Connection]]:
    """One open connection per user, before anything is timed."""
    loop = asyncio.get_running_loop()
    opened = [
        await loop.create_connection(Connection, "127.0.0.1", server.port) for _ in range(count)
    ]
    try:
        yield [connection for _, connection in opened]
    finally:
        for transport, _ in opened:
            transport.close()


async def run_level(
    server: Server, users: int, rounds: int, page: str, tokens: int, pace: float
) -> Level:
    request = chat_request(f"127.0.0.1:{server.port}", page)
    async with _connections(server, users) as connections:
        cpu_before = _cpu_seconds(server.process.pid)
        loop_cpu_before = _cpu_seconds(server.process.pid, main_thread=True)
        pid, me = server.process.pid, os.getpid()
        waits_before = (_runqueue_wait_seconds(pid, pid), _runqueue_wait_seconds(me, me))
        client_cpu_before = time.process_time()
        began = time.monotonic()
        with LoopLag() as lag:
            results = await _users(connections, request, rounds, tokens, pace)
        wall = time.monotonic() - began
        server_cpu = _cpu_seconds(server.process.pid) - cpu_before
        loop_cpu = _cpu_seconds(server.process.pid, main_thread=True) - loop_cpu_before
        server_wait = _runqueue_wait_seconds(pid, pid) - waits_before[0]
        client_wait = _runqueue_wait_seconds(me, me) - waits_before[1]
        client_cpu = time.process_time() - client_cpu_before
    failed = [r for r in results if r.error is not None]
    measured = [r for r in steady_state(results, users) if r.error is None]
    added = [ms for r in measured for ms in r.token_added_ms]
    firsts = [r.first_delta_ms for r in measured if r.first_delta_ms is not None]
    statuses = [r.status_ms for r in measured if r.status_ms is not None]
    schedule_ms = (tokens - 1) * pace * 1000
    completes = [r.complete_ms - schedule_ms for r in measured if r.complete_ms is not None]
    streamed = sum(r.tokens for r in results)
    return Level(
        concurrency=users,
        conversations=len(results),
        measured=len(measured),
        errors=len(failed),
        first_delta_added_ms_p50=percentile(firsts, 0.5),
        first_delta_added_ms_p95=percentile(firsts, 0.95),
        token_added_ms_p50=percentile(added, 0.5),
        token_added_ms_p95=percentile(added, 0.95),
        token_added_ms_max=max(added) if added else None,
        status_ms_p50=percentile(statuses, 0.5),
        status_ms_p95=percentile(statuses, 0.95),
        complete_added_ms_p50=percentile(completes, 0.5),
        wall_seconds=wall,
        server_cpu_percent=100 * server_cpu / wall,
        server_loop_cpu_percent=100 * loop_cpu / wall,
        server_loop_cpu_wait_percent=100 * server_wait / wall,
        server_cpu_us_per_delta=1e6 * server_cpu / streamed if streamed else None,
        client_cpu_percent=100 * client_cpu / wall,
        client_cpu_wait_percent=100 * client_wait / wall,
        client_loop_lag_ms_p95=percentile(lag.samples, 0.95),
        error_samples=sorted({r.error for r in failed if r.error})[:5],
    )


async def run_all(server: Server, args: argparse.Namespace) -> tuple[int, list[Level]]:
    warm = await run_level(server, args.warmup, 1, args.page, args.tokens, args.pace)
    if warm.errors == warm.conversations:
        raise SystemExit(
            "Every warm-up conversation failed: "
            + "; ".join(warm.error_samples)
            + f"\n--- server log (tail) ---\n{_tail(server.log)}"
        )
    levels = []
    for users in args.levels:
        rounds = max(args.rounds, math.ceil(args.min_conversations / users))
        print(f"level {users}: {users} users x {rounds} messages ...", flush=True)
        levels.append(await run_level(server, users, rounds, args.page, args.tokens, args.pace))
    return warm.errors, levels


def _run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """On uvloop when installed (as the server is), so the client reads as fast as it can."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine)


# --- report ----------------------------------------------------------------------------------


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def print_table(levels: Sequence[Level]) -> None:
    print(DEFINITIONS)
    print()
    header = (
        f"{'conc':>5} {'convs':>6} {'meas':>5} {'errors':>6} {'first+ p50':>10} "
        f"{'first+ p95':>10} {'tok+ p50':>9} {'tok+ p95':>9} {'status p50':>10} {'wall s':>7} "
        f"{'srv CPU':>8} {'loop':>5} {'wait':>5} {'cli lag':>8}"
    )
    print(header)
    print("-" * len(header))
    for level in levels:
        print(
            f"{level.concurrency:5d} {level.conversations:6d} {level.measured:5d} "
            f"{level.errors:6d} {_ms(level.first_delta_added_ms_p50):>10} "
            f"{_ms(level.first_delta_added_ms_p95):>10} "
            f"{_ms(level.token_added_ms_p50):>9} {_ms(level.token_added_ms_p95):>9} "
            f"{_ms(level.status_ms_p50):>10} {level.wall_seconds:7.2f} "
            f"{level.server_cpu_percent:7.0f}% {level.server_loop_cpu_percent:4.0f}% "
            f"{level.server_loop_cpu_wait_percent:4.0f}% "
            f"{_ms(level.client_loop_lag_ms_p95):>8}"
        )
    print("(times in ms; 'first+' and 'tok+' are the added delays defined above;")
    print(" 'meas' = the steady-state conversations the times are taken over)")
    for level in levels:
        for sample in level.error_samples:
            print(f"  error at {level.concurrency}: {sample}")


def check_targets(levels: Sequence[Level]) -> dict[str, bool | None]:
    by_concurrency = {level.concurrency: level for level in levels}
    target = by_concurrency.get(TARGET_CONCURRENCY)
    heavy = by_concurrency.get(ERROR_FREE_CONCURRENCY)

    def under(value: float | None) -> bool | None:
        return None if value is None else value < TARGET_ADDED_P50_MS

    return {
        f"first-delta added p50 < {TARGET_ADDED_P50_MS:g} ms at {TARGET_CONCURRENCY}": (
            under(target.first_delta_added_ms_p50) if target else None
        ),
        f"token added p50 < {TARGET_ADDED_P50_MS:g} ms at {TARGET_CONCURRENCY}": (
            under(target.token_added_ms_p50) if target else None
        ),
        f"no errors at {ERROR_FREE_CONCURRENCY}": (heavy.errors == 0 if heavy else None),
    }


def print_targets(targets: dict[str, bool | None]) -> None:
    print()
    for name, held in targets.items():
        verdict = "not measured" if held is None else ("holds" if held else "MISSED")
        print(f"target: {name}: {verdict}")


def print_profile(path: Path, limit: int = 30) -> None:
    import pstats

    stats = pstats.Stats(str(path))
    stats.sort_stats("tottime").print_stats(limit)
    stats.sort_stats("cumulative").print_stats(limit)


def _levels(text: str) -> list[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("give positive integers, e.g. 1,50,200")
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=_levels, default=[1, 50, 200], help="e.g. 1,50,200")
    parser.add_argument("--pace", type=float, default=0.010, help="seconds between tokens")
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument(
        "--rounds", type=int, default=4, help="messages each user sends, one after another"
    )
    parser.add_argument(
        "--min-conversations",
        type=int,
        default=10,
        help="conversations per level at least (more rounds for a small level)",
    )
    parser.add_argument("--warmup", type=int, default=5, help="users of one message, not counted")
    parser.add_argument("--page", default="home", help="the context's current_page")
    parser.add_argument(
        "--register-missing-page",
        action="store_true",
        help="if the product registers no chat page named --page, register a bare one in the "
        "server (for running before the page configs exist; reported in the JSON)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the figures as JSON")
    parser.add_argument(
        "--cprofile",
        type=Path,
        help="profile the server's event-loop thread with cProfile into this file and print "
        "its top functions (profiling slows the server: do not read the table as a result)",
    )
    parser.add_argument(
        "--diag-pool-size",
        type=int,
        help="DIAGNOSTIC, not what serve does: give the server's database a connection pool "
        "of this size (serve: SQLAlchemy's default, 5 + 10 overflow)",
    )
    parser.add_argument(
        "--diag-no-engine",
        action="store_true",
        help="DIAGNOSTIC, not what serve does: run the server without the durable engine",
    )
    parser.add_argument(
        "--diag-no-agent",
        action="store_true",
        help="DIAGNOSTIC, not what serve does: the chat streams the paced model's tokens "
        "without running the pydantic-ai agent (the cost of everything but the agent run)",
    )
    # The server child (started by the benchmark itself).
    parser.add_argument("--serve-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.serve_child:
        serve_child(args)
        return

    with tempfile.TemporaryDirectory(prefix="chat-sse-") as tmp:
        with serve(args, Path(tmp)) as server:
            warmup_errors, levels = _run_async(run_all(server, args))
        problems = server_problems(server.log)
        server_log = args.out.with_suffix(".server.log")
        server_log.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(server.log, server_log)
    print_table(levels)
    targets = check_targets(levels)
    print_targets(targets)
    if warmup_errors:
        print(f"({warmup_errors} warm-up conversations failed)")
    if problems:
        print(f"\nThe server logged {len(problems)} warnings/errors/tracebacks; the first:")
        for line in problems[:10]:
            print("  " + line)
    if args.cprofile:
        print_profile(args.cprofile)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "definitions": DEFINITIONS,
        "settings": {
            "pace_seconds": args.pace,
            "tokens": args.tokens,
            "page": args.page,
            "register_missing_page": args.register_missing_page,
            "warmup": args.warmup,
            "rounds": args.rounds,
            "min_conversations": args.min_conversations,
            "profiled": args.cprofile is not None,
            "diagnostic_pool_size": args.diag_pool_size,
            "diagnostic_no_engine": args.diag_no_engine,
            "diagnostic_no_agent": args.diag_no_agent,
            "cpus": os.cpu_count(),
        },
        "levels": [asdict(level) for level in levels],
        "targets": targets,
        "warmup_errors": warmup_errors,
        "server_problems": problems[:50],
    }
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out} and the server's log {server_log}")


if __name__ == "__main__":
    main()
