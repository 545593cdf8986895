"""The research page's status mapping in JavaScript (static/research/status.js) against the
Python one (research.display, research.retry, research.failures, web.pages): the module is
loaded in Chromium and asked about the same research records, one per status and one per
way of failing, so the two cannot drift apart."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

from scholarstream.research import (
    RETRY_FROM_FAILED,
    CardDisplay,
    ConfirmAction,
    FailureReason,
    Research,
    ResearchStatus,
    apply_completion,
    card_display,
    confirm,
    error_summary,
    record_synthesis_failed,
    retry_action,
    retry_research,
    synthesis_not_available,
    synthesis_notice,
    synthesis_retryable,
)
from scholarstream.web import RESEARCH_STATUS_LABELS
from tests.research.builders import LATER, OPENAI, research, result, results

MODULE = "/static/app/research/status.js"


def _failed(**fields: Any) -> Research:
    return research("failed", error="It failed", **fields)


CASES: dict[str, Research] = {
    "draft": research("draft"),
    "processing": research("processing", llm_results=results("pending", "completed")),
    "synthesizing": research("synthesizing", llm_results=results("completed", "completed")),
    "retrying": research("retrying", llm_results=results("completed", "pending"), retry_count=1),
    "awaiting confirmation": research(
        "awaiting_confirmation", llm_results=results("completed", "failed"), retry_count=0
    ),
    "completed with a synthesis": research(
        "completed", llm_results=results("completed", "completed"), synthesized_result="S"
    ),
    "completed, one model": research("completed", llm_results=results("completed")),
    "completed, one model and a report": research(
        "completed", llm_results=results("completed"), external_reports=1
    ),
    "completed, one answer and one failure": research(
        "completed", llm_results=results("completed", "failed")
    ),
    "all models failed": apply_completion(
        research("processing", llm_results=results("failed", "failed"))
    ).research,
    "all failed, no retry left": _failed(
        llm_results=results("failed", "failed"),
        retry_count=2,
        failure_reason=FailureReason.ALL_LLMS_FAILED,
    ),
    "all failed, no retry left, a report": _failed(
        llm_results=results("failed"),
        retry_count=2,
        external_reports=2,
        failure_reason=FailureReason.ALL_LLMS_FAILED,
    ),
    "max retries, nothing answered": retry_research(
        _failed(
            llm_results=results("failed", "failed"),
            retry_count=2,
            failure_reason=FailureReason.ALL_LLMS_FAILED,
        ),
        now=LATER,
    ).research,
    "max retries with answers": confirm(
        research(
            "awaiting_confirmation", llm_results=results("completed", "failed"), retry_count=2
        ),
        ConfirmAction.RETRY,
        now=LATER,
    ).research,
    # Issue 22: completed without it, "Synthesis not available: <why>", Retry runs it.
    "synthesis failed": record_synthesis_failed(
        research("synthesizing", llm_results=results("completed", "completed")),
        "google answered HTTP 503. Try again shortly.",
    ).research,
    **{
        f"synthesis failed and a model failed, retry {count}": _failed(
            llm_results=results("completed", "failed", "completed"),
            retry_count=count,
            synthesis_error="HTTP 503",
            failure_reason=FailureReason.SYNTHESIS_FAILED,
        )
        for count in (0, 1, 2)
    },
    "api key invalid": apply_completion(
        research(
            "processing",
            llm_results=[result(OPENAI, "failed", error_code="api_key_invalid")],
        )
    ).research,
    "cancelled by user": confirm(
        research(
            "awaiting_confirmation", llm_results=results("completed", "failed"), retry_count=0
        ),
        ConfirmAction.CANCEL,
    ).research,
    "nothing to retry": _failed(
        llm_results=results("completed"), failure_reason=FailureReason.SYNTHESIS_FAILED
    ),
}


def _python(subject: Research) -> dict[str, Any]:
    summary = error_summary(subject)
    failed = subject.status == ResearchStatus.FAILED
    return {
        "label": RESEARCH_STATUS_LABELS[subject.status],
        "card": card_display(subject).value,
        "notAvailable": synthesis_not_available(subject),
        "notice": synthesis_notice(subject),
        "synthesisRetryable": synthesis_retryable(subject),
        "retry": retry_action(subject) if failed else None,
        "userAction": summary.user_action.value if summary else None,
    }


_ASK = """async ([module, cases]) => {
  const m = await import(module);
  return {
    statuses: m.STATUSES,
    labels: Object.keys(m.STATUS_LABELS),
    cards: Object.keys(m.CARD_DISPLAY),
    retryRows: m.RETRY_FROM_FAILED.map((row) => [row.condition, row.action]),
    answers: Object.fromEntries(Object.entries(cases).map(([name, r]) => [name, {
      label: m.STATUS_LABELS[r.status],
      card: m.cardDisplay(r),
      notAvailable: m.synthesisNotAvailable(r),
      notice: m.synthesisNotice(r),
      synthesisRetryable: m.synthesisRetryable(r),
      retry: r.status === "failed" ? m.retryAction(r) : null,
      userAction: m.userAction(r)?.action ?? null,
    }])),
  };
}"""


def test_the_js_status_mapping_matches_the_python_one(static_page: Page) -> None:
    cases = {name: subject.model_dump(mode="json") for name, subject in CASES.items()}
    found = static_page.evaluate(_ASK, [MODULE, cases])

    statuses = [status.value for status in ResearchStatus]
    assert found["statuses"] == statuses
    assert sorted(found["labels"]) == sorted(statuses)
    assert sorted(found["cards"]) == sorted(statuses)
    assert found["retryRows"] == [[row.condition, row.action] for row in RETRY_FROM_FAILED]
    expected = {name: _python(subject) for name, subject in CASES.items()}
    assert found["answers"] == expected


def test_the_cases_cover_every_status_card_failure_and_retry() -> None:
    # So that a status, card, failure reason or retry row added on the Python side must be
    # added to the cases above, and so compared with the JavaScript.
    answers = [_python(subject) for subject in CASES.values()]
    assert {subject.status for subject in CASES.values()} == set(ResearchStatus)
    assert {a["card"] for a in answers} == {card.value for card in CardDisplay}
    assert {s.failure_reason for s in CASES.values()} - {None} == set(FailureReason)
    assert {a["retry"] for a in answers} - {None} == {row.action for row in RETRY_FROM_FAILED}
    assert {a["notAvailable"] for a in answers} == {True, False}
    assert {a["synthesisRetryable"] for a in answers} == {True, False}
