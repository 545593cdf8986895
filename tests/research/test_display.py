"""The seed's status -> card display table and its "Synthesis not available" condition."""

from __future__ import annotations

import pytest

from scholarstream.research import CardDisplay, Research, card_display, synthesis_not_available
from tests.research.builders import research, results

CARDS = [
    pytest.param(research("draft"), CardDisplay.EDIT_FORM, id="draft -> edit form"),
    pytest.param(
        research("processing", llm_results=results("pending", "completed")),
        CardDisplay.PROGRESS_PER_LLM,
        id="processing -> progress indicator per LLM",
    ),
    pytest.param(
        research("synthesizing"), CardDisplay.SYNTHESIZING, id="synthesizing -> Synthesizing..."
    ),
    pytest.param(research("retrying"), CardDisplay.RETRYING, id="retrying -> Retrying failed..."),
    pytest.param(
        research("awaiting_confirmation"),
        CardDisplay.CONFIRMATION_DIALOG,
        id="awaiting_confirmation -> Proceed/Retry/Cancel dialog",
    ),
    pytest.param(
        research(
            "completed", llm_results=results("completed", "completed"), synthesized_result="S"
        ),
        CardDisplay.SYNTHESIS_AND_REPORTS,
        id="completed (with synthesis) -> synthesis + individual reports",
    ),
    pytest.param(
        research("completed", llm_results=results("completed")),
        CardDisplay.REPORTS_WITHOUT_SYNTHESIS,
        id="completed (no synthesis) -> Synthesis not available + report",
    ),
    pytest.param(research("failed"), CardDisplay.ERROR_WITH_RETRY, id="failed -> error + Retry"),
]


@pytest.mark.parametrize(("subject", "card"), CARDS)
def test_the_card_display(subject: Research, card: CardDisplay) -> None:
    assert card_display(subject) == card


NOT_AVAILABLE = [
    pytest.param(research("completed", llm_results=results("completed")), True, id="one model"),
    pytest.param(
        research("completed", llm_results=results("completed", "failed")),
        True,
        id="one model succeeded, one failed",
    ),
    pytest.param(
        research("completed", llm_results=results("completed"), synthesized_result="S"),
        False,
        id="synthesized",
    ),
    pytest.param(
        research("completed", llm_results=results("completed", "completed")),
        False,
        id="two successful models",
    ),
    pytest.param(
        research("completed", llm_results=results("completed"), external_reports=1),
        False,
        id="external reports (the seed's inputContexts)",
    ),
    pytest.param(
        research("synthesizing", llm_results=results("completed")), False, id="not completed"
    ),
]


@pytest.mark.parametrize(("subject", "shown"), NOT_AVAILABLE)
def test_synthesis_not_available(subject: Research, shown: bool) -> None:
    assert synthesis_not_available(subject) is shown
