"""Follow-up continuity: do the queries a conversation's chat turns actually send carry the
prior topic on follow-ups, drop what a switch or a replacement drops, carry dates as
filters, and search nothing on a closing?

Each conversation of --cases (JSON Lines: {"id", "turns": [{"user",
"expect_query_contains", "expect_query_excludes", optional "kind", "expect_date":
{"from", "to"}, "expect_no_search", "model_query"}]}) runs turn by turn through the chat
engine (``Assistant``: classification, planning, the tools' real calls against the
literature sources, answered from recorded responses, and the local library), in one or
both modes:

- offline: no model configured; the message is a retrieval request (seed 004).
- model: a scripted model that answers the way a real one does: it rewrites the turn
  into a standalone query (the case's "model_query", written by the case's author as a
  real model would, flaws included: a kept replaced value, a lost topic, dates as words)
  and calls search_literature with it; "" means it searches nothing. A turn without
  "model_query" gets the user's words passed through. What reaches the sources is what
  continuity made of the model's query.

    python bench/continuity.py [--cases FILE.jsonl ...] [--mode offline|model|both]

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
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
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
            yield "Glad it helped."
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
                raise RuntimeError(f"turn failed: {event.code}: {event.message}")
    raise RuntimeError("the turn ended without an answer")


async def run_case(
    assistant: Assistant, owner: uuid.UUID, case: dict[str, Any], model: ScriptedRewrites
) -> list[Outcome]:
    conversation: uuid.UUID | None = None
    earlier: list[str] = []
    outcomes = []
    for position, turn in enumerate(case["turns"], 1):
        model.rewrite = turn.get("model_query")
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
            )
        )
        earlier.append(turn["user"])
    return outcomes


async def run_mode(mode: str, cases: list[dict[str, Any]]) -> tuple[list[Outcome], float]:
    with tempfile.TemporaryDirectory() as data_dir:
        settings = load_settings(None, data_dir=Path(data_dir), search={"default_sources": SOURCES})
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
                o for case in cases for o in await run_case(assistant, owner, case, scripted)
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
    failed = [t for t in scored if not t.passed]
    if failed:
        print("failed turns (queries actually sent, with their years):")
        for t in failed:
            print(f"  {t.case} [{t.kind}/{t.intent}] {t.user!r} -> {t.queries} {t.years}")


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
