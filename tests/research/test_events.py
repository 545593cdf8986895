"""The lifecycle events and the llm.call message: names, camelCase JSON, round trips."""

from __future__ import annotations

import json

from scholarstream.research import (
    FailureReason,
    LLMCallEvent,
    ResearchCompleted,
    ResearchFailed,
    ResearchShared,
    ShareInfo,
    UserAction,
    attach_share_info,
    research_event_adapter,
)
from tests.research.builders import LATER, OPENAI, RESEARCH_ID, research, results

EVENT_TYPES = {
    "research.started",
    "research.llm_completed",
    "research.llm_failed",
    "research.awaiting_confirmation",
    "research.retrying",
    "research.synthesizing",
    "research.completed",
    "research.failed",
    "research.shared",
}


def test_the_llm_call_event_is_named_as_in_the_seed() -> None:
    call = LLMCallEvent(research_id=RESEARCH_ID, model=OPENAI, attempt=1)
    assert json.loads(call.model_dump_json()) == {
        "type": "llm.call",
        "researchId": str(RESEARCH_ID),
        "model": OPENAI,
        "attempt": 1,
    }


def test_every_lifecycle_event_type_parses_by_its_name() -> None:
    schema = research_event_adapter.json_schema()
    mapping = schema["discriminator"]["mapping"]
    assert set(mapping) == EVENT_TYPES


def test_an_event_round_trips_through_camel_case_json() -> None:
    event = ResearchFailed(
        research_id=RESEARCH_ID,
        occurred_at=LATER,
        reason=FailureReason.CANCELLED_BY_USER,
        error="Cancelled by user",
        user_action=UserAction.CREATE_NEW_RESEARCH,
    )
    data = json.loads(event.model_dump_json())
    assert data["type"] == "research.failed"
    assert data["userAction"] == "create_new_research"
    assert data["occurredAt"] == "2024-01-01T10:05:00Z"
    assert research_event_adapter.validate_python(data) == event


def test_the_research_record_emits_the_seeds_field_names() -> None:
    data = json.loads(research("processing", llm_results=results("completed")).model_dump_json())
    for name in (
        "selectedLlms",
        "synthesisLlm",
        "externalReports",
        "llmResults",
        "partialFailure",
        "synthesizedResult",
        "synthesisError",
        "shareInfo",
        "startedAt",
    ):
        assert name in data


def test_sharing_a_completed_research_keeps_share_info_and_announces_the_url() -> None:
    completed = research("completed", llm_results=results("completed"))
    info = ShareInfo(
        share_url="https://example.org/r/abc.html",
        storage_url="file:///data/share/abc.html",
        created_at=LATER,
    )
    change = attach_share_info(completed, info, now=LATER)
    assert change.research.share_info == info
    assert change.events == [
        ResearchShared(research_id=RESEARCH_ID, occurred_at=LATER, share_url=info.share_url)
    ]
    assert not any(isinstance(e, ResearchCompleted) for e in change.events)
