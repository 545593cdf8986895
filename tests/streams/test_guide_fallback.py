"""The guide never breaks a creation turn: a model answer that is unusable (malformed JSON
twice, a tool call written as text), late (past the deadline) or failed (an HTTP error)
is replaced, for that turn only, by the rule-based guide's answer; the turn's result and
its stored message carry one plain-words fallback record, and the next turn asks the
model again."""

from __future__ import annotations

import re
import time
import uuid

import pytest

from scholarstream.llm import ResolvedModel
from scholarstream.settings import DEFAULT_MAX_TOKENS, Settings
from scholarstream.streams import (
    CreationSession,
    FallbackGuide,
    GuideTurnResult,
    ModelGuide,
    RuleGuide,
    creation_guide,
)
from tests.helpers import make_runtime
from tests.search.broken_models import broken_model, slow_model
from tests.streams.script import GuideScript, Malformed, answer, run_turn

INTERNALS = re.compile(r"Error\b|Exception|pydantic|Traceback|final_result|retries", re.I)


def guide_of(model: object, *, deadline: float = 300.0) -> FallbackGuide:
    resolved = ResolvedModel("default", "test:local", "test", model, "none")  # type: ignore[arg-type]
    return FallbackGuide(ModelGuide(resolved), deadline_seconds=deadline)


async def offline_result(message: str) -> GuideTurnResult:
    return (await run_turn(CreationSession(), message, None, RuleGuide())).result


@pytest.mark.parametrize("kind", ["text_tool_call", "http_error"])
async def test_a_turn_the_model_cannot_answer_is_answered_offline(kind: str) -> None:
    turn = await run_turn(
        CreationSession(), "I want to monitor Palatin", None, guide_of(broken_model(kind))
    )
    result = turn.result
    offline = await offline_result("I want to monitor Palatin")
    assert result.message == offline.message
    assert result.updated_config == offline.updated_config
    assert result.fallback is not None
    assert result.fallback.skill == "stream_guide"
    assert result.fallback.reason == ("failed" if kind == "http_error" else "unusable")
    assert "the offline guide answered this turn" in result.fallback.message
    assert not INTERNALS.search(result.fallback.message)
    stored = result.session.history[-1]
    assert stored.role == "assistant" and stored.fallback == result.fallback


async def test_text_already_shown_is_voided_with_the_notice() -> None:
    script = GuideScript(
        Malformed('{"mode": "question", "message": "Hello th'),
        Malformed('{"mode": "question", "message": "Hello th'),
    )
    guide = FallbackGuide(script.guide())
    turn = await run_turn(CreationSession(), "hi", None, guide)
    assert turn.result.fallback is not None
    notice = turn.retries[-1]
    assert notice.reason == turn.result.fallback.message
    after = turn.events[turn.events.index(notice) + 1 :]
    assert "".join(e.text for e in after if e.type == "text_delta") == turn.result.message


async def test_a_model_past_the_deadline_is_cancelled_and_answered_offline() -> None:
    started = time.monotonic()
    turn = await run_turn(CreationSession(), "hi", None, guide_of(slow_model(30), deadline=0.2))
    assert time.monotonic() - started < 5
    assert turn.result.fallback is not None
    assert turn.result.fallback.reason == "late"
    assert turn.result.fallback.message.startswith("The model did not answer in time")


async def test_the_next_turn_asks_the_model_again_and_a_good_answer_records_nothing() -> None:
    script = GuideScript(
        Malformed("{"),
        Malformed("{"),
        answer("What aspects of Palatin should we watch?", next_step="exploration"),
    )
    guide = FallbackGuide(script.guide())
    first = await run_turn(CreationSession(), "Palatin", None, guide)
    assert first.result.fallback is not None
    second = await run_turn(first.session, "its pipeline", None, guide)
    assert second.result.message == "What aspects of Palatin should we watch?"
    assert second.result.fallback is None
    assert second.session.history[-1].fallback is None


async def test_the_api_guide_falls_back(settings: Settings) -> None:
    runtime = make_runtime(settings, {"default": broken_model("http_error")})
    try:
        guide = await creation_guide(
            runtime.database, runtime.models, runtime.settings, uuid.uuid4()
        )
        assert isinstance(guide, FallbackGuide)
        assert isinstance(guide.model, ModelGuide)
        assert guide.model.max_tokens == DEFAULT_MAX_TOKENS["stream_guide"]
        turn = await run_turn(CreationSession(), "Track Palatin", None, guide)
        assert turn.result.fallback is not None
    finally:
        await runtime.close()
