"""Research streams (seed 000): the AI-guided creation workflow.

One turn is ``advance(session, message, action, guide, edits=...)``: it applies the
user's inline edits and action, asks the guide (``ModelGuide`` with a model,
``RuleGuide`` without; ``guide_for`` picks), validates the answer against the workflow's
transition rules and yields typed events, ending with a ``GuideTurnResult`` that carries
the next ``CreationSession`` (and, at ``complete``, the finished ``StreamConfig``).

The stream table, its API and web page, and the monitoring runs and reports are built on
this next.
"""

from scholarstream.streams.actions import (
    OptionSelected,
    OptionsSelected,
    SkipStep,
    TextInput,
    UserAction,
    apply_field_edits,
    apply_user_action,
    user_action_adapter,
)
from scholarstream.streams.answer import GuideAnswer, GuideMode
from scholarstream.streams.config import (
    COLLECTED_FIELDS,
    OPTIONAL_FIELDS,
    REQUIRED_FIELDS,
    PartialStreamConfig,
    ReportFrequency,
    StreamConfig,
    StreamType,
    default_chat_instructions,
    finish_config,
)
from scholarstream.streams.creation import advance, prepare_turn
from scholarstream.streams.events import (
    GuideError,
    GuideEvent,
    GuideRetry,
    GuideTextDelta,
    GuideTurnResult,
    guide_event_adapter,
)
from scholarstream.streams.fields import (
    EDITABLE_FIELDS,
    FieldKind,
    FieldSpec,
    field_spec,
    field_specs,
    parse_field_value,
)
from scholarstream.streams.guide import Guide, GuideRequest, GuideStreamItem
from scholarstream.streams.model_guide import ModelGuide, UsageSink
from scholarstream.streams.prompt import build_system_prompt, build_user_prompt
from scholarstream.streams.retrieval import RetrievalConfig, StreamQuery, build_retrieval_config
from scholarstream.streams.rule_guide import RuleGuide
from scholarstream.streams.selection import guide_for
from scholarstream.streams.session import (
    OPENING_MESSAGE,
    CreationSession,
    GuideMessage,
    new_session,
)
from scholarstream.streams.validation import ValidatedTurn, validate_answer
from scholarstream.streams.workflow import (
    DATA_STEPS,
    NON_DATA_STEPS,
    STEP_TO_FIELD_MAPPING,
    StepGuidance,
    WorkflowStep,
    all_required_complete,
    completed_steps,
    get_available_next_steps,
    is_data_step,
    step_guidance,
)

__all__ = [
    "COLLECTED_FIELDS",
    "DATA_STEPS",
    "EDITABLE_FIELDS",
    "NON_DATA_STEPS",
    "OPENING_MESSAGE",
    "OPTIONAL_FIELDS",
    "REQUIRED_FIELDS",
    "STEP_TO_FIELD_MAPPING",
    "CreationSession",
    "FieldKind",
    "FieldSpec",
    "Guide",
    "GuideAnswer",
    "GuideError",
    "GuideEvent",
    "GuideMessage",
    "GuideMode",
    "GuideRequest",
    "GuideRetry",
    "GuideStreamItem",
    "GuideTextDelta",
    "GuideTurnResult",
    "ModelGuide",
    "OptionSelected",
    "OptionsSelected",
    "PartialStreamConfig",
    "ReportFrequency",
    "RetrievalConfig",
    "RuleGuide",
    "SkipStep",
    "StepGuidance",
    "StreamConfig",
    "StreamQuery",
    "StreamType",
    "TextInput",
    "UsageSink",
    "UserAction",
    "ValidatedTurn",
    "WorkflowStep",
    "advance",
    "all_required_complete",
    "apply_field_edits",
    "apply_user_action",
    "build_retrieval_config",
    "build_system_prompt",
    "build_user_prompt",
    "completed_steps",
    "default_chat_instructions",
    "field_spec",
    "field_specs",
    "finish_config",
    "get_available_next_steps",
    "guide_event_adapter",
    "guide_for",
    "is_data_step",
    "new_session",
    "parse_field_value",
    "prepare_turn",
    "step_guidance",
    "user_action_adapter",
    "validate_answer",
]
