"""What the user's feedback asks of the next strategy: a direction (broaden or narrow),
terms to add or exclude, and restrictions ("only RCTs", "English only", "only in
children"), read from ``UserFeedback``'s fields and, simply, from its free text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from scholarstream.search.core import UserFeedback
from scholarstream.understanding import (
    clean_phrase,
    concept_phrases,
    find_exclusions,
    find_languages,
    find_study_types,
)

Direction = Literal["broaden", "narrow"]

# Longer cues first: "more specific" must not count as "more".
_NARROW_CUES = (
    "too many",
    "too broad",
    "too general",
    "too much",
    "more specific",
    "more precise",
    "more focused",
    "narrower",
    "narrow",
    "fewer",
    "irrelevant",
    "not relevant",
    "off-topic",
    "off topic",
    "unrelated",
    "noise",
    "noisy",
    "focus",
    "only",
)
_BROADEN_CUES = (
    "too few",
    "too narrow",
    "too specific",
    "not enough",
    "nothing found",
    "no results",
    "few results",
    "broaden",
    "broader",
    "wider",
    "widen",
    "expand",
    "missing",
    "more",
)
_REQUIRE = re.compile(
    r"\b(?:only|just|focus(?:ed)?\s+on|specifically(?:\s+on)?|limited\s+to|restricted\s+to|"
    r"must\s+(?:include|mention))\s+(?:on\s+|about\s+|in\s+|those\s+(?:in|on|about)\s+)?"
    r"(?P<what>[^,.;!?]+)",
    re.I,
)


@dataclass(frozen=True)
class FeedbackReading:
    direction: Direction | None = None
    add_terms: tuple[str, ...] = ()
    exclude_terms: tuple[str, ...] = ()
    study_types: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    """Concepts the user insists on ("only in children"): AND-ed, never dropped."""


def _count(cues: tuple[str, ...], text: str) -> tuple[int, str]:
    hits = 0
    for cue in cues:
        pattern = re.compile(rf"\b{re.escape(cue)}\b")
        hits += len(pattern.findall(text))
        text = pattern.sub(" ", text)
    return hits, text


def direction_of(text: str) -> Direction | None:
    """'too many irrelevant papers' -> narrow; 'too few, broaden it' -> broaden."""
    lowered = text.lower()
    narrow, rest = _count(_NARROW_CUES, lowered)
    broaden, _ = _count(_BROADEN_CUES, rest)
    if narrow > broaden:
        return "narrow"
    if broaden > narrow:
        return "broaden"
    return None


def read_feedback(feedback: UserFeedback | None) -> FeedbackReading:
    if feedback is None:
        return FeedbackReading()
    text = " ".join(feedback.free_text_feedback.split())
    text, excluded = find_exclusions(text)
    text, languages = find_languages(text)
    text, study_types = find_study_types(text)
    required: list[str] = []
    for match in _REQUIRE.finditer(text):
        phrases = concept_phrases(clean_phrase(match.group("what")))
        required.extend(" ".join(alternatives) for alternatives in phrases[:1])
    direction = feedback.direction or direction_of(feedback.free_text_feedback)
    return FeedbackReading(
        direction=direction,
        add_terms=tuple(feedback.add_terms),
        exclude_terms=tuple(dict.fromkeys([*feedback.exclude_terms, *excluded])),
        study_types=tuple(study_types),
        languages=tuple(languages),
        required=tuple(dict.fromkeys(required)),
    )
