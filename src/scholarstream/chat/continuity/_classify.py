"""Classification of a message against the thread (seed 004): a new question, a slot fill
(only changes the scope: "what about in Texas?", "only since 2020"), a follow-up
continuation (an aspect, a comparison, an addition, a replaced value), or a closing. The
reading is ``scholarstream.understanding``'s: the message's slots, and how they update
what the conversation is about."""

from __future__ import annotations

import datetime as dt

from scholarstream.chat.continuity._state import Classification, Scope, ThreadState
from scholarstream.understanding import (
    FollowUp,
    MessageReading,
    TopicReading,
    follow,
    read_message,
)


def thread_topic(state: ThreadState, today: dt.date | None = None) -> TopicReading | None:
    """What the thread is about; a thread stored before slots were kept is read from its
    refined query and scope."""
    if state.reading is not None:
        return state.reading
    if not state.refined_query.strip():
        return None
    return read_message(f"{state.refined_query}, {state.scope.summary()}", today).as_topic()


def read_turn(
    text: str, state: ThreadState, today: dt.date | None = None
) -> tuple[Classification, FollowUp, MessageReading]:
    """How ``text`` reads against the thread, what the thread is about after it, and the
    message's own reading."""
    message = read_message(text, today)
    thread = thread_topic(state, today)
    last = state.last_turns[-1] if state.last_turns else None
    if last is not None and last.intent == "closing" and not _follows_on(message):
        thread = None  # "thanks, that's all" closed that topic: a subject now is a new one
    follow_up = follow(thread, message)
    classification = Classification(
        intent=follow_up.reading,
        reason=follow_up.reason,
        slots=Scope.of_topic(message.as_topic()),
    )
    return classification, follow_up, message


def _follows_on(message: MessageReading) -> bool:
    """After a closing, a message that still speaks of the closed topic: it refers back,
    adds, compares, drops or replaces something ("tai chi instead of yoga?"), or names
    no subject of its own."""
    return (
        message.refers_back
        or message.adds
        or message.compares
        or message.instead
        or bool(message.dropped)
        or not message.subject()
    )


def classify_message(text: str, state: ThreadState, today: dt.date | None = None) -> Classification:
    return read_turn(text, state, today)[0]
