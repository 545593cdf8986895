"""``reframe_for_retrieval`` (seed 004): the query a retrieval step or tool gets. On a
follow-up the message updates the prior topic's slots (a new value replaces the old one
of its kind, "also" adds) and the query is rendered from them, bounded; a new question is
rendered from its own slots. Deterministic, with or without a model."""

from __future__ import annotations

from scholarstream.chat.continuity._state import Intent
from scholarstream.understanding import follow, read_message


def reframe_for_retrieval(
    text: str,
    intent: Intent,
    last_refined_query: str,
    scope_summary: str,
    is_followup: bool,
) -> str:
    message = read_message(text)
    if not is_followup or not last_refined_query.strip():
        return message.as_topic().query() or text.strip()
    thread = read_message(f"{last_refined_query}, {scope_summary}").as_topic()
    return follow(thread, message).topic.query() or last_refined_query
