"""Follow-up continuity: do the queries a conversation's chat turns actually send carry the
prior topic on follow-ups and drop it on topic switches?

Each conversation of --cases (JSON Lines: {"id", "turns": [{"user",
"expect_query_contains", "expect_query_excludes", optional "kind"}]}) runs turn by turn
through the chat engine (``Assistant``: classification, planning, the tools' real
calls against the literature sources, answered from recorded responses, and the local
library), in one or both modes:

- offline: no model configured; the message is a retrieval request (seed 004).
- model: a scripted model that does NOT resolve references: it calls search_literature
  with the user's message as the query, then answers. What reaches the sources is what
  continuity made of it.

    python bench/continuity.py [--cases FILE.jsonl ...] [--mode offline|model|both]

The queries scored are those the tools report having sent (the ``complete`` event's
``continuity.queries``), exactly as given to each source. A turn passes when every
expect_query_contains string is in at least one of them (case-insensitive) and no
expect_query_excludes string is in any; a turn with neither is not scored. "follow-ups
carrying the topic" is the passing share of scored follow-up and slot-fill turns, "topic
switches dropping it" that of scored switch turns. A turn's kind is its "kind" field, or
when absent: a switch if it excludes something an earlier turn said, a follow-up if it
expects something an earlier turn said that it does not say itself, else new."""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from scholarstream.accounts import ensure_local_user
from scholarstream.chat import Assistant, ChatMessageIn, TurnHub
from scholarstream.chat.core import ChatContext, CompleteEvent, ErrorEvent
from scholarstream.chat.tools import ToolServices
from scholarstream.db import upgrade_async
from scholarstream.runtime import Runtime, build_runtime
from scholarstream.settings import load_settings

DATA = Path(__file__).parent / "data"
DEFAULT_CASES = [DATA / "continuity_cases.jsonl", DATA / "continuity_holdout.jsonl"]
SAMPLES = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "api_fixtures"
    / "findpapers_collected_samples"
)
SOURCES = ["pubmed", "openalex", "semantic_scholar", "library"]
FOLLOW_UPS = ("followup", "slot_fill")


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


async def pass_through_model(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    """Searches with the user's words as they are, then answers."""
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
        yield "Here is what the search found."
        return
    prompt = next(
        (
            str(part.content)
            for part in (last.parts if isinstance(last, ModelRequest) else [])
            if isinstance(part, UserPromptPart)
        ),
        "",
    )
    call = DeltaToolCall(
        name="search_literature", json_args=json.dumps({"query": prompt}), tool_call_id="q1"
    )
    yield {0: call}


@dataclass
class Outcome:
    case: str
    user: str
    kind: str
    intent: str
    scored: bool
    passed: bool
    queries: list[str]


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


def judge(turn: dict[str, Any], queries: list[str]) -> tuple[bool, bool]:
    contains = [s.lower() for s in turn.get("expect_query_contains", [])]
    excludes = [s.lower() for s in turn.get("expect_query_excludes", [])]
    lowered = [q.lower() for q in queries]
    passed = all(any(c in q for q in lowered) for c in contains) and not any(
        e in q for e in excludes for q in lowered
    )
    return bool(contains or excludes), passed


async def answer_of(assistant: Assistant, owner: uuid.UUID, message: ChatMessageIn) -> Any:
    turn = await assistant.start(owner, message)
    async for batch in assistant.hub.listen(turn):
        for _, event in batch:
            if isinstance(event, CompleteEvent):
                return event.payload
            if isinstance(event, ErrorEvent):
                raise RuntimeError(f"turn failed: {event.code}: {event.message}")
    raise RuntimeError("the turn ended without an answer")


async def run_case(assistant: Assistant, owner: uuid.UUID, case: dict[str, Any]) -> list[Outcome]:
    conversation: uuid.UUID | None = None
    earlier: list[str] = []
    outcomes = []
    for turn in case["turns"]:
        payload = await answer_of(
            assistant,
            owner,
            ChatMessageIn(
                message=turn["user"],
                context=ChatContext(current_page="home"),
                conversation_id=conversation,
            ),
        )
        conversation = payload.conversation_id
        continuity = payload.continuity
        queries = list(dict.fromkeys(q.query for q in continuity.queries)) if continuity else []
        scored, passed = judge(turn, queries)
        outcomes.append(
            Outcome(
                case=case["id"],
                user=turn["user"],
                kind=kind_of(turn, earlier),
                intent=continuity.intent if continuity else "-",
                scored=scored,
                passed=passed,
                queries=queries,
            )
        )
        earlier.append(turn["user"])
    return outcomes


async def run_mode(mode: str, cases: list[dict[str, Any]]) -> tuple[list[Outcome], float]:
    with tempfile.TemporaryDirectory() as data_dir:
        settings = load_settings(None, data_dir=Path(data_dir), search={"default_sources": SOURCES})
        await upgrade_async(settings.app_database_url)
        models = (
            {"default": FunctionModel(stream_function=pass_through_model)}
            if mode == "model"
            else None
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
            outcomes = [o for case in cases for o in await run_case(assistant, owner, case)]
            return outcomes, time.perf_counter() - began
        finally:
            await runtime.close()


def share(rows: list[Outcome]) -> str:
    if not rows:
        return "-"
    return f"{100 * sum(r.passed for r in rows) / len(rows):.1f}% ({len(rows)} turns)"


def report(mode: str, cases: list[dict[str, Any]], outcomes: list[Outcome], wall: float) -> None:
    scored = [t for t in outcomes if t.scored]
    followups = [t for t in scored if t.kind in FOLLOW_UPS]
    switches = [t for t in scored if t.kind == "switch"]
    print(f"\n== {mode}: {len(cases)} conversations, {len(outcomes)} turns, {len(scored)} scored")
    print(f"scored turns passing:           {share(scored)}")
    print(f"follow-ups carrying the topic:  {share(followups)}")
    print(f"topic switches dropping it:     {share(switches)}")
    print(f"wall time: {wall:.1f} s ({1000 * wall / max(len(outcomes), 1):.0f} ms per turn)")
    failed = [t for t in scored if not t.passed]
    if failed:
        print("failed turns (queries actually sent):")
        for t in failed:
            print(f"  {t.case} [{t.kind}/{t.intent}] {t.user!r} -> {t.queries}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=Path, nargs="+", default=DEFAULT_CASES)
    parser.add_argument("--mode", choices=["offline", "model", "both"], default="both")
    args = parser.parse_args()
    for path in args.cases:
        cases = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        print(f"\n# {path}")
        for mode in ("offline", "model") if args.mode == "both" else (args.mode,):
            outcomes, wall = asyncio.run(run_mode(mode, cases))
            report(mode, cases, outcomes, wall)


if __name__ == "__main__":
    main()
