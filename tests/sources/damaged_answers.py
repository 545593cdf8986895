"""The recorded answers of every source, and the ways to spoil them, for
``test_source_faults``: each ``Case`` is one source doing one thing (a search or a fetch)
with the real recorded answers of the requests it makes (``api_fixtures``; a
ClinicalTrials.gov search page wraps two real study bodies, as ``test_hub`` does), and
each ``Damage`` is one way a 200 answer arrives broken."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from scholarstream.papers import Record
from scholarstream.sources import LiteratureSource, SearchQuery
from tests.sources.conftest import Recorder, fixture_path

FINDPAPERS = "findpapers_collected_samples"
QUERY = SearchQuery(text="machine learning", limit=50)
ESEARCH_IDS: list[str] = json.loads(
    fixture_path(FINDPAPERS, "pubmed", "esearch_response.json").read_bytes()
)["esearchresult"]["idlist"]


# --- the recorded answers ----------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    body: bytes
    content_type: str

    @property
    def is_json(self) -> bool:
        return self.content_type == "application/json"


def recorded_json(*parts: str) -> Answer:
    return Answer(fixture_path(*parts).read_bytes(), "application/json")


def recorded_xml(*parts: str) -> Answer:
    return Answer(fixture_path(*parts).read_bytes(), "text/xml")


def recorded_arxiv(name: str) -> Answer:
    """One of arxiv.py's JSON-wrapped recordings ({url, status_code, body})."""
    wrapper = json.loads(fixture_path("arxiv_atom_arxivpy", name).read_text(encoding="utf-8"))
    return Answer(wrapper["body"].encode(), "application/atom+xml")


def trials_page() -> Answer:
    studies = [
        json.loads(fixture_path("clinicaltrials_v2_aact", f"{nct_id}.json").read_text())
        for nct_id in ("NCT02210780", "NCT05594173")
    ]
    return Answer(json.dumps({"studies": studies, "totalCount": 2}).encode(), "application/json")


@dataclass(frozen=True)
class Case:
    """One source doing one thing (a search or a fetch), with the recorded answers of every
    request it makes; the answers to ``damaged`` requests are the ones spoilt."""

    id: str
    source: str
    label: str
    answers: Mapping[str, Answer]
    """Request path fragment -> its recorded answer; ``damaged`` is one of the keys."""
    damaged: str
    run: Callable[[LiteratureSource], Awaitable[Sequence[Record]]]
    expected: int
    """Records the intact answers give."""
    records: tuple[str, ...] = ()
    """Where the records are: the JSON key path of their array, or the XML record element."""
    required: tuple[tuple[str, ...], ...] = ()
    """JSON key paths without which a body is no answer of this API."""
    settings: Mapping[str, str] = field(default_factory=dict)

    def answer(self, request: httpx.Request) -> tuple[bool, Answer]:
        """(whether it is the request to damage, its recorded answer)."""
        for fragment, answer in self.answers.items():
            if fragment in str(request.url):
                return fragment == self.damaged, answer
        raise AssertionError(f"{self.id}: no recorded answer for {request.url}")

    @property
    def intact(self) -> Answer:
        return self.answers[self.damaged]

    @property
    def host(self) -> str:
        return _HOSTS[self.source]


_HOSTS = {
    "pubmed": "eutils.ncbi.nlm.nih.gov",
    "crossref": "api.crossref.org",
    "openalex": "api.openalex.org",
    "semantic_scholar": "api.semanticscholar.org",
    "arxiv": "export.arxiv.org",
    "clinicaltrials": "clinicaltrials.gov",
    "google_scholar": "serpapi.com",
}


def searching(source: LiteratureSource) -> Awaitable[Sequence[Record]]:
    async def run() -> Sequence[Record]:
        return (await source.search(QUERY)).records

    return run()


def fetching(*ids: str) -> Callable[[LiteratureSource], Awaitable[list[Record]]]:
    def run(source: LiteratureSource) -> Awaitable[list[Record]]:
        return source.fetch(ids)

    return run


PUBMED_ANSWERS = {
    "esearch": recorded_json(FINDPAPERS, "pubmed", "esearch_response.json"),
    "efetch": recorded_xml(FINDPAPERS, "pubmed", "efetch_response.xml"),
}

CASES = [
    Case(
        "pubmed-esearch",
        "pubmed",
        "PubMed",
        PUBMED_ANSWERS,
        "esearch",
        searching,
        expected=50,
        records=("esearchresult", "idlist"),
        required=(("esearchresult",), ("esearchresult", "count")),
    ),
    Case(
        "pubmed-efetch",
        "pubmed",
        "PubMed",
        PUBMED_ANSWERS,
        "efetch",
        searching,
        expected=50,
        records=("PubmedArticle",),
    ),
    Case(
        "pubmed-fetch-by-pmid",
        "pubmed",
        "PubMed",
        PUBMED_ANSWERS,
        "efetch",
        fetching(*ESEARCH_IDS[:3]),
        expected=3,
        records=("PubmedArticle",),
    ),
    Case(
        "crossref-search",
        "crossref",
        "Crossref",
        {"/works": recorded_json("crossref_works_habanero", "test_works_query.0.json")},
        "/works",
        searching,
        expected=2,
        records=("message", "items"),
        required=(("message",), ("message", "items")),
    ),
    Case(
        "crossref-fetch-by-doi",
        "crossref",
        "Crossref",
        {"/works/": recorded_json("crossref_works_colrev", "10.2196_22081.json")},
        "/works/",
        fetching("10.2196/22081"),
        expected=1,
        required=(("message",), ("message", "DOI")),
    ),
    Case(
        "openalex-search",
        "openalex",
        "OpenAlex",
        {"/works": recorded_json("openalex_works_peneira", "works.json")},
        "/works",
        searching,
        expected=49,
        records=("results",),
        required=(("results",), ("meta",)),
    ),
    Case(
        "semantic_scholar-search",
        "semantic_scholar",
        "Semantic Scholar",
        {
            "/paper/search": recorded_json(
                FINDPAPERS, "semanticscholar", "relevance_search_response.json"
            )
        },
        "/paper/search",
        searching,
        expected=50,
        records=("data",),
        required=(("total",), ("data",)),
    ),
    Case(
        "semantic_scholar-fetch",
        "semantic_scholar",
        "Semantic Scholar",
        {"/paper/": recorded_json("semanticscholar_graph_api", "Paper.json")},
        "/paper/",
        fetching("CorpusId:215416146"),
        expected=1,
        required=(("paperId",),),
    ),
    Case(
        "arxiv-search",
        "arxiv",
        "arXiv",
        {"/api/query": recorded_xml(FINDPAPERS, "arxiv", "sample_response.xml")},
        "/api/query",
        searching,
        expected=50,
        records=("entry",),
    ),
    Case(
        "arxiv-fetch",
        "arxiv",
        "arXiv",
        {"/api/query": recorded_arxiv("id_1707.08567_s0_m100_6a1afebfc6a3.json")},
        "/api/query",
        fetching("1707.08567"),
        expected=1,
        records=("entry",),
    ),
    Case(
        "clinicaltrials-search",
        "clinicaltrials",
        "ClinicalTrials.gov",
        {"/studies": trials_page()},
        "/studies",
        searching,
        expected=2,
        records=("studies",),
        required=(("studies",),),
    ),
    Case(
        "clinicaltrials-fetch",
        "clinicaltrials",
        "ClinicalTrials.gov",
        {"/studies/": recorded_json("clinicaltrials_v2_aact", "NCT02210780.json")},
        "/studies/",
        fetching("NCT02210780"),
        expected=1,
        required=(("protocolSection",),),
    ),
    Case(
        "google_scholar-search",
        "google_scholar",
        "Google Scholar (SerpAPI)",
        {
            "/search.json": recorded_json(
                "serpapi_google_scholar", "google_scholar_bananas_num2.json"
            )
        },
        "/search.json",
        searching,
        expected=2,
        records=("organic_results",),
        required=(("organic_results",),),
        settings={"serpapi_api_key": "serp-key"},
    ),
]
SEARCHES = [case for case in CASES if case.run is searching]


# --- damage ------------------------------------------------------------------------------------


def json_first_record(case: Case) -> tuple[int, int]:
    """Where the first record starts and ends in the recorded JSON text."""
    text = case.intact.body.decode()
    array: Any = json.loads(text)
    for key in case.records:
        array = array[key]
    for match in re.finditer(rf'"{re.escape(case.records[-1])}"\s*:\s*\[\s*', text):
        first, end = json.JSONDecoder().raw_decode(text, match.end())
        if first == array[0]:
            return match.end(), end
    raise AssertionError(f"{case.id}: the first record is not in the text")


_TITLE_VALUE = re.compile(r'[tT]itle"\s*:\s*\[?\s*"')


def cut_inside(case: Case) -> bytes:
    """JSON: stopped four characters into the first record's title (or into the record, when
    it is a string); XML: stopped inside the first record's start tag."""
    body = case.intact.body
    if not case.intact.is_json:
        start_tag = re.search(rb"<" + case.records[0].encode() + rb"[\s>]", body)
        assert start_tag is not None
        return body[: start_tag.start() + 4]
    text = body.decode()
    start, end = json_first_record(case) if case.records else (0, len(text))
    title = _TITLE_VALUE.search(text, start, end)
    if title is None:  # the record is itself a string (an esearch PMID)
        assert text[start] == '"'
    cut = (title.end() if title else start + 1) + 4
    assert '"' not in text[cut - 4 : cut]  # inside the string
    return text[:cut].encode()


def cut_after_first_record(case: Case) -> bytes:
    body = case.intact.body
    if not case.intact.is_json:
        closing = f"</{case.records[0]}>".encode()
        return body[: body.index(closing) + len(closing)]
    _, end = json_first_record(case)
    return body.decode()[:end].encode()


def without(case: Case, path: tuple[str, ...]) -> bytes:
    """The recorded JSON without the key at ``path`` (the rest as recorded)."""
    data = json.loads(case.intact.body)
    holder = data
    for key in path[:-1]:
        holder = holder[key]
    del holder[path[-1]]
    return json.dumps(data).encode()


NGINX_502 = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>"
)
"""nginx's own error page (not well-formed XML: ``<hr>`` is never closed)."""
XHTML_503 = (
    b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 '
    b'Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n<html>'
    b"<head><title>503 Service Unavailable</title></head><body><h1>Service Unavailable</h1>"
    b"<p>The server is temporarily unable to service your request.</p></body></html>"
)
"""An error page in XHTML: well-formed XML, so only its root element gives it away."""
MAINTENANCE = (
    b'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
    b"<title>Down for maintenance</title><link rel=stylesheet href=/s.css></head>"
    b"<body><p>Back soon.<br>Thank you for your patience.</body></html>"
)
"""A maintenance page in HTML5."""


@dataclass(frozen=True)
class Damage:
    """A spoilt 200 answer: ``body`` makes it from the case, ``says`` is what the error
    message must say about it."""

    id: str
    body: Callable[[Case], bytes]
    says: str
    content_type: Callable[[Case], str] = lambda case: case.intact.content_type
    applies: Callable[[Case], bool] = lambda case: True


DAMAGES = [
    Damage("cut-in-half", lambda c: c.intact.body[: len(c.intact.body) // 2], "cut short"),
    Damage("cut-inside-a-string-or-tag", cut_inside, "cut short"),
    Damage(
        "cut-after-the-first-record",
        cut_after_first_record,
        "cut short",
        applies=lambda c: bool(c.records),
    ),
    Damage("cut-one-byte-short", lambda c: c.intact.body.rstrip()[:-1], "cut short"),
    Damage("empty", lambda c: b"", "an empty body"),
    Damage(
        "nginx-502-page",
        lambda c: NGINX_502,
        'an HTML page ("502 Bad Gateway")',
        content_type=lambda c: "text/html",
    ),
    Damage(
        "xhtml-503-page",
        lambda c: XHTML_503,
        'an HTML page ("503 Service Unavailable")',
        content_type=lambda c: "application/xhtml+xml",
    ),
    Damage(
        "maintenance-page-as-plain-text",
        lambda c: MAINTENANCE,
        'an HTML page ("Down for maintenance")',
        content_type=lambda c: "text/plain",
    ),
    Damage(
        "xml-where-json-belongs",
        lambda c: (
            b'<?xml version="1.0"?><error><code>500</code><message>Internal error</message></error>'
        ),
        "XML where JSON was expected (Content-Type application/xml)",
        content_type=lambda c: "application/xml",
        applies=lambda c: c.intact.is_json,
    ),
    Damage(
        "json-where-xml-belongs",
        lambda c: b'{"error": "Internal error", "status": 500}',
        "JSON where XML was expected (Content-Type application/json)",
        content_type=lambda c: "application/json",
        applies=lambda c: not c.intact.is_json,
    ),
    Damage(
        "json-error-object",
        lambda c: b'{"status": 503, "detail": "Service temporarily unavailable"}',
        "JSON without the",
        applies=lambda c: c.intact.is_json,
    ),
    Damage(
        "json-list",
        lambda c: b"[]",
        "a JSON list where an object was expected",
        applies=lambda c: c.intact.is_json,
    ),
    Damage(
        "xml-of-another-kind",
        lambda c: b'<?xml version="1.0"?>\n<error>Internal error</error>',
        "XML whose root element is <error>",
        applies=lambda c: not c.intact.is_json,
    ),
]


def as_recorded(answer: Answer) -> httpx.Response:
    return httpx.Response(200, content=answer.body, headers={"content-type": answer.content_type})


def intact(case: Case) -> Callable[[httpx.Request], httpx.Response]:
    return lambda request: as_recorded(case.answer(request)[1])


def spoil(case: Case, damage: Damage) -> Callable[[httpx.Request], httpx.Response]:
    body, content_type = damage.body(case), damage.content_type(case)
    assert body != case.intact.body

    def handler(request: httpx.Request) -> httpx.Response:
        damaged, answer = case.answer(request)
        if damaged:
            return httpx.Response(200, content=body, headers={"content-type": content_type})
        return as_recorded(answer)

    return handler


class CutStream(httpx.AsyncByteStream):
    """A body whose connection ends half-way through, as httpx reports it."""

    def __init__(self, body: bytes, request: httpx.Request) -> None:
        self._half = body[: len(body) // 2]
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._half
        raise httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body "
            "(incomplete chunked read)",
            request=self._request,
        )


def hang(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout("timed out", request=request)


def cut_connection(answer: Answer, request: httpx.Request) -> httpx.Response:
    return httpx.Response(
        200, stream=CutStream(answer.body, request), headers={"content-type": answer.content_type}
    )


def faulty(
    case: Case, fault: Callable[[Answer, httpx.Request], httpx.Response], *, times: int
) -> Recorder:
    """The case's recorded answers, the damaged request failing with ``fault`` its first
    ``times`` times."""
    failures = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal failures
        damaged, answer = case.answer(request)
        if damaged and failures < times:
            failures += 1
            return fault(answer, request)
        return as_recorded(answer)

    return Recorder(handler)


def ids(cases: Sequence[Case]) -> list[str]:
    return [case.id for case in cases]


def missing(path: tuple[str, ...]) -> Damage:
    return Damage(
        f"json-without-{'.'.join(path)}",
        lambda c: without(c, path),
        f"JSON without the '{'.'.join(path)}'",
        applies=lambda c: path in c.required,
    )


MISSING = [missing(path) for path in sorted({path for case in CASES for path in case.required})]


def with_value(case: Case, path: tuple[str | int, ...], value: object) -> Answer:
    """The recorded JSON with the value at ``path`` replaced (the rest as recorded)."""
    data: Any = json.loads(case.intact.body)
    holder = data
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return Answer(json.dumps(data).encode(), case.intact.content_type)


def case_named(name: str) -> Case:
    return next(case for case in CASES if case.id == name)
