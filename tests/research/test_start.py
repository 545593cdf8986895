"""Starting a research: the seed's validation (at least one model, a key for each) and
its four actions."""

from __future__ import annotations

import pytest

from scholarstream.errors import ConflictError, InvalidInputError, MissingCredentialsError
from scholarstream.research import (
    LLMCallEvent,
    LLMResult,
    ResearchStarted,
    ResearchStatus,
    check_can_start,
    start_research,
)
from tests.research.builders import ANTHROPIC, GOOGLE, LATER, OPENAI, RESEARCH_ID, research


def test_starting_sets_processing_started_at_pending_results_and_one_call_per_model() -> None:
    draft = research("draft", selected=[OPENAI, ANTHROPIC])
    change = start_research(draft, has_credentials=lambda model: True, now=LATER)
    started = change.research
    assert started.status == ResearchStatus.PROCESSING
    assert started.started_at == LATER
    assert started.llm_results == [LLMResult(model=OPENAI), LLMResult(model=ANTHROPIC)]
    assert change.llm_calls == [
        LLMCallEvent(research_id=RESEARCH_ID, model=OPENAI, attempt=1),
        LLMCallEvent(research_id=RESEARCH_ID, model=ANTHROPIC, attempt=1),
    ]
    [event] = change.events
    assert isinstance(event, ResearchStarted)
    assert event.models == [OPENAI, ANTHROPIC]


def test_at_least_one_model_must_be_selected() -> None:
    with pytest.raises(InvalidInputError) as caught:
        check_can_start(research("draft", selected=[]), lambda model: True)
    assert "at least one model" in caught.value.message


def test_every_model_without_a_key_is_named_with_how_to_add_one() -> None:
    draft = research("draft", selected=[OPENAI, ANTHROPIC, GOOGLE])
    with pytest.raises(MissingCredentialsError) as caught:
        start_research(draft, has_credentials=lambda model: model == GOOGLE, now=LATER)
    assert caught.value.message == f"No API key for {OPENAI}, {ANTHROPIC}."
    assert caught.value.hint is not None
    assert "Add your key for anthropic, openai under Settings → Your API keys" in caught.value.hint
    assert "SCHOLARSTREAM_LLM__PROVIDERS__<PROVIDER>__API_KEY" in caught.value.hint


def test_the_synthesis_model_needs_a_key_when_a_synthesis_can_run() -> None:
    draft = research("draft", selected=[OPENAI, ANTHROPIC])  # synthesis model: GOOGLE
    with pytest.raises(MissingCredentialsError) as caught:
        check_can_start(draft, lambda model: model != GOOGLE)
    assert GOOGLE in caught.value.message


def test_a_single_model_without_reports_never_synthesises_so_needs_no_synthesis_key() -> None:
    draft = research("draft", selected=[OPENAI])
    check_can_start(draft, lambda model: model == OPENAI)


def test_external_reports_make_the_synthesis_key_necessary() -> None:
    draft = research("draft", selected=[OPENAI], external_reports=1)
    with pytest.raises(MissingCredentialsError):
        check_can_start(draft, lambda model: model == OPENAI)


def test_a_synthesis_model_must_be_chosen_when_a_synthesis_can_run() -> None:
    draft = research("draft", selected=[OPENAI, ANTHROPIC], synthesis_llm=None)
    with pytest.raises(InvalidInputError) as caught:
        check_can_start(draft, lambda model: True)
    assert "synthesis model" in caught.value.message


@pytest.mark.parametrize(
    "status", [s for s in ResearchStatus if s != ResearchStatus.DRAFT], ids=str
)
def test_only_a_draft_starts(status: ResearchStatus) -> None:
    with pytest.raises(ConflictError):
        start_research(research(status), has_credentials=lambda model: True)
