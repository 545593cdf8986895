"""No model answer breaks a search skill: an answer outside the schema, a tool call written
as text, an HTTP error or no answer in time each make the skill use its offline
counterpart for that call, record one plain-words fallback per skill, and the next call
tries the model again; a good answer records nothing."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from typing import Any

import pytest
from dbos import DBOS
from fastapi.testclient import TestClient
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from scholarstream.bootstrap import build_engine, create_app
from scholarstream.db import upgrade
from scholarstream.errors import LLMError, OfflineModeError
from scholarstream.papers import Paper, Record
from scholarstream.search import (
    LLMIntentParser,
    LLMPairAdjudicator,
    LLMQueryBuilder,
    LLMRelevanceScorer,
    LLMResultOrganizer,
    MeshVocabulary,
    ModelSkillLLM,
    QueryBuilderInput,
    RuleIntentParser,
    RuleQueryBuilder,
    ScoredPaper,
)
from scholarstream.search._fallbacks import FallbackLog, fallback_reason
from scholarstream.search.core import ModelFallback, ParsedIntent
from scholarstream.search.organize._themes import rule_themes
from scholarstream.settings import Settings
from tests.helpers import make_runtime
from tests.search.broken_models import KINDS, broken_model
from tests.search.test_search_api import Servers, decide, start_run, wait_for

TODAY = dt.date(2025, 6, 15)
QUESTION = "Does metformin reduce mortality in adults with type 2 diabetes?"
SOURCES = ["pubmed", "openalex"]
API_SOURCES = ["pubmed", "openalex", "semantic_scholar", "arxiv"]
# Library text must never reach the user: class names, pydantic's wording, tracebacks.
INTERNALS = re.compile(
    r"Error\b|Exception|pydantic|validation error|Traceback|final_result|retries", re.I
)


def broken(kind: str) -> ModelSkillLLM:
    return ModelSkillLLM(broken_model(kind))


def answering(payload: dict[str, Any], calls: list[int] | None = None) -> ModelSkillLLM:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if calls is not None:
            calls.append(1)
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, payload)])

    return ModelSkillLLM(FunctionModel(respond))


def only_fallback(log: FallbackLog, skill: str) -> ModelFallback:
    assert [f.skill for f in log.items] == [skill]
    fallback = log.items[0]
    assert not INTERNALS.search(fallback.message), fallback.message
    return fallback


def intent() -> ParsedIntent:
    return RuleIntentParser(today=TODAY).parse_now(QUESTION)


def papers(count: int) -> list[Record]:
    return [
        Paper(
            title=f"Metformin and mortality in type 2 diabetes, cohort {n}",
            abstract="Metformin users had lower all-cause mortality than non-users.",
            year=2020,
            ids={"doi": f"10.1/{n}"},
        )
        for n in range(count)
    ]


# --- intent parsing ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_intent_parsing_falls_back_to_the_rules(kind: str) -> None:
    log = FallbackLog()
    parser = LLMIntentParser(broken(kind), today=TODAY, fallbacks=log)
    parsed = await parser.parse(QUESTION)
    assert parsed == intent()
    fallback = only_fallback(log, "search.intent")
    expected = "failed" if kind == "http_error" else "unusable"
    assert fallback.reason == expected
    assert fallback.message.startswith(
        "The model's answer could not be used for understanding the question"
        if expected == "unusable"
        else "The model call failed for understanding the question"
    )
    assert fallback.message.endswith("the offline step was used.")


async def test_each_call_tries_the_model_again() -> None:
    calls: list[int] = []
    good = answering({"topic": "Metformin", "concepts": [{"term": "metformin"}]}, calls)
    log = FallbackLog()
    parser = LLMIntentParser(broken("invalid"), today=TODAY, fallbacks=log)
    await parser.parse(QUESTION)
    parser._llm = good  # the same run, the model answers now
    parsed = await parser.parse(QUESTION)
    assert [c.term for c in parsed.concepts] == ["metformin"]
    assert calls == [1]
    assert len(log) == 1


async def test_a_good_intent_answer_records_nothing() -> None:
    log = FallbackLog()
    answer = {"topic": "Metformin and mortality", "concepts": [{"term": "metformin"}]}
    parsed = await LLMIntentParser(answering(answer), today=TODAY, fallbacks=log).parse(QUESTION)
    assert parsed.topic == "Metformin and mortality"
    assert log.items == []


# --- query building ----------------------------------------------------------------------


def rules() -> RuleQueryBuilder:
    return RuleQueryBuilder(sources=SOURCES, mesh=MeshVocabulary.load(None), today=TODAY)


def builder(llm: ModelSkillLLM, log: FallbackLog) -> LLMQueryBuilder:
    offline = rules()
    return LLMQueryBuilder(llm, sources=SOURCES, mesh=offline.mesh, fallback=offline, fallbacks=log)


@pytest.mark.parametrize("kind", KINDS)
async def test_query_building_falls_back_to_the_rules(kind: str) -> None:
    log = FallbackLog()
    strategy = await builder(broken(kind), log).build(QueryBuilderInput(intent=intent()))
    offline = await rules().build(QueryBuilderInput(intent=intent()))
    assert strategy.queries == offline.queries
    assert strategy.rationale.startswith("Written by the rule-based builder")
    assert not INTERNALS.search(strategy.rationale), strategy.rationale
    only_fallback(log, "search.query")


async def test_a_strategy_refused_twice_is_recorded_as_unusable() -> None:
    log = FallbackLog()
    empty = answering({"queries": [{"source": "scopus", "query": "x"}]})
    await builder(empty, log).build(QueryBuilderInput(intent=intent()))
    assert only_fallback(log, "search.query").reason == "unusable"


# --- relevance scoring ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_scoring_falls_back_to_lexical_once_per_run(kind: str) -> None:
    log = FallbackLog()
    scorer = LLMRelevanceScorer(broken(kind), batch_size=2, fallbacks=log)
    scored = await scorer.score(papers(5), intent())  # three batches, all failing
    assert len(scored) == 5
    assert all((p.reason or "").startswith("Scored offline because") for p in scored)
    only_fallback(log, "search.score")


async def test_good_scores_record_nothing() -> None:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        scores = [{"paper": n, "score": 0.9, "reason": "On topic."} for n in (1, 2)]
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"scores": scores})])

    log = FallbackLog()
    scorer = LLMRelevanceScorer(ModelSkillLLM(FunctionModel(respond)), batch_size=2, fallbacks=log)
    scored = await scorer.score(papers(2), intent())
    assert {p.reason for p in scored} == {"On topic."}
    assert log.items == []


# --- theme naming --------------------------------------------------------------------------


def scored_papers(count: int) -> list[ScoredPaper]:
    return [
        ScoredPaper(id=f"doi:10.1/{n}", record=r, score=0.5, reason="-")
        for n, r in enumerate(papers(count))
    ]


@pytest.mark.parametrize("kind", KINDS)
async def test_theme_naming_falls_back_to_the_rules(kind: str) -> None:
    log = FallbackLog()
    shown = scored_papers(4)
    groups = await LLMResultOrganizer(broken(kind), fallbacks=log).themes(shown)
    assert groups == rule_themes(shown)
    only_fallback(log, "search.organize")


async def test_themes_naming_no_given_paper_are_unusable() -> None:
    log = FallbackLog()
    made_up = answering({"themes": [{"label": "Cohorts", "papers": [40, 41]}]})
    shown = scored_papers(4)
    assert await LLMResultOrganizer(made_up, fallbacks=log).themes(shown) == rule_themes(shown)
    assert only_fallback(log, "search.organize").reason == "unusable"


async def test_good_themes_record_nothing() -> None:
    log = FallbackLog()
    good = answering({"themes": [{"label": "Cohorts", "papers": [1, 2, 3]}]})
    groups = await LLMResultOrganizer(good, fallbacks=log).themes(scored_papers(4))
    assert groups[0].label == "Cohorts"
    assert log.items == []


# --- duplicate adjudication ----------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_adjudication_keeps_pairs_apart(kind: str) -> None:
    log = FallbackLog()
    records = papers(4)
    pairs = [(records[0], records[1]), (records[2], records[3])]
    adjudicator = LLMPairAdjudicator(broken(kind), batch_size=1, fallbacks=log)
    assert await adjudicator.same_work(pairs) == [False, False]
    fallback = only_fallback(log, "search.dedup")
    assert "kept as separate records" in fallback.message


# --- why ---------------------------------------------------------------------------------------


async def test_the_reason_is_read_from_the_failure() -> None:
    async def late_call() -> None:
        try:
            async with asyncio.timeout(0.01):
                await asyncio.sleep(1)
        except TimeoutError as exc:
            raise LLMError("local did not answer within 0.01 s.") from exc

    with pytest.raises(LLMError) as late:
        await late_call()
    assert fallback_reason(late.value) == "late"
    assert fallback_reason(OfflineModeError("no model")) == "not_configured"
    assert fallback_reason(LLMError("local answered HTTP 500")) == "failed"


def test_the_log_keeps_one_record_per_skill() -> None:
    log = FallbackLog()
    first = log.failed("search.score", LLMError("boom"))
    again = log.unusable("search.score", "no score")
    log.failed("search.intent", TimeoutError())
    assert again is first
    assert [(f.skill, f.reason) for f in log.items] == [
        ("search.score", "failed"),
        ("search.intent", "late"),
    ]
    log.merge(log.items)
    assert len(log) == 2


# --- a whole run through the API ---------------------------------------------------------------


class ModelServers(Servers):
    """The app with a model for every role that answers nothing usable."""

    def __init__(self, settings: Settings, kind: str) -> None:
        super().__init__(settings)
        self.kind = kind

    def start(self) -> TestClient:
        DBOS.destroy(destroy_registry=False)
        model = broken_model(self.kind)
        runtime = make_runtime(
            self.settings,
            {"default": model, "fast": model},
            source_transport=self.world.transport(),
        )
        app = create_app(runtime, engine=build_engine(runtime))
        client = TestClient(app, base_url="http://127.0.0.1")
        client.__enter__()
        self.running.append(client)
        return client


@pytest.mark.parametrize("kind", ["text_tool_call", "http_error"])
def test_a_run_with_a_model_that_never_answers_usably_completes(
    db_settings: Settings, kind: str
) -> None:
    upgrade(db_settings.app_database_url)
    servers = ModelServers(db_settings, kind)
    try:
        client = servers.start()
        run_id = start_run(client, sources=API_SOURCES, strategy_checkpoint=False)
        review = wait_for(client, run_id, "waiting", "0-result_review")
        skills = [f["skill"] for f in review["fallbacks"]]
        assert skills[:2] == ["search.intent", "search.query"]
        assert "search.score" in skills
        assert len(skills) == len(set(skills)), "one notice per skill per run"
        assert all(not INTERNALS.search(f["message"]) for f in review["fallbacks"])
        assert review["collection"]["papers"]
        assert decide(client, run_id, "0-result_review", "approve").status_code == 202
        done = wait_for(client, run_id, "completed")
        assert done["fallbacks"] == review["fallbacks"]
    finally:
        for client in list(servers.running):
            servers.stop(client)
        DBOS.destroy(destroy_registry=False)
