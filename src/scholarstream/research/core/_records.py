"""The research record and its parts, with every field of seed 001.

Python names are snake_case; the API, the events and stored JSON use the seed's
camelCase (``selectedLlms``, ``llmResults``, ``partialFailure``, ``synthesizedResult``,
``synthesisError``, ``shareInfo`` ...), see ``_base.CamelModel``.

One deliberate mapping: the seed selects *providers* (``'openai'``, ``'google'``);
ScholarStream selects *models* by model string (``'openai:gpt-4.1-mini'``), so a user
can compare two models of one provider. Wherever the seed lists providers
(``selectedLlms``, ``synthesisLlm``, ``partialFailure.failedProviders``) the entries are
model strings; ``LLMResult.provider`` gives the provider part.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, computed_field, field_validator

from scholarstream.grounding.core import CitationAudit, EvidencePack
from scholarstream.research.core._base import CamelModel
from scholarstream.research.core._failures import FailureReason
from scholarstream.research.core._lifecycle import ResearchStatus
from scholarstream.research.core._title_text import fallback_title

__all__ = [
    "ExternalReport",
    "LLMResult",
    "LLMResultStatus",
    "ModelString",
    "PartialFailure",
    "Prompt",
    "Research",
    "ResearchFallback",
    "ShareInfo",
]

ModelString = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[^\s:]+:\S+$")]
"""'provider:model', e.g. 'openai:gpt-4.1-mini', 'ollama:llama3.1:8b'."""

Prompt = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class LLMResultStatus(StrEnum):
    """The seed's "LLM Result States"."""

    PENDING = "pending"  # waiting to be processed
    PROCESSING = "processing"  # the model is being called
    COMPLETED = "completed"  # success, content stored
    FAILED = "failed"  # an error occurred


class LLMResult(CamelModel):
    """One selected model's answer. ``attempt`` is 1 for the first call and grows by one
    each time the result is reset for a retry, so a late answer to an earlier attempt can
    be told apart from the current one."""

    model: ModelString = Field(description="The model string (the seed's provider).")
    status: LLMResultStatus = LLMResultStatus.PENDING
    content: str | None = Field(default=None, description="The answer, once completed.")
    error: str | None = Field(default=None, description="What went wrong, once failed.")
    error_code: str | None = Field(
        default=None,
        description="The product's error code of the failure (errors.py), or "
        "'api_key_invalid' when the provider refused the key.",
    )
    cut_off: bool = Field(
        default=False,
        description="The answer stopped at its length limit (max_tokens) before the model "
        "finished it: kept as it came, and marked.",
    )
    attempt: int = Field(default=1, ge=1)
    audit: CitationAudit | None = Field(
        default=None,
        description="Every citation of the answer checked against the evidence pack "
        "(only when the research has one).",
    )
    started_at: datetime | None = None
    completed_at: datetime | None = Field(
        default=None, description="When the call ended, in success or failure."
    )

    @property
    def provider(self) -> str:
        return self.model.partition(":")[0]


class PartialFailure(CamelModel):
    """Some models failed while others succeeded. Kept after the research moves on, so the
    retry count survives every retry cycle (the seed allows two retries per research)."""

    failed_providers: list[str] = Field(description="Model strings of the failed models.")
    detected_at: datetime
    retry_count: int = Field(default=0, ge=0)


class ResearchFallback(CamelModel):
    """A model step whose answer could not be used, so its offline counterpart was used
    instead (issue 22): ``feature`` as the usage ledger names it (``research.title``),
    ``reason`` in plain words."""

    feature: str
    reason: str


class ExternalReport(CamelModel):
    """Context the user supplied (the seed's ``externalReports``; its frontend code calls
    the same list ``inputContexts``). It is a source of the synthesis like a model."""

    title: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
    content: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
    source: str | None = Field(default=None, description="Where it came from: URL, file name.")


class ShareInfo(CamelModel):
    """Where the shareable HTML report of a completed research lives, and how telling its
    owner went (a failed notification is recorded here; the research stays completed)."""

    share_url: str = Field(description="The address to send people.")
    storage_url: str = Field(description="Where the HTML is stored (path or fsspec URL).")
    created_at: datetime
    token: str | None = Field(
        default=None,
        description="The unguessable part of share_url that names the stored page; kept so "
        "that sharing again (after a crash) rewrites the same page.",
    )
    notified_at: datetime | None = Field(
        default=None, description="When the owner's notification targets were sent the link."
    )
    notified_targets: int = Field(
        default=0, ge=0, description="How many targets took the notification."
    )
    notification_error: str | None = Field(
        default=None, description="Why the notification failed at some target, or at all."
    )


class Research(CamelModel):
    id: uuid.UUID = Field(default_factory=uuid.uuid4)
    title: str
    title_generated: bool = Field(
        default=False,
        description="The title was written by a model from the prompt. Like a title cut "
        "from the prompt (and unlike one the user wrote), it follows prompt edits.",
    )
    prompt: Prompt
    selected_llms: list[ModelString] = Field(default_factory=list)
    synthesis_llm: ModelString | None = None
    external_reports: list[ExternalReport] = Field(default_factory=list)
    evidence: EvidencePack | None = Field(
        default=None,
        description="The records every model receives and cites by key; none: the bare "
        "prompt, as the seed runs it.",
    )
    status: ResearchStatus = ResearchStatus.DRAFT
    llm_results: list[LLMResult] = Field(default_factory=list)
    partial_failure: PartialFailure | None = None
    synthesized_result: str | None = None
    synthesis_error: str | None = Field(
        default=None,
        description="Why the synthesis failed: on a completed research without a synthesis "
        '("Synthesis not available"; Retry runs the synthesis again), or on a failed one.',
    )
    synthesis_error_code: str | None = Field(
        default=None,
        description="The product's error code of the synthesis failure ('api_key_invalid' "
        "when the provider refused the key).",
    )
    synthesis_audit: CitationAudit | None = Field(
        default=None, description="The synthesis's citations of the evidence pack, checked."
    )
    synthesis_cut_off: bool = Field(
        default=False,
        description="The synthesis stopped at its length limit (max_tokens): kept, and marked.",
    )
    synthesis_retries: int = Field(
        default=0,
        ge=0,
        description="How often Retry ran the synthesis again after the research completed "
        "without one; each run's report is shared again under the same link.",
    )
    fallbacks: list[ResearchFallback] = Field(
        default_factory=list,
        description="Model steps whose answer could not be used and whose offline "
        "counterpart was used (the title cut from the prompt).",
    )
    error: str | None = Field(default=None, description="Why the research failed.")
    failure_reason: FailureReason | None = Field(
        default=None, description="The error summary row of the failure (only while failed)."
    )
    share_info: ShareInfo | None = None
    share_error: str | None = Field(
        default=None,
        description="Why the shareable report could not be stored; the research stays completed.",
    )
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None = None
    completed_at: datetime | None = None

    @field_validator("selected_llms")
    @classmethod
    def _each_model_once(cls, models: list[str]) -> list[str]:
        return list(dict.fromkeys(models))

    @computed_field(  # type: ignore[prop-decorator]
        description="Where the title came from: 'model' (a model wrote it from the prompt), "
        "'prompt' (cut from the prompt: no title was given and no model wrote one, or the "
        "model's could not be used) or 'user' (typed)."
    )
    @property
    def title_source(self) -> Literal["model", "prompt", "user"]:
        if self.title_generated:
            return "model"
        return "prompt" if self.title == fallback_title(self.prompt) else "user"

    def results_in(self, status: LLMResultStatus) -> list[LLMResult]:
        return [result for result in self.llm_results if result.status == status]

    @property
    def successful_results(self) -> list[LLMResult]:
        return self.results_in(LLMResultStatus.COMPLETED)

    @property
    def failed_models(self) -> list[str]:
        return [result.model for result in self.results_in(LLMResultStatus.FAILED)]

    @property
    def retry_count(self) -> int:
        return self.partial_failure.retry_count if self.partial_failure else 0

    def result_for(self, model: str) -> LLMResult | None:
        return next((r for r in self.llm_results if r.model == model), None)
