"""The pure core of context-aware chat (seed 002): the page context, the typed SSE events,
the payload-type registry, the markers a model writes, and the response payload. The agent
loop, conversations, tools and pages are the shell beside it."""

from scholarstream.chat.continuity import SuggestedValue
from scholarstream.chat.core._context import (
    ChatContext,
    ItemSummary,
    Pagination,
    ResultCounts,
    SummaryValue,
)
from scholarstream.chat.core._echo import repeats_message
from scholarstream.chat.core._events import (
    TERMINAL_TYPES,
    ChatEvent,
    CompleteEvent,
    ErrorEvent,
    StatusEvent,
    TextDeltaEvent,
    ToolCompleteEvent,
    ToolProgressEvent,
    ToolStartEvent,
    event_id,
    resume_after,
)
from scholarstream.chat.core._evidence import (
    CONVERSATION_RECORDS,
    EARLIER_CITATIONS_NOTE,
    ConversationEvidence,
    ConversationRecord,
    earlier_citations,
)
from scholarstream.chat.core._markers import (
    SUGGESTED_ACTIONS,
    SUGGESTED_VALUES,
    SUGGESTION_MARKERS,
    MarkerFilter,
    ParsedAnswer,
    parse_answer,
)
from scholarstream.chat.core._payloads import (
    CustomPayload,
    PayloadError,
    PayloadType,
    get_payload_type,
    make_json_parser,
    payload_types,
    register_payload_type,
)
from scholarstream.chat.core._response import (
    ChatResponsePayload,
    SuggestedAction,
    ToolHistoryEntry,
)
from scholarstream.chat.core._text_calls import TextCall, TextCallFilter, call_key

__all__ = [
    "CONVERSATION_RECORDS",
    "EARLIER_CITATIONS_NOTE",
    "SUGGESTED_ACTIONS",
    "SUGGESTED_VALUES",
    "SUGGESTION_MARKERS",
    "TERMINAL_TYPES",
    "ChatContext",
    "ChatEvent",
    "ChatResponsePayload",
    "CompleteEvent",
    "ConversationEvidence",
    "ConversationRecord",
    "CustomPayload",
    "ErrorEvent",
    "ItemSummary",
    "MarkerFilter",
    "Pagination",
    "ParsedAnswer",
    "PayloadError",
    "PayloadType",
    "ResultCounts",
    "StatusEvent",
    "SuggestedAction",
    "SuggestedValue",
    "SummaryValue",
    "TextCall",
    "TextCallFilter",
    "TextDeltaEvent",
    "ToolCompleteEvent",
    "ToolHistoryEntry",
    "ToolProgressEvent",
    "ToolStartEvent",
    "call_key",
    "earlier_citations",
    "event_id",
    "get_payload_type",
    "make_json_parser",
    "parse_answer",
    "payload_types",
    "register_payload_type",
    "repeats_message",
    "resume_after",
]
