"""The product's own payload types (seed 002, "Rich Payloads").

Each payload's data is a pydantic model here, and its registered JSON schema (draft 2020-12)
is generated from that model, so the tools that build the data and the schema the data is
checked against cannot drift apart.

- Tool payloads (``source="tool"``, global) are ours: every key is present (``null`` when
  unknown) and no other key is allowed, so a mismatch is caught as the bug it is.
- LLM payloads (``source="llm"``) are parsed from ``MARKER: {json}`` in the model's answer.
  They refuse unknown keys too: a misspelt key would otherwise be dropped silently, and the
  agent loop reports the schema error instead. Each page config names the ones it accepts.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from scholarstream.chat.core import PayloadType, make_json_parser, register_payload_type
from scholarstream.sources import TrialPhase, TrialStatus

DRAFT = "https://json-schema.org/draft/2020-12/schema"
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"

# The Trials form's option values are ClinicalTrials.gov's codes.
Phase = TrialPhase
Status = TrialStatus


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid")


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    return {"$schema": DRAFT, **model.model_json_schema()}


# --- records, as payloads show them ----------------------------------------------------


class PaperIds(_Data):
    doi: str | None
    pmid: str | None
    pmcid: str | None
    arxiv_id: str | None
    openalex_id: str | None
    s2_id: str | None


class LinkData(_Data):
    url: str
    kind: str


class PaperDetail(_Data):
    """A publication, complete."""

    kind: Literal["paper"]
    ids: PaperIds
    title: str = Field(min_length=1)
    authors: list[str]
    journal: str | None
    year: int | None
    published: dt.date | None
    volume: str | None
    issue: str | None
    pages: str | None
    publisher: str | None
    abstract: str | None
    publication_types: list[str]
    mesh_terms: list[str]
    keywords: list[str]
    citation_count: int | None = Field(ge=0)
    retraction: str | None = Field(description="The retraction notice, if retracted.")
    url: str | None
    links: list[LinkData]
    sources: list[str]


class OutcomeData(_Data):
    measure: str
    time_frame: str | None


class TrialDetail(_Data):
    """A registered clinical trial, complete."""

    kind: Literal["trial"]
    nct_id: str = Field(pattern=r"^NCT\d{8}$")
    title: str = Field(min_length=1)
    official_title: str | None
    summary: str | None
    status: str | None
    phases: list[str]
    study_type: str | None
    conditions: list[str]
    interventions: list[str]
    sponsor: str | None
    collaborators: list[str]
    enrollment: int | None = Field(ge=0)
    start_date: dt.date | None
    primary_completion_date: dt.date | None
    completion_date: dt.date | None
    primary_outcomes: list[OutcomeData]
    has_results: bool
    url: str | None
    sources: list[str]


RecordDetail = Annotated[PaperDetail | TrialDetail, Field(discriminator="kind")]


# --- tool payloads -----------------------------------------------------------------------


class PubMedArticle(_Data):
    pmid: str = Field(pattern=r"^\d+$")
    doi: str | None
    title: str = Field(min_length=1)
    authors: list[str]
    journal: str | None
    year: int | None
    abstract_snippet: str | None
    url: str


class PubMedSearchResults(_Data):
    query: str = Field(min_length=1)
    total: int | None = Field(ge=0, description="Matches in PubMed, not only those shown.")
    articles: list[PubMedArticle]


class SourceOutcome(_Data):
    """How one source fared; a failed one says why and what to do."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "if": {"properties": {"ok": {"const": False}}},
            "then": {"properties": {"error": {"type": "string", "minLength": 1}}},
        },
    )

    source: str
    ok: bool
    total: int | None = Field(ge=0)
    returned: int = Field(ge=0)
    error_code: str | None
    error: str | None
    hint: str | None


class LiteratureArticle(_Data):
    id: str = Field(min_length=1, description="A stable key: doi:..., pmid:..., title:...")
    title: str = Field(min_length=1)
    authors: list[str]
    journal: str | None
    year: int | None
    doi: str | None
    pmid: str | None
    arxiv_id: str | None
    library_id: str | None = Field(description="The library record's UUID, when it is one.")
    abstract_snippet: str | None
    url: str | None
    sources: list[str] = Field(min_length=1, description="Every source that returned it.")


class LiteratureSearchResults(_Data):
    query: str
    sources: list[SourceOutcome] = Field(min_length=1)
    total_found: int = Field(ge=0, description="Records returned before merging duplicates.")
    articles: list[LiteratureArticle]
    already_listed: int = Field(
        default=0,
        ge=0,
        description="Works found here that an earlier search of the same answer listed: "
        "not listed twice.",
    )
    failures: list[str] = Field(
        default_factory=list,
        description="The sources that failed, in sentences for a person (grouped by what "
        "happened, with what to do).",
    )


class ArticleDetails(_Data):
    identifier: str = Field(min_length=1, description="What was looked up, as given.")
    source: str = Field(description="Where the record came from (a source, or library).")
    library_id: str | None
    article: RecordDetail


class TrialQuery(_Data):
    terms: str | None
    condition: str | None
    intervention: str | None
    sponsor: str | None
    phases: list[str]
    statuses: list[str]
    start_from: dt.date | None
    start_to: dt.date | None


class TrialCard(_Data):
    nct_id: str = Field(pattern=r"^NCT\d{8}$")
    title: str = Field(min_length=1)
    status: str | None
    phases: list[str]
    study_type: str | None
    conditions: list[str]
    interventions: list[str]
    sponsor: str | None
    enrollment: int | None = Field(ge=0)
    start_date: dt.date | None
    summary_snippet: str | None
    url: str


class TrialSearchResults(_Data):
    query: TrialQuery
    total: int | None = Field(ge=0)
    next_page_token: str | None
    trials: list[TrialCard]


class RetrievedItem(_Data):
    id: str = Field(min_length=1, description="The id the page gave the item.")
    kind: str
    record: RecordDetail
    annotations: dict[str, str] = Field(
        description="What the page knows beyond the record: score, reason, label..."
    )


class MissingItem(_Data):
    id: str
    reason: str


class RetrievedItems(_Data):
    items: list[RetrievedItem]
    not_found: list[MissingItem]


class AnalysisRow(_Data):
    value: str
    count: int = Field(ge=0)
    percent: float = Field(ge=0, le=100, description="Of the items analysed, one decimal.")


class AnalysisGroup(_Data):
    group: str | None = Field(description="The group's value; null for items without one.")
    total: int = Field(ge=0)
    missing: int = Field(ge=0)
    rows: list[AnalysisRow]


class NumericSummary(_Data):
    count: int = Field(ge=1)
    min: float
    max: float
    mean: float
    median: float


class AnalysisFilter(_Data):
    field: str
    value: str


class AnalysisResult(_Data):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "allOf": [
                {
                    "if": {"properties": {"operation": {"const": "count"}}},
                    "then": {"properties": {"matched": {"type": "integer"}}},
                },
                {
                    "if": {"properties": {"operation": {"const": "compare"}}},
                    "then": {
                        "properties": {
                            "group_by": {"type": "string"},
                            "groups": {"minItems": 1},
                        }
                    },
                },
                {
                    "if": {"properties": {"operation": {"const": "summary"}}},
                    "then": {"properties": {"stats": {"type": "object"}}},
                },
            ]
        },
    )

    operation: Literal["count", "distribution", "compare", "summary"]
    field: str | None
    filter: AnalysisFilter | None
    group_by: str | None
    total: int = Field(ge=0, description="Items analysed.")
    matched: int | None = Field(ge=0, description="count: items that matched.")
    missing: int = Field(ge=0, description="Items without a value for the field.")
    rows: list[AnalysisRow]
    groups: list[AnalysisGroup]
    stats: NumericSummary | None


# --- LLM payloads ------------------------------------------------------------------------


class QuerySuggestion(_Data):
    query: str = Field(min_length=1, max_length=4000)
    target: Literal["search", "library", "pubmed"]
    explanation: str = Field(min_length=1, max_length=1000)


class AiColumnSuggestion(_Data):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "if": {"properties": {"output_type": {"const": "category"}}},
            "then": {
                "required": ["categories"],
                "properties": {"categories": {"type": "array", "minItems": 2}},
            },
            "else": {"properties": {"categories": {"maxItems": 0}}},
        },
    )

    name: str = Field(min_length=1, max_length=60)
    criteria: str = Field(min_length=1, max_length=2000)
    output_type: Literal["yes_no", "text", "number", "category"]
    categories: list[Annotated[str, Field(min_length=1)]] | None = Field(
        default=None, max_length=20, description="Required (2+) for output_type category."
    )
    explanation: str = Field(min_length=1, max_length=1000)


class SuggestedFilters(_Data):
    """The page's filters to set; ``null`` clears one."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"minProperties": 1})

    year_from: int | None = Field(default=None, ge=1000, le=2999)
    year_to: int | None = Field(default=None, ge=1000, le=2999)
    publication_type: str | None = Field(default=None, min_length=1)
    theme: str | None = Field(default=None, min_length=1)
    study_type: str | None = Field(default=None, min_length=1)
    source: str | None = Field(default=None, min_length=1)
    label: Literal["relevant", "irrelevant", "unlabelled"] | None = None
    phase: Phase | None = None
    status: Status | None = None


class FilterSuggestion(_Data):
    filters: SuggestedFilters
    explanation: str = Field(min_length=1, max_length=1000)


class TrialSearchSuggestion(_Data):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [
                {"required": [name], "properties": {name: {"type": "string"}}}
                for name in ("condition", "intervention", "terms", "sponsor")
            ]
        },
    )

    condition: str | None = Field(default=None, min_length=1)
    intervention: str | None = Field(default=None, min_length=1)
    terms: str | None = Field(default=None, min_length=1)
    sponsor: str | None = Field(default=None, min_length=1)
    phases: list[Phase] = Field(default_factory=list)
    statuses: list[Status] = Field(default_factory=list)
    start_from: str | None = Field(default=None, pattern=DATE_PATTERN)
    start_to: str | None = Field(default=None, pattern=DATE_PATTERN)
    explanation: str = Field(min_length=1, max_length=1000)


# --- registrations -----------------------------------------------------------------------

_DISPLAY_ONLY = "No Accept button: the card is for reading. "

PUBMED_SEARCH_RESULTS = register_payload_type(
    PayloadType(
        name="pubmed_search_results",
        description="Articles PubMed returned for a query (search_pubmed): PMID, DOI, title, "
        "authors, journal, year, the start of the abstract, and the total number of matches.",
        schema=schema_of(PubMedSearchResults),
        source="tool",
        is_global=True,
        accept_behaviour=_DISPLAY_ONLY + "Each title links to the article on PubMed.",
    )
)

LITERATURE_SEARCH_RESULTS = register_payload_type(
    PayloadType(
        name="literature_search_results",
        description="Articles from several sources at once (search_literature, "
        "search_library), duplicates merged, each listing every source that returned it; "
        "one status per source, failed ones with their error and hint.",
        schema=schema_of(LiteratureSearchResults),
        source="tool",
        is_global=True,
        accept_behaviour=_DISPLAY_ONLY + "Failed sources are shown as warnings above the "
        "list; each title links to the article (library records open in the Library).",
    )
)

ARTICLE_DETAILS = register_payload_type(
    PayloadType(
        name="article_details",
        description="One article (or registered trial) in full (get_article_details): "
        "identifiers, authors, venue, dates, abstract, MeSH terms, links, retraction notice.",
        schema=schema_of(ArticleDetails),
        source="tool",
        is_global=True,
        accept_behaviour=_DISPLAY_ONLY + "Shows the record like the Library's detail view.",
    )
)

TRIAL_SEARCH_RESULTS = register_payload_type(
    PayloadType(
        name="trial_search_results",
        description="Studies ClinicalTrials.gov returned (search_trials): NCT id, title, "
        "status, phases, conditions, interventions, sponsor, enrolment, start date.",
        schema=schema_of(TrialSearchResults),
        source="tool",
        is_global=True,
        accept_behaviour=_DISPLAY_ONLY + "Each NCT id opens the study on the Trials page.",
    )
)

RETRIEVED_ITEMS = register_payload_type(
    PayloadType(
        name="retrieved_items",
        description="Full records of items on the page (retrieve_items), with what the "
        "page adds (score, reason, label), and the ids that could not be retrieved.",
        schema=schema_of(RetrievedItems),
        source="tool",
        is_global=True,
        accept_behaviour=_DISPLAY_ONLY + "Each item has an 'Open' link that opens it on "
        "the page (the open_item client action).",
    )
)

ANALYSIS_RESULT = register_payload_type(
    PayloadType(
        name="analysis_result",
        description="Counts computed over the items on the page (analyze_items): a count, "
        "a distribution of one field (value, count, percent; missing values apart), a "
        "comparison of one field across the groups of another, or a numeric summary.",
        schema=schema_of(AnalysisResult),
        source="tool",
        is_global=True,
        accept_behaviour=_DISPLAY_ONLY + "Renders as a table with a bar per row.",
    )
)

_ONE_PER_REPLY = (
    "Write your answer first. Then put the marker and ONE JSON object on a line of its own "
    "as the very last line of your reply: no code fence, no text after it, at most one "
    "marker line per reply. The user sees a card with Accept and Dismiss buttons."
)

# Each example is one line, as the model must write it.
_AI_COLUMN_EXAMPLE = (
    'AI_COLUMN_SUGGESTION: {"name": "...", "criteria": "...", "output_type": "yes_no", '
    '"explanation": "..."}'
)
_TRIAL_SEARCH_EXAMPLE = (
    'TRIAL_SEARCH_SUGGESTION: {"condition": "...", "intervention": "...", '
    '"phases": ["PHASE3"], "statuses": ["RECRUITING"], "explanation": "..."}'
)

QUERY_SUGGESTION = register_payload_type(
    PayloadType(
        name="query_suggestion",
        description="A ready-to-run search query the user can Accept.",
        schema=schema_of(QuerySuggestion),
        source="llm",
        parse_marker="QUERY_SUGGESTION:",
        parser=make_json_parser("query_suggestion"),
        accept_behaviour="Puts the query into the search field its target names and "
        "runs nothing else: 'search' fills the question box of the Search page (opening the "
        "Search page from other pages), 'library' fills the Library's search words and "
        "searches the library, 'pubmed' opens the Search page with the query in the "
        "question box and PubMed as the only source.",
        llm_instructions=f"""QUERY_SUGGESTION — offer a search query the user can Accept.
Use it when the user wants to find literature, asks for help writing or improving a query, or
when the search on screen is clearly too narrow or too broad. Do not use it to answer a
question about results already on screen (use the tools for that).
{_ONE_PER_REPLY}
QUERY_SUGGESTION: {{"query": "...", "target": "search", "explanation": "..."}}
- query: the complete query, never a fragment.
  - target "search": the research question in plain words; the Search page builds a query
    for each source from it and shows that strategy before searching.
  - target "library": plain words only; the library ranks by BM25 and has no Boolean
    operators or field tags.
  - target "pubmed": PubMed syntax: AND, OR, NOT in upper case, parentheses, "quoted
    phrases", field tags such as [tiab], [ti], [mh] (MeSH), [pt], [au], [dp]; e.g.
    (EGFR[mh] OR "epidermal growth factor receptor"[tiab]) AND resistan*[tiab]
- target: "search", "library" or "pubmed", as the page context says.
- explanation: one or two sentences: which concepts, synonyms and MeSH terms, and why.""",
    )
)

AI_COLUMN_SUGGESTION = register_payload_type(
    PayloadType(
        name="ai_column_suggestion",
        description="An AI column for the page's results table: criteria a model applies "
        "to every row.",
        schema=schema_of(AiColumnSuggestion),
        source="llm",
        parse_marker="AI_COLUMN_SUGGESTION:",
        parser=make_json_parser("ai_column_suggestion"),
        accept_behaviour="Creates the column on the page's results table with this name, "
        "criteria and output type; the page then fills it in row by row and the user can "
        "sort and filter on it.",
        llm_instructions=f"""AI_COLUMN_SUGGESTION — propose an AI column that evaluates every row.
Use it when the user wants to filter, classify or enrich the results by something no field
or filter on the page captures (e.g. "only Phase 3 with overall survival as primary
endpoint", "which papers are RCTs in children"). For a question you can answer now from the
loaded items, answer it (retrieve_items, analyze_items) instead.
{_ONE_PER_REPLY}
{_AI_COLUMN_EXAMPLE}
- name: a short column header (at most 60 characters), e.g. "OS primary endpoint".
- criteria: the exact question asked of each row, self-contained and unambiguous, saying
  what counts and what does not, e.g. "Is overall survival a primary endpoint of this
  trial? Answer yes only if OS is listed among the primary outcomes."
- output_type: "yes_no", "text", "number" or "category".
- categories: only for output_type "category": 2 to 20 mutually exclusive labels, e.g.
  ["RCT", "cohort", "case-control", "other"]. Leave it out for the other types.
- explanation: one sentence on how the column helps.""",
    )
)

FILTER_SUGGESTION = register_payload_type(
    PayloadType(
        name="filter_suggestion",
        description="Filter values for the results on the page.",
        schema=schema_of(FilterSuggestion),
        source="llm",
        parse_marker="FILTER_SUGGESTION:",
        parser=make_json_parser("filter_suggestion"),
        accept_behaviour="Sets the page's filters to these values (the others keep theirs) "
        "and shows the filtered results.",
        llm_instructions=f"""FILTER_SUGGESTION — set the page's own filters for the user.
Use it when the user wants to narrow or widen what is shown and the page has a filter for
it (the page context lists the filter keys this page takes and their current values).
{_ONE_PER_REPLY}
FILTER_SUGGESTION: {{"filters": {{"year_from": 2020}}, "explanation": "..."}}
- filters: only keys this page takes, at least one (null clears a filter):
  year_from, year_to (integers, years); publication_type (e.g. "Review",
  "Randomized Controlled Trial"); theme, study_type, source (a group of the Search
  results, as the page context names it); label ("relevant", "irrelevant",
  "unlabelled"); phase (one of EARLY_PHASE1, PHASE1, PHASE2, PHASE3, PHASE4, NA);
  status (e.g. RECRUITING, COMPLETED, ACTIVE_NOT_RECRUITING, TERMINATED).
- explanation: one sentence on what the filter shows and hides.""",
    )
)

TRIAL_SEARCH_SUGGESTION = register_payload_type(
    PayloadType(
        name="trial_search_suggestion",
        description="A ClinicalTrials.gov search for the Trials page's form.",
        schema=schema_of(TrialSearchSuggestion),
        source="llm",
        parse_marker="TRIAL_SEARCH_SUGGESTION:",
        parser=make_json_parser("trial_search_suggestion"),
        accept_behaviour="Fills the Trials search form (the user presses Search): Condition "
        "(condition), Intervention (intervention), Other terms (q ← terms), Sponsor "
        "(sponsor), Phase (phase ← phases, comma-joined codes such as PHASE2,PHASE3), "
        "Status (status ← statuses, comma-joined codes), Started from (date_from ← "
        "start_from), Started until (date_to ← start_to).",
        llm_instructions=f"""TRIAL_SEARCH_SUGGESTION — fill the Trials search form for the user.
Use it when the user wants to find clinical trials (by condition, drug, sponsor, phase,
recruitment status or start date), or to change the trial search on screen.
{_ONE_PER_REPLY}
{_TRIAL_SEARCH_EXAMPLE}
- At least one of condition, intervention, terms, sponsor (each a string; leave out the
  others):
  - condition: the disease, e.g. "non-small cell lung cancer";
  - intervention: the drug, device or procedure, e.g. "osimertinib";
  - terms: any other words, ClinicalTrials.gov syntax (AND, OR, NOT, "phrases");
  - sponsor: the lead sponsor or a collaborator, e.g. "AstraZeneca".
- phases: codes from EARLY_PHASE1, PHASE1, PHASE2, PHASE3, PHASE4, NA.
- statuses: codes from ACTIVE_NOT_RECRUITING, COMPLETED, ENROLLING_BY_INVITATION,
  NOT_YET_RECRUITING, RECRUITING, SUSPENDED, TERMINATED, WITHDRAWN, UNKNOWN.
- start_from, start_to: the study start date range, YYYY-MM-DD.
- explanation: one sentence on what the search finds.""",
    )
)

BUILTIN_PAYLOAD_TYPES: tuple[PayloadType, ...] = (
    PUBMED_SEARCH_RESULTS,
    LITERATURE_SEARCH_RESULTS,
    ARTICLE_DETAILS,
    TRIAL_SEARCH_RESULTS,
    RETRIEVED_ITEMS,
    ANALYSIS_RESULT,
    QUERY_SUGGESTION,
    AI_COLUMN_SUGGESTION,
    FILTER_SUGGESTION,
    TRIAL_SEARCH_SUGGESTION,
)
