"""Chat: conversations and their messages (with tool calls, tool results and payloads)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from scholarstream.db._base import Base, CreatedAtMixin, Owned, utcnow


class ChatConversation(Owned, CreatedAtMixin, Base):
    __tablename__ = "chat_conversations"
    __table_args__ = (Index("ix_chat_conversations_owner_updated", "owner_id", "updated_at"),)

    title: Mapped[str] = mapped_column(String(200))
    # The page the conversation started on, for the list; a conversation may move pages.
    page: Mapped[str] = mapped_column(String(80))
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    # Follow-up continuity (seed 004): topic, scope, last turns, objectives; see ThreadState.
    thread_state: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # The records its answers may cite, under the keys they keep for the whole
    # conversation; see ConversationEvidence.
    evidence: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)


class ChatMessage(Owned, CreatedAtMixin, Base):
    """One user message or one assistant answer. An answer row is created when its turn
    starts (status ``running``) and completed in place, so an answer whose connection
    dropped can still be read back."""

    __tablename__ = "chat_messages"
    __table_args__ = (
        Index("ix_chat_messages_conversation_position", "conversation_id", "position"),
    )

    conversation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("chat_conversations.id", ondelete="CASCADE")
    )
    position: Mapped[int]
    role: Mapped[str] = mapped_column(String(16))
    # running | complete | error | cancelled
    status: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text)
    turn_id: Mapped[str | None] = mapped_column(String(64), index=True)
    # The page context the user sent with a message.
    context: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # A ChatResponsePayload dump: payloads, suggestions, tool history.
    response: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # The model-level messages of the turn (pydantic-ai's ModelMessagesTypeAdapter dump):
    # what the model is given as history when the conversation continues.
    model_messages: Mapped[list[Any] | None] = mapped_column(JSON)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
