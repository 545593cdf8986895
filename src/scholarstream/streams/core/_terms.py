"""Name ideas for a stream, drawn from what the user typed (the rule-based guide). The
key phrases and organisation names come from ``scholarstream.understanding``."""

from __future__ import annotations

from collections.abc import Iterable

from scholarstream.understanding import proper_names, topic_phrases


def _unique(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    kept: list[str] = []
    for value in values:
        if value and value.lower() not in seen:
            seen.add(value.lower())
            kept.append(value)
    return kept


def title_case(phrase: str) -> str:
    return " ".join(w[:1].upper() + w[1:] for w in phrase.split())


def name_ideas(text: str, *, limit: int = 3) -> list[str]:
    """Stream names from the purpose: "<Organisation> <Topic>", "<...> Monitor", ..."""
    names = proper_names(text)
    topics = [title_case(p) for p in topic_phrases(text)]
    subject = names[0] if names else (topics[0] if topics else "")
    if not subject:
        return []
    topic = next((t for t in topics if t.lower() != subject.lower()), "")
    ideas = [
        f"{subject} {topic}".strip(),
        f"{subject} Monitor",
        f"{topic or subject} Intelligence",
        f"{subject} Watch",
    ]
    return _unique(idea[:120].strip() for idea in ideas)[:limit]
