"""Research records in any state, built through the public models."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from scholarstream.research import (
    ExternalReport,
    LLMResult,
    LLMResultStatus,
    PartialFailure,
    Research,
    ResearchStatus,
)

T0 = datetime(2024, 1, 1, 10, 0, tzinfo=UTC)
LATER = T0 + timedelta(minutes=5)

OPENAI = "openai:gpt-4.1-mini"
ANTHROPIC = "anthropic:claude-sonnet-4-5"
GOOGLE = "google-gla:gemini-2.5-flash"
MODELS = (OPENAI, ANTHROPIC, GOOGLE)

RESEARCH_ID = uuid.UUID("00000000-0000-4000-8000-000000000001")


def result(
    model: str, status: str, *, attempt: int = 1, error_code: str | None = None
) -> LLMResult:
    s = LLMResultStatus(status)
    return LLMResult(
        model=model,
        status=s,
        attempt=attempt,
        content=f"Answer of {model}" if s == LLMResultStatus.COMPLETED else None,
        error=f"{model} answered HTTP 500." if s == LLMResultStatus.FAILED else None,
        error_code=error_code if error_code else ("llm_error" if s == "failed" else None),
        started_at=T0 if s != LLMResultStatus.PENDING else None,
        completed_at=T0 if s in (LLMResultStatus.COMPLETED, LLMResultStatus.FAILED) else None,
    )


def results(*statuses: str) -> list[LLMResult]:
    """One result per status, on the models of ``MODELS`` and then made-up ones."""
    models = [*MODELS, *(f"ollama:model-{i}" for i in range(len(statuses)))]
    return [result(model, status) for model, status in zip(models, statuses, strict=False)]


def reports(count: int) -> list[ExternalReport]:
    return [
        ExternalReport(title=f"Report {i}", content=f"Findings of report {i}.")
        for i in range(1, count + 1)
    ]


def research(
    status: ResearchStatus | str = ResearchStatus.DRAFT,
    *,
    llm_results: Sequence[LLMResult] = (),
    selected: Sequence[str] | None = None,
    external_reports: int | Sequence[ExternalReport] = 0,
    retry_count: int | None = None,
    synthesis_error: str | None = None,
    error: str | None = None,
    synthesized_result: str | None = None,
    **fields: object,
) -> Research:
    chosen = list(selected) if selected is not None else [r.model for r in llm_results] or [OPENAI]
    partial = (
        PartialFailure(
            failed_providers=[r.model for r in llm_results if r.status == "failed"],
            detected_at=T0,
            retry_count=retry_count,
        )
        if retry_count is not None
        else None
    )
    return Research.model_validate(
        {
            "id": RESEARCH_ID,
            "title": "GLP-1 agonists in adolescents",
            "prompt": "Compare GLP-1 agonists for weight loss in adolescents.",
            "selected_llms": chosen,
            "synthesis_llm": GOOGLE,
            "external_reports": (
                reports(external_reports)
                if isinstance(external_reports, int)
                else list(external_reports)
            ),
            "status": ResearchStatus(status),
            "llm_results": list(llm_results),
            "partial_failure": partial,
            "synthesis_error": synthesis_error,
            "error": error,
            "synthesized_result": synthesized_result,
            "created_at": T0,
            "updated_at": T0,
            "started_at": None if status == "draft" else T0,
            **fields,
        }
    )
