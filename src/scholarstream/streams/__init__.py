"""Research streams (seed 000): the AI-guided creation workflow.

One turn is ``advance(session, message, action, guide, edits=...)``: it applies the
user's inline edits and action, asks the guide (``ModelGuide`` with a model,
``RuleGuide`` without; ``guide_for`` picks), validates the answer against the workflow's
transition rules and yields typed events, ending with a ``GuideTurnResult`` that carries
the next ``CreationSession`` (and, at ``complete``, the finished ``StreamConfig``).

``StreamStore`` keeps the streams (``Stream``, edited with ``StreamUpdate``) and the
creation sessions (``CreationRecord``) per owner; ``run_creation_turn`` runs a turn on a
stored session for the API and saves it only when the turn succeeds.

The web page, and the monitoring runs and reports, are built on this next.
"""

from scholarstream.streams.core.actions import (
    OptionSelected,
    OptionsSelected,
    SkipStep,
    TextInput,
    UserAction,
    apply_field_edits,
    apply_user_action,
    user_action_adapter,
)
from scholarstream.streams.core.answer import GuideAnswer, GuideMode
from scholarstream.streams.core.config import (
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
from scholarstream.streams.core.creation import advance, prepare_turn
from scholarstream.streams.core.edits import (
    RetrievalUpdate,
    StreamQueryUpdate,
    StreamUpdate,
    apply_update,
)
from scholarstream.streams.core.events import (
    GuideError,
    GuideEvent,
    GuideRetry,
    GuideTextDelta,
    GuideTurnResult,
    guide_event_adapter,
)
from scholarstream.streams.core.fields import (
    EDITABLE_FIELDS,
    FieldKind,
    FieldSpec,
    field_spec,
    field_specs,
    parse_field_value,
)
from scholarstream.streams.core.guide import Guide, GuideRequest, GuideStreamItem
from scholarstream.streams.core.prompt import build_system_prompt, build_user_prompt
from scholarstream.streams.core.records import (
    CreationRecord,
    CreationStatus,
    CreationView,
    GuideKind,
    Stream,
    StreamList,
)
from scholarstream.streams.core.retrieval import (
    RetrievalConfig,
    StreamQuery,
    build_retrieval_config,
)
from scholarstream.streams.core.rule_guide import RuleGuide
from scholarstream.streams.core.session import (
    OPENING_MESSAGE,
    CreationSession,
    GuideMessage,
    new_session,
)
from scholarstream.streams.core.validation import ValidatedTurn, validate_answer
from scholarstream.streams.core.workflow import (
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
from scholarstream.streams.model_guide import ModelGuide, UsageSink
from scholarstream.streams.selection import guide_for
from scholarstream.streams.store import StreamStore
from scholarstream.streams.turns import (
    CreationEvent,
    CreationTurnIn,
    CreationTurnResult,
    check_turn,
    creation_event_adapter,
    creation_guide,
    encode_creation_event,
    run_creation_turn,
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
    "CreationEvent",
    "CreationRecord",
    "CreationSession",
    "CreationStatus",
    "CreationTurnIn",
    "CreationTurnResult",
    "CreationView",
    "FieldKind",
    "FieldSpec",
    "Guide",
    "GuideAnswer",
    "GuideError",
    "GuideEvent",
    "GuideKind",
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
    "RetrievalUpdate",
    "RuleGuide",
    "SkipStep",
    "StepGuidance",
    "Stream",
    "StreamConfig",
    "StreamList",
    "StreamQuery",
    "StreamQueryUpdate",
    "StreamStore",
    "StreamType",
    "StreamUpdate",
    "TextInput",
    "UsageSink",
    "UserAction",
    "ValidatedTurn",
    "WorkflowStep",
    "advance",
    "all_required_complete",
    "apply_field_edits",
    "apply_update",
    "apply_user_action",
    "build_retrieval_config",
    "build_system_prompt",
    "build_user_prompt",
    "check_turn",
    "completed_steps",
    "creation_event_adapter",
    "creation_guide",
    "default_chat_instructions",
    "encode_creation_event",
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
    "run_creation_turn",
    "step_guidance",
    "user_action_adapter",
    "validate_answer",
]
