"""Load on a scaled-out deployment: PostgreSQL, two ``scholarstream serve --no-workers``
processes and two ``scholarstream worker`` processes, all real, with scripted models
behind a local OpenAI-compatible server.

    python bench/load.py [--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/test]
                         [--chats 200] [--research 20] [--tokens 40] [--pace 0.025]
                         [--research-delay 2.0] [--out bench/results/load.json]

What runs: a throwaway database on the server of --database-url (dropped at the end); a
fake OpenAI-compatible server in a child process (uvicorn on 127.0.0.1): the chat model
``fake:chat`` streams TOKENS tokens PACE seconds apart, the research models
answer after --research-delay seconds, the synthesis model after 0.5 s;
the four product processes configured as docs/deployment.md says (one data directory, one
secret key, distinct executor ids, ``SCHOLARSTREAM_LLM__PROVIDERS__<P>__BASE_URL`` of five
OpenAI-compatible providers pointing at the fake: ``fake`` for the chat, ``fakea``,
``fakeb``, ``fakec`` for the research models, ``fakesynth`` for the synthesis).

After one warm-up chat on each API process (its first chat imports the provider's SDK),
the load, all at once: CHATS chat conversations (``POST /api/v1/chat/messages``, each a new
conversation, the SSE stream read to its ``complete`` event), alternating between the two
API processes, and RESEARCH multi-LLM research runs (draft + start through one API process
or the other, three models and a synthesis), each followed with ``GET /research/{id}``
until it is completed or failed.

Printed: errors of each kind; for the chats the time to the ``status`` event, to the first
``text_delta`` and to ``complete`` (p50/p95/max) and the complete time minus the model's
own streaming time; for the research runs the time to completion (p50/p95/max), how many
completed, and which worker process ran their model calls (from DBOS's workflow table).
The exit code is 1 when any request failed or any run did not complete.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from _pg import sync_url, throwaway_postgres_database

# Three providers and a fourth for the synthesis, as a real multi-LLM run has: the llm-calls
# queue runs at most PARTITION_CONCURRENCY calls of one provider at once (engine.QUEUES).
RESEARCH_PROVIDERS = ("fakea", "fakeb", "fakec")
RESEARCH_MODELS = tuple(f"{provider}:research" for provider in RESEARCH_PROVIDERS)
SYNTHESIS_MODEL = "fakesynth:synth"
PROVIDERS = ("fake", *RESEARCH_PROVIDERS, "fakesynth")
START_TIMEOUT = 90.0
RUN_TIMEOUT = 600.0

# --- the fake provider (a child process) -------------------------------------------------


def fake_provider_child(port: int, tokens: int, pace: float, research_delay: float) -> None:
    """An OpenAI-compatible ``/v1/chat/completions``, streaming or not, on uvicorn."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    def chunk(model: str, delta: dict[str, Any], finish: str | None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        body = {"id": "b", "object": "chat.completion.chunk", "created": 0, "model": model}
        return f"data: {json.dumps({**body, 'choices': [choice]})}\n\n".encode()

    async def completions(request: Request) -> Response:
        body = await request.json()
        model = str(body.get("model", ""))
        if body.get("stream"):

            async def events() -> AsyncIterator[bytes]:
                yield chunk(model, {"role": "assistant"}, None)
                started = time.monotonic()
                for i in range(tokens):
                    await asyncio.sleep(max(0.0, started + i * pace - time.monotonic()))
                    yield chunk(model, {"content": f"tok{i} "}, None)
                yield chunk(model, {}, "stop")
                yield b"data: [DONE]\n\n"

            return StreamingResponse(events(), media_type="text/event-stream")
        await asyncio.sleep(0.5 if model.endswith("synth") else research_delay)
        message = {"role": "assistant", "content": f"# Answer of {model}\n\nSome findings."}
        return JSONResponse(
            {
                "id": "b",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
            }
        )

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", backlog=4096)


# --- the product's processes ---------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    port: int | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _env(database_url: str, data_dir: Path, fake_port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARSTREAM_")}
    env.update(
        {
            "SCHOLARSTREAM_DATABASE_URL": database_url,
            "SCHOLARSTREAM_DATA_DIR": str(data_dir),
            "SCHOLARSTREAM_SERVER__SECRET_KEY": "bench-secret-key-bench-secret-key",
            "SCHOLARSTREAM_LLM__ROLES": json.dumps({"default": "fake:chat"}),
            "SCHOLARSTREAM_RESEARCH__TITLE_ROLE": "",
            "SCHOLARSTREAM_STREAMS__SCHEDULER_ENABLED": "true",
            "SCHOLARSTREAM_LOGGING__LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
        }
    )
    for provider in PROVIDERS:
        prefix = f"SCHOLARSTREAM_LLM__PROVIDERS__{provider.upper()}"
        env[f"{prefix}__BASE_URL"] = f"http://127.0.0.1:{fake_port}/v1"
        env[f"{prefix}__API_KEY"] = "bench"
    return env


def _start(name: str, args: Sequence[str], env: dict[str, str], logs: Path) -> Process:
    log = logs / f"{name}.log"
    handle = log.open("wb")
    popen = subprocess.Popen(
        [sys.executable, *args], env=env, stdout=handle, stderr=subprocess.STDOUT
    )
    handle.close()
    return Process(name, popen, log)


def _wait_healthy(process: Process) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.popen.poll() is not None:
            raise SystemExit(f"{process.name} exited:\n{process.log.read_text()[-3000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{process.base_url}/health", timeout=1).status_code == 200:
                return
        time.sleep(0.2)
    raise SystemExit(f"{process.name} did not answer /health in {START_TIMEOUT:g} s")


def _wait_port(port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        with socket.socket() as sock, contextlib.suppress(OSError):
            sock.connect(("127.0.0.1", port))
            return
        time.sleep(0.1)
    raise SystemExit(f"nothing listens on port {port}")


def _wait_log(process: Process, text: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.popen.poll() is not None:
            raise SystemExit(f"{process.name} exited:\n{process.log.read_text()[-3000:]}")
        if text in process.log.read_text(errors="replace"):
            return
        time.sleep(0.2)
    raise SystemExit(f"{process.name} did not log {text!r} in {START_TIMEOUT:g} s")


def _stop(processes: Sequence[Process]) -> None:
    for process in processes:
        if process.popen.poll() is None:
            process.popen.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.popen.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.popen.kill()
            process.popen.wait()


@contextlib.contextmanager
def deployment(
    database_url: str, args: argparse.Namespace, work: Path
) -> Iterator[tuple[list[Process], list[Process]]]:
    """The fake provider, then two API processes (the first migrates the database alone)
    and two workers."""
    fake_port = _free_port()
    data_dir = work / "data"
    env = _env(database_url, data_dir, fake_port)
    started: list[Process] = []
    try:
        fake = _start(
            "fake-provider",
            [
                __file__,
                "--fake-provider-child",
                str(fake_port),
                "--tokens",
                str(args.tokens),
                "--pace",
                str(args.pace),
                "--research-delay",
                str(args.research_delay),
            ],
            os.environ.copy(),
            work,
        )
        started.append(fake)
        _wait_port(fake_port)
        apis: list[Process] = []
        for n in (1, 2):
            port = _free_port()
            api = _start(
                f"serve-{n}",
                [
                    "-m",
                    "scholarstream",
                    "serve",
                    "--port",
                    str(port),
                    "--no-workers",
                    "--executor-id",
                    f"bench-serve-{n}",
                ],
                env,
                work,
            )
            api.port = port
            started.append(api)
            apis.append(api)
            _wait_healthy(api)
        workers = []
        for n in (1, 2):
            worker = _start(
                f"worker-{n}",
                ["-m", "scholarstream", "worker", "--executor-id", f"bench-worker-{n}"],
                env,
                work,
            )
            started.append(worker)
            workers.append(worker)
        for worker in workers:
            _wait_log(worker, "Ctrl-C to stop")
        yield apis, workers
    finally:
        _stop(started)


# --- the load --------------------------------------------------------------------------------


@dataclass
class Chat:
    status_s: float | None = None
    first_delta_s: float | None = None
    complete_s: float | None = None
    error: str | None = None


@dataclass
class ResearchRun:
    id: str | None = None
    completed_s: float | None = None
    status: str | None = None
    error: str | None = None


async def chat(client: httpx.AsyncClient, base_url: str, n: int) -> Chat:
    result = Chat()
    started = time.monotonic()
    payload = {"message": f"Question {n}", "context": {"current_page": "library"}}
    try:
        async with client.stream(
            "POST", f"{base_url}/api/v1/chat/messages", json=payload
        ) as response:
            if response.status_code != 200:
                result.error = f"HTTP {response.status_code}"
                return result
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                event = json.loads(line[5:])
                now = time.monotonic() - started
                kind = event.get("type")
                if kind == "status" and result.status_s is None:
                    result.status_s = now
                elif kind == "text_delta" and result.first_delta_s is None:
                    result.first_delta_s = now
                elif kind == "complete":
                    result.complete_s = now
                elif kind == "error":
                    result.error = f"error event: {event.get('code')}: {event.get('message')}"
    except httpx.HTTPError as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    if result.error is None and result.complete_s is None:
        result.error = "no complete event"
    return result


async def research(client: httpx.AsyncClient, base_url: str, n: int) -> ResearchRun:
    run = ResearchRun()
    started = time.monotonic()
    api = f"{base_url}/api/v1/research"
    try:
        draft = await client.post(
            f"{api}/draft",
            json={
                "prompt": f"Research question {n}: what is known about topic {n}?",
                "title": f"Bench research {n}",
                "selectedLlms": list(RESEARCH_MODELS),
                "synthesisLlm": SYNTHESIS_MODEL,
            },
        )
        if draft.status_code != 201:
            run.error = f"draft: HTTP {draft.status_code} {draft.text[:200]}"
            return run
        run.id = draft.json()["id"]
        start = await client.post(api, json={"researchId": run.id})
        if start.status_code != 200:
            run.error = f"start: HTTP {start.status_code} {start.text[:200]}"
            return run
        deadline = started + RUN_TIMEOUT
        while time.monotonic() < deadline:
            current = await client.get(f"{api}/{run.id}")
            run.status = current.json().get("status")
            if run.status in ("completed", "failed"):
                run.completed_s = time.monotonic() - started
                if run.status == "failed":
                    run.error = f"failed: {current.json().get('error')}"
                return run
            await asyncio.sleep(0.25)
        run.error = f"not finished after {RUN_TIMEOUT:g} s (status {run.status})"
    except httpx.HTTPError as exc:
        run.error = f"{type(exc).__name__}: {exc}"
    return run


async def load(
    apis: Sequence[Process], chats: int, runs: int
) -> tuple[list[Chat], list[ResearchRun], float]:
    limits = httpx.Limits(max_connections=chats + 2 * runs + 10, max_keepalive_connections=50)
    timeout = httpx.Timeout(RUN_TIMEOUT, connect=30.0)
    async with httpx.AsyncClient(limits=limits, timeout=timeout) as client:
        # Warm-up, not counted: each process's first chat imports the provider's SDK.
        for api in apis:
            warm = await chat(client, api.base_url, -1)
            if warm.error is not None:
                raise SystemExit(f"the warm-up chat on {api.name} failed: {warm.error}")
        started = time.monotonic()
        chat_tasks = [chat(client, apis[n % len(apis)].base_url, n) for n in range(chats)]
        research_tasks = [research(client, apis[n % len(apis)].base_url, n) for n in range(runs)]
        results = await asyncio.gather(*chat_tasks, *research_tasks)
        wall = time.monotonic() - started
    chat_results = [r for r in results if isinstance(r, Chat)]
    research_results = [r for r in results if isinstance(r, ResearchRun)]
    return chat_results, research_results, wall


def executors_of_model_calls(database_url: str) -> dict[str, int]:
    """How many workflows each executor ran, from DBOS's table (in the app database)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT executor_id, count(*) FROM dbos.workflow_status "
                    "GROUP BY executor_id ORDER BY executor_id"
                )
            ).all()
    finally:
        engine.dispose()
    return {str(row[0]): int(row[1]) for row in rows}


# --- report -----------------------------------------------------------------------------------


def _quantiles(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None, "max": None}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": statistics.median(ordered), "p95": p95, "max": ordered[-1]}


def _ms(values: dict[str, float | None]) -> str:
    shown = [f"{v * 1000:.0f}" if v is not None else "-" for v in values.values()]
    return " / ".join(shown) + " ms"


def _s(values: dict[str, float | None]) -> str:
    shown = [f"{v:.2f}" if v is not None else "-" for v in values.values()]
    return " / ".join(shown) + " s"


@dataclass
class Report:
    chats: int
    research_runs: int
    wall_s: float
    chat_errors: list[str] = field(default_factory=list)
    research_errors: list[str] = field(default_factory=list)
    chat_status: dict[str, float | None] = field(default_factory=dict)
    chat_first_delta: dict[str, float | None] = field(default_factory=dict)
    chat_complete: dict[str, float | None] = field(default_factory=dict)
    chat_complete_added: dict[str, float | None] = field(default_factory=dict)
    research_completed: int = 0
    research_time: dict[str, float | None] = field(default_factory=dict)
    workflows_by_executor: dict[str, int] = field(default_factory=dict)


def report(
    chats: Sequence[Chat],
    runs: Sequence[ResearchRun],
    wall: float,
    executors: dict[str, int],
    args: argparse.Namespace,
) -> Report:
    model_time = args.pace * (args.tokens - 1)
    ok = [c for c in chats if c.error is None]
    return Report(
        chats=len(chats),
        research_runs=len(runs),
        wall_s=wall,
        chat_errors=[c.error for c in chats if c.error is not None],
        research_errors=[f"{r.id}: {r.error}" for r in runs if r.error is not None],
        chat_status=_quantiles([c.status_s for c in ok if c.status_s is not None]),
        chat_first_delta=_quantiles([c.first_delta_s for c in ok if c.first_delta_s is not None]),
        chat_complete=_quantiles([c.complete_s for c in ok if c.complete_s is not None]),
        chat_complete_added=_quantiles(
            [c.complete_s - model_time for c in ok if c.complete_s is not None]
        ),
        research_completed=sum(1 for r in runs if r.status == "completed"),
        research_time=_quantiles([r.completed_s for r in runs if r.completed_s is not None]),
        workflows_by_executor=executors,
    )


def _partition_concurrency() -> int:
    from scholarstream.durable import QUEUES

    (calls,) = [queue for queue in QUEUES if queue.name == "llm-calls"]
    assert calls.partition_concurrency is not None
    return calls.partition_concurrency


def research_lower_bound(args: argparse.Namespace) -> float:
    """The last run cannot finish sooner: each provider's calls go PARTITION at a time, then
    the last synthesis."""
    runs: int = args.research
    waves = math.ceil(runs / _partition_concurrency())
    delay: float = args.research_delay
    return waves * delay + 0.5


def print_report(result: Report, args: argparse.Namespace) -> None:
    print(
        f"\n{result.chats} chats ({args.tokens} tokens, {args.pace * 1000:g} ms apart) and "
        f"{result.research_runs} research runs ({len(RESEARCH_MODELS)} models x "
        f"{args.research_delay:g} s + synthesis 0.5 s) at once; wall {result.wall_s:.1f} s"
    )
    print("                          p50 / p95 / max")
    print(f"chat: status event        {_ms(result.chat_status)}")
    print(f"chat: first text_delta    {_ms(result.chat_first_delta)}")
    print(f"chat: complete            {_s(result.chat_complete)}")
    print(f"chat: complete - model    {_ms(result.chat_complete_added)}")
    print(f"research: to completed    {_s(result.research_time)}")
    print(
        f"  (lower bound {research_lower_bound(args):.1f} s: the llm-calls queue runs at most "
        f"{_partition_concurrency()} calls of one provider at once)"
    )
    print(
        f"errors: chat {len(result.chat_errors)}, research {len(result.research_errors)}; "
        f"research completed {result.research_completed}/{result.research_runs}"
    )
    for error in (result.chat_errors + result.research_errors)[:10]:
        print(f"  {error}")
    print("workflows run by each executor:", result.workflows_by_executor)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--database-url",
        default=os.environ.get(
            "SCHOLARSTREAM_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
        ),
    )
    parser.add_argument("--chats", type=int, default=200)
    parser.add_argument("--research", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=40)
    parser.add_argument("--pace", type=float, default=0.025)
    parser.add_argument("--research-delay", type=float, default=2.0)
    parser.add_argument("--out", type=Path, default=Path("bench/results/load.json"))
    parser.add_argument("--fake-provider-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fake_provider_child:
        fake_provider_child(args.fake_provider_child, args.tokens, args.pace, args.research_delay)
        return
    with (
        tempfile.TemporaryDirectory(prefix="ss-load-") as tmp,
        throwaway_postgres_database(args.database_url, "ss_bench_load") as database_url,
    ):
        work = Path(tmp)
        with deployment(database_url, args, work) as (apis, _workers):
            chats, runs, wall = asyncio.run(load(apis, args.chats, args.research))
            executors = executors_of_model_calls(database_url)
        result = report(chats, runs, wall, executors, args)
        print_report(result, args)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(asdict(result), indent=2))
        print(f"wrote {args.out}")
        failed = result.chat_errors or result.research_errors
        if failed:
            for log in sorted(work.glob("*.log")):
                tail = log.read_text(errors="replace")[-1500:]
                if "Traceback" in tail or "ERROR" in tail:
                    print(f"\n--- {log.name} (tail) ---\n{tail}")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
