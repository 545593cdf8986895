"""Classification of a message against the thread (seed 004): a new question, a slot fill
(only changes the scope: "what about in Texas?", "only since 2020") or a follow-up
continuation (short, refers back with it/their/that..., after a substantive turn)."""

from __future__ import annotations

import re

from scholarstream.chat.continuity._entities import (
    beyond_aspects,
    changes_subject,
    extract_scope,
    refers_back,
)
from scholarstream.chat.continuity._state import Classification, ThreadState
from scholarstream.understanding import content_words, words

FOLLOWUP_MAX_WORDS = 14
SLOT_FILL_MAX_CONTENT_WORDS = 1
# "what about dapagliflozin specifically": a narrowing names at most this many new terms.
NARROWING_MAX_TERMS = 2
_NARROWING = re.compile(
    r"^\W*(what about|how about|and|also|any|just|only|what does the|what did the)\b", re.I
)


def classify_message(text: str, state: ThreadState) -> Classification:
    slots, phrases = extract_scope(text)
    if not state.refined_query:
        return Classification(intent="new_question", reason="no earlier topic", slots=slots)
    if changes_subject(text):
        return Classification(intent="new_question", reason="changes the subject", slots=slots)
    content = content_words(text, drop=phrases)
    own = beyond_aspects(content)
    short = len(words(text)) <= FOLLOWUP_MAX_WORDS
    if not slots.is_empty() and len(own) <= SLOT_FILL_MAX_CONTENT_WORDS and short:
        return Classification(intent="slot_fill", reason="only changes the scope", slots=slots)
    last = state.last_turns[-1] if state.last_turns else None
    substantive = last is not None and bool(last.assistant.strip() or last.queries)
    if short and substantive and content and not own:
        return Classification(
            intent="followup_continuation", reason="asks about an aspect of the topic", slots=slots
        )
    if short and substantive and _NARROWING.match(text) and len(own) <= NARROWING_MAX_TERMS:
        return Classification(
            intent="followup_continuation", reason="narrows the topic", slots=slots
        )
    if short and refers_back(text) and substantive:
        return Classification(
            intent="followup_continuation",
            reason="short, refers back to the last turn",
            slots=slots,
        )
    if not content:
        return Classification(
            intent="followup_continuation", reason="names no topic of its own", slots=slots
        )
    return Classification(intent="new_question", reason="names its own topic", slots=slots)
