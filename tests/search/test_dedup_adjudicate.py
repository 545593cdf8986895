"""Borderline pairs and the model that adjudicates them (a scripted pydantic-ai
FunctionModel): only an explicit, valid "same work" merges; failures keep pairs apart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from scholarstream.papers import Author, Paper, Record
from scholarstream.papers.dedup import (
    RecordDeduplicator,
    Verdict,
    compare,
    judge_pairs,
    record_keys,
)
from scholarstream.search import LLMPairAdjudicator, ModelSkillLLM

Respond = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


def abstract_and_paper(title: str) -> list[Record]:
    """Same title, authors and year in two venues, nothing else to go on: borderline."""
    authors = [Author.parse("Deng, Chaoqun"), Author.parse("Ravichandran, T.")]
    return [
        Paper(title=title, authors=[a for a in authors if a], venue=venue, year=2017)
        for venue in ("Americas Conference on Information Systems", "Decision Support Systems")
    ]


PAIR = abstract_and_paper("How consumers perceive trustworthiness of providers at Airbnb")


def model(respond: Respond, prompts: list[str] | None = None) -> ModelSkillLLM:
    def recorded(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if prompts is not None:
            request = messages[-1]
            assert isinstance(request, ModelRequest)
            prompts.append(" ".join(str(getattr(p, "content", "")) for p in request.parts))
        return respond(messages, info)

    return ModelSkillLLM(FunctionModel(recorded))


def answers(*judgements: dict[str, Any]) -> Respond:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        payload = {"judgements": list(judgements)}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, payload)])

    return respond


def test_the_pair_is_borderline_for_the_rules() -> None:
    keys = [record_keys(r) for r in PAIR]
    assert compare(*keys).verdict is Verdict.BORDERLINE
    assert judge_pairs(PAIR).borderline == [(0, 1)]


async def test_without_adjudicator_borderline_pairs_stay_apart() -> None:
    assert len(await RecordDeduplicator().deduplicate(PAIR)) == 2


async def test_a_yes_merges_and_the_prompt_shows_both_citations() -> None:
    prompts: list[str] = []
    llm = model(answers({"pair": 1, "same_work": True}), prompts)
    merged = await RecordDeduplicator(LLMPairAdjudicator(llm)).deduplicate(PAIR)
    assert len(merged) == 1
    assert len(prompts) == 1
    assert "Americas Conference on Information Systems" in prompts[0]
    assert "Decision Support Systems" in prompts[0]


async def test_a_no_keeps_the_pair_apart() -> None:
    llm = model(answers({"pair": 1, "same_work": False}))
    assert len(await RecordDeduplicator(LLMPairAdjudicator(llm)).deduplicate(PAIR)) == 2


async def test_answers_about_pairs_not_asked_are_ignored() -> None:
    llm = model(answers({"pair": 0, "same_work": True}, {"pair": 2, "same_work": True}))
    assert len(await RecordDeduplicator(LLMPairAdjudicator(llm)).deduplicate(PAIR)) == 2


def garbage(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("They look rather similar, I suppose.")])


def failure(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise UnexpectedModelBehavior("the provider returned an empty response")


@pytest.mark.parametrize("respond", [garbage, failure])
async def test_a_failed_call_never_merges(respond: Respond) -> None:
    adjudicator = LLMPairAdjudicator(model(respond))
    assert await adjudicator.same_work([(PAIR[0], PAIR[1])]) == [False]
    assert len(await RecordDeduplicator(adjudicator).deduplicate(PAIR)) == 2


async def test_pairs_are_asked_in_batches_numbered_per_batch() -> None:
    records = [
        *abstract_and_paper("Trust in sharing economy platforms and photos of hosts"),
        *abstract_and_paper("Seller uncertainty in the sharing economy and decisions"),
        *abstract_and_paper("Minitrack on crowdsourcing and the digital workforce"),
    ]
    assert len(judge_pairs(records).borderline) == 3
    prompts: list[str] = []
    # Every batch gets the same answer: its pair 1 is a duplicate, its pair 2 is not.
    llm = model(answers({"pair": 1, "same_work": True}, {"pair": 2, "same_work": False}), prompts)
    merged = await RecordDeduplicator(LLMPairAdjudicator(llm, batch_size=2)).deduplicate(records)
    assert len(prompts) == 2
    assert "Pair 2" in prompts[0] and "Pair 2" not in prompts[1]
    assert [r.title for r in merged] == [
        "Trust in sharing economy platforms and photos of hosts",
        "Seller uncertainty in the sharing economy and decisions",
        "Seller uncertainty in the sharing economy and decisions",
        "Minitrack on crowdsourcing and the digital workforce",
    ]


async def test_the_model_is_not_asked_when_the_rules_decide() -> None:
    prompts: list[str] = []
    llm = model(answers({"pair": 1, "same_work": True}), prompts)
    twins = [PAIR[0], PAIR[0].model_copy()]
    merged = await RecordDeduplicator(LLMPairAdjudicator(llm)).deduplicate(twins)
    assert len(merged) == 1 and prompts == []


def test_batch_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        LLMPairAdjudicator(model(garbage), batch_size=0)
