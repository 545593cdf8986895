"""Every table of the product, imported here so Alembic and the tests see one metadata."""

from scholarstream.db.tables.accounts import ApiToken, User, WebSession
from scholarstream.db.tables.ai_columns import AIColumnRow, AIColumnValueRow
from scholarstream.db.tables.chat import ChatConversation, ChatMessage
from scholarstream.db.tables.library import LibraryRecord
from scholarstream.db.tables.llm import LLMUsage, ProviderKey
from scholarstream.db.tables.notifications import NotificationTargetRow
from scholarstream.db.tables.research import ResearchEventRow, ResearchRow
from scholarstream.db.tables.search import SearchRunRow
from scholarstream.db.tables.streams import (
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
    "LibraryRecord",
    "NotificationTargetRow",
    "ProviderKey",
    "ResearchEventRow",
    "ResearchRow",
    "SearchRunRow",
    "StreamCreationRow",
    "StreamItemFeedbackRow",
    "StreamReportRow",
    "StreamReportedItemRow",
    "StreamRow",
    "User",
    "WebSession",
]
