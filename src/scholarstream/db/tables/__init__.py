"""Every table of the product, imported here so Alembic and the tests see one metadata."""

from scholarstream.db.tables.accounts import ApiToken, User, WebSession
from scholarstream.db.tables.ai_columns import AIColumnRow, AIColumnValueRow
from scholarstream.db.tables.chat import ChatConversation, ChatMessage
from scholarstream.db.tables.library import LibraryRecord
from scholarstream.db.tables.llm import LLMUsage, ProviderKey
from scholarstream.db.tables.search import SearchRunRow
from scholarstream.db.tables.streams import (
    StreamCreationRow,
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
    "ProviderKey",
    "SearchRunRow",
    "StreamCreationRow",
    "StreamReportRow",
    "StreamReportedItemRow",
    "StreamRow",
    "User",
    "WebSession",
]
