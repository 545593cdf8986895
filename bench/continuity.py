"""Follow-up continuity: do the queries a conversation's chat turns actually send carry the
prior topic on follow-ups, drop what a switch or a replacement drops, carry dates as
filters, and search nothing on a closing?

Each conversation of --cases (JSON Lines: {"id", "turns": [{"user",
"expect_query_contains", "expect_query_excludes", optional "kind", "expect_date":
{"from", "to"}, "expect_no_search", "model_query"}]}) runs turn by turn through the chat
engine (``Assistant``: classification, planning, the tools' real calls against the
literature sources, answered from recorded responses, and the local library), in one of
these modes (``both`` runs the first two):

- offline: no model configured; the message is a retrieval request (seed 004).
- model: a scripted model that answers the way a real one does: it rewrites the turn
  into a standalone query (the case's "model_query", written by the case's author as a
  real model would, flaws included: a kept replaced value, a lost topic, dates as words)
  and calls search_literature with it; "" means it searches nothing. A turn without
  "model_query" gets the user's words passed through. What reaches the sources is what
  continuity made of the model's query.
- real: a real model behind llama.cpp's ``llama-server``, started here the way
  bench/local_model.py starts it (its functions: ``--jinja``, one slot, 127.0.0.1) with
  --model, and configured as the product's default model (an OpenAI-compatible provider,
  ``llamacpp``, pointing at the server; no key). The model reads the conversation and writes
  its own tool calls; "model_query" is not used. Connections outside the loopback are
  refused and listed. The report adds the seconds per turn, llama-server's own figures, and
  under each failed turn what the model answered (its tool calls with their arguments, or
  its text) and continuity's corrections of its query. Its log:
  bench/results/continuity_real.PID.server.log (two runs can go side by side).

    python bench/continuity.py [--cases FILE.jsonl ...] [--mode offline|model|both]
        [--limit N]
    python bench/continuity.py --mode real --server-bin PATH/llama-server --model PATH.gguf
        [--ctx 8192] [--threads N] [--chat-template-file T.jinja] [--timeout 300]
        [--cases FILE.jsonl ...] [--limit N]

--limit N runs only the first N conversations of each file.

The queries scored are those the tools report having sent (the ``complete`` event's
``continuity.queries``), exactly as given to each source, with their year filters. A turn
passes when every expect_query_contains string is in at least one of them
(case-insensitive), no expect_query_excludes string is in any, every query has the
expected years (expect_date; a turn without it expects none), and a turn with
expect_no_search sent nothing. A turn with none of these is not scored. Figures:
scored turns passing; follow-ups carrying the topic (kinds followup and slot_fill);
switches dropping what they replaced; dates as filters (turns with expect_date);
closings searching nothing; and query length: mean and largest words per query, and the
mean at turn 6 and later of long chains against their first turns (growth)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from local_model import (
    PROVIDER,
    RAW_TOOL_CALL,
    BenchError,
    CallRecorder,
    LlamaServer,
    ModelCall,
    Sample,
    ServerOptions,
    bench_settings,
    blocked,
    check_server_inputs,
    free_port,
    prepared,
    print_server_figures,
)
from scholarstream.accounts import ensure_local_user
from scholarstream.chat import Assistant, ChatMessageIn, TurnHub
from scholarstream.chat.core import ChatContext, CompleteEvent, ErrorEvent
from scholarstream.chat.tools import ToolServices
from scholarstream.db import upgrade_async
from scholarstream.runtime import Runtime, build_runtime
from scholarstream.settings import load_settings

DATA = Path(__file__).parent / "data"
DEFAULT_CASES = sorted(DATA.glob("continuity_*.jsonl"))
SAMPLES = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "api_fixtures"
    / "findpapers_collected_samples"
)
SOURCES = ["pubmed", "openalex", "semantic_scholar", "library"]
FOLLOW_UPS = ("followup", "slot_fill")
SERVER_LOG = Path(f"bench/results/continuity_real.{os.getpid()}.server.log")
# A structured suggestion line in a model's text (a search offered instead of run).
SUGGESTION = re.compile(r"\b[A-Z]+(?:_[A-Z]+)*_SUGGESTIONS?:")
TURN_LIMIT = 900.0  # real mode: the bench's own limit per turn (s); the product's is shorter


def recorded_sources() -> httpx.MockTransport:
    """The literature sources, answered with real recorded responses."""
    bodies = {
        "esearch": ("application/json", SAMPLES / "pubmed" / "esearch_response.json"),
        "efetch": ("text/xml", SAMPLES / "pubmed" / "efetch_response.xml"),
        "openalex": ("application/json", SAMPLES / "openalex" / "sample_response.json"),
        "semanticscholar": (
            "application/json",
            SAMPLES / "semanticscholar" / "relevance_search_response.json",
        ),
    }
    cache = {key: (media, path.read_bytes()) for key, (media, path) in bodies.items()}

    def answer(request: httpx.Request) -> httpx.Response:
        for key, (media, body) in cache.items():
            if key in request.url.host or key in request.url.path:
                return httpx.Response(200, content=body, headers={"content-type": media})
        return httpx.Response(404, json={"error": f"no recording for {request.url.host}"})

    return httpx.MockTransport(answer)


class ScriptedRewrites:
    """The model of model mode: for the turn in play, the case's standalone rewrite."""

    def __init__(self) -> None:
        self.rewrite: str | None = None

    async def model(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        last = messages[-1]
        if isinstance(last, ModelRequest) and any(
            isinstance(p, ToolReturnPart) for p in last.parts
        ):
            yield "Here is what the search found."
            return
        query = self.rewrite if self.rewrite is not None else _prompt(last)
        if not query.strip():
            yield "You're welcome."
            return
        call = DeltaToolCall(
            name="search_literature", json_args=json.dumps({"query": query}), tool_call_id="q1"
        )
        yield {0: call}


def _prompt(message: ModelMessage) -> str:
    """The user's words as they are (a case without a scripted rewrite)."""
    return next(
        (
            str(part.content)
            for part in (message.parts if isinstance(message, ModelRequest) else [])
            if isinstance(part, UserPromptPart)
        ),
        "",
    )


@dataclass
class RealModel:
    """Real mode: the running llama-server, the model's name there, and its requests."""

    server: LlamaServer
    alias: str
    recorder: CallRecorder
    timeout: float


class TurnFailedError(RuntimeError):
    """The turn ended with an error event (real mode records it and goes on)."""

    def __init__(self, message: str, conversation_id: uuid.UUID) -> None:
        super().__init__(message)
        self.conversation_id = conversation_id


def said(call: ModelCall) -> str:
    """What the model answered to one request, in one line."""
    if call.error:
        return f"error: {call.error[:200]}"
    if call.tool_text:
        return "tool call: " + "; ".join(call.tool_text)
    cut = " (cut at max_tokens)" if call.finish_reason == "length" else ""
    return f"text{cut}: {call.content[:300]!r}"


@dataclass
class Outcome:
    case: str
    user: str
    kind: str
    intent: str
    scored: bool
    passed: bool
    queries: list[str]
    position: int
    dated: bool
    date_ok: bool
    closing_ok: bool | None
    years: list[str]
    seconds: float = 0.0
    # Real mode: what the model answered to each request of the turn, the corrections
    # continuity made to its queries, the turn's error if it failed, and the requests.
    model_said: list[str] = field(default_factory=list)
    corrections: list[str] = field(default_factory=list)
    error: str = ""
    calls: list[ModelCall] = field(default_factory=list)


def kind_of(turn: dict[str, Any], earlier: list[str]) -> str:
    if "kind" in turn:
        return str(turn["kind"])
    said_before = " ".join(earlier).lower()
    says = turn["user"].lower()
    if any(e.lower() in said_before for e in turn.get("expect_query_excludes", [])):
        return "switch"
    contains = [c.lower() for c in turn.get("expect_query_contains", [])]
    if earlier and any(c in said_before and c not in says for c in contains):
        return "followup"
    return "new"


def judge(turn: dict[str, Any], sent: list[Any]) -> tuple[bool, bool, bool]:
    """(scored, passed, dates right) for a turn that sent ``sent`` (QuerySent-like)."""
    queries = [q.query for q in sent]
    contains = [s.lower() for s in turn.get("expect_query_contains", [])]
    excludes = [s.lower() for s in turn.get("expect_query_excludes", [])]
    lowered = [q.lower() for q in queries]
    words_ok = all(any(c in q for q in lowered) for c in contains) and not any(
        e in q for e in excludes for q in lowered
    )
    expected = turn.get("expect_date") or {}
    want = (expected.get("from"), expected.get("to"))
    searches = [q for q in sent if q.tool != "read_web_page"]
    # getattr: the bench also measures releases whose queries carried no years.
    date_ok = all(
        (getattr(q, "year_from", None), getattr(q, "year_to", None)) == want for q in searches
    )
    if turn.get("expect_no_search"):
        return True, not sent, True
    scored = bool(contains or excludes or expected)
    return scored, words_ok and date_ok, date_ok


async def answer_of(assistant: Assistant, owner: uuid.UUID, message: ChatMessageIn) -> Any:
    turn = await assistant.start(owner, message)
    async for batch in assistant.hub.listen(turn):
        for _, event in batch:
            if isinstance(event, CompleteEvent):
                return event.payload
            if isinstance(event, ErrorEvent):
                raise TurnFailedError(
                    f"turn failed: {event.code}: {event.message}", turn.conversation_id
                )
    raise TurnFailedError("the turn ended without an answer", turn.conversation_id)


async def run_case(
    assistant: Assistant,
    owner: uuid.UUID,
    case: dict[str, Any],
    model: ScriptedRewrites,
    real: RealModel | None = None,
) -> list[Outcome]:
    conversation: uuid.UUID | None = None
    earlier: list[str] = []
    outcomes = []
    for position, turn in enumerate(case["turns"], 1):
        model.rewrite = turn.get("model_query")
        message = ChatMessageIn(
            message=turn["user"],
            context=ChatContext(current_page="home"),
            conversation_id=conversation,
        )
        began, error, payload = time.monotonic(), "", None
        if real is None:
            payload = await answer_of(assistant, owner, message)
        else:  # a real model's turn may fail: recorded as the turn's outcome
            try:
                payload = await asyncio.wait_for(
                    answer_of(assistant, owner, message), timeout=TURN_LIMIT
                )
            except TurnFailedError as exc:
                error, conversation = str(exc), exc.conversation_id
            except TimeoutError:
                error = f"no answer within {TURN_LIMIT:g} s"
        ended = time.monotonic()
        calls = real.recorder.between(began, ended) if real is not None else []
        if payload is not None:
            conversation = payload.conversation_id
        continuity = payload.continuity if payload is not None else None
        sent = list(continuity.queries) if continuity else []
        queries = list(dict.fromkeys(q.query for q in sent))
        scored, passed, date_ok = judge(turn, sent)
        outcomes.append(
            Outcome(
                case=case["id"],
                user=turn["user"],
                kind=kind_of(turn, earlier),
                intent=continuity.intent if continuity else "-",
                scored=scored,
                passed=passed,
                queries=queries,
                position=position,
                dated=bool(turn.get("expect_date")),
                date_ok=date_ok,
                closing_ok=(not sent) if turn.get("expect_no_search") else None,
                years=sorted({_years(q) for q in sent}),
                seconds=ended - began,
                model_said=[said(c) for c in calls],
                corrections=list(continuity.corrections) if continuity else [],
                error=error,
                calls=calls,
            )
        )
        if real is not None:  # as it goes: an interrupted run still shows its turns
            verdict = "passed" if scored and passed else "failed" if scored else "not scored"
            print(
                f"  {case['id']} turn {position}: {ended - began:.1f} s, {len(calls)} requests, "
                f"{verdict}; sent {queries} {outcomes[-1].years}",
                flush=True,
            )
            for line in [*outcomes[-1].model_said, error]:
                if line:
                    print(f"      {line[:240]}", flush=True)
        earlier.append(turn["user"])
    return outcomes


async def run_mode(
    mode: str, cases: list[dict[str, Any]], real: RealModel | None = None
) -> tuple[list[Outcome], float]:
    with tempfile.TemporaryDirectory() as data_dir:
        search = {"default_sources": SOURCES}
        if real is None:
            settings = load_settings(None, data_dir=Path(data_dir), search=search)
        else:  # the server as the default model (and fast, synthesis), as local_model.py does
            settings = bench_settings(
                Path(data_dir), real.server.base_url, real.alias, None, real.timeout, search=search
            )
        await upgrade_async(settings.app_database_url)
        scripted = ScriptedRewrites()
        models = (
            {"default": FunctionModel(stream_function=scripted.model)} if mode == "model" else None
        )
        runtime: Runtime = build_runtime(
            settings, model_overrides=models, source_transport=recorded_sources()
        )
        try:
            assistant = Assistant(
                settings=runtime.settings,
                database=runtime.database,
                models=runtime.models,
                tools=ToolServices(
                    database=runtime.database,
                    sources=runtime.sources,
                    library=runtime.library,
                    search=runtime.settings.search,
                    chat=runtime.settings.chat,
                ),
                hub=TurnHub(grace_seconds=30, retain_seconds=5),
            )
            async with runtime.database.session() as session:
                owner = (await ensure_local_user(session)).id
            began = time.perf_counter()
            outcomes = [
                o for case in cases for o in await run_case(assistant, owner, case, scripted, real)
            ]
            return outcomes, time.perf_counter() - began
        finally:
            await runtime.close()


def share(rows: list[Outcome]) -> str:
    if not rows:
        return "-"
    return f"{100 * sum(r.passed for r in rows) / len(rows):.1f}% ({len(rows)} turns)"


def _years(query: Any) -> str:
    start, end = getattr(query, "year_from", None), getattr(query, "year_to", None)
    return f"{start or ''}-{end or ''}"


def length_figures(outcomes: list[Outcome]) -> str:
    lengths = [len(q.split()) for o in outcomes for q in o.queries]
    if not lengths:
        return "-"
    first = [len(q.split()) for o in outcomes if o.position == 1 for q in o.queries]
    late = [len(q.split()) for o in outcomes if o.position >= 6 for q in o.queries]
    growth = (
        f"; turn 1 {sum(first) / len(first):.1f}, turns 6+ {sum(late) / len(late):.1f}"
        if first and late
        else ""
    )
    return f"mean {sum(lengths) / len(lengths):.1f} words, largest {max(lengths)}{growth}"


def report(mode: str, cases: list[dict[str, Any]], outcomes: list[Outcome], wall: float) -> None:
    scored = [t for t in outcomes if t.scored]
    followups = [t for t in scored if t.kind in FOLLOW_UPS]
    switches = [t for t in scored if t.kind == "switch"]
    dated = [t for t in scored if t.dated]
    closings = [t for t in outcomes if t.closing_ok is not None]
    print(f"\n== {mode}: {len(cases)} conversations, {len(outcomes)} turns, {len(scored)} scored")
    print(f"scored turns passing:           {share(scored)}")
    print(f"follow-ups carrying the topic:  {share(followups)}")
    print(f"topic switches dropping it:     {share(switches)}")
    print(f"dates sent as filters:          {share([replace(t, passed=t.date_ok) for t in dated])}")
    print(f"closings searching nothing:     {share(closings)}")
    print(f"query length:                   {length_figures(outcomes)}")
    print(f"wall time: {wall:.1f} s ({1000 * wall / max(len(outcomes), 1):.0f} ms per turn)")
    if mode == "real":
        report_model(outcomes)
    failed = [t for t in scored if not t.passed]
    if failed:
        print("failed turns (queries actually sent, with their years):")
        for t in failed:
            print(f"  {t.case} [{t.kind}/{t.intent}] {t.user!r} -> {t.queries} {t.years}")
            if mode == "real":
                for line in [*t.model_said, *(f"corrected: {c}" for c in t.corrections)]:
                    print(f"      {line}")
                if t.error:
                    print(f"      turn error: {t.error}")


def report_model(outcomes: list[Outcome]) -> None:
    """Real mode: seconds per turn, what the model did with each turn, llama-server's figures."""
    seconds = [t.seconds for t in outcomes]
    if seconds:
        print(
            f"seconds per turn:               p50 {statistics.median(seconds):.1f}, "
            f"mean {statistics.mean(seconds):.1f}, max {max(seconds):.1f}"
        )
    calls = [c for t in outcomes for c in t.calls]
    tool_turns = sum(any(c.tool_text for c in t.calls) for t in outcomes)
    text_calls = sum(bool(RAW_TOOL_CALL.search(c.content)) for c in calls)
    suggested = sum(bool(SUGGESTION.search(c.content)) for c in calls)
    print(
        f"the model:                      {len(calls)} requests; called a tool on {tool_turns} "
        f"of {len(outcomes)} turns; a tool call written as text in {text_calls} answers; "
        f"a suggestion line (QUERY_SUGGESTION and the like) in {suggested} answers; "
        f"{sum(bool(t.error) for t in outcomes)} turns failed; "
        f"{sum(bool(t.corrections) for t in outcomes)} turns with its query corrected"
    )
    print_server_figures([Sample("chat", "model", sum(seconds), "", calls)])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=Path, nargs="+", default=DEFAULT_CASES)
    parser.add_argument("--mode", choices=["offline", "model", "both", "real"], default="both")
    parser.add_argument(
        "--limit", type=int, default=None, help="only the first N conversations of each file"
    )
    real = parser.add_argument_group("real mode (a model behind llama-server)")
    real.add_argument("--server-bin", type=Path, help="llama-server binary")
    real.add_argument("--model", type=Path, help="a GGUF instruct model")
    real.add_argument(
        "--ctx", type=int, default=8192, help="llama-server -c, one slot (default 8192)"
    )
    real.add_argument("--threads", type=int, default=None, help="llama-server -t")
    real.add_argument(
        "--chat-template-file",
        type=Path,
        default=None,
        help="llama-server --chat-template-file: a Jinja template with a tools section, for a "
        "model whose own template has none (llama-server then drops the tools)",
    )
    real.add_argument("--n-predict", type=int, default=1024, help="llama-server -n")
    real.add_argument(
        "--timeout",
        type=float,
        default=300,
        help="llm.timeout_seconds (default 300, docs/local-models.md's advice on a CPU)",
    )
    args = parser.parse_args(argv)
    if args.mode == "real" and (args.server_bin is None or args.model is None):
        parser.error("--mode real needs --server-bin and --model")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    return args


def run_files(args: argparse.Namespace, real: RealModel | None) -> None:
    for path in args.cases:
        cases = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        cases = cases[: args.limit] if args.limit else cases
        print(f"\n# {path}", flush=True)
        for mode in ("offline", "model") if args.mode == "both" else (args.mode,):
            outcomes, wall = asyncio.run(run_mode(mode, cases, real))
            report(mode, cases, outcomes, wall)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.mode != "real":
        run_files(args, None)
        return 0
    if not prepared(lambda: check_server_inputs(args.server_bin, args.model)):
        return 2
    options = ServerOptions(
        binary=args.server_bin,
        model=args.model,
        port=free_port(),
        ctx=args.ctx,
        parallel=1,  # one conversation at a time: the whole context for its turns
        n_predict=args.n_predict,
        alias=args.model.stem,
        threads=args.threads,
        log=SERVER_LOG,
        chat_template_file=args.chat_template_file,
    )
    server = LlamaServer(options)
    recorder = CallRecorder(options.port)
    print(f"llama-server: {' '.join(options.command())}", flush=True)
    print(f"product: roles default/fast/synthesis = {PROVIDER}:{options.alias}", flush=True)
    try:
        loaded = server.start(wait_seconds=300)
        print(f"llama-server ready in {loaded:.1f} s (log: {SERVER_LOG})", flush=True)
        recorder.install()
        run_files(args, RealModel(server, options.alias, recorder, args.timeout))
    except BenchError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    finally:
        recorder.uninstall()
        server.stop()
    print("network: no connection outside the loopback was attempted" if not blocked
          else f"network: BLOCKED attempts {blocked}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
