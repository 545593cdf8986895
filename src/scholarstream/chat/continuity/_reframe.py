"""``reframe_for_retrieval`` (seed 004): the query a retrieval step or tool gets. On a
follow-up it merges the prior topic and the scope into the text; a new question keeps its
own words. Deterministic, with or without a model."""

from __future__ import annotations

import re

from scholarstream.chat.continuity._entities import extract_scope
from scholarstream.chat.continuity._state import Intent, Scope
from scholarstream.understanding import content_words


def reframe_for_retrieval(
    text: str,
    intent: Intent,
    last_refined_query: str,
    scope_summary: str,
    is_followup: bool,
) -> str:
    if not is_followup or not last_refined_query.strip():
        # The user's own words, in their order (a place or a year included).
        return _join(content_words(text)) or text.strip()
    slots, phrases = extract_scope(text)
    own = content_words(text, drop=phrases)
    scope, _ = extract_scope(scope_summary)
    prior = _without_replaced_slots(last_refined_query, slots)
    terms = prior.split()
    for word in own:
        if word.lower() not in {t.lower() for t in terms}:
            terms.append(word)
    query = _join(terms)
    for term in scope.merged_with(slots).terms():
        if term.lower() not in query.lower():
            query = f"{query} {term}"
    return query.strip()


def _without_replaced_slots(query: str, scope: Scope) -> str:
    """``query`` without the slot phrases of the kinds ``scope`` sets: a new place, date
    range or phase replaces the old one."""
    _, phrases = extract_scope(query)
    replaced = []
    for phrase in phrases:
        one, _ = extract_scope(phrase)
        if (
            (one.jurisdictions and scope.jurisdictions)
            or (one.date_range and scope.date_range)
            or (one.phases and scope.phases)
            or (one.populations and scope.populations)
            or (one.organisations and scope.organisations)
        ):
            replaced.append(phrase)
    for phrase in replaced:
        query = re.sub(re.escape(phrase), " ", query, flags=re.IGNORECASE)
    return " ".join(query.split())


def _join(terms: list[str]) -> str:
    return " ".join(t for t in terms if t)
