"""Conversations and their messages, per user: list, read, rename, delete, and the two
writes of a turn (its start, with the user's message and a running answer row, and its
end, completing that row). The model's history for a continued conversation is read back
from what the turns stored."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from sqlalchemy import CursorResult, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.chat.continuity import ThreadState
from scholarstream.chat.core import ChatResponsePayload, ConversationEvidence
from scholarstream.db import Database, OwnerScope, utcnow
from scholarstream.db.tables import ChatConversation, ChatMessage
from scholarstream.errors import NotFoundError

log = logging.getLogger(__name__)
MessageStatus = Literal["running", "complete", "error", "cancelled"]
TITLE_CHARS = 80
T = TypeVar("T")
ThreadChange = Callable[[ThreadState], T]
# A finished turn folded into the conversation's records (ConversationEvidence.after_turn).
EvidenceChange = Callable[[ConversationEvidence], ConversationEvidence]


class MessageError(BaseModel):
    code: str
    message: str
    hint: str | None = None


class MessageView(BaseModel):
    id: uuid.UUID
    role: Literal["user", "assistant"]
    content: str
    status: MessageStatus
    turn_id: str | None
    response: ChatResponsePayload | None
    error: MessageError | None
    created_at: datetime


class ConversationSummary(BaseModel):
    id: uuid.UUID
    title: str
    page: str
    created_at: datetime
    updated_at: datetime
    message_count: int


class ConversationView(BaseModel):
    id: uuid.UUID
    title: str
    page: str
    created_at: datetime
    updated_at: datetime
    messages: list[MessageView]


class ConversationRename(BaseModel):
    title: str = Field(min_length=1, max_length=200)


class StartedTurn(BaseModel):
    """A turn opened on a conversation: what the model needs from it, and the rows that
    ``record_start`` writes (the user's message, then the running answer)."""

    conversation_id: uuid.UUID
    assistant_message_id: uuid.UUID
    history: list[Any] = Field(description="pydantic-ai messages of the earlier turns")
    new_conversation: bool
    turn_id: str
    message: str
    context: dict[str, Any]
    thread: ThreadState = Field(
        default_factory=ThreadState, description="The conversation's thread when the turn began"
    )
    evidence: ConversationEvidence = Field(
        default_factory=ConversationEvidence,
        description="The records the conversation's answers may cite when the turn began",
    )

    def model_history(self) -> list[ModelMessage]:
        return list(self.history)


def _title_from(message: str) -> str:
    line = " ".join(message.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def _message_view(row: ChatMessage) -> MessageView:
    return MessageView(
        id=row.id,
        role="user" if row.role == "user" else "assistant",
        content=row.content,
        status=row.status,
        turn_id=row.turn_id,
        response=ChatResponsePayload.model_validate(row.response) if row.response else None,
        error=MessageError.model_validate(row.error) if row.error else None,
        created_at=row.created_at,
    )


def _history(rows: list[ChatMessage]) -> list[ModelMessage]:
    """What the model saw and said in earlier turns. A turn that ended without the model's
    own messages (offline commands, errors, a stop) is replayed as plain text, so the model
    still knows it happened."""
    history: list[ModelMessage] = []
    prompt: str | None = None
    for row in rows:
        if row.role == "user":
            prompt = row.content
            continue
        if row.model_messages:
            history.extend(ModelMessagesTypeAdapter.validate_python(row.model_messages))
        elif prompt is not None and row.content:
            history.append(ModelRequest(parts=[UserPromptPart(content=prompt)]))
            history.append(ModelResponse(parts=[TextPart(content=row.content)]))
        prompt = None
    return history


def _thread_of(conversation: ChatConversation) -> ThreadState:
    if not conversation.thread_state:
        return ThreadState()
    try:
        return ThreadState.model_validate(conversation.thread_state)
    except ValidationError:
        # A state this version cannot read must not stop the conversation: it starts over.
        log.warning("conversation %s: unreadable thread state, starting afresh", conversation.id)
        return ThreadState()


def _evidence_of(conversation: ChatConversation) -> ConversationEvidence:
    stored = conversation.evidence
    if not stored:
        return ConversationEvidence()
    try:
        return ConversationEvidence.model_validate(stored)
    except ValidationError:
        # Records this version cannot read are dropped; the keys they had are not given
        # again (when the state still says where they ended).
        log.warning("conversation %s: unreadable evidence, its records dropped", conversation.id)
        next_key = stored.get("next_key")
        return ConversationEvidence(next_key=max(1, next_key) if isinstance(next_key, int) else 1)


def _change_thread(conversation: ChatConversation, change: ThreadChange[T]) -> T:
    state = _thread_of(conversation)
    outcome = change(state)
    conversation.thread_state = state.model_dump(mode="json")
    return outcome


class ConversationStore:
    def __init__(self, database: Database, *, history_messages: int = 40) -> None:
        self.database = database
        self.history_messages = history_messages

    async def open_turn(
        self,
        owner_id: uuid.UUID,
        *,
        conversation_id: uuid.UUID | None,
        message: str,
        context: dict[str, Any],
        turn_id: str,
    ) -> StartedTurn:
        """Reads what a turn needs: the conversation's history (unknown conversation: 404).
        Writes nothing, so the model can start while ``record_start`` stores the message."""
        rows: list[ChatMessage] = []
        thread = ThreadState()
        evidence = ConversationEvidence()
        if conversation_id is not None:
            async with self.database.session() as session:
                scope = OwnerScope(session, owner_id)
                conversation = await scope.get(
                    ChatConversation, conversation_id, what="Conversation"
                )
                thread = _thread_of(conversation)
                evidence = _evidence_of(conversation)
                rows = list(
                    (
                        await session.scalars(
                            scope.select(ChatMessage)
                            .where(ChatMessage.conversation_id == conversation.id)
                            .order_by(ChatMessage.position)
                        )
                    ).all()
                )
        recent = rows[-self.history_messages :] if self.history_messages else []
        # Never start the history on an answer whose question was cut off.
        while recent and recent[0].role != "user":
            recent.pop(0)
        return StartedTurn(
            conversation_id=conversation_id or uuid.uuid4(),
            assistant_message_id=uuid.uuid4(),
            history=_history(recent),
            new_conversation=conversation_id is None,
            turn_id=turn_id,
            message=message,
            context=context,
            thread=thread,
            evidence=evidence,
        )

    async def record_start(self, owner_id: uuid.UUID, started: StartedTurn) -> int:
        """Stores the user's message and a running answer (and a new conversation); the
        user's message's position.

        The positions are allocated here, in the transaction that stores the rows, after
        the conversation's row is locked (the update of ``updated_at`` locks it on
        PostgreSQL, and takes the one write lock on SQLite): messages sent at once to one
        conversation each get positions of their own, after every message stored before,
        and a question is always followed by its own answer."""
        async with self.database.session(write=True) as session:
            scope = OwnerScope(session, owner_id)
            if started.new_conversation:
                scope.add(
                    ChatConversation(
                        id=started.conversation_id,
                        title=_title_from(started.message),
                        page=str(started.context.get("current_page", "")),
                    )
                )
                # The messages refer to it: insert it first.
                await session.flush()
                position = 0
            else:
                locked: CursorResult[Any] = await session.execute(  # type: ignore[assignment]
                    update(ChatConversation)
                    .where(
                        ChatConversation.id == started.conversation_id,
                        ChatConversation.owner_id == owner_id,
                    )
                    .values(updated_at=utcnow())
                )
                if locked.rowcount == 0:
                    # Deleted since the turn was opened.
                    raise NotFoundError(
                        "That conversation was not found: it was deleted, or it is not yours.",
                        hint="Open one from the list of your conversations.",
                    )
                # A statement of its own, after the lock: it sees every message committed
                # before (PostgreSQL's read committed takes a new snapshot per statement).
                last = await session.scalar(
                    select(func.max(ChatMessage.position)).where(
                        ChatMessage.conversation_id == started.conversation_id
                    )
                )
                position = 0 if last is None else last + 1
            scope.add(
                ChatMessage(
                    conversation_id=started.conversation_id,
                    position=position,
                    role="user",
                    status="complete",
                    content=started.message,
                    turn_id=started.turn_id,
                    context=started.context,
                )
            )
            scope.add(
                ChatMessage(
                    id=started.assistant_message_id,
                    conversation_id=started.conversation_id,
                    position=position + 1,
                    role="assistant",
                    status="running",
                    content="",
                    turn_id=started.turn_id,
                )
            )
        return position

    async def finish_turn(
        self,
        owner_id: uuid.UUID,
        message_id: uuid.UUID,
        *,
        status: MessageStatus,
        content: str,
        response: ChatResponsePayload | None = None,
        model_messages: list[ModelMessage] | None = None,
        error: MessageError | None = None,
        also: Callable[[OwnerScope], Awaitable[object]] | None = None,
        thread: ThreadChange[object] | None = None,
        evidence: EvidenceChange | None = None,
    ) -> None:
        """Completes the answer row; ``also`` writes in the same transaction (the usage).
        ``thread`` changes the conversation's thread state, read afresh under the row's
        lock (the user may have edited objectives while the turn ran); it runs before the
        answer is written, so it may still complete ``response``. ``evidence`` folds the
        turn's records into the conversation's, read afresh under the same lock (another
        turn of the conversation may have finished since this one began)."""
        async with self.database.session(write=True) as session:
            if thread is not None or evidence is not None:
                conversation = await self._locked(session, owner_id, message_id=message_id)
                if conversation is not None and thread is not None:
                    _change_thread(conversation, thread)
                if conversation is not None and evidence is not None:
                    changed = evidence(_evidence_of(conversation))
                    conversation.evidence = changed.model_dump(mode="json", exclude_defaults=True)
            await session.execute(
                update(ChatMessage)
                .where(ChatMessage.id == message_id, ChatMessage.owner_id == owner_id)
                .values(
                    status=status,
                    content=content,
                    response=response.model_dump(mode="json") if response else None,
                    model_messages=ModelMessagesTypeAdapter.dump_python(model_messages, mode="json")
                    if model_messages
                    else None,
                    error=error.model_dump() if error else None,
                )
            )
            if also is not None:
                await also(OwnerScope(session, owner_id))

    async def thread(self, owner_id: uuid.UUID, conversation_id: uuid.UUID) -> ThreadState:
        async with self.database.session() as session:
            conversation = await OwnerScope(session, owner_id).get(
                ChatConversation, conversation_id, what="Conversation"
            )
            return _thread_of(conversation)

    async def change_thread(
        self, owner_id: uuid.UUID, conversation_id: uuid.UUID, change: ThreadChange[T]
    ) -> T:
        """Applies ``change`` to the stored thread state under the row's lock, and saves it
        unless ``change`` raises."""
        async with self.database.session(write=True) as session:
            conversation = await self._locked(session, owner_id, conversation_id=conversation_id)
            if conversation is None:
                raise NotFoundError(
                    "That conversation was not found: it was deleted, or it is not yours.",
                    hint="Open one from the list of your conversations.",
                )
            return _change_thread(conversation, change)

    @staticmethod
    async def _locked(
        session: AsyncSession,
        owner_id: uuid.UUID,
        *,
        conversation_id: uuid.UUID | None = None,
        message_id: uuid.UUID | None = None,
    ) -> ChatConversation | None:
        query = select(ChatConversation).where(ChatConversation.owner_id == owner_id)
        if conversation_id is not None:
            query = query.where(ChatConversation.id == conversation_id)
        if message_id is not None:
            query = query.where(
                ChatConversation.id
                == select(ChatMessage.conversation_id)
                .where(ChatMessage.id == message_id)
                .scalar_subquery()
            )
        return await session.scalar(query.with_for_update())

    async def list(self, owner_id: uuid.UUID) -> list[ConversationSummary]:
        async with self.database.session() as session:
            scope = OwnerScope(session, owner_id)
            counts = (
                select(ChatMessage.conversation_id, func.count().label("n"))
                .where(ChatMessage.owner_id == owner_id)
                .group_by(ChatMessage.conversation_id)
                .subquery()
            )
            query = (
                scope.select(ChatConversation)
                .add_columns(func.coalesce(counts.c.n, 0))
                .outerjoin(counts, counts.c.conversation_id == ChatConversation.id)
                .order_by(ChatConversation.updated_at.desc())
            )
            return [
                ConversationSummary(
                    id=row.id,
                    title=row.title,
                    page=row.page,
                    created_at=row.created_at,
                    updated_at=row.updated_at,
                    message_count=count,
                )
                for row, count in (await session.execute(query)).all()
            ]

    async def get(self, owner_id: uuid.UUID, conversation_id: uuid.UUID) -> ConversationView:
        async with self.database.session() as session:
            scope = OwnerScope(session, owner_id)
            conversation = await scope.get(ChatConversation, conversation_id, what="Conversation")
            rows = (
                await session.scalars(
                    scope.select(ChatMessage)
                    .where(ChatMessage.conversation_id == conversation.id)
                    .order_by(ChatMessage.position)
                )
            ).all()
            return ConversationView(
                id=conversation.id,
                title=conversation.title,
                page=conversation.page,
                created_at=conversation.created_at,
                updated_at=conversation.updated_at,
                messages=[_message_view(row) for row in rows],
            )

    async def rename(
        self, owner_id: uuid.UUID, conversation_id: uuid.UUID, title: str
    ) -> ConversationView:
        async with self.database.session() as session:
            conversation = await OwnerScope(session, owner_id).get(
                ChatConversation, conversation_id, what="Conversation"
            )
            conversation.title = title.strip() or conversation.title
        return await self.get(owner_id, conversation_id)

    async def delete(self, owner_id: uuid.UUID, conversation_id: uuid.UUID) -> None:
        async with self.database.session() as session:
            scope = OwnerScope(session, owner_id)
            await scope.delete(
                await scope.get(ChatConversation, conversation_id, what="Conversation")
            )

    async def answer_of_turn(self, owner_id: uuid.UUID, turn_id: str) -> MessageView | None:
        """The stored answer of a turn (to replay a finished answer to a reconnecting client)."""
        async with self.database.session() as session:
            row = await session.scalar(
                OwnerScope(session, owner_id)
                .select(ChatMessage)
                .where(ChatMessage.turn_id == turn_id, ChatMessage.role == "assistant")
            )
            return _message_view(row) if row is not None else None
