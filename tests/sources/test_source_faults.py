"""Every real source facing the ways an answer goes wrong: its own recorded answer cut short
(in half, inside a JSON string or an XML tag, right after the first record, one byte before
the end), a 200 that is an HTML error page, empty, in another format or JSON without the
parts every answer has, a request that hangs past the timeout, a connection cut in the
middle of the answer, 429 with Retry-After, and 500.

What is asserted: a damaged answer is never half-used. The source raises a
``SourceUnavailableError`` naming itself, saying what came instead and what to do; it never
lets a parser's exception (JSONDecodeError, lxml's XMLSyntaxError, KeyError, pydantic's
ValidationError) through, and never passes a broken answer off as an empty or shorter page.
Keeping the records before a cut was considered and refused: efetch and the search pages
are paged by position, so the records after the cut would silently never be seen. Faults
that go away are retried and cost nothing. Through the ``SourceHub`` and the chat's
``search_literature`` tool, the damaged source is reported as failed and the others'
records all arrive.

The bodies are the real recorded answers of ``api_fixtures`` (see ``damaged_answers``);
retries run on the fake clock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
    LiteratureSource,
    SearchPage,
    SearchQuery,
    SourceHttp,
    SourceHub,
    SourceInfo,
    build_source,
)
from tests.chat.services import tool_services
from tests.helpers import make_runtime, new_user
from tests.sources.conftest import FakeClock, MakeContext, Recorder
from tests.sources.damaged_answers import (
    CASES,
    DAMAGES,
    MISSING,
    NGINX_502,
    QUERY,
    SEARCHES,
    Answer,
    Case,
    Damage,
    as_recorded,
    case_named,
    cut_connection,
    faulty,
    hang,
    ids,
    intact,
    spoil,
    with_value,
)


def source_for(
    case: Case, make_context: MakeContext, handler: Callable[[httpx.Request], httpx.Response]
) -> LiteratureSource:
    return build_source(case.source, make_context(handler, **case.settings))


def assert_says_what_to_do(error: SourceUnavailableError, case: Case) -> None:
    assert error.source == case.source
    assert case.label in error.message or case.source in error.message
    assert error.hint is not None
    assert "try again" in error.hint.lower()


# --- one source ----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
async def test_the_intact_answers_give_every_record(case: Case, make_context: MakeContext) -> None:
    """The baseline the damaged answers are measured against."""
    records = await case.run(source_for(case, make_context, intact(case)))
    assert len(records) == case.expected
    assert all(record.provenance[0].source == case.source for record in records)


DAMAGED = [
    pytest.param(case, damage, id=f"{case.id}-{damage.id}")
    for case in CASES
    for damage in [*DAMAGES, *MISSING]
    if damage.applies(case)
]


@pytest.mark.parametrize(("case", "damage"), DAMAGED)
async def test_a_damaged_answer_is_reported_never_half_used(
    case: Case, damage: Damage, make_context: MakeContext
) -> None:
    recorder = Recorder(spoil(case, damage))
    source = source_for(case, make_context, recorder)

    with pytest.raises(SourceUnavailableError) as caught:
        await case.run(source)

    error = caught.value
    assert_says_what_to_do(error, case)
    assert damage.says in error.message
    assert error.message.startswith(f"{case.label} sent an answer we could not read: ")
    # Asked once: a broken answer is reported at once, not retried as if the source were down.
    assert sum(case.answer(r)[0] for r in recorder.requests) == 1


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
async def test_the_right_body_with_a_wrong_content_type_is_read(
    case: Case, make_context: MakeContext
) -> None:
    wrong = "text/plain; charset=iso-8859-1" if case.intact.is_json else "text/html"

    def handler(request: httpx.Request) -> httpx.Response:
        damaged, answer = case.answer(request)
        content_type = wrong if damaged else answer.content_type
        return httpx.Response(200, content=answer.body, headers={"content-type": content_type})

    records = await case.run(source_for(case, make_context, handler))
    assert len(records) == case.expected


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
async def test_a_request_that_keeps_hanging_is_reported_after_the_retries(
    case: Case, make_context: MakeContext
) -> None:
    recorder = faulty(case, lambda answer, request: hang(request), times=99)

    with pytest.raises(SourceUnavailableError) as caught:
        await case.run(source_for(case, make_context, recorder))

    assert_says_what_to_do(caught.value, case)
    assert caught.value.message == f"{case.label} did not answer in time."
    assert sum(case.answer(r)[0] for r in recorder.requests) == 4  # retried, on the fake clock


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
async def test_a_connection_that_keeps_being_cut_is_reported_after_the_retries(
    case: Case, make_context: MakeContext
) -> None:
    recorder = faulty(case, cut_connection, times=99)

    with pytest.raises(SourceUnavailableError) as caught:
        await case.run(source_for(case, make_context, recorder))

    assert_says_what_to_do(caught.value, case)
    assert caught.value.message == f"{case.label} broke off its answer before it was complete."


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
async def test_a_source_that_keeps_answering_500_is_reported(
    case: Case, make_context: MakeContext
) -> None:
    recorder = faulty(
        case, lambda answer, request: httpx.Response(500, text="Internal Server Error"), times=99
    )

    with pytest.raises(SourceUnavailableError) as caught:
        await case.run(source_for(case, make_context, recorder))

    assert_says_what_to_do(caught.value, case)
    assert caught.value.message == (
        f"{case.label} answered with an error on its side (HTTP 500 Internal Server Error)."
    )


RECOVERED = [
    pytest.param(lambda answer, request: hang(request), 1, None, id="hang-once"),
    pytest.param(cut_connection, 2, None, id="cut-twice"),
    pytest.param(
        lambda answer, request: httpx.Response(429, headers={"Retry-After": "7"}),
        1,
        7.0,
        id="429-retry-after-7",
    ),
    pytest.param(
        lambda answer, request: httpx.Response(502, text=NGINX_502.decode()),
        3,
        None,
        id="502-three-times",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
@pytest.mark.parametrize(("fault", "times", "waited"), RECOVERED)
async def test_a_fault_that_goes_away_costs_nothing(
    case: Case,
    fault: Callable[[Answer, httpx.Request], httpx.Response],
    times: int,
    waited: float | None,
    make_context: MakeContext,
    clock: FakeClock,
) -> None:
    recorder = faulty(case, fault, times=times)

    records = await case.run(source_for(case, make_context, recorder))

    assert len(records) == case.expected
    assert sum(case.answer(r)[0] for r in recorder.requests) == times + 1
    if waited is not None:
        assert waited in clock.sleeps  # Retry-After honoured (on the fake clock)


NEGATIVE_COUNTS = [
    ("openalex-search", ("results", 0, "cited_by_count")),
    ("crossref-search", ("message", "items", 0, "is-referenced-by-count")),
    ("crossref-fetch-by-doi", ("message", "is-referenced-by-count")),
    ("semantic_scholar-search", ("data", 0, "citationCount")),
    ("semantic_scholar-fetch", ("citationCount",)),
    ("google_scholar-search", ("organic_results", 0, "inline_links", "cited_by", "total")),
]


@pytest.mark.parametrize(
    ("case", "path"),
    [pytest.param(case_named(name), path, id=name) for name, path in NEGATIVE_COUNTS],
)
async def test_a_record_holding_an_impossible_value_is_reported(
    case: Case, path: tuple[str | int, ...], make_context: MakeContext
) -> None:
    """A negative citation count is well-typed JSON that no paper can hold: it used to
    escape as pydantic's ValidationError (and, in the hub, take every source down)."""
    damaged = with_value(case, path, -1)

    def handler(request: httpx.Request) -> httpx.Response:
        is_damaged, answer = case.answer(request)
        return as_recorded(damaged if is_damaged else answer)

    with pytest.raises(SourceUnavailableError) as caught:
        await case.run(source_for(case, make_context, handler))

    assert_says_what_to_do(caught.value, case)
    assert caught.value.message == (
        f"{case.label} sent an answer we could not read: record 1 holds an impossible "
        "citation_count (must be at least 0)."
    )


async def test_a_crossref_date_past_any_calendar_costs_only_that_date(
    make_context: MakeContext,
) -> None:
    """Crossref's date-parts are bare integers; one too large for a date used to escape
    as OverflowError. The work keeps its year and loses only the impossible day."""
    case = case_named("crossref-search")
    damaged = with_value(case, ("message", "items", 0, "issued", "date-parts"), [[2022, 10**20, 1]])

    records = await case.run(source_for(case, make_context, lambda r: as_recorded(damaged)))

    assert len(records) == case.expected
    first = records[0]
    assert isinstance(first, Paper)
    assert (first.title, first.year, first.published) == ("Communicating Ecology", 2022, None)


# --- several sources at once -------------------------------------------------------------------


def hub_for(handler: Callable[[httpx.Request], httpx.Response], clock: FakeClock) -> SourceHub:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    http = SourceHttp(client, sleep=clock.sleep, clock=clock, jitter=lambda: 0.5)
    return SourceHub(SourceSettings.model_validate({"serpapi_api_key": "serp-key"}), http)


def healthy_searches(damaged: Case) -> list[Case]:
    """One search case per source, the damaged one's for its source."""
    chosen: dict[str, Case] = {}
    for case in SEARCHES:
        chosen.setdefault(case.source, case)
    chosen[damaged.source] = damaged
    return list(chosen.values())


HUB_DAMAGES = [d for d in DAMAGES if d.id in ("cut-after-the-first-record", "xhtml-503-page")]


@pytest.mark.parametrize("damaged", SEARCHES, ids=ids(SEARCHES))
@pytest.mark.parametrize(
    "damage", [*HUB_DAMAGES, None], ids=[*(d.id for d in HUB_DAMAGES), "hanging"]
)
async def test_through_the_hub_the_damaged_source_fails_alone(
    damaged: Case, damage: Damage | None, clock: FakeClock
) -> None:
    cases = healthy_searches(damaged)
    by_host = {case.host: case for case in cases}
    spoilt = (
        spoil(damaged, damage)
        if damage is not None
        else faulty(damaged, lambda answer, request: hang(request), times=99)
    )

    def handler(request: httpx.Request) -> httpx.Response:
        case = by_host[request.url.host]
        if case is damaged:
            return spoilt(request)
        return intact(case)(request)

    hub = hub_for(handler, clock)
    result = await hub.search([case.source for case in cases], QUERY)

    statuses = {status.source: status for status in result.statuses}
    assert list(statuses) == [case.source for case in cases]
    failed = statuses[damaged.source]
    assert (failed.ok, failed.returned, failed.error_code) == (False, 0, "source_unavailable")
    assert failed.error is not None
    assert failed.error.startswith(damaged.label)
    assert failed.hint is not None and "try again" in failed.hint.lower()
    assert [status.source for status in result.failed] == [damaged.source]
    for case in cases:
        if case is not damaged:
            assert (statuses[case.source].ok, statuses[case.source].returned) == (
                True,
                case.expected,
            )
    assert len(result.records) == sum(case.expected for case in cases if case is not damaged)
    assert not any(
        p.source == damaged.source for record in result.records for p in record.provenance
    )


async def test_through_the_hub_a_source_failing_with_a_bug_is_reported_not_fatal(
    clock: FakeClock,
) -> None:
    """Should a source ever fail with something other than a SourceError (a bug of ours), the
    hub reports it like any failure rather than losing every source's records."""

    class Broken:
        """A source with a bug: it fails with a KeyError."""

        @property
        def info(self) -> SourceInfo:
            return SourceInfo(
                name="broken", label="Broken", description="", query_syntax="", rate_limit=""
            )

        async def search(self, query: SearchQuery) -> SearchPage:
            raise KeyError("records")

        async def fetch(self, ids: Sequence[str]) -> list[Record]:
            return []

    openalex = next(case for case in SEARCHES if case.source == "openalex")
    hub = hub_for(intact(openalex), clock)

    result = await hub.search(["openalex", "broken"], QUERY, local={"broken": Broken()})

    ok, broken = result.statuses
    assert (ok.source, ok.ok, ok.returned) == ("openalex", True, openalex.expected)
    assert (broken.source, broken.ok, broken.error_code) == ("broken", False, "internal_error")
    # The class of the fault goes to the log, not to the user.
    assert broken.error == "Broken could not be searched because of a fault in ScholarStream."
    assert broken.hint is not None and "report it" in broken.hint
    assert len(result.records) == openalex.expected


# --- what the user sees: the chat's literature search -------------------------------------------


async def test_the_chat_search_names_the_damaged_source_and_brings_the_others(
    db_settings: Settings,
) -> None:
    """``search_literature`` over the default sources (PubMed, OpenAlex, Semantic Scholar and
    the library), OpenAlex's answer cut right after its first work."""
    openalex = next(case for case in SEARCHES if case.source == "openalex")
    by_host = {case.host: case for case in healthy_searches(openalex)}
    cut = spoil(openalex, next(d for d in DAMAGES if d.id == "cut-after-the-first-record"))

    def handler(request: httpx.Request) -> httpx.Response:
        case = by_host[request.url.host]
        return cut(request) if case is openalex else intact(case)(request)

    runtime = make_runtime(db_settings, source_transport=httpx.MockTransport(handler))
    try:
        owner = await new_user(runtime)
        context = ToolContext(
            services=tool_services(runtime),
            owner_id=owner.id,
            chat=ChatContext.model_validate({"current_page": "home"}),
        )
        result: ToolResult = await execute_tool(
            get_tool("search_literature"),
            {"query": "machine learning", "max_results": 5},
            context,
            lambda progress: None,
        )
    finally:
        await runtime.close()

    assert result.payload is not None
    data: Any = result.payload.data
    statuses = {status["source"]: status for status in data["sources"]}
    assert list(statuses) == ["pubmed", "openalex", "semantic_scholar", "library"]
    failed = statuses["openalex"]
    assert (failed["ok"], failed["error_code"]) == (False, "source_unavailable")
    assert failed["error"].startswith("OpenAlex sent an answer we could not read: it was cut short")
    assert "Try again in a few minutes" in failed["hint"]
    assert [statuses[name]["ok"] for name in ("pubmed", "semantic_scholar", "library")] == [
        True,
        True,
        True,
    ]
    # The recorded answers hold 50 records whatever was asked for.
    assert (statuses["pubmed"]["returned"], statuses["semantic_scholar"]["returned"]) == (50, 50)
    lines = result.text.splitlines()
    assert (
        "- openalex: FAILED (source_unavailable): OpenAlex sent an answer we could not read: "
        "it was cut short" in result.text
    )
    assert "these results are incomplete" in result.text
    articles = data["articles"]
    found_by = {name for article in articles for name in article["sources"]}
    assert found_by == {"pubmed", "semantic_scholar"}
    assert data["total_found"] == 10  # five of each source that worked
    assert lines[0] == "Searched 4 sources for 'machine learning':"
