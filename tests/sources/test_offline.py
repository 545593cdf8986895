"""An offline machine: within one search, the first source that cannot be reached at all
stops every remote source's retries, the library still answers, and the result says so
once. ``httpx.ConnectError`` from a ``MockTransport`` stands for the missing network."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import pytest

import scholarstream.chat  # noqa: F401  (registers the built-in tools)
from scholarstream.chat.core import ChatContext
from scholarstream.chat.tools import ToolContext, ToolResult, execute_tool, get_tool
from scholarstream.errors import SourceUnavailableError
from scholarstream.papers import Paper, Record
from scholarstream.settings import Settings, SourceSettings
from scholarstream.sources import (
    OFFLINE_NOTICE,
    SearchPage,
    SearchQuery,
    SourceHttp,
    SourceHub,
    SourceInfo,
    SourceUnreachableError,
    connectivity_scope,
)
from tests.chat.services import tool_services
from tests.helpers import make_runtime, new_user
from tests.sources.conftest import FakeClock, Handler, Recorder

REMOTE = ["pubmed", "openalex", "crossref", "arxiv"]


def no_network(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError(
        f"[Errno -3] Temporary failure in name resolution ({request.url.host})", request=request
    )


def hub_for(handler: Handler, clock: FakeClock) -> tuple[SourceHub, Recorder]:
    recorder = Recorder(handler)
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    http = SourceHttp(client, sleep=clock.sleep, clock=clock, jitter=lambda: 0.5)
    return SourceHub(SourceSettings(), http), recorder


class ShelfLibrary:
    """A local source standing in for the user's library: it needs no network."""

    def __init__(self) -> None:
        self.queries: list[SearchQuery] = []

    @property
    def info(self) -> SourceInfo:
        return SourceInfo(
            name="library",
            label="Library",
            description="records on this machine",
            query_syntax="words",
            rate_limit="none",
        )

    async def search(self, query: SearchQuery) -> SearchPage:
        self.queries.append(query)
        return SearchPage(
            source="library", records=[Paper(title="Aspirin after stroke", year=2019)], total=1
        )

    async def fetch(self, ids: Sequence[str]) -> list[Record]:
        return []


async def test_offline_costs_one_attempt_per_source_and_the_library_answers(
    clock: FakeClock,
) -> None:
    hub, recorder = hub_for(no_network, clock)
    library = ShelfLibrary()
    query = SearchQuery(text="aspirin stroke", limit=10)

    result = await hub.search_each(
        [(name, query) for name in [*REMOTE, "library"]], local={"library": library}
    )

    assert len(recorder.requests) == len(REMOTE)  # not four per source
    assert clock.sleeps == []  # no backoff waited out
    assert result.offline
    assert result.notice == OFFLINE_NOTICE
    assert result.notice == "You appear to be offline: searching your library only."
    by_source = {status.source: status for status in result.statuses}
    for name in REMOTE:
        status = by_source[name]
        assert (status.ok, status.unreachable, status.error_code) == (
            False,
            True,
            "source_unavailable",
        )
        assert status.error is not None
        assert status.error.endswith(": this server appears to have no network connection.")
        assert status.cause == "unreachable"
        assert status.hint is not None
        assert "library" in status.hint
    assert by_source["library"].ok
    assert [r.title for r in result.records] == ["Aspirin after stroke"]


async def test_the_library_is_searched_when_offline_even_if_not_asked_for(
    clock: FakeClock,
) -> None:
    hub, recorder = hub_for(no_network, clock)
    library = ShelfLibrary()
    query = SearchQuery(text="aspirin stroke", limit=10)

    result = await hub.search_each(
        [("pubmed", query), ("openalex", query)],
        local={"library": library},
        when_offline=[("library", SearchQuery(text="aspirin stroke", limit=10))],
    )

    assert len(recorder.requests) == 2
    assert [status.source for status in result.statuses] == ["pubmed", "openalex", "library"]
    assert result.notice == OFFLINE_NOTICE
    assert len(library.queries) == 1
    assert len(result.records) == 1


async def test_online_the_fallback_searches_are_not_run(clock: FakeClock) -> None:
    def answers(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"meta": {"count": 0}, "results": []})

    hub, _ = hub_for(answers, clock)
    library = ShelfLibrary()
    query = SearchQuery(text="aspirin stroke", limit=10)

    result = await hub.search_each(
        [("openalex", query)], local={"library": library}, when_offline=[("library", query)]
    )

    assert not result.offline
    assert result.notice is None
    assert library.queries == []


async def test_a_source_down_while_another_answers_is_retried_as_usual(clock: FakeClock) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org":
            return httpx.Response(200, json={"meta": {"count": 0}, "results": []})
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    hub, recorder = hub_for(handler, clock)
    query = SearchQuery(text="aspirin stroke", limit=10)

    result = await hub.search_each([("openalex", query), ("crossref", query)])

    assert not result.offline
    assert result.notice is None
    crossref = [r for r in recorder.requests if r.url.host == "api.crossref.org"]
    assert len(crossref) == 4
    failed = result.statuses[1]
    assert (failed.source, failed.ok, failed.unreachable) == ("crossref", False, False)


async def test_a_timeout_is_not_retried_once_another_source_proved_unreachable(
    clock: FakeClock,
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org":
            raise httpx.ReadTimeout("timed out", request=request)
        raise httpx.ConnectError("[Errno 101] Network is unreachable", request=request)

    hub, recorder = hub_for(handler, clock)
    query = SearchQuery(text="aspirin stroke", limit=10)

    result = await hub.search_each([("crossref", query), ("openalex", query)])

    assert len(recorder.requests) == 2
    assert result.offline
    assert all(status.unreachable for status in result.statuses)


async def test_a_tls_failure_is_not_taken_for_being_offline(clock: FakeClock) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate", request=request)

    hub, recorder = hub_for(handler, clock)

    result = await hub.search_each([("crossref", SearchQuery(text="aspirin", limit=5))])

    assert len(recorder.requests) == 4
    assert not result.offline
    assert not result.statuses[0].unreachable


async def test_code_inside_one_scope_shares_what_it_learnt(clock: FakeClock) -> None:
    recorder = Recorder(no_network)
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    http = SourceHttp(client, sleep=clock.sleep, clock=clock, jitter=lambda: 0.5)

    with connectivity_scope() as connectivity:
        for source in ("one", "two"):
            with pytest.raises(SourceUnreachableError):
                await http.get(source, f"https://{source}.example.org/", per_second=100.0)

    assert len(recorder.requests) == 2
    assert connectivity.probably_offline
    assert connectivity.unreachable_sources == ["one", "two"]
    # Outside a run nothing is learnt, and the retry policy applies as before.
    with pytest.raises(SourceUnavailableError) as caught:
        await http.get("three", "https://three.example.org/", per_second=100.0)
    assert not isinstance(caught.value, SourceUnreachableError)
    assert len(recorder.requests) == 6


# --- what the user sees: the chat's literature search -------------------------------------


async def test_the_chat_search_says_once_that_it_is_offline_and_searches_the_library(
    db_settings: Settings,
) -> None:
    recorder = Recorder(no_network)
    runtime = make_runtime(db_settings, source_transport=httpx.MockTransport(recorder))
    try:
        owner = await new_user(runtime)
        context = ToolContext(
            services=tool_services(runtime),
            owner_id=owner.id,
            chat=ChatContext.model_validate({"current_page": "home"}),
        )
        result: ToolResult = await execute_tool(
            get_tool("search_literature"),
            {"query": "machine learning", "sources": ["pubmed", "openalex", "crossref"]},
            context,
            lambda progress: None,
        )
    finally:
        await runtime.close()

    assert len(recorder.requests) == 3  # one attempt per remote source
    assert result.text.count(OFFLINE_NOTICE) == 2  # said once, and asked to be said once
    assert result.text.splitlines()[0] == OFFLINE_NOTICE
    assert "- pubmed: not reached (offline)" in result.text
    assert result.payload is not None
    data: Any = result.payload.data
    statuses = {status["source"]: status for status in data["sources"]}
    assert list(statuses) == ["pubmed", "openalex", "crossref", "library"]
    assert statuses["library"]["ok"] is True
