"""Conversation storage on each database: a turn's two writes, the model's history,
and one user never seeing another's conversations."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from sqlalchemy import select

from scholarstream.chat import ConversationStore, MessageError, StartedTurn
from scholarstream.chat.continuity import ThreadState, add_objective, remove_objective
from scholarstream.chat.core import ChatResponsePayload
from scholarstream.db.tables import ChatMessage
from scholarstream.errors import NotFoundError
from scholarstream.settings import Settings
from tests.helpers import make_runtime, new_user


async def start_turn(store: ConversationStore, owner_id: uuid.UUID, **turn: Any) -> StartedTurn:
    """What a turn does before its answer: open it, then store the message."""
    started = await store.open_turn(owner_id, **turn)
    await store.record_start(owner_id, started)
    return started


async def test_turns_history_and_scoping(db_settings: Settings) -> None:
    runtime = make_runtime(db_settings)
    try:
        alice, bob = await new_user(runtime), await new_user(runtime)
        store = ConversationStore(runtime.database, history_messages=10)
        first = await start_turn(
            store,
            alice.id,
            conversation_id=None,
            message="What is EGFR?",
            context={"current_page": "home"},
            turn_id="t1",
        )
        assert first.history == []
        exchange: list[ModelMessage] = [
            ModelRequest(parts=[UserPromptPart(content="What is EGFR?")]),
            ModelResponse(parts=[TextPart(content="A receptor.")]),
        ]
        await store.finish_turn(
            alice.id,
            first.assistant_message_id,
            status="complete",
            content="A receptor.",
            response=ChatResponsePayload(message="A receptor."),
            model_messages=exchange,
        )
        second = await start_turn(
            store,
            alice.id,
            conversation_id=first.conversation_id,
            message="And its inhibitors?",
            context={"current_page": "home"},
            turn_id="t2",
        )
        assert [type(m) for m in second.model_history()] == [ModelRequest, ModelResponse]
        await store.finish_turn(
            alice.id,
            second.assistant_message_id,
            status="cancelled",
            content="Gefitinib, erl",
            error=MessageError(code="cancelled", message="Stopped."),
        )
        third = await start_turn(
            store,
            alice.id,
            conversation_id=first.conversation_id,
            message="Go on",
            context={"current_page": "home"},
            turn_id="t3",
        )
        # A stopped answer without model messages is replayed as plain text.
        replayed = third.model_history()[2:]
        assert isinstance(replayed[0], ModelRequest)
        assert replayed[0].parts[0].content == "And its inhibitors?"  # type: ignore[union-attr]
        assert isinstance(replayed[1], ModelResponse)
        assert replayed[1].parts[0].content == "Gefitinib, erl"  # type: ignore[union-attr]

        view = await store.get(alice.id, first.conversation_id)
        assert [(m.role, m.status) for m in view.messages] == [
            ("user", "complete"),
            ("assistant", "complete"),
            ("user", "complete"),
            ("assistant", "cancelled"),
            ("user", "complete"),
            ("assistant", "running"),
        ]
        assert (await store.answer_of_turn(alice.id, "t2")).content == "Gefitinib, erl"  # type: ignore[union-attr]

        assert await store.list(bob.id) == []
        assert await store.answer_of_turn(bob.id, "t1") is None
        for attempt in (
            store.get(bob.id, first.conversation_id),
            store.rename(bob.id, first.conversation_id, "mine now"),
            store.delete(bob.id, first.conversation_id),
            start_turn(
                store,
                bob.id,
                conversation_id=first.conversation_id,
                message="hi",
                context={},
                turn_id="t4",
            ),
        ):
            with pytest.raises(NotFoundError):
                await attempt
        [summary] = await store.list(alice.id)
        assert (summary.title, summary.message_count) == ("What is EGFR?", 6)

        await store.delete(alice.id, first.conversation_id)
        assert await store.list(alice.id) == []
        with pytest.raises(NotFoundError):
            await store.get(alice.id, uuid.UUID(int=first.conversation_id.int))
    finally:
        await runtime.close()


async def test_the_thread_is_kept_per_conversation_and_changed_under_its_lock(
    db_settings: Settings,
) -> None:
    runtime = make_runtime(db_settings)
    try:
        alice, bob = await new_user(runtime), await new_user(runtime)
        store = ConversationStore(runtime.database)
        first = await start_turn(
            store,
            alice.id,
            conversation_id=None,
            message="Florida Medicaid income criteria",
            context={"current_page": "home"},
            turn_id="t1",
        )
        assert first.thread == ThreadState()

        def remember_topic(state: ThreadState) -> None:
            state.refined_query = "Florida Medicaid income criteria"

        await store.finish_turn(
            alice.id,
            first.assistant_message_id,
            status="complete",
            content="Found four.",
            thread=remember_topic,
        )
        added = await store.change_thread(
            alice.id, first.conversation_id, lambda state: add_objective(state, "Compare Texas")
        )
        assert added.id == 1

        second = await store.open_turn(
            alice.id,
            conversation_id=first.conversation_id,
            message="what about in Texas?",
            context={"current_page": "home"},
            turn_id="t2",
        )
        assert second.thread.refined_query == "Florida Medicaid income criteria"
        assert [o.text for o in second.thread.objectives] == ["Compare Texas"]

        # A change that fails saves nothing; another user's conversation does not exist.
        with pytest.raises(NotFoundError):
            await store.change_thread(
                alice.id, first.conversation_id, lambda state: remove_objective(state, 7)
            )
        with pytest.raises(NotFoundError):
            await store.thread(bob.id, first.conversation_id)
        with pytest.raises(NotFoundError):
            await store.change_thread(bob.id, first.conversation_id, remember_topic)
        kept = await store.thread(alice.id, first.conversation_id)
        assert [o.text for o in kept.objectives] == ["Compare Texas"]
    finally:
        await runtime.close()


async def test_messages_sent_at_once_to_one_conversation_keep_their_turns_together(
    db_settings: Settings,
) -> None:
    """Several messages sent at once to one conversation: each turn reads the history
    before any of them is stored (as the assistant does), then all store at once. Every
    message gets a position of its own, and each question is followed by its own answer."""
    runtime = make_runtime(db_settings)
    try:
        alice = await new_user(runtime)
        store = ConversationStore(runtime.database)
        first = await start_turn(
            store,
            alice.id,
            conversation_id=None,
            message="What is EGFR?",
            context={"current_page": "home"},
            turn_id="t0",
        )
        turn_ids = [f"t{n}" for n in range(1, 6)]
        opened = await asyncio.gather(
            *(
                store.open_turn(
                    alice.id,
                    conversation_id=first.conversation_id,
                    message=f"Question {turn_id}",
                    context={"current_page": "home"},
                    turn_id=turn_id,
                )
                for turn_id in turn_ids
            )
        )
        await asyncio.gather(*(store.record_start(alice.id, started) for started in opened))

        async with runtime.database.session() as session:
            positions = list(
                await session.scalars(
                    select(ChatMessage.position).where(
                        ChatMessage.conversation_id == first.conversation_id
                    )
                )
            )
        assert sorted(positions) == list(range(12))

        view = await store.get(alice.id, first.conversation_id)
        pairs = [view.messages[n : n + 2] for n in range(0, len(view.messages), 2)]
        assert [(q.role, a.role) for q, a in pairs] == [("user", "assistant")] * 6
        assert all(q.turn_id == a.turn_id for q, a in pairs)
        assert [q.content for q, _ in pairs[1:]] == [f"Question {q.turn_id}" for q, _ in pairs[1:]]
        assert sorted(q.turn_id or "" for q, _ in pairs) == ["t0", *turn_ids]

        # The answers finish at once too; the next turn continues after all of them, and
        # the model's history pairs each question with its own answer.
        await asyncio.gather(
            *(
                store.finish_turn(
                    alice.id,
                    started.assistant_message_id,
                    status="complete",
                    content=f"Answer {started.turn_id}",
                )
                for started in [first, *opened]
            )
        )
        after = await start_turn(
            store,
            alice.id,
            conversation_id=first.conversation_id,
            message="Summarise",
            context={"current_page": "home"},
            turn_id="t6",
        )
        history = after.model_history()
        assert [type(m) for m in history] == [ModelRequest, ModelResponse] * 6
        for request, answer in zip(history[::2], history[1::2], strict=True):
            question = str(request.parts[0].content)  # type: ignore[union-attr]
            assert answer.parts[0].content == question.replace(  # type: ignore[union-attr]
                "Question", "Answer"
            ).replace("What is EGFR?", "Answer t0")
        last = (await store.get(alice.id, first.conversation_id)).messages[-2:]
        assert [(m.role, m.turn_id) for m in last] == [("user", "t6"), ("assistant", "t6")]

        # A conversation deleted while a turn was opening: the message is not stored.
        late = await store.open_turn(
            alice.id,
            conversation_id=first.conversation_id,
            message="Still there?",
            context={"current_page": "home"},
            turn_id="t7",
        )
        await store.delete(alice.id, first.conversation_id)
        with pytest.raises(NotFoundError):
            await store.record_start(alice.id, late)
        assert await store.list(alice.id) == []
    finally:
        await runtime.close()
