"""The transitions nobody asks for, applied after a change: completion detection, then the
synthesis skip logic, until one of them changes nothing."""

from __future__ import annotations

from scholarstream.research import (
    ConfirmAction,
    ResearchStatus,
    confirm,
    record_call_failed,
    record_call_succeeded,
)
from scholarstream.research.core import AUTOMATIC_STEPS, advance
from tests.research.builders import ANTHROPIC, OPENAI, T0, research, result


def test_only_processing_and_synthesizing_have_automatic_steps() -> None:
    assert set(AUTOMATIC_STEPS) == {ResearchStatus.PROCESSING, ResearchStatus.SYNTHESIZING}


def test_a_result_with_models_still_running_waits() -> None:
    calling = research(
        ResearchStatus.PROCESSING,
        llm_results=[result(OPENAI, "processing"), result(ANTHROPIC, "processing")],
    )
    recorded = record_call_succeeded(calling, OPENAI, 1, "A", now=T0)
    assert advance(recorded, now=T0) == recorded


def test_the_last_answer_moves_on_to_a_synthesis_that_must_run() -> None:
    calling = research(
        ResearchStatus.PROCESSING,
        llm_results=[result(OPENAI, "completed"), result(ANTHROPIC, "processing")],
    )
    change = advance(record_call_succeeded(calling, ANTHROPIC, 1, "B", now=T0), now=T0)
    assert change.research.status == ResearchStatus.SYNTHESIZING
    assert [e.type for e in change.events] == ["research.llm_completed", "research.synthesizing"]


def test_a_skipped_synthesis_completes_in_the_same_change() -> None:
    single = research(ResearchStatus.PROCESSING, llm_results=[result(OPENAI, "processing")])
    change = advance(record_call_succeeded(single, OPENAI, 1, "A", now=T0), now=T0)
    assert change.research.status == ResearchStatus.COMPLETED
    assert [e.type for e in change.events] == [
        "research.llm_completed",
        "research.synthesizing",
        "research.completed",
    ]


def test_a_last_failure_asks_the_user_and_proceeding_with_one_answer_completes() -> None:
    calling = research(
        ResearchStatus.PROCESSING,
        llm_results=[result(OPENAI, "completed"), result(ANTHROPIC, "processing")],
    )
    waiting = advance(record_call_failed(calling, ANTHROPIC, 1, "HTTP 500", now=T0), now=T0)
    assert waiting.research.status == ResearchStatus.AWAITING_CONFIRMATION
    proceeded = advance(confirm(waiting.research, ConfirmAction.PROCEED, now=T0), now=T0)
    assert proceeded.research.status == ResearchStatus.COMPLETED
    assert proceeded.research.synthesized_result is None
