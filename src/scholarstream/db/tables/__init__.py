"""Every table of the product, imported here so Alembic and the tests see one metadata."""

from scholarstream.db.tables._accounts import ApiToken, User, WebSession
from scholarstream.db.tables._ai_columns import AIColumnRow, AIColumnValueRow
from scholarstream.db.tables._chat import ChatConversation, ChatMessage
from scholarstream.db.tables._library import (
    LibraryCollection,
    LibraryCollectionRecord,
    LibraryEmbedding,
    LibraryMatchKey,
    LibraryMerge,
    LibraryNote,
    LibraryRecord,
    LibraryTag,
)
from scholarstream.db.tables._llm import (
    LLMUsage,
    ModelChoiceRow,
    ModelEndpointRow,
    ProviderKey,
)
from scholarstream.db.tables._notifications import NotificationTargetRow
from scholarstream.db.tables._research import (
    ResearchEventRow,
    ResearchRow,
    ResearchWebhookCursorRow,
)
from scholarstream.db.tables._screening import (
    ScreeningDecisionRow,
    ScreeningProjectRow,
    ScreeningRecordRow,
    ScreeningReviewerRow,
    ScreeningSuggestionRow,
)
from scholarstream.db.tables._search import SearchRunRow
from scholarstream.db.tables._streams import (
    StreamCreationRow,
    StreamItemFeedbackRow,
    StreamReportedItemRow,
    StreamReportRow,
    StreamRow,
)

__all__ = [
    "AIColumnRow",
    "AIColumnValueRow",
    "ApiToken",
    "ChatConversation",
    "ChatMessage",
    "LLMUsage",
    "LibraryCollection",
    "LibraryCollectionRecord",
    "LibraryEmbedding",
    "LibraryMatchKey",
    "LibraryMerge",
    "LibraryNote",
    "LibraryRecord",
    "LibraryTag",
    "ModelChoiceRow",
    "ModelEndpointRow",
    "NotificationTargetRow",
    "ProviderKey",
    "ResearchEventRow",
    "ResearchRow",
    "ResearchWebhookCursorRow",
    "ScreeningDecisionRow",
    "ScreeningProjectRow",
    "ScreeningRecordRow",
    "ScreeningReviewerRow",
    "ScreeningSuggestionRow",
    "SearchRunRow",
    "StreamCreationRow",
    "StreamItemFeedbackRow",
    "StreamReportRow",
    "StreamReportedItemRow",
    "StreamRow",
    "User",
    "WebSession",
]
