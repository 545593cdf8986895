"""Every AI feature against a real small model behind llama.cpp's ``llama-server`` (issue 22).

The bench starts ``llama-server`` on 127.0.0.1 with a GGUF instruct model, serves the whole
product in this process (``build_runtime`` + ``build_engine`` + ``create_app`` under uvicorn,
on a loopback port, a fresh SQLite data directory) with two OpenAI-compatible providers
that both point at the server, and drives each feature N times through the product's HTTP
API, as the web UI does:

  chat       a chat turn on the library page asking to search the library (a tool call)
  guide      one stream-guide turn (stream creation)
  search     a search run over the local library up to its strategy checkpoint (intent
             parsing + query building; no literature source is called)
  relevance  the same run approved: library search, scoring, organising, to the result
             review (relevance scoring)
  ai_column  one yes/no AI column over a few library records
  research   a multi-LLM research of two models (the same server under two provider
             names) with a synthesis

The library is seeded with a small real RIS export from ../shared/data (Scopus, 9 records,
see its SOURCE.txt). Connections outside the loopback are refused (and listed), as in the
tests: a feature that reaches for the network shows up as a failure.

    python bench/local_model.py --server-bin PATH/llama-server --model PATH.gguf
        [--runs 3] [--port 0] [--ctx 12288] [--parallel 2] [--n-predict 1024] [--threads N]
        [--features chat,guide,search,relevance,ai_column,research]
        [--deadline SECONDS] [--timeout SECONDS] [--json FILE] [--keep-data]

llama-server is started with ``--jinja`` (its chat template handles tools; without it a
request with tools is answered HTTP 500 "tools param requires --jinja flag"), ``-c`` the
context (split between the ``-np`` slots: each gets c/np tokens), ``-np`` parallel slots,
``-n`` its own cap on generated tokens (the product also sends max_tokens per feature), and
``--alias`` the model name the product asks for. Its log goes beside the JSON.
``DEFINITIONS`` (printed with the table) says what the figures mean. Exit status 1 when a
run failed, 2 when the server binary or the model is missing or the server does not start.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    import uvicorn

    from scholarstream.settings import Settings

FEATURES = ("chat", "guide", "search", "relevance", "ai_column", "research")
DEFAULT_JSON = Path("bench/results/local_model.json")
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
LIBRARY_FILE = SHARED_DATA / "exports" / "asysd_testthat" / "scopus.ris"
PROVIDER = "llamacpp"
SECOND_PROVIDER = "llamacpp2"  # the same server under a second name: research's 2nd model
GGUF_MAGIC = b"GGUF"

CHAT_MESSAGE = "Search my library for studies about diseases in dogs."
GUIDE_MESSAGE = "I want to follow new studies on diabetes mellitus in dogs, every week."
SEARCH_QUESTION = "Which treatments are used for hypothyroidism in dogs?"
COLUMN_CRITERIA = "Is the study about dogs (canine patients or dog owners)?"
RESEARCH_PROMPT = "How is hypothyroidism in dogs diagnosed and treated? Answer briefly."

# What the product records where it used its offline step instead of the model's answer
# (issue 22, point 3): ``fallbacks`` (a search run, a research) or ``fallback`` (a guide
# turn) holding ModelFallback records ({"skill", "reason", "message", "hint"}), and a
# completed research without a synthesis ("Synthesis not available"). Other keys and the
# notice's words are matched too, for records still being added (chat, AI columns).
FALLBACK_KEYS = frozenset({"fallbacks", "fallback", "notices", "notice", "offline_steps"})
FALLBACK_WORDS = (
    "offline step was used",
    "could not be used",
    "synthesis not available",
    "offline guide answered",
)
# The skills of a search run that belong to each bench feature (a run's fallbacks list
# grows over the run: the relevance step must not count the strategy's fallbacks).
SEARCH_SKILLS = {
    "search": ("search.intent", "search.query"),
    "relevance": ("search.score", "search.organize", "search.dedup"),
}
# A tool call written as text, shown to the user (issue 22, point 4: never).
RAW_TOOL_CALL = re.compile(r'(<tool_call>|"name"\s*:\s*"[a-z_]+"\s*,\s*"arguments"\s*:)')

DEFINITIONS = """\
outcome of a run (one per run, the worst of what the user saw):
  model     the feature completed with the model's answer.
  fell back the feature completed, and the product says it used its offline step for at
            least one call (a record or notice on the run, turn, cell or research), or the
            bench saw the model's last answer for a step be unusable (HTTP error, cut at
            max_tokens, not JSON where JSON was asked for, abandoned) while the product
            completed anyway: "silent" in the notes, a fallback the product did not record.
  failed    an error reached the user: an HTTP error, an error event, a failed run, cell
            or research, a research awaiting confirmation (a model failed), raw tool-call
            JSON shown in chat, or no answer within the bench's limit.
p50 / max   seconds of the run as the user waits for it (request sent -> complete event,
            run at its checkpoint, values returned, research completed).
calls       requests llama-server got during the feature's runs (the bench records them in
            the product's HTTP client): json_schema = response_format json_schema (the
            "native" structured output), tools = a request offering tools, length = an
            answer cut at max_tokens (finish_reason "length"), errors = HTTP errors and
            requests the product abandoned before the answer ended.
llama-server figures (from its own timings): prompt = prompt tokens evaluated per second,
  gen = tokens generated per second, first token = time to the first streamed token, cold
  (no prompt prefix in the slot's cache) and warm (part of the prompt served from it)."""


# --- refusing clearly -------------------------------------------------------------------------


class BenchError(RuntimeError):
    """Stops the bench with a message (exit status 2)."""


def check_inputs(server_bin: Path, model: Path) -> None:
    check_server_inputs(server_bin, model)
    if not LIBRARY_FILE.is_file():
        raise BenchError(f"the library seed {LIBRARY_FILE} is missing (../shared/data).")


def check_server_inputs(server_bin: Path, model: Path) -> None:
    """The llama-server binary and the GGUF model (bench/continuity.py's real mode too)."""
    if not server_bin.is_file():
        raise BenchError(
            f"llama-server binary not found: {server_bin}. Build llama.cpp (cmake -B build && "
            "cmake --build build --target llama-server) and pass build/bin/llama-server."
        )
    if not os.access(server_bin, os.X_OK):
        raise BenchError(f"{server_bin} is not executable (chmod +x, or pass the real binary).")
    if not model.is_file():
        raise BenchError(f"model file not found: {model}. Pass a GGUF instruct model.")
    with model.open("rb") as handle:
        if handle.read(4) != GGUF_MAGIC:
            raise BenchError(f"{model} is not a GGUF file (it does not start with 'GGUF').")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# --- no network but the loopback --------------------------------------------------------------

blocked: list[str] = []
_real_connect = socket.socket.connect


def _is_loopback(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX
        return True
    host = str(address[0])
    return host in ("localhost", "127.0.0.1", "::1", "")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if not _is_loopback(address):
        blocked.append(repr(address))
        raise OSError(f"the benchmark must not reach the network (tried {address!r})")
    _real_connect(self, address)


def prepared(check: Callable[[], None]) -> bool:
    """Runs ``check`` on the bench's inputs (False, with the reason printed, when one is
    missing), then keeps the developer's own configuration out of the run and its
    connections to the loopback."""
    try:
        check()
    except BenchError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return False
    for name in list(os.environ):
        if name.startswith("SCHOLARSTREAM_") or name.endswith("_API_KEY"):
            del os.environ[name]
    loopback_only()
    return True


def loopback_only() -> None:
    """Like bench/_offline.py, but real model requests stay allowed: the model is local."""
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]


# --- llama-server -----------------------------------------------------------------------------


@dataclass
class ServerOptions:
    binary: Path
    model: Path
    port: int
    ctx: int
    parallel: int
    n_predict: int
    alias: str
    threads: int | None
    log: Path
    # A Jinja chat template instead of the model's own (one whose template has no tools
    # section never sees the tools it is offered: llama-server drops them).
    chat_template_file: Path | None = None

    def command(self) -> list[str]:
        cmd = [
            str(self.binary),
            "--model", str(self.model),
            "--alias", self.alias,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--jinja",  # tool calls through the model's chat template
            "--ctx-size", str(self.ctx),  # split between the slots
            "--parallel", str(self.parallel),
            "--n-predict", str(self.n_predict),
        ]  # fmt: skip
        if self.threads:
            cmd += ["--threads", str(self.threads)]
        if self.chat_template_file:
            cmd += ["--chat-template-file", str(self.chat_template_file)]
        return cmd


class LlamaServer:
    """The child process; stopped (TERM, then KILL) whatever ends the bench."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        self.process: subprocess.Popen[bytes] | None = None
        self.base_url = f"http://127.0.0.1:{options.port}"

    def start(self, wait_seconds: float) -> float:
        self.options.log.parent.mkdir(parents=True, exist_ok=True)
        log = self.options.log.open("wb")
        started = time.monotonic()
        self.process = subprocess.Popen(
            self.options.command(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        while time.monotonic() - started < wait_seconds:
            if self.process.poll() is not None:
                raise BenchError(
                    f"llama-server exited with status {self.process.returncode} while "
                    f"starting; its last lines ({self.options.log}):\n{self.tail()}"
                )
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/health", timeout=2).status_code == 200:
                    return time.monotonic() - started
            time.sleep(0.5)
        raise BenchError(f"llama-server did not answer /health within {wait_seconds:g} s")

    def tail(self, lines: int = 15) -> str:
        try:
            text = self.options.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


# --- what llama-server was asked and answered -------------------------------------------------


@dataclass
class ModelCall:
    started: float
    stream: bool
    max_tokens: int | None
    structured: str  # json_schema | json_object | tools | text
    tools: list[str]
    status: int | None = None
    first_byte: float | None = None
    ended: float | None = None
    finish_reason: str | None = None
    abandoned: bool = False
    error: str | None = None
    content: str = ""
    tool_calls: int = 0
    # The tool calls as the model wrote them: 'name {arguments}' each (first 4000 characters).
    tool_text: list[str] = field(default_factory=list)
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_per_second: float | None = None
    predicted_per_second: float | None = None

    def unusable(self) -> str | None:
        """Why this answer could not be used as asked, if it could not."""
        if self.error:
            return self.error
        if self.status is not None and self.status >= 400:
            return f"HTTP {self.status}"
        if self.abandoned:
            return "abandoned by the product before the answer ended"
        if self.finish_reason == "length":
            return "cut at max_tokens"
        if self.structured in ("json_schema", "json_object") and not _is_json(self.content):
            return "not JSON"
        return None


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _request_shape(body: dict[str, Any]) -> tuple[str, list[str]]:
    tools = [str(t.get("function", {}).get("name", "?")) for t in body.get("tools") or [] if t]
    response_format = body.get("response_format") or {}
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind in ("json_schema", "json_object"):
        return str(kind), tools
    return ("tools" if tools else "text"), tools


def _read_answer(call: ModelCall, body: dict[str, Any]) -> None:
    choice = (body.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    call.content = str(message.get("content") or "")[:4000]
    call.tool_calls = len(message.get("tool_calls") or [])
    call.tool_text = [
        f"{function.get('name', '?')} {function.get('arguments') or ''}"[:4000]
        for t in message.get("tool_calls") or []
        if isinstance(function := t.get("function") or {}, dict)
    ]
    call.finish_reason = choice.get("finish_reason")
    _read_timings(call, body)


def _read_timings(call: ModelCall, body: dict[str, Any]) -> None:
    usage = body.get("usage") or {}
    if usage:
        call.prompt_tokens = usage.get("prompt_tokens")
        call.completion_tokens = usage.get("completion_tokens")
        call.cached_tokens = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    timings = body.get("timings") or {}
    if timings:
        call.cached_tokens = timings.get("cache_n", call.cached_tokens)
        call.prompt_per_second = timings.get("prompt_per_second")
        call.predicted_per_second = timings.get("predicted_per_second")
        call.completion_tokens = timings.get("predicted_n", call.completion_tokens)


def _read_stream(call: ModelCall, raw: bytes) -> None:
    text: list[str] = []
    tool_calls: dict[int, list[str]] = {}  # index -> [name, arguments so far]
    for line in raw.decode("utf-8", errors="replace").splitlines():
        if not line.startswith("data:") or line.strip() == "data: [DONE]":
            continue
        try:
            chunk = json.loads(line[5:])
        except ValueError:
            continue
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            text.append(str(delta.get("content") or ""))
            for t in delta.get("tool_calls") or []:
                function = t.get("function") or {}
                parts = tool_calls.setdefault(int(t.get("index", 0)), ["", ""])
                parts[0] += str(function.get("name") or "")
                parts[1] += str(function.get("arguments") or "")
            if choice.get("finish_reason"):
                call.finish_reason = choice["finish_reason"]
        _read_timings(call, chunk)
    call.content = "".join(text)[:4000]
    call.tool_calls = len(tool_calls)
    call.tool_text = [f"{name} {arguments}"[:4000] for name, arguments in tool_calls.values()]


# The first chunk that carries a token: llama-server may send chunks before (the role, the
# prompt's progress), which are not what a user waits for.
FIRST_TOKEN = re.compile(rb'"content"\s*:\s*"[^"]|"tool_calls"\s*:\s*\[\s*\{')


class _Tee:
    """Passes a streamed answer through, keeping a copy and when it started and ended.
    Made a subclass of each HTTP library's ``AsyncByteStream`` (its responses check)."""

    def __init__(self, inner: Any, call: ModelCall) -> None:
        self.inner = inner
        self.call = call
        self.buffer = bytearray()
        self.finished = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            if self.call.first_byte is None and FIRST_TOKEN.search(chunk):
                self.call.first_byte = time.monotonic()
            self.buffer.extend(chunk)
            yield chunk
        self.finished = True

    async def aclose(self) -> None:
        await self.inner.aclose()
        call = self.call
        if call.ended is None:
            call.ended = time.monotonic()
            _read_stream(call, bytes(self.buffer))
            call.abandoned = not self.finished and call.finish_reason is None


# The openai SDK sends through ``httpx2`` (its own copy of httpx); other clients use httpx.
HTTP_LIBRARIES = ("httpx", "httpx2")


class CallRecorder:
    """Records every request to llama-server's completions endpoint made in this process
    (the product's OpenAI client), whatever thread makes it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.calls: list[ModelCall] = []
        self._lock = threading.Lock()
        self._originals: list[tuple[Any, Any]] = []

    def install(self) -> None:
        for name in HTTP_LIBRARIES:
            try:
                library = importlib.import_module(name)
            except ImportError:
                continue
            self._patch(library)

    def _patch(self, library: Any) -> None:
        original = library.AsyncClient.send
        tee = type("Tee", (_Tee, library.AsyncByteStream), {})
        recorder = self

        async def send(client: Any, request: Any, **kwargs: Any) -> Any:
            url = request.url
            if url.port != recorder.port or not url.path.endswith("/completions"):
                return await original(client, request, **kwargs)
            return await recorder._send(original, tee, client, request, **kwargs)

        self._originals.append((library.AsyncClient, original))
        library.AsyncClient.send = send

    def uninstall(self) -> None:
        for cls, original in self._originals:
            cls.send = original
        self._originals.clear()

    async def _send(self, original: Any, tee: Any, client: Any, request: Any, **kwargs: Any) -> Any:
        try:
            body = json.loads(request.content or b"{}")
        except ValueError:
            body = {}
        structured, tools = _request_shape(body)
        call = ModelCall(
            started=time.monotonic(),
            stream=bool(body.get("stream")),
            max_tokens=body.get("max_tokens") or body.get("max_completion_tokens"),
            structured=structured,
            tools=tools,
        )
        with self._lock:
            self.calls.append(call)
        try:
            response = await original(client, request, **kwargs)
        except BaseException as exc:  # a timeout or a cancelled call: recorded, re-raised
            call.ended = time.monotonic()
            call.error = type(exc).__name__ + (f": {exc}" if str(exc) else "")
            call.abandoned = isinstance(exc, asyncio.CancelledError)
            raise
        call.status = response.status_code
        if kwargs.get("stream"):  # the first byte is timed as the answer is read
            response.stream = tee(response.stream, call)
            return response
        call.first_byte = call.ended = time.monotonic()
        with contextlib.suppress(ValueError):
            answer = response.json()
            if response.status_code >= 400:
                call.error = f"HTTP {response.status_code}: {json.dumps(answer)[:300]}"
            else:
                _read_answer(call, answer)
        return response

    def between(self, start: float, end: float) -> list[ModelCall]:
        with self._lock:
            return [c for c in self.calls if start <= c.started <= end]


# --- the product, in this process -------------------------------------------------------------


def bench_settings(
    data_dir: Path,
    llama_url: str,
    alias: str,
    deadline: float | None,
    timeout: float | None,
    **overrides: Any,
) -> Settings:
    """``overrides``: other sections of the settings (bench/continuity.py's sources)."""
    from scholarstream.settings import load_settings

    model = f"{PROVIDER}:{alias}"
    llm: dict[str, Any] = {
        "providers": {
            # OpenAI-compatible endpoints by base URL: no key, the local-server defaults
            # (structured_output "native", compact prompt) unless set here.
            PROVIDER: {"base_url": f"{llama_url}/v1"},
            SECOND_PROVIDER: {"base_url": f"{llama_url}/v1"},
        },
        "roles": {"default": model, "fast": model, "synthesis": model},
    }
    if deadline is not None:
        llm["deadline_seconds"] = deadline
    if timeout is not None:
        llm["timeout_seconds"] = timeout
    return load_settings(
        None,
        data_dir=data_dir,
        llm=llm,
        engine={"executor_id": f"bench-local-model-{os.getpid()}"},
        **overrides,
    )


class AppServer:
    """``scholarstream serve``'s app on a loopback port, in a thread of this process (the
    bench's own loop stays free, and Ctrl-C reaches the main thread)."""

    def __init__(self, settings: Settings, port: int) -> None:
        self.settings = settings
        self.port = port
        self.server: uvicorn.Server | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="app-server", daemon=True)

    def _run(self) -> None:
        try:
            import uvicorn

            from scholarstream.bootstrap import build_engine, create_app
            from scholarstream.db import upgrade
            from scholarstream.runtime import build_runtime

            upgrade(self.settings.app_database_url)
            runtime = build_runtime(self.settings)
            engine = build_engine(runtime, name="scholarstream-bench")
            app = create_app(runtime, engine=engine)
            self.server = uvicorn.Server(
                uvicorn.Config(
                    app, host="127.0.0.1", port=self.port, log_config=None, log_level="warning"
                )
            )
            self.server.run()
        except BaseException as exc:  # reported by start() or at the end
            self.error = exc

    def start(self, wait_seconds: float = 120) -> None:
        self.thread.start()
        started = time.monotonic()
        while time.monotonic() - started < wait_seconds:
            if self.error is not None or not self.thread.is_alive():
                raise BenchError(f"the app did not start: {self.error!r}")
            if self.server is not None and self.server.started:
                return
            time.sleep(0.2)
        raise BenchError(f"the app did not start within {wait_seconds:g} s")

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
        self.thread.join(timeout=30)


# --- one run of a feature ---------------------------------------------------------------------


@dataclass
class Sample:
    feature: str
    outcome: str  # model | fell back | failed
    seconds: float
    note: str = ""
    calls: list[ModelCall] = field(default_factory=list)


class RunFailedError(Exception):
    """What the user saw instead of an answer."""


def fallback_markers(value: Any, path: str = "", skills: Sequence[str] | None = None) -> list[str]:
    """Where a product record says the offline step was used (see FALLBACK_KEYS); with
    ``skills``, only the ModelFallback records of those skills count."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if key in FALLBACK_KEYS:
                records = item if isinstance(item, list) else [item] if item else []
                if skills is not None:
                    records = [
                        r for r in records if not isinstance(r, dict) or r.get("skill") in skills
                    ]
                found += [f"{where}: {_fallback_text(r)}" for r in records]
            else:
                found += fallback_markers(item, where, skills)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += fallback_markers(item, f"{path}[{i}]", skills)
    elif (
        skills is None
        and isinstance(value, str)
        and any(w in value.lower() for w in FALLBACK_WORDS)
    ):
        found.append(f"{path}: {value[:200]}")
    return found


def _fallback_text(record: Any) -> str:
    if isinstance(record, dict) and "skill" in record:
        return f"{record.get('skill')} {record.get('reason')}: {record.get('message')}"
    return json.dumps(record)[:200]


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code}: {response.text[:300]}"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        hint = f" ({error.get('hint')})" if error.get("hint") else ""
        return f"HTTP {response.status_code} {error.get('code')}: {error.get('message')}{hint}"
    return f"HTTP {response.status_code}: {json.dumps(body)[:300]}"


async def _json(response: httpx.Response, *expected: int) -> Any:
    if response.status_code not in expected:
        raise RunFailedError(_error_text(response))
    return response.json()


async def sse_events(client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> list[Any]:
    events: list[Any] = []
    async with client.stream("POST", path, json=body) as response:
        if response.status_code != 200:
            await response.aread()
            raise RunFailedError(_error_text(response))
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                with contextlib.suppress(ValueError):
                    events.append(json.loads(line[5:]))
    return events


@dataclass
class Context:
    client: httpx.AsyncClient
    recorder: CallRecorder
    records: list[dict[str, Any]]
    models: list[str]
    give_up: float
    poll: float = 0.5


Outcome = tuple[str, str]  # (outcome, note)


async def run_chat(ctx: Context, i: int) -> Outcome:
    events = await sse_events(
        ctx.client,
        "/api/v1/chat/messages",
        {"message": CHAT_MESSAGE, "context": {"current_page": "library"}},
    )
    tools = [str(e.get("tool")) for e in events if e.get("type") == "tool_start"]
    shown = "".join(str(e.get("text") or "") for e in events if e.get("type") == "text_delta")
    errors = [e for e in events if e.get("type") == "error"]
    if errors:
        e = errors[0]
        raise RunFailedError(
            f"error event {e.get('code')}: {e.get('message')} ({e.get('hint')}); tools run "
            f"before it: {', '.join(tools) or 'none'}; text shown: {shown[:120]!r}"
        )
    complete = next((e for e in events if e.get("type") == "complete"), None)
    if complete is None:
        raise RunFailedError("the answer ended without a complete event")
    message = str(complete["payload"].get("message") or "")
    for text in (message, shown):
        if RAW_TOOL_CALL.search(text):
            raise RunFailedError(f"raw tool-call JSON shown to the user: {text[:200]!r}")
    failed_tools = [str(e.get("tool")) for e in events if e.get("type") == "tool_complete"
                    and not e.get("ok", True)]  # fmt: skip
    markers = fallback_markers(complete["payload"])
    note = f"tools: {', '.join(tools) or 'none'}" + (
        f"; tool failed: {', '.join(failed_tools)}" if failed_tools else ""
    )
    if markers:
        return "fell back", f"{note}; {markers[0]}"
    return "model", note


async def run_guide(ctx: Context, i: int) -> Outcome:
    creation = await _json(await ctx.client.post("/api/v1/streams/creation"), 201)
    events = await sse_events(
        ctx.client, f"/api/v1/streams/creation/{creation['id']}/turns", {"message": GUIDE_MESSAGE}
    )
    errors = [e for e in events if e.get("type") == "error"]
    if errors:
        e = errors[0]
        raise RunFailedError(f"error event {e.get('code')}: {e.get('message')} ({e.get('hint')})")
    result = next((e for e in events if e.get("type") == "turn_result"), None)
    if result is None:
        raise RunFailedError("the turn ended without a turn_result")
    retries = sum(1 for e in events if e.get("type") == "retry")
    note = f"guide={creation.get('guide')}, mode={result.get('mode')}, retries={retries}"
    if result.get("warnings"):
        note += f", warnings: {'; '.join(result['warnings'])[:150]}"
    markers = fallback_markers({k: v for k, v in result.items() if k != "session"})
    if markers or creation.get("guide") == "rules":
        return "fell back", f"{note}; {(markers or ['the rule guide'])[0]}"
    return "model", note


@dataclass
class SearchState:
    run_id: str | None = None
    pending: dict[str, Any] | None = None


async def _wait_run(ctx: Context, run_id: str, kind: str) -> dict[str, Any]:
    started = time.monotonic()
    while True:
        run = await _json(await ctx.client.get(f"/api/v1/search/runs/{run_id}"), 200)
        status = run["status"]
        if status == "waiting" and run.get("pending"):
            if run["pending"]["checkpoint"]["kind"] == kind:
                return dict(run)
            raise RunFailedError(f"stopped at {run['pending']['checkpoint']['kind']}, not {kind}")
        if status in ("failed", "cancelled", "completed"):
            error = run.get("error") or {}
            raise RunFailedError(
                f"run {status} at stage {run.get('stage')}: {error.get('code')}: "
                f"{error.get('message')} ({error.get('hint')})"
            )
        if time.monotonic() - started > ctx.give_up:
            raise RunFailedError(f"not at the {kind} checkpoint within {ctx.give_up:g} s")
        await asyncio.sleep(ctx.poll)


async def run_search(ctx: Context, state: SearchState) -> Outcome:
    run = await _json(
        await ctx.client.post(
            "/api/v1/search/runs", json={"question": SEARCH_QUESTION, "sources": ["library"]}
        ),
        202,
    )
    state.run_id = str(run["id"])
    run = await _wait_run(ctx, state.run_id, "strategy_confirmation")
    state.pending = run["pending"]
    payload = run["pending"]["checkpoint"]["payload"]
    queries = "; ".join(q.get("query", "")[:80] for q in payload["strategy"]["queries"])
    note = f"concepts={len(payload['intent'].get('concepts') or [])}, query: {queries}"
    markers = fallback_markers(run, skills=SEARCH_SKILLS["search"])
    if markers:
        return "fell back", f"{note}; {markers[0]}"
    return "model", note


async def run_relevance(ctx: Context, state: SearchState) -> Outcome:
    assert state.run_id is not None
    assert state.pending is not None
    await _json(
        await ctx.client.post(
            f"/api/v1/search/runs/{state.run_id}/decisions",
            json={"checkpoint_id": state.pending["id"], "action": "approve"},
        ),
        202,
    )
    run = await _wait_run(ctx, state.run_id, "result_review")
    papers = run["pending"]["checkpoint"]["payload"]["collection"].get("papers") or []
    reasons = [str(p.get("reason") or "") for p in papers]
    note = f"{len(papers)} papers scored; reason: {reasons[0][:100] if reasons else '-'}"
    markers = fallback_markers(run, skills=SEARCH_SKILLS["relevance"])
    if markers:
        return "fell back", f"{note}; {markers[0]}"
    return "model", note


async def run_ai_column(ctx: Context, i: int) -> Outcome:
    # Values are cached by criteria and text: a new wording per run, so the model is asked.
    column = await _json(
        await ctx.client.post(
            "/api/v1/ai-columns",
            json={
                "table": "library",
                "name": f"About dogs {i}",
                "criteria": f"{COLUMN_CRITERIA} (run {i})",
                "output_type": "yes_no",
            },
        ),
        201,
    )
    items = [
        {"key": r["id"], "title": r["record"]["title"], "abstract": r["record"].get("abstract")}
        for r in ctx.records[:3]
    ]
    answer = await _json(
        await ctx.client.post(f"/api/v1/ai-columns/{column['id']}/values", json={"items": items}),
        200,
    )
    values = answer["values"]
    # A cell the model could not fill is "not available" (``unavailable`` says why; Retry
    # asks again): the column's designed fallback. A failed cell without it is an error.
    failed = [v for v in values if v.get("failed") and not v.get("unavailable")]
    if failed:
        raise RunFailedError(f"{len(failed)}/{len(values)} cells failed: {failed[0].get('reason')}")
    note = ", ".join(f"{v.get('value')}" for v in values)
    markers = fallback_markers(answer)
    markers += [
        f"cell unavailable ({v['unavailable']}): {v.get('reason')}"
        for v in values
        if v.get("unavailable")
    ]
    if markers:
        return "fell back", f"{note}; {markers[0]}"
    return "model", note


async def run_research(ctx: Context, i: int) -> Outcome:
    draft = await _json(
        await ctx.client.post(
            "/api/v1/research/draft",
            json={
                "prompt": RESEARCH_PROMPT,
                "selectedLlms": ctx.models,
                "synthesisLlm": ctx.models[0],
            },
        ),
        201,
    )
    await _json(await ctx.client.post("/api/v1/research", json={"researchId": draft["id"]}), 200)
    started = time.monotonic()
    while True:
        research = await _json(await ctx.client.get(f"/api/v1/research/{draft['id']}"), 200)
        status = research["status"]
        if status in ("completed", "failed", "awaiting_confirmation"):
            break
        if time.monotonic() - started > ctx.give_up:
            raise RunFailedError(f"research still {status} after {ctx.give_up:g} s")
        await asyncio.sleep(ctx.poll)
    results = research.get("llmResults") or []
    failures = [f"{r['model']}: {r.get('errorCode')}: {r.get('error')}" for r in results
                if r.get("status") == "failed"]  # fmt: skip
    if status != "completed":
        why = research.get("error") or research.get("synthesisError") or "; ".join(failures)
        raise RunFailedError(f"research {status}: {why}")
    synthesis = str(research.get("synthesizedResult") or "")
    note = f"title={research.get('title')!r}, synthesis {len(synthesis)} chars"
    markers = fallback_markers({k: v for k, v in research.items() if k != "prompt"})
    if not synthesis:
        markers.insert(0, f"no synthesis: {research.get('synthesisError')}")
    if markers:
        return "fell back", f"{note}; {markers[0]}"
    return "model", note


# --- the runs ---------------------------------------------------------------------------------


def _asks_structure(call: ModelCall) -> bool:
    """A typed answer asked for natively or as the final_result tool (a prompted one
    cannot be told apart from text in the request)."""
    return call.structured in ("json_schema", "json_object") or any(
        t.startswith("final_result") for t in call.tools
    )


def silent_fallback(calls: Sequence[ModelCall]) -> str | None:
    """The last typed answer of a step (the requests of one max_tokens budget) could not be
    used, yet the run completed: the product used its offline step without saying so."""
    last: dict[int | None, ModelCall] = {}
    for call in calls:
        if _asks_structure(call):
            last[call.max_tokens] = call
    problems = [
        f"max_tokens={budget}: {why}"
        for budget, call in last.items()
        if (why := call.unusable()) is not None
    ]
    return "; ".join(problems) or None


async def timed(ctx: Context, feature: str, work: Callable[[], Awaitable[Outcome]]) -> Sample:
    started = time.monotonic()
    try:
        outcome, note = await asyncio.wait_for(work(), timeout=ctx.give_up + 30)
    except RunFailedError as exc:
        outcome, note = "failed", str(exc)
    except TimeoutError:
        outcome, note = "failed", f"no answer within {ctx.give_up + 30:g} s"
    except httpx.HTTPError as exc:
        outcome, note = "failed", f"{type(exc).__name__}: {exc}"
    ended = time.monotonic()
    calls = ctx.recorder.between(started, ended)
    if outcome == "model":
        if not calls:
            outcome, note = "fell back", f"{note}; silent: the model was not called"
        elif (why := silent_fallback(calls)) is not None:
            outcome, note = "fell back", f"{note}; silent: the model's last answer: {why}"
    return Sample(feature, outcome, ended - started, note, calls)


async def seed_library(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    with LIBRARY_FILE.open("rb") as handle:
        report = await _json(
            await client.post(
                "/api/v1/library/imports",
                files={"file": (LIBRARY_FILE.name, handle, "application/x-research-info-systems")},
            ),
            201,
        )
    page = await _json(await client.get("/api/v1/library/records", params={"limit": 20}), 200)
    items: list[dict[str, Any]] = page["items"]
    print(f"library: {report['imported']} records imported from {LIBRARY_FILE.name}", flush=True)
    return items


async def bench(
    args: argparse.Namespace, app_url: str, recorder: CallRecorder, samples: list[Sample]
) -> None:
    """Fills ``samples`` as the runs end (an interrupted bench still reports them)."""
    models = [f"{PROVIDER}:{args.alias}", f"{SECOND_PROVIDER}:{args.alias}"]
    timeout = httpx.Timeout(args.give_up + 60, connect=10)
    async with httpx.AsyncClient(base_url=app_url, timeout=timeout) as client:
        ctx = Context(client, recorder, await seed_library(client), models, args.give_up)

        def show(sample: Sample, i: int) -> None:
            samples.append(sample)
            print(
                f"  {sample.feature:<10} run {i}: {sample.outcome:<9} {sample.seconds:7.1f} s  "
                f"{len(sample.calls)} calls  {sample.note[:160]}",
                flush=True,
            )

        for i in range(1, args.runs + 1):
            for feature in args.features:
                if feature == "relevance" and "search" in args.features:
                    continue  # run with its search run below
                if feature in ("search", "relevance"):
                    state = SearchState()
                    search = await timed(ctx, "search", partial(run_search, ctx, state))
                    if "search" in args.features:
                        show(search, i)
                    if "relevance" in args.features:
                        if state.pending is None:
                            show(Sample("relevance", "failed", 0.0, "no strategy checkpoint"), i)
                        else:
                            sample = await timed(
                                ctx, "relevance", partial(run_relevance, ctx, state)
                            )
                            show(sample, i)
                    if state.run_id is not None:
                        with contextlib.suppress(httpx.HTTPError):
                            await client.post(f"/api/v1/search/runs/{state.run_id}/cancel")
                    continue
                show(await timed(ctx, feature, partial(RUNNERS[feature], ctx, i)), i)


RUNNERS: dict[str, Callable[[Context, int], Awaitable[Outcome]]] = {
    "chat": run_chat,
    "guide": run_guide,
    "ai_column": run_ai_column,
    "research": run_research,
}


# --- the report -------------------------------------------------------------------------------


def _p50(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def print_table(samples: Sequence[Sample], features: Sequence[str]) -> None:
    print(f"\n{'feature':<10} {'runs':>4} {'model':>5} {'fell back':>9} {'failed':>6} "
          f"{'p50 s':>7} {'max s':>7} {'calls':>5} {'json_schema':>11} {'tools':>5} "
          f"{'length':>6} {'errors':>6}")  # fmt: skip
    for feature in features:
        runs = [s for s in samples if s.feature == feature]
        if not runs:
            continue
        outcomes = Counter(s.outcome for s in runs)
        seconds = [s.seconds for s in runs]
        calls = [c for s in runs for c in s.calls]
        print(
            f"{feature:<10} {len(runs):>4} {outcomes['model']:>5} {outcomes['fell back']:>9} "
            f"{outcomes['failed']:>6} {_s(_p50(seconds)):>7} {_s(max(seconds)):>7} "
            f"{len(calls):>5} {sum(c.structured == 'json_schema' for c in calls):>11} "
            f"{sum(c.structured == 'tools' for c in calls):>5} "
            f"{sum(c.finish_reason == 'length' for c in calls):>6} "
            f"{sum(bool(c.error or c.abandoned or (c.status or 0) >= 400) for c in calls):>6}"
        )


def print_server_figures(samples: Sequence[Sample]) -> None:
    calls = [c for s in samples for c in s.calls]
    prompt = [c.prompt_per_second for c in calls if c.prompt_per_second]
    gen = [c.predicted_per_second for c in calls if c.predicted_per_second]
    first_cold = [c.first_byte - c.started for c in calls
                  if c.stream and c.first_byte and not c.cached_tokens]  # fmt: skip
    first_warm = [c.first_byte - c.started for c in calls
                  if c.stream and c.first_byte and c.cached_tokens]  # fmt: skip
    tokens = [c.prompt_tokens for c in calls if c.prompt_tokens]
    print(
        f"\nllama-server: {len(calls)} requests; prompt {_s(_p50(prompt))} tok/s, "
        f"gen {_s(_p50(gen))} tok/s (medians); prompt tokens p50 "
        f"{_s(_p50([float(t) for t in tokens]))}, max {max(tokens, default=0)}; "
        f"first token cold p50 {_s(_p50(first_cold))} s ({len(first_cold)}), warm p50 "
        f"{_s(_p50(first_warm))} s ({len(first_warm)})"
    )
    by_budget: dict[tuple[int | None, str], list[ModelCall]] = {}
    for call in calls:
        by_budget.setdefault((call.max_tokens, call.structured), []).append(call)
    print("requests by max_tokens (the feature's budget) and how output was asked for:")
    for (budget, kind), group in sorted(by_budget.items(), key=lambda kv: str(kv[0])):
        unusable = Counter(why for c in group if (why := c.unusable()))
        prompt_tokens = [float(c.prompt_tokens) for c in group if c.prompt_tokens]
        print(
            f"  max_tokens={budget!s:<5} {kind:<11} {len(group):>3} requests, prompt tokens "
            f"p50 {_s(_p50(prompt_tokens))}; unusable: "
            + (", ".join(f"{why} x{n}" for why, n in unusable.items()) or "none")
        )


def print_failures(samples: Sequence[Sample]) -> None:
    odd = [s for s in samples if s.outcome != "model"]
    if not odd:
        return
    print("\nruns that did not complete with the model:")
    for s in odd:
        print(f"  {s.feature} ({s.outcome}, {s.seconds:.1f} s): {s.note}")
        for c in s.calls:
            why = c.unusable()
            if why:
                print(
                    f"      call max_tokens={c.max_tokens} {c.structured}: {why}; "
                    f"answer: {c.content[:160]!r}"
                )


# --- main -------------------------------------------------------------------------------------


def _features(text: str) -> list[str]:
    names = [f.strip() for f in text.split(",") if f.strip()]
    unknown = sorted(set(names) - set(FEATURES))
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown features {unknown}; use {','.join(FEATURES)}")
    return names


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server-bin", type=Path, required=True, help="llama-server binary")
    parser.add_argument("--model", type=Path, required=True, help="a GGUF instruct model")
    parser.add_argument("--runs", type=int, default=3, help="runs per feature (default 3)")
    parser.add_argument("--port", type=int, default=0, help="llama-server's port (0: a free one)")
    parser.add_argument(
        "--ctx",
        type=int,
        default=12288,
        help="llama-server -c, shared by the slots (default 12288: 6144 per slot, what a chat "
        "turn with a tool result and a synthesis need)",
    )
    parser.add_argument("--parallel", type=int, default=2, help="llama-server -np (slots)")
    parser.add_argument("--n-predict", type=int, default=1024, help="llama-server -n")
    parser.add_argument("--threads", type=int, default=None, help="llama-server -t")
    parser.add_argument("--alias", default=None, help="model name (default: the file's stem)")
    parser.add_argument("--features", type=_features, default=list(FEATURES))
    parser.add_argument(
        "--deadline", type=float, default=None, help="llm.deadline_seconds (default: product's)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="llm.timeout_seconds (default: product's; docs/local-models.md advises 300 on a "
        "CPU, where a non-streamed answer arrives whole)",
    )
    parser.add_argument(
        "--give-up", type=float, default=900, help="the bench's own limit per run (s)"
    )
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--keep-data", action="store_true", help="keep the data directory")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    args.alias = args.alias or args.model.stem
    return args


@contextlib.contextmanager
def _stop_on_sigterm() -> Iterator[None]:
    def handler(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not prepared(lambda: check_inputs(args.server_bin, args.model)):
        return 2
    port = args.port or free_port()
    options = ServerOptions(
        binary=args.server_bin,
        model=args.model,
        port=port,
        ctx=args.ctx,
        parallel=args.parallel,
        n_predict=args.n_predict,
        alias=args.alias,
        threads=args.threads,
        log=args.json.with_suffix(".server.log"),
    )
    server = LlamaServer(options)
    recorder = CallRecorder(port)
    samples: list[Sample] = []
    with contextlib.ExitStack() as stack, _stop_on_sigterm():
        tmp = (
            Path(tempfile.mkdtemp(prefix="local-model-"))
            if args.keep_data
            else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="local-model-")))
        )
        stack.callback(server.stop)
        print(f"llama-server: {' '.join(options.command())}", flush=True)
        try:
            loaded = server.start(wait_seconds=300)
        except BenchError as exc:
            print(f"refused: {exc}", file=sys.stderr)
            return 2
        print(f"llama-server ready in {loaded:.1f} s (log: {options.log})", flush=True)
        settings = bench_settings(
            tmp / "data", server.base_url, args.alias, args.deadline, args.timeout
        )
        recorder.install()
        stack.callback(recorder.uninstall)
        app = AppServer(settings, free_port())
        stack.callback(app.stop)
        app.start()
        llm = settings.llm
        print(
            f"product: roles default/fast/synthesis = {PROVIDER}:{args.alias}; providers "
            f"{PROVIDER}, {SECOND_PROVIDER} -> {server.base_url}/v1; timeout "
            f"{llm.timeout_seconds:g} s, deadline {llm.deadline_seconds:g} s; data {tmp}",
            flush=True,
        )
        print(f"structured output in use: {structured_output_in_use(settings)}", flush=True)
        started = time.monotonic()
        interrupted = False
        try:
            asyncio.run(bench(args, f"http://127.0.0.1:{app.port}", recorder, samples))
        except KeyboardInterrupt:
            print("\ninterrupted: stopping llama-server and the app", file=sys.stderr)
            interrupted = True
        wall = time.monotonic() - started
    print(f"\n{DEFINITIONS}")
    print_table(samples, args.features)
    print_server_figures(samples)
    print_failures(samples)
    print(f"\nwall time {wall:.0f} s on {os.cpu_count()} CPUs; load average now "
          f"{os.getloadavg()[0]:.2f}")  # fmt: skip
    print("network: no connection outside the loopback was attempted" if not blocked
          else f"network: BLOCKED attempts {blocked}")  # fmt: skip
    write_json(args, options, samples, wall)
    if interrupted:
        return 130
    return 1 if any(s.outcome == "failed" for s in samples) else 0


def structured_output_in_use(settings: Settings) -> str:
    """What the product's provider capabilities say, as resolved for the bench's providers."""
    from scholarstream.llm import get_provider

    parts = []
    for name, provider in settings.llm.providers.items():
        spec = get_provider(name, configured_base_url=provider.base_url)
        chosen = provider.structured_output or spec.capabilities.structured_output
        parts.append(f"{name}={chosen}")
    return ", ".join(parts)


def write_json(
    args: argparse.Namespace, options: ServerOptions, samples: Sequence[Sample], wall: float
) -> None:
    args.json.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "definitions": DEFINITIONS,
        "settings": {
            "server_command": options.command(),
            "runs": args.runs,
            "features": args.features,
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "wall_seconds": wall,
        },
        "samples": [asdict(s) for s in samples],
    }
    args.json.write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    sys.exit(main())
