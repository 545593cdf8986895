"""Issue 22 in the core, without the engine: a synthesis that fails completes the research
without it ("Synthesis not available: <why>. Retry runs the synthesis again."), Retry from
there runs the synthesis again (``completed -> synthesizing``) and nothing else, and an
answer cut off at its length limit is kept and marked. The notice reads the same on the
CLI's report and the shareable page."""

from __future__ import annotations

import pytest
from lxml import html as lxml_html

from scholarstream.cli.research_views import report_markdown
from scholarstream.errors import ConflictError
from scholarstream.research import (
    NOTHING_TO_COMBINE,
    CardDisplay,
    LLMResultStatus,
    Research,
    ResearchStatus,
    build_synthesis_prompt,
    can_retry,
    card_display,
    record_call_started,
    record_call_succeeded,
    record_synthesis_failed,
    record_synthesis_succeeded,
    render_share_page,
    retry_research,
    synthesis_not_available,
    synthesis_notice,
    synthesis_retryable,
)
from tests.research.builders import ANTHROPIC, LATER, OPENAI, research, result, results

REASON = (
    "local:qwen did not answer within 300 s. The provider is slow or not responding: try "
    "again, or pick another model than local:qwen."
)


def _unavailable() -> Research:
    synthesizing = research("synthesizing", llm_results=results("completed", "completed"))
    return record_synthesis_failed(synthesizing, REASON, error_code="llm_error", now=LATER).research


def test_the_notice_says_why_and_that_retry_runs_it_again() -> None:
    subject = _unavailable()
    assert synthesis_not_available(subject)
    assert card_display(subject) is CardDisplay.REPORTS_WITHOUT_SYNTHESIS
    assert synthesis_notice(subject) == (
        "Synthesis not available: local:qwen did not answer within 300 s. The provider is "
        "slow or not responding: try again, or pick another model than local:qwen. Retry runs "
        "the synthesis again."
    )


def test_the_seeds_single_answer_notice_is_unchanged_and_offers_no_retry() -> None:
    single = research("completed", llm_results=results("completed"))
    assert synthesis_notice(single) == NOTHING_TO_COMBINE
    assert not synthesis_retryable(single) and not can_retry(single)
    synthesised = research(
        "completed", llm_results=results("completed", "completed"), synthesized_result="S"
    )
    assert synthesis_notice(synthesised) is None
    assert not synthesis_not_available(synthesised)


def test_retry_of_a_completed_research_without_synthesis_runs_only_the_synthesis() -> None:
    subject = record_synthesis_failed(
        research("synthesizing", llm_results=results("completed", "failed", "completed")),
        REASON,
        now=LATER,
    ).research
    assert subject.status == ResearchStatus.COMPLETED and can_retry(subject)

    outcome = retry_research(subject, now=LATER)

    assert outcome.action == "rerun_synthesis"
    again = outcome.research
    assert again.status == ResearchStatus.SYNTHESIZING
    assert again.synthesis_error is None and again.synthesis_retries == 1
    assert again.llm_results == subject.llm_results  # the failed model is not called again
    assert outcome.llm_calls == []
    assert [e.type for e in outcome.events] == ["research.synthesizing"]
    done = record_synthesis_succeeded(again, "S", now=LATER)
    assert done.research.status == ResearchStatus.COMPLETED
    assert [e.type for e in done.events] == ["research.completed"]


@pytest.mark.parametrize(
    "subject",
    [
        pytest.param(research("completed", llm_results=results("completed")), id="skipped"),
        pytest.param(
            research(
                "completed", llm_results=results("completed", "completed"), synthesized_result="S"
            ),
            id="synthesised",
        ),
    ],
)
def test_a_completed_research_with_nothing_failed_is_still_a_409(subject: Research) -> None:
    with pytest.raises(ConflictError) as caught:
        retry_research(subject, now=LATER)
    assert caught.value.http_status == 409


def test_an_answer_cut_off_at_its_length_limit_is_kept_marked_and_named_to_the_synthesis() -> None:
    subject = research(
        "processing", llm_results=[result(OPENAI, "pending"), result(ANTHROPIC, "completed")]
    )
    calling = record_call_started(subject, OPENAI, 1, now=LATER).research
    change = record_call_succeeded(calling, OPENAI, 1, "Half an ans", cut_off=True, now=LATER)
    cut = change.research.result_for(OPENAI)
    assert cut is not None
    assert (cut.status, cut.content, cut.cut_off) == (
        LLMResultStatus.COMPLETED,
        "Half an ans",
        True,
    )
    # Recording it again changes nothing (a repeated durable step).
    assert (
        record_call_succeeded(
            change.research, OPENAI, 1, "Half an ans", cut_off=True, now=LATER
        ).events
        == []
    )
    synthesizing = change.research.model_copy(update={"status": ResearchStatus.SYNTHESIZING})
    prompt = build_synthesis_prompt(synthesizing).user_prompt
    assert f"answer of model {OPENAI} (cut off at its length limit" in prompt
    assert f"answer of model {ANTHROPIC}\n" in prompt


def test_the_cli_report_the_share_page_and_the_notification_say_it_once() -> None:
    subject = _unavailable()
    notice = synthesis_notice(subject)
    assert notice is not None

    report = report_markdown(subject)
    assert report.count("Synthesis not available") == 1
    assert f"*{notice}*" in report
    assert "## Synthesis\n" not in report

    page = lxml_html.document_fromstring(render_share_page(subject))
    section = page.xpath("string(//section[@class='synthesis'])")
    assert isinstance(section, str)
    assert notice in " ".join(section.split())
    # The owner's notification says it too (test_share.py, through the engine).


def test_cut_off_answers_are_marked_on_the_cli_report_and_the_share_page() -> None:
    cut = result(OPENAI, "completed").model_copy(update={"cut_off": True})
    subject = research(
        "completed",
        llm_results=[cut, result(ANTHROPIC, "completed")],
        synthesized_result="S",
        synthesis_cut_off=True,
    )
    report = report_markdown(subject)
    assert report.count("Cut off: this answer reached its length limit") == 2
    page = render_share_page(subject)
    assert page.count("Cut off: this answer reached its length limit") == 1
    assert "The synthesis was cut off" in page
