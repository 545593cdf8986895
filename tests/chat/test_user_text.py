"""Every chat tool, on every way it ends, as a person reads it: the tool's line in the tray
(``tool_complete``'s ``message``, and the history entry a reloaded conversation shows), and
a command's answer (``run_for_user``). A tool's result has two texts and they never mix:
the model's (tool names, ids, citation keys, instructions) stays with the model.

Each product tool runs for real, through the ``ToolRunner`` the chat uses, on a runtime
whose sources answer with recorded bodies and whose library holds a real export: when it
works, when a source fails, when nothing is found, when the arguments are refused. A tool
registered without a case here fails ``test_every_product_tool_has_its_cases``, so a new
tool cannot leave its user text untested."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from pydantic_ai import ModelRetry

import scholarstream.chat  # noqa: F401  (registers the built-ins and the pages' tools)
from scholarstream.chat import TurnTranscript, get_server_action
from scholarstream.chat._agent_loop import ToolRunner
from scholarstream.chat.core import ChatContext, ChatEvent, ToolCompleteEvent
from scholarstream.chat.tools import ToolContext, get_tool, tools
from scholarstream.db.tables import User
from scholarstream.research import DraftRequest, research_service
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from scholarstream.sources.library import LibraryQuery
from scholarstream.streams.monitoring import run_stream_now
from tests.chat.services import tool_services
from tests.chat.test_builtin_tools import (
    LIBRARY_FILE,
    PMID_IN_SAMPLE,
    SEARCH_PAGE_TRIALS,
    RecordedSources,
)
from tests.helpers import make_runtime, new_user
from tests.search.world import LiteratureWorld
from tests.streams.runner import runner
from tests.streams.test_monitoring import NOW, new_stream

TOOL_NAMES = {tool.name for tool in tools()}
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
SNAKE = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")
CLASS_NAME = re.compile(r"\b[A-Z][A-Za-z]+(?:Error|Exception)\b")
FOR_A_MODEL = re.compile(
    r"tell the user|the user'?s?\b|citation key|answer now|do not call|\bthe tool\b|"
    r"in brackets|distinct works after merging|traceback|pydantic|httpx",
    re.I,
)


def assert_for_people(text: str | None) -> None:
    """``text`` is for a person: none of the model's words, no tool or field identifiers,
    no ids as labels, no error classes."""
    assert text, "a person reads nothing of this run"
    assert not FOR_A_MODEL.search(text), text
    assert not UUID.search(text), text
    assert not CLASS_NAME.search(text), text
    assert not SNAKE.search(text), text
    assert not any(name in text for name in TOOL_NAMES), text


# --- the world ---------------------------------------------------------------------------


@dataclass
class World:
    runtime: Runtime
    owner: User
    sources: RecordedSources
    library_ids: list[str] = field(default_factory=list)


@pytest.fixture
async def world(db_settings: Settings) -> AsyncIterator[World]:
    sources = RecordedSources()
    runtime = make_runtime(db_settings, source_transport=httpx.MockTransport(sources))
    owner = await new_user(runtime)
    report = await runtime.library.import_file(owner.id, LIBRARY_FILE)
    assert report.imported == 50
    page = await runtime.library.search(owner.id, LibraryQuery(text="", limit=3))
    yield World(runtime, owner, sources, [str(item.id) for item in page.items])
    await runtime.close()


@dataclass
class Seen:
    """One run of a tool as the chat does it."""

    model_text: str
    line: str | None
    """The tool's line in the tray (its ``tool_complete`` message)."""
    shown: str | None
    """What the stored history gives a reloaded conversation for that line."""
    answer: str
    """What a command's answer says of the run."""
    ok: bool


async def run(world: World, tool_name: str, arguments: dict[str, Any], **chat: Any) -> Seen:
    events: list[ChatEvent] = []
    transcript = TurnTranscript()
    context = ToolContext(
        services=tool_services(world.runtime),
        owner_id=world.owner.id,
        chat=ChatContext.model_validate({"current_page": "home", **chat}),
        evidence=transcript.evidence,
    )
    tool = get_tool(tool_name)
    runner = ToolRunner(context, events.append, transcript, max_calls=2)
    model_text = ""
    with contextlib.suppress(ModelRetry):  # refused arguments go back to the model
        model_text = await runner.run(tool, arguments)
    (complete,) = [e for e in events if isinstance(e, ToolCompleteEvent)]
    answer = runner.last.for_user(tool, arguments, context)
    # A command's run: the answer says it, and the tool's line does not say it again.
    quiet: list[ChatEvent] = []
    command = ToolRunner(context, quiet.append, TurnTranscript(), max_calls=2)
    assert await command.run_for_user(tool, arguments) == answer
    (line,) = [e for e in quiet if isinstance(e, ToolCompleteEvent)]
    assert line.message is None
    return Seen(
        model_text, complete.message, transcript.tool_history[-1].shown, answer, complete.ok
    )


# --- the cases ---------------------------------------------------------------------------

Arguments = Callable[[World], Awaitable[tuple[dict[str, Any], dict[str, Any]]]]
"""The arguments of a case and the page context it runs on, given the world."""


def given(arguments: dict[str, Any], **chat: Any) -> Arguments:
    async def build(world: World) -> tuple[dict[str, Any], dict[str, Any]]:
        return arguments, chat

    return build


def on_library_page(operation: str | None = None) -> Arguments:
    async def build(world: World) -> tuple[dict[str, Any], dict[str, Any]]:
        summaries = [
            {"id": i, "kind": "library_record", "title": f"Record {n}", "fields": {"year": 2020}}
            for n, i in enumerate(world.library_ids)
        ]
        arguments = (
            {"ids": world.library_ids[:2]}
            if operation is None
            else {"operation": operation, "field": "year"}
        )
        return arguments, {"current_page": "library", "item_summaries": summaries}

    return build


def a_research(model: str | None = None) -> Arguments:
    async def build(world: World) -> tuple[dict[str, Any], dict[str, Any]]:
        draft = await research_service(world.runtime).draft(
            world.owner.id, DraftRequest(prompt="Tirzepatide safety in adolescents")
        )
        arguments = {} if model is None else {"model": model}
        return arguments, {"current_page": "research", "research": {"id": str(draft.id)}}

    return build


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    arguments: Arguments
    ok: bool
    failing: Collection[str] = ()


CASES = [
    Case("pubmed", "search_pubmed", given({"query": "nlp"}), ok=True),
    Case("pubmed-down", "search_pubmed", given({"query": "nlp"}), ok=False, failing=["pubmed"]),
    Case("pubmed-refused", "search_pubmed", given({"query": "nlp", "max_results": 99}), ok=False),
    Case(
        "literature",
        "search_literature",
        given({"query": "nlp", "sources": ["pubmed", "openalex", "library"]}),
        ok=True,
    ),
    Case(
        "literature-partial",
        "search_literature",
        given({"query": "nlp", "sources": ["pubmed", "openalex"]}),
        ok=True,
        failing=["openalex"],
    ),
    Case(
        "literature-all-down",
        "search_literature",
        given({"query": "nlp", "sources": ["pubmed", "openalex"]}),
        ok=False,
        failing=["pubmed", "openalex"],
    ),
    Case("details", "get_article_details", given({"identifier": PMID_IN_SAMPLE}), ok=True),
    Case(
        "details-missing",
        "get_article_details",
        given({"identifier": "10.1234/nowhere.5678"}),
        ok=False,
    ),
    Case("details-unreadable", "get_article_details", given({"identifier": "yesterday"}), False),
    Case("trials", "search_trials", given({"condition": "asthma"}), ok=True),
    Case(
        "trials-down",
        "search_trials",
        given({"condition": "asthma"}),
        ok=False,
        failing=["clinicaltrials"],
    ),
    Case("library", "search_library", given({"query": "cataract"}), ok=True),
    Case("library-nothing", "search_library", given({"query": "zzzqqq"}), ok=True),
    Case("items", "retrieve_items", on_library_page(), ok=True),
    Case(
        "items-not-on-page",
        "retrieve_items",
        given({"ids": [SEARCH_PAGE_TRIALS[0]]}, current_page="library"),
        ok=True,
    ),
    Case("analyze", "analyze_items", on_library_page("distribution"), ok=True),
    Case("analyze-count", "analyze_items", on_library_page("count"), ok=True),
    Case(
        "analyze-nothing",
        "analyze_items",
        given({"operation": "distribution", "field": "year"}, current_page="library"),
        ok=False,
    ),
    Case("research", "read_research", a_research(), ok=True),
    Case("research-unasked-model", "read_research", a_research("openai:gpt-x"), ok=False),
    Case("research-none-open", "read_research", given({}, current_page="research"), ok=False),
    Case(
        "web-private",
        "read_web_page",
        given({"url": "http://127.0.0.1:8000/admin"}),
        ok=False,
    ),
    Case("compare-nothing-open", "compare_reports", given({}), ok=False),
    Case(
        "compare-not-this-streams",
        "compare_reports",
        given(
            {"other_report_id": str(uuid.uuid4())},
            current_page="stream_report",
            stream_id=str(uuid.uuid4()),
            report_id=str(uuid.uuid4()),
        ),
        ok=False,
    ),
]


def test_every_product_tool_has_its_cases() -> None:
    """A success and a failure of each tool, except where one cannot happen: reading the
    web and comparing reports succeed in their own tests below."""
    covered = {case.tool for case in CASES}
    assert covered == TOOL_NAMES - {name for name in TOOL_NAMES if name.startswith("chat_test_")}
    failing = {case.tool for case in CASES if not case.ok}
    assert failing == covered - {"search_library", "retrieve_items"}


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
async def test_what_a_person_reads_of_every_tool_run(world: World, case: Case) -> None:
    world.sources.failing = case.failing
    arguments, chat = await case.arguments(world)

    seen = await run(world, case.tool, arguments, **chat)

    assert seen.ok is case.ok
    assert seen.shown == seen.line  # a reloaded conversation shows the same line
    assert_for_people(seen.line)
    assert_for_people(seen.answer)
    assert seen.line == seen.answer
    if case.ok:
        # The model's text is the model's: not what the person read.
        assert seen.model_text != seen.line


async def test_the_offline_literature_search_names_its_cause_once(world: World) -> None:
    """Every source unreachable: the card's sentences and the line say why in words."""

    def no_network(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno -3] Temporary failure in name resolution")

    world.sources.failing = ()
    runtime = make_runtime(world.runtime.settings, source_transport=httpx.MockTransport(no_network))
    try:
        offline = World(runtime, world.owner, world.sources)
        seen = await run(
            offline, "search_literature", {"query": "cataract", "sources": ["pubmed", "openalex"]}
        )
    finally:
        await runtime.close()
    assert seen.ok
    assert_for_people(seen.line)
    assert seen.line is not None
    assert seen.line.startswith("You appear to be offline: searching your library only.")


async def test_a_work_listed_by_one_search_of_an_answer_is_not_listed_again(
    world: World,
) -> None:
    """The library's search, then a search of every source with the library: the library's
    records are listed once, by the first search; the second says they are above."""
    events: list[ChatEvent] = []
    transcript = TurnTranscript()
    context = ToolContext(
        services=tool_services(world.runtime),
        owner_id=world.owner.id,
        chat=ChatContext(current_page="library"),
        evidence=transcript.evidence,
    )
    runner = ToolRunner(context, events.append, transcript, max_calls=2)
    await runner.run(get_tool("search_library"), {"query": "cataract dogs"})
    await runner.run(
        get_tool("search_literature"), {"query": "cataract dogs", "sources": ["library"]}
    )

    first, second = (json.loads(json.dumps(p.data)) for p in transcript.tool_payloads)
    titles = [a["title"] for a in first["articles"]]
    assert titles
    assert not {a["title"] for a in second["articles"]} & set(titles)
    assert second["already_listed"] == min(len(titles), 5)


# --- the two tools that need more of a world to succeed ----------------------------------


@pytest.fixture
async def make_world(db_settings: Settings) -> AsyncIterator[Callable[[LiteratureWorld], Runtime]]:
    runtimes: list[Runtime] = []

    def build(literature: LiteratureWorld) -> Runtime:
        runtime = make_runtime(db_settings, source_transport=literature.transport())
        runtimes.append(runtime)
        return runtime

    yield build
    for runtime in runtimes:
        await runtime.close()


async def test_comparing_reports_reads_as_dates_and_counts(
    make_world: Callable[[LiteratureWorld], Runtime],
) -> None:
    runtime = make_world(LiteratureWorld(failing=("openalex",)))
    owner, stream = await new_stream(runtime)
    first = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    healthy = make_world(LiteratureWorld())
    second = await run_stream_now(
        runner(healthy), owner.id, stream.id, now=NOW + dt.timedelta(days=1)
    )
    world = World(healthy, owner, RecordedSources())
    page = {"current_page": "stream_report", "stream_id": str(stream.id)}

    seen = await run(world, "compare_reports", {}, report_id=str(second.id), **page)

    assert seen.ok
    assert_for_people(seen.line)
    assert seen.line is not None
    assert seen.line.startswith(f"Compared with the report of {first.started_at:%-d %b %Y}")
    assert "OpenAlex answered again after failing in the other run." in seen.line
    assert str(first.id) in seen.model_text  # the model may name reports by id

    earliest = await run(world, "compare_reports", {}, report_id=str(first.id), **page)
    assert not earliest.ok
    assert earliest.line == (
        "This is the stream's first report: there is no earlier one to compare it with."
    )
    itself = await run(
        world,
        "compare_reports",
        {"other_report_id": str(second.id)},
        report_id=str(second.id),
        **page,
    )
    assert itself.line == "A report cannot be compared with itself."


async def test_a_server_action_that_fails_says_why_in_words(world: World) -> None:
    """The "Search every source" button, every source down: the button's outcome is the
    tool's words for people, never the error's hint for a model."""
    world.sources.failing = ["pubmed", "openalex"]
    context = ToolContext(
        services=tool_services(world.runtime),
        owner_id=world.owner.id,
        chat=ChatContext(current_page="home"),
    )
    action = get_server_action("run_search")

    failed = await action.handler({"query": "nlp", "sources": ["pubmed", "openalex"]}, context)

    assert failed.ok is False
    assert failed.message.startswith("None of the sources answered: PubMed and OpenAlex")
    assert_for_people(failed.message)
    world.sources.failing = ()
    found = await action.handler({"query": "nlp", "sources": ["pubmed"]}, context)
    assert found.ok is True
    assert_for_people(found.message)
