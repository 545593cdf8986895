"""Multi-LLM research (seed 001): the pure domain core. No database, HTTP or engine here:
every function takes a ``Research`` and returns the next one (most return a
``ResearchChange``: the record, the lifecycle events to publish and the ``llm.call``
messages to dispatch).

The flow::

    research = create_draft(DraftRequest(prompt=...), available_models=[...])
    change = start_research(research, has_credentials=...)        # processing, llm.call x N
    change = record_call_started / record_call_succeeded / record_call_failed(...)
    change = apply_completion(change.research)                    # the decision matrix
    #   synthesizing -> begin_synthesis (skip logic) -> build_synthesis_prompt
    #                -> record_synthesis_succeeded / record_synthesis_failed
    #   awaiting_confirmation -> confirm(research, proceed | retry | cancel)
    #   failed -> retry_research (Phase 6)
    change = attach_share_info(research, ShareInfo(...))          # completed
    html = render_share_page(research)                            # the shareable report

Python names are snake_case; JSON uses the seed's camelCase aliases.
"""

from scholarstream.research.core._base import CamelModel
from scholarstream.research.core.changes import ResearchChange
from scholarstream.research.core.completion import (
    DECISION_MATRIX,
    CompletionDecision,
    CompletionKind,
    MatrixRow,
    apply_completion,
    check_llm_completion,
)
from scholarstream.research.core.confirm import (
    CONFIRM_ACTIONS,
    ConfirmAction,
    ConfirmRequest,
    confirm,
)
from scholarstream.research.core.display import (
    CARD_DISPLAY,
    CardDisplay,
    card_display,
    synthesis_not_available,
)
from scholarstream.research.core.drafts import (
    TITLE_MAX_LENGTH,
    DraftDefaults,
    DraftEdit,
    DraftRequest,
    create_draft,
    default_synthesis_llm,
    draft_defaults,
    edit_draft,
    fallback_title,
)
from scholarstream.research.core.events import (
    LLMCallEvent,
    ResearchAwaitingConfirmation,
    ResearchCompleted,
    ResearchEvent,
    ResearchFailed,
    ResearchLLMCompleted,
    ResearchLLMFailed,
    ResearchRetrying,
    ResearchShared,
    ResearchStarted,
    ResearchSynthesizing,
    research_event_adapter,
)
from scholarstream.research.core.failures import (
    ALL_LLMS_FAILED,
    API_KEY_ERROR_CODES,
    CANCELLED_BY_USER,
    ERROR_SUMMARY,
    MAX_RETRIES_EXCEEDED,
    NO_SUCCESSFUL_RESULTS,
    RETRY_ADVICE,
    ErrorSummary,
    ErrorSummaryRow,
    FailureReason,
    UserAction,
    error_summary,
)
from scholarstream.research.core.lifecycle import (
    STATUS_HINTS,
    TRANSITIONS,
    ResearchStatus,
    allowed_transitions,
    can_transition,
    transition,
)
from scholarstream.research.core.records import (
    ExternalReport,
    LLMResult,
    LLMResultStatus,
    ModelString,
    PartialFailure,
    Prompt,
    Research,
    ShareInfo,
)
from scholarstream.research.core.results import (
    LLM_RESULT_TRANSITIONS,
    record_call_failed,
    record_call_started,
    record_call_succeeded,
)
from scholarstream.research.core.retry import (
    MAX_RETRIES,
    RETRY_FROM_FAILED,
    RetryFromFailedAction,
    RetryOutcome,
    retries_left,
    retry_action,
    retry_failed_llms,
    retry_research,
)
from scholarstream.research.core.safe_markdown import render_markdown
from scholarstream.research.core.sharing import (
    attach_share_info,
    record_notification,
    record_share_failed,
)
from scholarstream.research.core.start import (
    CredentialCheck,
    check_can_start,
    models_needing_credentials,
    start_research,
    synthesis_may_run,
)
from scholarstream.research.core.synthesis import (
    SKIP_LOGIC,
    SkipLogicRow,
    SynthesisAction,
    SynthesisDecision,
    begin_synthesis,
    decide_synthesis,
    record_synthesis_failed,
    record_synthesis_succeeded,
)
from scholarstream.research.core.synthesis_prompt import (
    SYNTHESIS_INSTRUCTIONS,
    SynthesisPrompt,
    SynthesisSource,
    build_synthesis_prompt,
    synthesis_sources,
)
from scholarstream.research.share_page import render_share_page

__all__ = [
    "ALL_LLMS_FAILED",
    "API_KEY_ERROR_CODES",
    "CANCELLED_BY_USER",
    "CARD_DISPLAY",
    "CONFIRM_ACTIONS",
    "DECISION_MATRIX",
    "ERROR_SUMMARY",
    "LLM_RESULT_TRANSITIONS",
    "MAX_RETRIES",
    "MAX_RETRIES_EXCEEDED",
    "NO_SUCCESSFUL_RESULTS",
    "RETRY_ADVICE",
    "RETRY_FROM_FAILED",
    "SKIP_LOGIC",
    "STATUS_HINTS",
    "SYNTHESIS_INSTRUCTIONS",
    "TITLE_MAX_LENGTH",
    "TRANSITIONS",
    "CamelModel",
    "CardDisplay",
    "CompletionDecision",
    "CompletionKind",
    "ConfirmAction",
    "ConfirmRequest",
    "CredentialCheck",
    "DraftDefaults",
    "DraftEdit",
    "DraftRequest",
    "ErrorSummary",
    "ErrorSummaryRow",
    "ExternalReport",
    "FailureReason",
    "LLMCallEvent",
    "LLMResult",
    "LLMResultStatus",
    "MatrixRow",
    "ModelString",
    "PartialFailure",
    "Prompt",
    "Research",
    "ResearchAwaitingConfirmation",
    "ResearchChange",
    "ResearchCompleted",
    "ResearchEvent",
    "ResearchFailed",
    "ResearchLLMCompleted",
    "ResearchLLMFailed",
    "ResearchRetrying",
    "ResearchShared",
    "ResearchStarted",
    "ResearchStatus",
    "ResearchSynthesizing",
    "RetryFromFailedAction",
    "RetryOutcome",
    "ShareInfo",
    "SkipLogicRow",
    "SynthesisAction",
    "SynthesisDecision",
    "SynthesisPrompt",
    "SynthesisSource",
    "UserAction",
    "allowed_transitions",
    "apply_completion",
    "attach_share_info",
    "begin_synthesis",
    "build_synthesis_prompt",
    "can_transition",
    "card_display",
    "check_can_start",
    "check_llm_completion",
    "confirm",
    "create_draft",
    "decide_synthesis",
    "default_synthesis_llm",
    "draft_defaults",
    "edit_draft",
    "error_summary",
    "fallback_title",
    "models_needing_credentials",
    "record_call_failed",
    "record_call_started",
    "record_call_succeeded",
    "record_notification",
    "record_share_failed",
    "record_synthesis_failed",
    "record_synthesis_succeeded",
    "render_markdown",
    "render_share_page",
    "research_event_adapter",
    "retries_left",
    "retry_action",
    "retry_failed_llms",
    "retry_research",
    "start_research",
    "synthesis_may_run",
    "synthesis_not_available",
    "synthesis_sources",
    "transition",
]
