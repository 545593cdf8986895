"""The IntentParser skill: the offline rule parser on clinical and non-clinical questions,
and the LLM parser on scripted pydantic-ai FunctionModel answers."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from scholarstream.errors import InvalidInputError
from scholarstream.search import ModelSkillLLM
from scholarstream.search.core import ParsedIntent
from scholarstream.search.intent import LLMIntentParser, RuleIntentParser

TODAY = dt.date(2025, 6, 15)
CLINICAL = "Does metformin reduce mortality in adults with type 2 diabetes?"


@pytest.fixture
def rules() -> RuleIntentParser:
    return RuleIntentParser(today=TODAY)


def concept_terms(intent: ParsedIntent) -> list[str]:
    return [c.term for c in intent.concepts]


def synonyms_of(intent: ParsedIntent, term: str) -> list[str]:
    concept = next(c for c in intent.concepts if c.term == term)
    return concept.synonyms


# --- rules ---------------------------------------------------------------------------


async def test_a_clinical_question_gives_pico_and_concepts_with_synonyms(
    rules: RuleIntentParser,
) -> None:
    intent = await rules.parse(CLINICAL)
    assert intent.question == CLINICAL
    assert intent.topic == "Metformin reduce mortality in adults with type 2 diabetes"
    assert concept_terms(intent) == ["metformin", "mortality", "type 2 diabetes"]
    assert {"T2DM", "type 2 diabetes mellitus"} <= set(synonyms_of(intent, "type 2 diabetes"))
    assert "death" in synonyms_of(intent, "mortality")
    assert intent.pico is not None
    assert intent.pico.present() == {
        "population": "adults with type 2 diabetes",
        "intervention": "metformin",
        "outcome": "mortality",
    }
    assert intent.is_clinical
    assert (intent.date_from, intent.date_to, intent.study_types, intent.languages) == (
        None,
        None,
        [],
        [],
    )


async def test_comparison_study_type_language_and_date_are_read(rules: RuleIntentParser) -> None:
    intent = await rules.parse(
        "Randomized controlled trials of SGLT2 inhibitors versus metformin on HbA1c in T2D "
        "since 2018, in English"
    )
    assert concept_terms(intent) == ["SGLT2 inhibitors", "metformin", "HbA1c", "type 2 diabetes"]
    assert "glycated hemoglobin" in synonyms_of(intent, "HbA1c")
    assert intent.pico is not None
    assert (intent.pico.intervention, intent.pico.comparison, intent.pico.outcome) == (
        "SGLT2 inhibitors",
        "metformin",
        "HbA1c",
    )
    assert intent.study_types == ["randomized controlled trial"]
    assert intent.languages == ["en"]
    assert (intent.date_from, intent.date_to) == (dt.date(2018, 1, 1), None)


@pytest.mark.parametrize(
    ("phrase", "date_from", "date_to"),
    [
        ("since 2018", dt.date(2018, 1, 1), None),
        ("between 2010 and 2015", dt.date(2010, 1, 1), dt.date(2015, 12, 31)),
        ("2010-2020", dt.date(2010, 1, 1), dt.date(2020, 12, 31)),
        ("in the last 5 years", dt.date(2020, 6, 15), TODAY),
        ("over the past decade", dt.date(2015, 6, 15), TODAY),
        ("before 2000", None, dt.date(1999, 12, 31)),
        ("published in 2021", dt.date(2021, 1, 1), dt.date(2021, 12, 31)),
    ],
)
async def test_date_phrases(
    rules: RuleIntentParser, phrase: str, date_from: dt.date | None, date_to: dt.date | None
) -> None:
    intent = await rules.parse(f"statins for stroke prevention {phrase}")
    assert (intent.date_from, intent.date_to) == (date_from, date_to)
    assert concept_terms(intent) == ["statins", "stroke prevention"]


async def test_last_years_count_from_the_injected_day() -> None:
    leap = RuleIntentParser(today=dt.date(2024, 2, 29))
    intent = await leap.parse("sepsis biomarkers in the last two years")
    assert (intent.date_from, intent.date_to) == (dt.date(2022, 2, 28), dt.date(2024, 2, 29))


async def test_study_types_languages_and_exclusions(rules: RuleIntentParser) -> None:
    intent = await rules.parse(
        "Systematic reviews and meta-analyses of exercise for depression in older adults, "
        "German-language or English, excluding animal studies"
    )
    assert intent.study_types == ["systematic review", "meta-analysis"]
    assert intent.languages == ["de", "en"]
    assert intent.exclude_terms == ["animal studies"]
    assert concept_terms(intent) == ["exercise", "depression", "older adults"]
    assert "physical activity" in synonyms_of(intent, "exercise")


async def test_not_in_a_population_is_an_exclusion(rules: RuleIntentParser) -> None:
    intent = await rules.parse("deep learning in medical imaging, not in children")
    assert intent.exclude_terms == ["children"]
    assert concept_terms(intent) == ["deep learning", "medical imaging"]
    assert intent.pico is None


async def test_a_machine_learning_question_has_no_pico(rules: RuleIntentParser) -> None:
    intent = await rules.parse("machine learning for protein structure prediction")
    assert intent.pico is None
    assert not intent.is_clinical
    assert concept_terms(intent) == ["machine learning", "protein structure prediction"]
    # "ML" is millilitres too: a two-letter abbreviation only when the question uses it.
    assert synonyms_of(intent, "machine learning") == []


async def test_abbreviations_defined_in_the_question_become_synonyms(
    rules: RuleIntentParser,
) -> None:
    intent = await rules.parse("chronic rhinosinusitis (CRS) after sinus surgery")
    assert concept_terms(intent) == ["chronic rhinosinusitis", "sinus surgery"]
    assert synonyms_of(intent, "chronic rhinosinusitis") == ["CRS"]
    table = await rules.parse("Is AI better than radiologists at detecting breast cancer?")
    assert concept_terms(table)[0] == "artificial intelligence"  # the table's abbreviation
    assert "AI" in synonyms_of(table, "artificial intelligence")


async def test_alternatives_joined_by_or_are_one_concept(rules: RuleIntentParser) -> None:
    intent = await rules.parse("metformin or sulfonylureas for T2DM")
    assert concept_terms(intent) == ["metformin", "type 2 diabetes"]
    assert synonyms_of(intent, "metformin") == ["sulfonylureas"]


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
async def test_an_empty_question_is_refused_with_a_hint(
    rules: RuleIntentParser, question: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        await rules.parse(question)
    assert caught.value.hint is not None
    assert "e.g." in caught.value.hint


async def test_a_question_of_filler_words_only_is_refused(rules: RuleIntentParser) -> None:
    with pytest.raises(InvalidInputError):
        await rules.parse("What are the latest papers?")


# --- LLM -----------------------------------------------------------------------------


def scripted(*answers: dict[str, Any], prompts: list[str] | None = None) -> ModelSkillLLM:
    """A FunctionModel answering each call with the next payload as structured output."""
    queue = list(answers)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if prompts is not None:
            request = messages[-1]
            assert isinstance(request, ModelRequest)
            prompts.extend(str(getattr(part, "content", "")) for part in request.parts)
        payload = queue.pop(0) if len(queue) > 1 else queue[0]
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, payload)])

    return ModelSkillLLM(FunctionModel(respond))


MODEL_INTENT: dict[str, Any] = {
    "topic": "Metformin and mortality in type 2 diabetes",
    "concepts": [
        {"term": "metformin", "synonyms": ["dimethylbiguanide"]},
        {"term": "type 2 diabetes", "synonyms": ["T2DM"]},
        {"term": "mortality", "synonyms": []},
    ],
    "pico": {
        "population": "adults with type 2 diabetes",
        "intervention": "metformin",
        "comparison": None,
        "outcome": "all-cause mortality",
    },
    "date_from": "2020-12-31",
    "date_to": "2015-01-01",
    "study_types": ["Randomised controlled trials"],
    "languages": ["English", "de", "Klingon"],
    "exclude_terms": ["children"],
}


STATED = (
    "Randomised controlled trials from 2015 to 2020, in English or German: does metformin "
    "reduce mortality in adults with type 2 diabetes, not in children?"
)


async def test_the_model_answer_is_used_and_repaired() -> None:
    prompts: list[str] = []
    parser = LLMIntentParser(scripted(MODEL_INTENT, prompts=prompts), today=TODAY)
    intent = await parser.parse(STATED)
    assert intent.question == STATED
    assert intent.topic == "Metformin and mortality in type 2 diabetes"
    assert concept_terms(intent) == ["metformin", "type 2 diabetes", "mortality"]
    assert synonyms_of(intent, "metformin") == ["dimethylbiguanide"]
    assert intent.pico is not None
    assert intent.pico.outcome == "all-cause mortality"
    # The reversed range is swapped, names become codes, study types canonical.
    assert (intent.date_from, intent.date_to) == (dt.date(2015, 1, 1), dt.date(2020, 12, 31))
    assert intent.languages == ["en", "de"]
    assert intent.study_types == ["randomized controlled trial"]
    assert intent.exclude_terms == ["children"]
    assert any("2025-06-15" in p and STATED in p for p in prompts)


async def test_limits_the_question_does_not_state_are_dropped() -> None:
    # A small model adds a period, study types, a language and an exclusion to a question
    # that asks for none of them; each would narrow the search, perhaps to nothing.
    parser = LLMIntentParser(scripted(MODEL_INTENT), today=TODAY)
    intent = await parser.parse(CLINICAL)
    assert concept_terms(intent) == ["metformin", "type 2 diabetes", "mortality"]
    assert (intent.date_from, intent.date_to) == (None, None)
    assert intent.study_types == []
    assert intent.languages == []
    assert intent.exclude_terms == []


async def test_a_period_that_starts_after_today_is_dropped() -> None:
    answer = {**MODEL_INTENT, "date_from": "2025-06-16", "date_to": None}
    parser = LLMIntentParser(scripted(answer), today=TODAY)
    intent = await parser.parse(f"{CLINICAL} Studies since 2025, please.")
    assert (intent.date_from, intent.date_to) == (None, None)


async def test_missing_concepts_and_empty_pico_are_filled_or_dropped() -> None:
    answer = {
        "topic": "",
        "concepts": [],
        "pico": {"population": None, "intervention": None, "comparison": None, "outcome": None},
    }
    parser = LLMIntentParser(scripted(answer), today=TODAY)
    intent = await parser.parse("machine learning for protein structure prediction")
    assert concept_terms(intent) == ["machine learning", "protein structure prediction"]
    assert intent.pico is None
    assert intent.topic == "Machine learning for protein structure prediction"


async def test_a_model_that_cannot_answer_leaves_the_question_to_the_rules() -> None:
    # Issue 22: an unusable answer no longer fails the search; the rule parser reads it.
    parser = LLMIntentParser(scripted({"concepts": "not a list"}), today=TODAY)
    assert await parser.parse(CLINICAL) == RuleIntentParser(today=TODAY).parse_now(CLINICAL)
    assert [f.skill for f in parser.fallbacks.items] == ["search.intent"]


async def test_a_question_the_rules_cannot_read_is_refused_even_when_the_model_fails() -> None:
    parser = LLMIntentParser(scripted({"concepts": "not a list"}), today=TODAY)
    with pytest.raises(InvalidInputError):
        await parser.parse("the of and")


async def test_the_llm_parser_refuses_an_empty_question_without_calling_the_model() -> None:
    calls: list[str] = []
    parser = LLMIntentParser(scripted(MODEL_INTENT, prompts=calls), today=TODAY)
    with pytest.raises(InvalidInputError):
        await parser.parse("  ")
    assert calls == []


def test_a_clinical_question_without_pico_phrasing_gets_pico_from_its_typed_slots() -> None:
    intent = RuleIntentParser(today=TODAY).parse_now(
        "dapagliflozin heart failure hospitalisation in older adults"
    )
    assert intent.pico is not None
    assert intent.pico.intervention == "dapagliflozin"
    assert intent.pico.population == "older adults with heart failure"
    assert intent.pico.outcome == "hospitalisation"
    # Not a clinical question: no PICO is invented.
    assert RuleIntentParser(today=TODAY).parse_now("graph neural networks").pico is None
