"""The stream configuration: enums as the seed defines them, field validation with clear
messages, the finished configuration, its derived retrieval configuration, and a
session that survives a JSON round trip."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from scholarstream.errors import InvalidInputError
from scholarstream.search.query import syntax_sources
from scholarstream.streams import (
    CreationSession,
    PartialStreamConfig,
    ReportFrequency,
    RetrievalConfig,
    StreamType,
    WorkflowStep,
    build_retrieval_config,
    field_specs,
    finish_config,
    new_session,
    parse_field_value,
)
from tests.streams.script import FULL_CONFIG


def test_enums_are_the_seeds() -> None:
    assert [t.value for t in StreamType] == [
        "competitive",
        "regulatory",
        "clinical",
        "market",
        "scientific",
        "mixed",
    ]
    assert [f.value for f in ReportFrequency] == ["daily", "weekly", "biweekly", "monthly"]
    # The seed's names and values for the model, then the words the user sees for them.
    assert [s.describe() for s in field_specs()] == [
        'purpose (text; shown as "purpose")',
        'business_goals (list; shown as "goals")',
        'expected_outcomes (text; shown as "expected outcomes")',
        'stream_name (text; shown as "stream name")',
        "stream_type (single-select: competitive, regulatory, clinical, market, scientific, "
        'mixed; shown as "stream type"; competitive as "Organisations and competitors", '
        'regulatory as "Regulation and policy", clinical as "Clinical research", market as '
        '"Market and products", scientific as "Scientific research", mixed as "A mix of '
        'these")',
        'focus_areas (list; shown as "focus areas")',
        'keywords (list; shown as "keywords")',
        'competitors (list, optional; shown as "organisations")',
        "report_frequency (single-select: daily, weekly, biweekly, monthly; shown as "
        '"report frequency"; daily as "Daily", weekly as "Weekly", biweekly as "Every two '
        'weeks", monthly as "Monthly")',
    ]


def test_values_are_cleaned() -> None:
    config = PartialStreamConfig.model_validate(
        {
            "purpose": "  Follow GLP-1 agonists  ",
            "keywords": [" semaglutide ", "Semaglutide", "", "tirzepatide"],
        }
    )
    assert config.purpose == "Follow GLP-1 agonists"
    assert config.keywords == ["semaglutide", "tirzepatide"]


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("stream_type", "banana", "'banana' is not a stream type"),
        ("report_frequency", "hourly", "Choose one of: daily, weekly, biweekly, monthly"),
        ("purpose", "   ", "Invalid purpose: must not be empty"),
        ("keywords", [], "Invalid keywords: must have at least one item"),
        ("keywords", 5, "The keywords must be a list of values, not a number"),
        ("stream_name", "x" * 121, "longer than 120 characters"),
        ("colour", "blue", "There is no stream field 'colour'"),
    ],
)
def test_bad_values_are_refused_with_a_clear_message(
    name: str, value: object, expected: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_field_value(name, value)
    assert expected in str(caught.value)


def test_choices_ignore_case_and_text_splits_into_lists_when_asked() -> None:
    assert parse_field_value("stream_type", " Competitive ") == "competitive"
    assert parse_field_value("keywords", "a; b, c|d", split_text=True) == ["a", "b", "c", "d"]
    with pytest.raises(InvalidInputError):
        parse_field_value("keywords", "a, b")


def test_finish_config_names_the_missing_fields_and_derives_the_rest() -> None:
    partial = PartialStreamConfig.model_validate({"purpose": "Follow GLP-1 agonists"})
    with pytest.raises(InvalidInputError) as caught:
        finish_config(partial)
    assert "business_goals, expected_outcomes, stream_name" in caught.value.message
    assert "competitors" not in caught.value.message

    without_competitors = {k: v for k, v in FULL_CONFIG.items() if k != "competitors"}
    stream = finish_config(PartialStreamConfig.model_validate(without_competitors))
    assert stream.competitors == []
    assert stream.stream_type is StreamType.COMPETITIVE
    assert "Palatin Pipeline Tracker" in stream.chat_instructions
    assert set(stream.retrieval.queries) == set(syntax_sources())

    own = finish_config(
        PartialStreamConfig.model_validate({**FULL_CONFIG, "chat_instructions": "Be brief."})
    )
    assert own.chat_instructions == "Be brief."


def test_retrieval_is_derived_deterministically_per_source() -> None:
    def build() -> RetrievalConfig:
        return build_retrieval_config(
            keywords=["bremelanotide", "melanocortin receptor"],
            focus_areas=["Obesity", "Sexual dysfunction"],
            competitors=["Palatin Technologies"],
            follow_organisations=True,
        )

    retrieval = build()
    assert retrieval == build()
    pubmed = retrieval.queries["pubmed"]
    assert pubmed.query == (
        '("bremelanotide"[tiab] OR "melanocortin receptor"[tiab] OR '
        '"Palatin Technologies"[tiab]) AND ("Obesity"[tiab] OR "Sexual dysfunction"[tiab])'
    )
    trials = retrieval.queries["clinicaltrials"]
    assert trials.filters == {"condition": 'Obesity OR "Sexual dysfunction"'}
    strategy = retrieval.strategy()
    assert strategy.sources == sorted(syntax_sources())
    assert strategy.query_for("pubmed") is not None


def test_organisations_join_the_topic_only_of_a_stream_that_follows_them() -> None:
    """An organisation (the user's affiliation, say) is never a topic term of a stream
    about a subject: every source's query is the keywords and focus areas alone."""
    plain = build_retrieval_config(keywords=["syringomyelia"], focus_areas=["spaniels"])
    named = build_retrieval_config(
        keywords=["syringomyelia"],
        focus_areas=["spaniels"],
        competitors=["Royal Veterinary College"],
    )
    assert named == plain
    assert named.queries["library"].query == "syringomyelia spaniels"
    scientific = finish_config(
        PartialStreamConfig.model_validate({**FULL_CONFIG, "stream_type": "scientific"})
    )
    assert all("Palatin" not in q.query for q in scientific.retrieval.queries.values())
    assert scientific.topic_terms() == scientific.keywords
    competitive = finish_config(
        PartialStreamConfig.model_validate({**FULL_CONFIG, "stream_type": "competitive"})
    )
    assert "Palatin" in competitive.retrieval.queries["pubmed"].query
    assert competitive.topic_terms()[-1] == "Palatin Technologies"


def test_retrieval_is_editable_and_checked() -> None:
    retrieval = build_retrieval_config(keywords=["semaglutide"], sources=["pubmed", "arxiv"])
    edited = retrieval.model_copy(deep=True)
    edited.queries["arxiv"].enabled = False
    edited.queries["pubmed"].query = "semaglutide[tiab] AND obesity[tiab]"
    assert RetrievalConfig.model_validate(edited.model_dump()).strategy().sources == ["pubmed"]
    edited.queries["pubmed"].enabled = False
    with pytest.raises(InvalidInputError, match="disabled"):
        edited.strategy()
    with pytest.raises(ValidationError, match="unknown source 'nowhere'"):
        RetrievalConfig.model_validate({"queries": {"nowhere": {"query": "x"}}})
    with pytest.raises(InvalidInputError, match="keyword"):
        build_retrieval_config(keywords=[])


def test_a_session_is_plain_json() -> None:
    session = new_session().model_copy(
        update={
            "current_step": WorkflowStep.REPORT_FREQUENCY,
            "config": PartialStreamConfig.model_validate(FULL_CONFIG),
            "skipped_steps": [WorkflowStep.COMPETITORS],
        }
    )
    again = CreationSession.model_validate_json(session.model_dump_json())
    assert again == session
    assert again.completed_steps[-1] is WorkflowStep.REPORT_FREQUENCY
    with pytest.raises(ValidationError, match="not an optional step"):
        CreationSession.model_validate({"skipped_steps": ["purpose"]})
