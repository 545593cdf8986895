"""What the user's feedback asks of the next strategy: a direction (broaden or narrow),
terms to add or exclude, and restrictions ("only RCTs", "English only", "only in
children", "only human studies", "since 2015"), read from ``UserFeedback``'s fields and,
simply, from its free text.

Every request keeps the user's own words (``FeedbackReading.said``), so that each change a
strategy makes can name the phrase it answers (``search.query.review_strategy``). A
restriction is not a direction: "only human studies" asks for a humans limit, not for a
narrower search in general.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from scholarstream.search.core import ChangeKind, UserFeedback
from scholarstream.understanding import (
    HUMANS_ONLY,
    clean_phrase,
    concept_phrases,
    find_dates,
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
# "in the title", "title only": a request to match in titles.
_TITLE = re.compile(r"\b(?:in\s+(?:the\s+)?titles?|titles?\s+only)\b", re.I)


@dataclass(frozen=True)
class FeedbackReading:
    direction: Direction | None = None
    add_terms: tuple[str, ...] = ()
    exclude_terms: tuple[str, ...] = ()
    study_types: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    """Concepts the user insists on ("only in children"): AND-ed, never dropped."""
    humans: bool = False
    """Studies in humans only ("only human studies", "no animal studies")."""
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    title: bool = False
    """The user asked to match in titles."""
    said: dict[ChangeKind, str] = field(default_factory=dict)
    """For each kind of change the feedback asks for, the user's own words."""

    def phrase(self, kind: ChangeKind) -> str | None:
        return self.said.get(kind)


def _count(cues: tuple[str, ...], text: str) -> tuple[int, str, list[str]]:
    hits = 0
    found: list[str] = []
    for cue in cues:
        pattern = re.compile(rf"\b{re.escape(cue)}\b")
        matches = pattern.findall(text)
        hits += len(matches)
        found.extend(matches)
        text = pattern.sub(" ", text)
    return hits, text, found


def _direction(text: str) -> tuple[Direction | None, str | None]:
    lowered = text.lower()
    narrow, rest, narrow_cues = _count(_NARROW_CUES, lowered)
    broaden, _, broaden_cues = _count(_BROADEN_CUES, rest)
    if narrow > broaden:
        return "narrow", narrow_cues[0]
    if broaden > narrow:
        return "broaden", broaden_cues[0]
    return None, None


def direction_of(text: str) -> Direction | None:
    """'too many irrelevant papers' -> narrow; 'too few, broaden it' -> broaden."""
    return _direction(text)[0]


def _taken(before: str, after: str) -> str | None:
    """The words ``after`` lost from ``before`` (the phrase a reader consumed)."""
    old, new = before.split(), after.split()
    runs = [
        " ".join(old[a : a + size])
        for tag, a, size in (
            (op[0], op[1], op[2] - op[1])
            for op in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
        )
        if tag in ("delete", "replace") and size
    ]
    phrase = " … ".join(runs).strip(" ,;.")
    return phrase or None


def _consume(
    text: str,
    reader: Callable[[str], tuple[str, list[str]]],
    kind: ChangeKind,
    said: dict[ChangeKind, str],
) -> tuple[str, list[str]]:
    rest, found = reader(text)
    rest = " ".join(rest.split())
    if found:
        phrase = _taken(text, rest) or ", ".join(found)
        # "only RCTs": the user's words include the "only" the reader left behind.
        only = re.search(rf"\b(?:only|just)\s+{re.escape(phrase)}", text, re.I)
        said[kind] = only.group(0) if only else phrase
    return rest, found


def read_feedback(
    feedback: UserFeedback | None, *, today: dt.date | None = None
) -> FeedbackReading:
    if feedback is None:
        return FeedbackReading()
    said: dict[ChangeKind, str] = {}
    text = " ".join(feedback.free_text_feedback.split())

    humans = HUMANS_ONLY.search(text)
    if humans:
        said["humans"] = humans.group(0).strip()
        text = " ".join(HUMANS_ONLY.sub(" ", text).split())
    title = _TITLE.search(text)
    if title:
        said["title"] = title.group(0)
        text = " ".join(_TITLE.sub(" ", text).split())
    text, excluded = _consume(text, find_exclusions, "exclusions", said)
    text, languages = _consume(text, find_languages, "languages", said)
    text, study_types = _consume(text, find_study_types, "study_types", said)
    before = text
    text, dates = find_dates(text, today or dt.date.today())
    text = " ".join(text.split())
    if dates.date_from or dates.date_to:
        said["dates"] = _taken(before, text) or "dates"

    required: list[str] = []
    required_words: list[str] = []
    for match in _REQUIRE.finditer(text):
        phrases = concept_phrases(clean_phrase(match.group("what")))
        found_concepts = [" ".join(alternatives) for alternatives in phrases[:1]]
        if found_concepts:
            required.extend(found_concepts)
            required_words.append(match.group(0).strip())
    if required_words:
        said["concepts"] = "; ".join(required_words)
    # A restriction is not a request to narrow in general: its "only" is spent.
    rest = _REQUIRE.sub(" ", text)
    for spent in ("only", "just"):
        if any(kind in said for kind in ("humans", "languages", "study_types", "dates", "title")):
            rest = re.sub(rf"\b{spent}\b", " ", rest, flags=re.I)
    direction, cue = _direction(rest)
    if feedback.direction is not None:
        direction, cue = feedback.direction, feedback.direction
    if direction is not None and cue is not None:
        said["direction"] = cue
    if feedback.add_terms:
        said["terms"] = ", ".join(feedback.add_terms)
    if feedback.exclude_terms:
        listed = ", ".join(feedback.exclude_terms)
        said["exclusions"] = f"{said['exclusions']}; {listed}" if "exclusions" in said else listed
    return FeedbackReading(
        direction=direction,
        add_terms=tuple(feedback.add_terms),
        exclude_terms=tuple(dict.fromkeys([*feedback.exclude_terms, *excluded])),
        study_types=tuple(study_types),
        languages=tuple(languages),
        required=tuple(dict.fromkeys(required)),
        humans=humans is not None,
        date_from=dates.date_from,
        date_to=dates.date_to,
        title=title is not None,
        said=said,
    )
