"""The JSON schemas the search skills send to a local server (issue 22): the server turns
the schema into a grammar, so its bounds are what keep a small model's answer complete
within its token budget and non-empty. Each test reads the schema actually sent, as
``response_format`` json_schema (``NativeOutput``, the local-server default)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from scholarstream.accounts import create_user
from scholarstream.db import upgrade_async
from scholarstream.llm import DEFAULT_ROLE, ModelCapabilities, output_spec
from scholarstream.papers import Identifiers, Paper, Record
from scholarstream.search import GatewaySkillLLM
from scholarstream.search._mesh import MeshVocabulary
from scholarstream.search.core import Concept, ParsedIntent, QueryBuilderInput, ScoredPaper
from scholarstream.search.intent import LLMIntentParser
from scholarstream.search.organize import LLMResultOrganizer
from scholarstream.search.query import LLMQueryBuilder, RuleQueryBuilder
from scholarstream.search.scoring import LLMRelevanceScorer
from scholarstream.search.scoring._llm import LOCAL_BATCH_SIZE
from scholarstream.settings import load_settings
from tests.helpers import make_runtime

OutputT = TypeVar("OutputT")
NATIVE = ModelCapabilities(structured_output="native")


@dataclass
class SchemaRecorder:
    """A ``SkillLLM`` that asks as the gateway asks a local server (JSON schema) and
    records each schema sent; the model answers with ``answer``."""

    answer: dict[str, Any]
    schemas: list[dict[str, Any]] = field(default_factory=list)

    async def structured(
        self, agent: Agent[None, OutputT], prompt: str, *, feature: str, role: str = DEFAULT_ROLE
    ) -> OutputT:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            sent = info.model_request_parameters.output_object
            assert sent is not None, "the output was not asked for as a JSON schema"
            self.schemas.append(sent.json_schema)
            return ModelResponse(parts=[TextPart(json.dumps(self.answer))])

        result = await agent.run(
            prompt,
            model=FunctionModel(respond),
            output_type=output_spec(agent.output_type, NATIVE),
        )
        output: OutputT = result.output
        return output


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    resolved: dict[str, Any] = schema["$defs"][ref.rsplit("/", 1)[-1]]
    return resolved


def prop(schema: dict[str, Any], *path: str) -> dict[str, Any]:
    """The schema of a property; ``[]`` steps into a list's items."""
    node = schema
    for step in path:
        node = resolve(schema, node)
        node = node["items"] if step == "[]" else node["properties"][step]
    return resolve(schema, node)


INTENT = ParsedIntent(
    question="sumatriptan for migraine",
    topic="sumatriptan for migraine",
    concepts=[Concept(term="sumatriptan"), Concept(term="migraine")],
)


# --- search.intent -----------------------------------------------------------------------


async def test_the_intent_schema_bounds_every_list_and_string() -> None:
    llm = SchemaRecorder({"topic": "x", "concepts": [{"term": "migraine", "synonyms": []}]})
    await LLMIntentParser(llm).parse("sumatriptan for migraine")
    (schema,) = llm.schemas
    assert prop(schema, "concepts")["maxItems"] == 5
    assert prop(schema, "concepts", "[]", "synonyms")["maxItems"] == 4
    assert prop(schema, "concepts", "[]", "synonyms", "[]")["maxLength"] == 40
    term = prop(schema, "concepts", "[]", "term")
    assert (term["minLength"], term["maxLength"]) == (1, 60)
    assert prop(schema, "topic")["maxLength"] == 120
    for name in ("study_types", "languages", "exclude_terms"):
        assert prop(schema, name)["maxItems"] <= 5
        assert prop(schema, name, "[]")["maxLength"] <= 60


async def test_an_intent_over_the_bounds_is_cut_not_refused() -> None:
    """A cloud model that ignores maxItems still gives a usable intent."""
    synonyms = [f"synonym {n}" for n in range(10)]
    llm = SchemaRecorder(
        {"topic": "t" * 300, "concepts": [{"term": "migraine", "synonyms": synonyms}]}
    )
    intent = await LLMIntentParser(llm).parse("sumatriptan for migraine")
    assert intent.concepts[0].synonyms == synonyms[:4]
    assert intent.topic == "t" * 120


# --- search.query ------------------------------------------------------------------------


def query_builder(llm: SchemaRecorder, sources: list[str]) -> LLMQueryBuilder:
    mesh = MeshVocabulary.empty()
    return LLMQueryBuilder(
        llm, sources=sources, mesh=mesh, fallback=RuleQueryBuilder(sources=sources, mesh=mesh)
    )


async def test_the_strategy_schema_puts_required_non_empty_queries_first() -> None:
    answer = {"queries": [{"source": "openalex", "query": "sumatriptan migraine"}]}
    llm = SchemaRecorder(answer)
    strategy = await query_builder(llm, ["pubmed", "openalex"]).build(
        QueryBuilderInput(intent=INTENT)
    )
    assert [q.source for q in strategy.queries] == ["openalex"]
    (schema,) = llm.schemas
    order = list(schema["properties"])
    assert (order[0], order[-1]) == ("queries", "rationale")
    assert "queries" in schema["required"]
    queries = prop(schema, "queries")
    assert (queries["minItems"], queries["maxItems"]) == (1, 2)
    query = prop(schema, "queries", "[]")
    assert query["required"] == ["source", "query"]
    assert query["properties"]["source"]["enum"] == ["pubmed", "openalex"]
    assert query["properties"]["query"]["minLength"] == 1
    assert prop(schema, "rationale")["maxLength"] == 300
    assert prop(schema, "concepts", "[]", "terms")["maxItems"] == 8


async def test_a_query_for_an_unknown_source_is_still_dropped_with_a_note() -> None:
    """The enum is the schema's; validation keeps its repairs (a cloud model's answer)."""
    answer = {
        "queries": [
            {"source": "scopus", "query": "TITLE(migraine)"},
            {"source": "pubmed", "query": "migraine[tiab]"},
        ],
        "rationale": "r" * 500,
    }
    strategy = await query_builder(SchemaRecorder(answer), ["pubmed"]).build(
        QueryBuilderInput(intent=INTENT)
    )
    assert [q.source for q in strategy.queries] == ["pubmed"]
    assert "dropped a query for 'scopus'" in strategy.rationale
    assert strategy.rationale.startswith("r" * 300 + " Checks:")


# --- search.score ------------------------------------------------------------------------


def papers(count: int) -> list[Record]:
    return [
        Paper(ids=Identifiers(pmid=str(3000 + n)), title=f"Sumatriptan trial {n}")
        for n in range(count)
    ]


async def test_the_score_schema_asks_for_exactly_one_score_per_paper_of_the_batch() -> None:
    answer = {"scores": [{"paper": n, "score": 0.5, "reason": "On topic."} for n in (1, 2, 3)]}
    llm = SchemaRecorder(answer)
    scorer = LLMRelevanceScorer(llm, batch_size=3)
    relevances = await scorer.relevance(papers(5), INTENT)
    assert len(relevances) == 5
    sizes = []
    for schema in llm.schemas:
        scores = prop(schema, "scores")
        assert scores["minItems"] == scores["maxItems"]
        sizes.append(scores["minItems"])
        number = prop(schema, "scores", "[]", "paper")
        assert (number["minimum"], number["maximum"]) == (1, scores["maxItems"])
        assert prop(schema, "scores", "[]", "reason")["maxLength"] == 200
    # A batch of 3 and one of 2; the extra answer for the batch of 2 is ignored.
    assert sorted(sizes) == [2, 3]


# --- search.organize ---------------------------------------------------------------------


async def test_the_theme_schema_asks_for_at_least_one_theme_with_a_paper() -> None:
    llm = SchemaRecorder({"themes": [{"label": "Trials", "papers": [1, 2]}]})
    scored = [
        ScoredPaper(id=f"p{n}", record=record, score=0.5) for n, record in enumerate(papers(4))
    ]
    groups = await LLMResultOrganizer(llm).themes(scored)
    assert groups[0].label == "Trials"
    (schema,) = llm.schemas
    assert prop(schema, "themes")["minItems"] == 1
    assert prop(schema, "themes", "[]", "papers")["minItems"] == 1
    assert prop(schema, "themes", "[]", "label")["minLength"] == 1


@dataclass
class LocalRecorder(SchemaRecorder):
    """As ``SchemaRecorder``, for a role on a local server (``compact_prompt``)."""

    async def capabilities(self, role: str) -> ModelCapabilities | None:
        return ModelCapabilities(structured_output="native", compact_prompt=True)


async def test_a_local_server_scores_in_smaller_batches() -> None:
    answer = {"scores": [{"paper": n, "score": 0.5, "reason": "On topic."} for n in (1, 2)]}
    cloud, local = SchemaRecorder(answer), LocalRecorder(answer)
    await LLMRelevanceScorer(cloud, batch_size=10).relevance(papers(10), INTENT)
    await LLMRelevanceScorer(local, batch_size=10).relevance(papers(10), INTENT)
    first_asks = [s for s in local.schemas if prop(s, "scores")["minItems"] > 2]
    assert prop(cloud.schemas[0], "scores")["minItems"] == 10
    assert sorted(prop(s, "scores")["minItems"] for s in first_asks) == [4, 4]
    assert max(prop(s, "scores")["minItems"] for s in local.schemas) == LOCAL_BATCH_SIZE


async def test_the_gateway_tells_a_local_server_from_a_missing_model(data_dir: Path) -> None:
    settings = load_settings(data_dir=data_dir, llm={"roles": {"fast": "ollama:qwen2.5"}})
    await upgrade_async(settings.app_database_url)
    runtime = make_runtime(settings)
    try:
        async with runtime.database.session() as session:
            owner = (await create_user(session, "ada", "correct horse battery")).id
        llm = GatewaySkillLLM(runtime.llm, runtime.database, owner)
        local = await llm.capabilities("fast")
        assert local is not None and local.compact_prompt
        assert await llm.capabilities("default") is None  # offline: the call falls back
    finally:
        await runtime.close()
