"""The built-in chat tools through ``execute_tool``, on a migrated runtime whose literature
sources answer with real recorded API bodies (served by host through ``httpx.MockTransport``)
and whose library holds a real reference export. Runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

import scholarstream.chat  # noqa: F401  (registers the built-ins)
from scholarstream.chat.core import ChatContext, Pagination, ResultCounts
from scholarstream.chat.tools import (
    ToolArgumentsError,
    ToolContext,
    ToolProgress,
    ToolResult,
    execute_tool,
    get_tool,
    tools,
)
from scholarstream.db.tables import User
from scholarstream.errors import (
    InvalidInputError,
    NotFoundError,
    SourceCredentialsError,
)
from scholarstream.papers import paper_key
from scholarstream.runtime import Runtime
from scholarstream.search import SearchRequest, SearchRunStore
from scholarstream.search.core import PaperCollection, ScoredPaper, WorkflowState
from scholarstream.settings import Settings
from scholarstream.sources.library import LibraryQuery
from tests.chat.services import tool_services
from tests.conftest import SHARED_DATA
from tests.helpers import make_runtime, new_user

FIXTURES = SHARED_DATA / "api_fixtures"
SAMPLES = FIXTURES / "findpapers_collected_samples"
TRIALS = FIXTURES / "clinicaltrials_v2_aact"
LIBRARY_FILE = SHARED_DATA / "exports" / "asysd_testthat" / "wos_test.ris"

PMID_IN_SAMPLE = "36006759"  # the first PMID of the recorded esearch answer
DOI_IN_OPENALEX_SAMPLE = "10.12928/tefl.v1i2.249"
DOI_AT_CROSSREF = "10.2196/22081"
ARXIV_ID = "1707.08567"
SEARCH_PAGE_TRIALS = ("NCT02210780", "NCT03418623")


def _read(path: Path) -> bytes:
    if not path.exists():
        pytest.fail(f"missing shared fixture {path}")
    return path.read_bytes()


@dataclass
class RecordedSources:
    """Each source answers as it once did for real; ``failing`` ones refuse our key (401,
    which is not retried)."""

    failing: Collection[str] = ()
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        source = self.source_of(request)
        if source in self.failing:
            return httpx.Response(401, json={"message": "API key refused"})
        handler = getattr(self, f"_{source}")
        response: httpx.Response = handler(request)
        return response

    @staticmethod
    def source_of(request: httpx.Request) -> str:
        host = request.url.host
        for needle, source in (
            ("ncbi", "pubmed"),
            ("openalex", "openalex"),
            ("semanticscholar", "semantic_scholar"),
            ("arxiv", "arxiv"),
            ("crossref", "crossref"),
            ("clinicaltrials", "clinicaltrials"),
        ):
            if needle in host:
                return source
        raise AssertionError(f"no recorded answer for {request.url}")

    def sent(self, source: str) -> list[httpx.Request]:
        return [r for r in self.requests if self.source_of(r) == source]

    def _pubmed(self, request: httpx.Request) -> httpx.Response:
        if "efetch" in request.url.path:
            body = _read(SAMPLES / "pubmed" / "efetch_response.xml")
            return httpx.Response(200, content=body, headers={"content-type": "text/xml"})
        return httpx.Response(200, content=_read(SAMPLES / "pubmed" / "esearch_response.json"))

    def _openalex(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=_read(SAMPLES / "openalex" / "sample_response.json"))

    def _semantic_scholar(self, request: httpx.Request) -> httpx.Response:
        path = SAMPLES / "semanticscholar" / "relevance_search_response.json"
        return httpx.Response(200, content=_read(path))

    def _arxiv(self, request: httpx.Request) -> httpx.Response:
        if request.url.params.get("id_list"):
            wrapper = json.loads(
                _read(FIXTURES / "arxiv_atom_arxivpy" / "id_1707.08567_s0_m100_6a1afebfc6a3.json")
            )
            body = wrapper["body"].encode()
        else:
            body = _read(SAMPLES / "arxiv" / "sample_response.xml")
        return httpx.Response(200, content=body, headers={"content-type": "application/atom+xml"})

    def _crossref(self, request: httpx.Request) -> httpx.Response:
        doi = request.url.path.removeprefix("/works/")
        path = FIXTURES / "crossref_works_colrev" / f"{doi.replace('/', '_')}.json"
        if not path.exists():
            return httpx.Response(404, text="Resource not found.")
        return httpx.Response(200, content=path.read_bytes())

    def _clinicaltrials(self, request: httpx.Request) -> httpx.Response:
        last = request.url.path.rsplit("/", 1)[-1]
        if last == "studies":
            studies = [json.loads(_read(TRIALS / f"{nct}.json")) for nct in SEARCH_PAGE_TRIALS]
            return httpx.Response(200, json={"studies": studies, "totalCount": 137})
        path = TRIALS / f"{last}.json"
        if not path.exists():
            return httpx.Response(404, json={"message": f"Study {last} not found"})
        return httpx.Response(200, content=path.read_bytes())


@pytest.fixture
def sources() -> RecordedSources:
    return RecordedSources()


@pytest.fixture
async def runtime(db_settings: Settings, sources: RecordedSources) -> AsyncIterator[Runtime]:
    runtime = make_runtime(db_settings, source_transport=httpx.MockTransport(sources))
    yield runtime
    await runtime.close()


@pytest.fixture
async def owner(runtime: Runtime) -> User:
    user = await new_user(runtime)
    report = await runtime.library.import_file(user.id, LIBRARY_FILE)
    assert report.imported == 50
    return user


@dataclass
class Call:
    result: ToolResult
    progress: list[ToolProgress]

    @property
    def data(self) -> Any:
        assert self.result.payload is not None
        return self.result.payload.data


async def call(
    runtime: Runtime, owner: User, tool: str, arguments: dict[str, Any], **chat: Any
) -> Call:
    progress: list[ToolProgress] = []
    context = ToolContext(
        services=tool_services(runtime),
        owner_id=owner.id,
        chat=ChatContext.model_validate({"current_page": "home", **chat}),
    )
    result = await execute_tool(get_tool(tool), arguments, context, progress.append)
    return Call(result, progress)


# --- definitions -------------------------------------------------------------------------------


def test_every_builtin_tool_is_registered_with_a_strict_schema_and_a_command() -> None:
    builtin = {
        "search_pubmed": "pubmed",
        "search_literature": "search",
        "get_article_details": "details",
        "search_trials": "trials",
        "search_library": "library",
        "retrieve_items": "items",
        "analyze_items": "analyze",
    }
    registered = {tool.name: tool for tool in tools()}
    for name, command in builtin.items():
        tool = registered[name]
        assert tool.command == command
        assert tool.input_schema["additionalProperties"] is False
        assert tool.command_argument in tool.input_schema["properties"]
        assert tool.payload_type is not None
    assert not registered["retrieve_items"].is_global
    assert not registered["analyze_items"].is_global
    commands = [tool.command for tool in tools() if tool.command]
    assert len(commands) == len(set(commands))


# --- search_pubmed -----------------------------------------------------------------------------


async def test_search_pubmed_returns_articles_and_the_total(
    runtime: Runtime, owner: User, sources: RecordedSources
) -> None:
    query = '("machine learning"[tiab]) AND nlp[tiab]'
    done = await call(
        runtime, owner, "search_pubmed", {"query": query, "max_results": 5, "year_from": 2020}
    )

    esearch = sources.sent("pubmed")[0]
    assert esearch.url.params["term"] == query
    assert esearch.url.params["retmax"] == "5"
    assert esearch.url.params["mindate"] == "2020/01/01"
    data = done.data
    assert data["total"] == 1834
    assert len(data["articles"]) == 5
    first = data["articles"][0]
    assert first["pmid"] == PMID_IN_SAMPLE
    assert first["url"] == f"https://pubmed.ncbi.nlm.nih.gov/{PMID_IN_SAMPLE}/"
    assert first["title"] in done.result.text
    assert "1,834 articles match" in done.result.text


async def test_a_failing_pubmed_is_an_error_not_an_empty_result(
    runtime: Runtime, owner: User, sources: RecordedSources
) -> None:
    sources.failing = {"pubmed"}
    with pytest.raises(SourceCredentialsError) as caught:
        await call(runtime, owner, "search_pubmed", {"query": "asthma"})
    assert caught.value.source == "pubmed"


async def test_invalid_arguments_are_refused_before_anything_runs(
    runtime: Runtime, owner: User, sources: RecordedSources
) -> None:
    for arguments in (
        {"query": "asthma", "max_results": 500},
        {"query": ""},
        {"query": "asthma", "sort": "date"},
        {"query": "asthma", "year_from": 2022, "year_to": 2020},
    ):
        with pytest.raises(ToolArgumentsError):
            await call(runtime, owner, "search_pubmed", arguments)
    assert sources.requests == []


# --- search_literature -------------------------------------------------------------------------


async def test_search_literature_reports_a_failed_source_and_keeps_the_others(
    runtime: Runtime, owner: User, sources: RecordedSources
) -> None:
    sources.failing = {"semantic_scholar"}

    done = await call(
        runtime, owner, "search_literature", {"query": "cocker spaniel", "max_results": 3}
    )

    data = done.data
    statuses = {status["source"]: status for status in data["sources"]}
    assert list(statuses) == runtime.settings.search.default_sources
    failed = statuses["semantic_scholar"]
    assert failed["ok"] is False
    assert failed["error_code"] == "source_credentials"
    assert failed["error"]
    assert all(statuses[name]["ok"] for name in ("pubmed", "openalex", "library"))
    assert "semantic_scholar: FAILED" in done.result.text
    assert "incomplete" in done.result.text
    # Rank 1 of every source that worked comes first; each article names its sources.
    sources_of_first = [article["sources"] for article in data["articles"][:3]]
    assert sorted(s for names in sources_of_first for s in names) == [
        "library",
        "openalex",
        "pubmed",
    ]
    assert any("Cocker Spaniel" in article["title"] for article in data["articles"])
    assert data["total_found"] == 9
    # One progress report per source as it finishes, then the merge.
    finished = [p.message.split(":")[0] for p in done.progress if p.stage == "searching"][1:]
    assert sorted(finished) == ["OpenAlex", "PubMed", "Semantic Scholar", "Your library"]
    assert done.progress[-1].stage == "merging"


async def test_search_literature_fails_when_every_source_fails(
    runtime: Runtime, owner: User, sources: RecordedSources
) -> None:
    sources.failing = {"pubmed", "openalex"}
    with pytest.raises(SourceCredentialsError) as caught:
        await call(
            runtime, owner, "search_literature", {"query": "x", "sources": ["pubmed", "openalex"]}
        )
    assert caught.value.message == (
        "Every source failed (PubMed refused our credentials (HTTP 401); "
        "OpenAlex refused our credentials (HTTP 401))."
    )
    assert caught.value.hint is not None and "library" in caught.value.hint


async def test_search_literature_refuses_an_unknown_source(runtime: Runtime, owner: User) -> None:
    with pytest.raises(ToolArgumentsError):
        await call(runtime, owner, "search_literature", {"query": "x", "sources": ["scopus"]})


# --- get_article_details -----------------------------------------------------------------------


async def test_details_by_pmid(runtime: Runtime, owner: User) -> None:
    done = await call(
        runtime, owner, "get_article_details", {"identifier": f"PMID: {PMID_IN_SAMPLE}"}
    )
    article = done.data["article"]
    assert (done.data["source"], article["kind"]) == ("pubmed", "paper")
    assert article["ids"]["pmid"] == PMID_IN_SAMPLE
    assert article["abstract"]
    assert f"PMID {PMID_IN_SAMPLE}" in done.result.text
    assert "Abstract: " in done.result.text


async def test_details_by_doi_fall_back_to_crossref_when_openalex_fails(
    runtime: Runtime, owner: User, sources: RecordedSources
) -> None:
    found = await call(
        runtime, owner, "get_article_details", {"identifier": DOI_IN_OPENALEX_SAMPLE}
    )
    assert found.data["source"] == "openalex"
    assert found.data["article"]["ids"]["doi"] == DOI_IN_OPENALEX_SAMPLE

    sources.failing = {"openalex"}
    done = await call(
        runtime, owner, "get_article_details", {"identifier": f"doi:{DOI_AT_CROSSREF}"}
    )
    assert done.data["source"] == "crossref"
    assert "Teleconsultation" in done.data["article"]["title"]


async def test_details_by_arxiv_id_and_library_id(runtime: Runtime, owner: User) -> None:
    arxiv = await call(runtime, owner, "get_article_details", {"identifier": f"arXiv:{ARXIV_ID}v1"})
    assert arxiv.data["source"] == "arxiv"
    assert arxiv.data["article"]["title"].startswith("Proceedings of Workshop AEW10")

    item = (await runtime.library.search(owner.id, LibraryQuery(text="retinal atrophy"))).items[0]
    mine = await call(runtime, owner, "get_article_details", {"identifier": str(item.id)})
    assert mine.data["library_id"] == str(item.id)
    assert mine.data["article"]["title"] == item.record.title
    assert mine.result.text.startswith("From the user's library")


async def test_details_refuse_what_is_no_identifier_and_report_what_is_missing(
    runtime: Runtime, owner: User
) -> None:
    with pytest.raises(InvalidInputError) as unreadable:
        await call(runtime, owner, "get_article_details", {"identifier": "deep learning for nlp"})
    assert unreadable.value.hint is not None and "PMID" in unreadable.value.hint

    with pytest.raises(NotFoundError) as missing:
        await call(runtime, owner, "get_article_details", {"identifier": "10.9999/nothing.here"})
    assert "openalex, crossref" in missing.value.message

    stranger = await new_user(runtime)
    item = (await runtime.library.search(owner.id, LibraryQuery(limit=1))).items[0]
    with pytest.raises(NotFoundError):
        await call(runtime, stranger, "get_article_details", {"identifier": str(item.id)})


# --- search_trials -----------------------------------------------------------------------------


async def test_search_trials_sends_the_form_and_returns_studies(
    runtime: Runtime, owner: User, sources: RecordedSources
) -> None:
    done = await call(
        runtime,
        owner,
        "search_trials",
        {
            "condition": "atopic dermatitis",
            "phases": ["PHASE2", "PHASE3"],
            "statuses": ["COMPLETED"],
            "start_from": "2014-01-01",
        },
    )

    (request,) = sources.sent("clinicaltrials")
    params = request.url.params
    assert params["query.term"] == "atopic dermatitis"  # no other terms: the condition
    assert params["query.cond"] == "atopic dermatitis"
    assert params["filter.overallStatus"] == "COMPLETED"
    assert "(AREA[Phase]PHASE2 OR AREA[Phase]PHASE3)" in params["filter.advanced"]
    assert "AREA[StartDate]RANGE[2014-01-01,MAX]" in params["filter.advanced"]
    data = done.data
    assert data["total"] == 137
    assert [t["nct_id"] for t in data["trials"]] == list(SEARCH_PAGE_TRIALS)
    assert data["query"]["phases"] == ["PHASE2", "PHASE3"]
    assert "137 studies match" in done.result.text
    assert "NCT02210780" in done.result.text


async def test_search_trials_takes_the_conversation_s_years_as_start_dates(
    runtime: Runtime, owner: User, sources: RecordedSources
) -> None:
    await call(
        runtime, owner, "search_trials", {"condition": "atopic dermatitis", "year_from": 2019}
    )
    (request,) = sources.sent("clinicaltrials")
    assert "AREA[StartDate]RANGE[2019-01-01,MAX]" in request.url.params["filter.advanced"]
    with pytest.raises(ToolArgumentsError):
        await call(
            runtime,
            owner,
            "search_trials",
            {"condition": "asthma", "year_from": 2020, "year_to": 2015},
        )


async def test_search_trials_needs_something_to_search(
    runtime: Runtime, owner: User, sources: RecordedSources
) -> None:
    for arguments in ({"phases": ["PHASE3"]}, {"condition": "asthma", "phases": ["3"]}):
        with pytest.raises(ToolArgumentsError):
            await call(runtime, owner, "search_trials", arguments)
    assert sources.requests == []


# --- search_library ----------------------------------------------------------------------------


async def test_search_library_ranks_the_owners_records_only(
    runtime: Runtime, owner: User, sources: RecordedSources
) -> None:
    done = await call(runtime, owner, "search_library", {"query": "retinal atrophy"})
    data = done.data
    assert data["sources"][0]["source"] == "library" and data["sources"][0]["total"] >= 1
    first = data["articles"][0]
    assert "retinal atrophy" in first["title"].lower()
    assert first["sources"] == ["library"]
    assert f"library id {first['library_id']}" in done.result.text
    assert sources.requests == []  # offline

    later = await call(runtime, owner, "search_library", {"max_results": 20, "offset": 40})
    assert len(later.data["articles"]) == 10
    assert "50 records are in it" in later.result.text

    stranger = await new_user(runtime)
    empty = await call(runtime, stranger, "search_library", {"query": "retinal atrophy"})
    assert empty.data["articles"] == []
    assert "Nothing found" in empty.result.text


# --- retrieve_items ----------------------------------------------------------------------------


async def test_retrieve_library_records_only_from_the_page(runtime: Runtime, owner: User) -> None:
    page = await runtime.library.search(owner.id, LibraryQuery(text="cocker spaniel", limit=3))
    summaries = [
        {"id": str(item.id), "kind": "library_record", "title": item.record.title}
        for item in page.items
    ]
    elsewhere = str(uuid.uuid4())
    done = await call(
        runtime,
        owner,
        "retrieve_items",
        {"ids": [summaries[0]["id"], summaries[2]["id"], elsewhere]},
        current_page="library",
        item_summaries=summaries,
    )

    data = done.data
    assert [item["id"] for item in data["items"]] == [summaries[0]["id"], summaries[2]["id"]]
    assert data["items"][0]["record"]["title"] == page.items[0].record.title
    assert [(m["id"], m["reason"].split(" (")[0]) for m in data["not_found"]] == [
        (elsewhere, "not on this page")
    ]
    assert "Retrieved 2 of 3." in done.result.text
    assert page.items[2].record.title in done.result.text


async def test_retrieve_search_results_from_the_owners_run(runtime: Runtime, owner: User) -> None:
    page = await runtime.library.search(owner.id, LibraryQuery(text="cocker spaniel", limit=2))
    papers = [
        ScoredPaper(
            id=paper_key(item.record),
            record=item.record,
            score=0.9 - n / 10,
            reason="About eye disease in cocker spaniels.",
            sources=["library"],
            label="relevant" if n == 0 else None,
        )
        for n, item in enumerate(page.items)
    ]
    store = SearchRunStore(runtime.database)
    run = await store.create(owner.id, SearchRequest(question="eye disease in cocker spaniels"))
    await store.complete(
        run.id, PaperCollection(question=run.question, papers=papers), WorkflowState()
    )
    summaries = [{"id": p.id, "kind": "search_result", "title": p.record.title} for p in papers]
    chat = {"current_page": "search", "search_run_id": str(run.id), "item_summaries": summaries}

    done = await call(runtime, owner, "retrieve_items", {"ids": [papers[0].id]}, **chat)

    (item,) = done.data["items"]
    assert item["kind"] == "search_result"
    assert item["annotations"] == {
        "score": "0.90",
        "sources": "library",
        "reason": "About eye disease in cocker spaniels.",
        "label": "relevant",
    }
    assert "score: 0.90" in done.result.text

    stranger = await new_user(runtime)
    with pytest.raises(NotFoundError):
        await call(runtime, stranger, "retrieve_items", {"ids": [papers[0].id]}, **chat)
    with pytest.raises(InvalidInputError):
        await call(
            runtime,
            owner,
            "retrieve_items",
            {"ids": [papers[0].id]},
            current_page="search",
            item_summaries=summaries,
        )


async def test_retrieve_trials_and_papers_from_their_sources(
    runtime: Runtime, owner: User, sources: RecordedSources
) -> None:
    summaries: list[dict[str, Any]] = [
        {"id": "NCT02210780", "kind": "trial", "title": "A study", "fields": {"phase": "Phase 3"}},
        {"id": "NCT99999999", "kind": "trial", "title": "Not registered"},
        {"id": PMID_IN_SAMPLE, "kind": "paper", "title": "A paper"},
    ]
    done = await call(
        runtime,
        owner,
        "retrieve_items",
        {"ids": [s["id"] for s in summaries]},
        current_page="trials",
        item_summaries=summaries,
    )

    data = done.data
    kinds = {item["id"]: item["record"]["kind"] for item in data["items"]}
    assert kinds == {"NCT02210780": "trial", PMID_IN_SAMPLE: "paper"}
    assert data["not_found"] == [{"id": "NCT99999999", "reason": "not found in clinicaltrials"}]
    assert "NCT id: NCT02210780" in done.result.text
    assert [p.stage for p in done.progress] == ["retrieving", "retrieving"]

    sources.failing = {"clinicaltrials"}
    with pytest.raises(SourceCredentialsError):
        await call(
            runtime,
            owner,
            "retrieve_items",
            {"ids": ["NCT02210780"]},
            current_page="trials",
            item_summaries=summaries,
        )


async def test_retrieve_reports_a_failed_kind_and_returns_the_rest(
    runtime: Runtime, owner: User, sources: RecordedSources
) -> None:
    sources.failing = {"pubmed"}
    item = (await runtime.library.search(owner.id, LibraryQuery(limit=1))).items[0]
    summaries = [
        {"id": str(item.id), "kind": "library_record", "title": item.record.title},
        {"id": PMID_IN_SAMPLE, "kind": "paper", "title": "A paper"},
    ]
    done = await call(
        runtime,
        owner,
        "retrieve_items",
        {"ids": [s["id"] for s in summaries]},
        current_page="library",
        item_summaries=summaries,
    )
    assert [i["id"] for i in done.data["items"]] == [str(item.id)]
    (failed,) = done.data["not_found"]
    assert failed["id"] == PMID_IN_SAMPLE
    assert failed["reason"].startswith("could not be fetched: ")


async def test_retrieve_refuses_too_many_ids(runtime: Runtime, owner: User) -> None:
    with pytest.raises(ToolArgumentsError):
        await call(runtime, owner, "retrieve_items", {"ids": [str(n) for n in range(21)]})


# --- analyze_items (no database needed) -----------------------------------------------------


@pytest.fixture
async def offline_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    runtime = make_runtime(settings)
    yield runtime
    await runtime.close()


def seed_trials() -> list[dict[str, Any]]:
    """The seed's example: 35 trials, 18 in Phase 3, 12 in Phase 2, 5 in Phase 1."""
    phases = ["Phase 3"] * 18 + ["Phase 2"] * 12 + ["Phase 1"] * 5
    statuses = ["RECRUITING", "COMPLETED"] * 18
    return [
        {
            "id": f"NCT{n:08d}",
            "kind": "trial",
            "title": f"Trial {n}",
            "fields": {
                "phase": phase,
                "status": statuses[n],
                "conditions": ["asthma", "copd"] if n % 5 == 0 else ["asthma"],
                "enrollment": 100 + 10 * n if n < 30 else None,
                "sponsor": None,
            },
        }
        for n, phase in enumerate(phases)
    ]


async def analyze(runtime: Runtime, arguments: dict[str, Any], **chat: Any) -> Call:
    context = ToolContext(
        services=tool_services(runtime),
        owner_id=uuid.uuid4(),
        chat=ChatContext.model_validate(
            {"current_page": "trials", "item_summaries": seed_trials(), **chat}
        ),
    )
    progress: list[ToolProgress] = []
    result = await execute_tool(get_tool("analyze_items"), arguments, context, progress.append)
    return Call(result, progress)


async def test_the_seed_example_distribution_of_phase(offline_runtime: Runtime) -> None:
    done = await analyze(offline_runtime, {"operation": "distribution", "field": "phase"})

    data = done.data
    assert [(r["value"], r["count"], r["percent"]) for r in data["rows"]] == [
        ("Phase 3", 18, 51.4),
        ("Phase 2", 12, 34.3),
        ("Phase 1", 5, 14.3),
    ]
    assert (data["total"], data["missing"]) == (35, 0)
    text = done.result.text
    assert "- Phase 3: 18 (51.4%)\n- Phase 2: 12 (34.3%)\n- Phase 1: 5 (14.3%)" in text
    assert "Most common: Phase 3, 18 of 35 items (51.4%)." in text


async def test_the_analyze_command_field_alone_means_a_distribution(
    offline_runtime: Runtime,
) -> None:
    done = await analyze(offline_runtime, {"field": "Phase"})  # /analyze Phase
    assert done.data["operation"] == "distribution"
    assert done.data["field"] == "phase"


async def test_count_with_and_without_a_filter(offline_runtime: Runtime) -> None:
    everything = await analyze(offline_runtime, {"operation": "count"})
    assert everything.data["matched"] == 35

    phase3 = await analyze(
        offline_runtime, {"operation": "count", "field": "phase", "value": "phase 3"}
    )
    assert (phase3.data["matched"], phase3.data["filter"]["value"]) == (18, "phase 3")
    assert "18 of 35 items on the page have phase = 'phase 3' (51.4%)." in phase3.result.text

    copd = await analyze(
        offline_runtime, {"operation": "count", "field": "conditions", "value": "COPD"}
    )
    assert copd.data["matched"] == 7  # list-valued: an item counts when one element matches

    with_enrollment = await analyze(offline_runtime, {"operation": "count", "field": "enrollment"})
    assert (with_enrollment.data["matched"], with_enrollment.data["missing"]) == (30, 5)


async def test_distribution_of_a_list_field_counts_each_element_and_missing_apart(
    offline_runtime: Runtime,
) -> None:
    conditions = await analyze(offline_runtime, {"field": "conditions"})
    assert [(r["value"], r["count"]) for r in conditions.data["rows"]] == [
        ("asthma", 35),
        ("copd", 7),
    ]
    assert "add up to more than the items" in conditions.result.text

    sponsors = await analyze(offline_runtime, {"field": "sponsor"})
    assert (sponsors.data["rows"], sponsors.data["missing"]) == ([], 35)
    assert "(no value): 35 (100.0%)" in sponsors.result.text
    assert "No item has a value for it." in sponsors.result.text


async def test_compare_distributes_one_field_within_the_groups_of_another(
    offline_runtime: Runtime,
) -> None:
    done = await analyze(
        offline_runtime, {"operation": "compare", "field": "phase", "group_by": "status"}
    )
    groups = {g["group"]: g for g in done.data["groups"]}
    assert set(groups) == {"RECRUITING", "COMPLETED"}
    recruiting = groups["RECRUITING"]
    assert recruiting["total"] == 18
    assert sum(row["count"] for row in recruiting["rows"]) == 18
    assert {r["value"]: r["count"] for r in recruiting["rows"]} == {
        "Phase 3": 9,
        "Phase 2": 6,
        "Phase 1": 3,
    }
    assert recruiting["rows"][0]["percent"] == 50.0
    assert "status = RECRUITING (18 items):" in done.result.text


async def test_summary_of_a_numeric_field(offline_runtime: Runtime) -> None:
    done = await analyze(offline_runtime, {"operation": "summary", "field": "enrollment"})
    stats = done.data["stats"]
    assert stats == {"count": 30, "min": 100.0, "max": 390.0, "mean": 245.0, "median": 245.0}
    assert done.data["missing"] == 5
    assert "min 100, max 390, mean 245, median 245" in done.result.text

    with pytest.raises(ToolArgumentsError) as words:
        await analyze(offline_runtime, {"operation": "summary", "field": "phase"})
    assert words.value.hint is not None and "distribution" in words.value.hint


async def test_only_the_selection_and_a_note_when_the_page_holds_more(
    offline_runtime: Runtime,
) -> None:
    done = await analyze(
        offline_runtime,
        {"field": "phase", "only_selected": True},
        selection=["NCT00000000", "NCT00000020"],
        results=ResultCounts(total=120).model_dump(),
        pagination=Pagination(page=1, page_size=35).model_dump(),
    )
    assert [(r["value"], r["count"]) for r in done.data["rows"]] == [
        ("Phase 2", 1),
        ("Phase 3", 1),
    ]
    assert "selected items" in done.result.text
    assert "120 results in all but sent 35" in done.result.text


async def test_analysis_mistakes_say_what_exists(offline_runtime: Runtime) -> None:
    with pytest.raises(ToolArgumentsError) as unknown:
        await analyze(offline_runtime, {"field": "endpoint"})
    assert unknown.value.hint is not None
    assert "conditions, enrollment, phase, sponsor, status, title" in unknown.value.hint

    for arguments in (
        {"operation": "compare", "field": "phase"},
        {"operation": "distribution"},
        {"operation": "distribution", "field": "phase", "value": "Phase 3"},
        {"operation": "median", "field": "phase"},
    ):
        with pytest.raises(ToolArgumentsError):
            await analyze(offline_runtime, arguments)

    with pytest.raises(InvalidInputError) as nothing:
        await analyze(offline_runtime, {"field": "phase"}, item_summaries=[])
    assert nothing.value.hint is not None
