"""Seed 004's reading of a message against the thread: the scope slots it names (as a
``Scope``), whether it refers back or changes the subject, and which of its words only
ask about an aspect of the topic in play. The words and slots themselves are read by
``scholarstream.understanding``."""

from __future__ import annotations

import re

from scholarstream.chat.continuity._state import Scope
from scholarstream.understanding import BACK_REFERENCES, read_slots, words

# "the biggest one", "that one", "which ones": "one" standing for something said before.
_ONE_RE = re.compile(
    r"\b(?:the|that|this|which|each|first|second|last|other)\s+(?:\w+\s+)?ones?\b", re.I
)
# Words that only say the user is changing the subject.
_SWITCH_RE = re.compile(
    r"\b(forget (?:that|it|about that)|different (?:question|topic)|switching gears|"
    r"change of (?:topic|subject)|new (?:question|topic)|unrelated|something else)\b",
    re.I,
)
# Aspects of a topic: a question made only of these (and numbers) asks about the topic
# in play ("what were the main adverse events?", "any data beyond 5 years?").
ASPECTS = frozenset(
    (
        "adverse",
        "approval",
        "approved",
        "benefit",
        "benefits",
        "common",
        "competitors",
        "contraindications",
        "cost",
        "costs",
        "coverage",
        "data",
        "dosing",
        "dose",
        "durability",
        "earnings",
        "effects",
        "efficacy",
        "events",
        "evidence",
        "guidelines",
        "interactions",
        "label",
        "labeling",
        "latest",
        "long-term",
        "main",
        "monitoring",
        "mortality",
        "outcomes",
        "pipeline",
        "price",
        "pricing",
        "recent",
        "results",
        "risks",
        "safety",
        "side",
        "status",
        "survival",
        "trial",
        "trials",
        "warnings",
        "year",
        "years",
        "beyond",
        "website",
        # Kinds of evidence: "only RCTs", "any meta-analyses on that?"
        "rct",
        "rcts",
        "randomized",
        "randomised",
        "meta-analysis",
        "meta-analyses",
        "systematic",
        "reviews",
        "review",
        "studies",
        "study",
        "cohort",
        "observational",
        "published",
        "papers",
        "articles",
    )
)


def refers_back(text: str) -> bool:
    return any(w.lower() in BACK_REFERENCES for w in words(text)) or bool(_ONE_RE.search(text))


def changes_subject(text: str) -> bool:
    return bool(_SWITCH_RE.search(text))


def beyond_aspects(content: list[str]) -> list[str]:
    """The content words that are not aspects of a topic or numbers."""
    return [w for w in content if w.lower() not in ASPECTS and not w.isdigit()]


def extract_scope(text: str) -> tuple[Scope, list[str]]:
    """The slots ``text`` names, and the exact phrases they were read from."""
    slots, phrases = read_slots(text)
    scope = Scope(
        jurisdictions=list(slots.jurisdictions),
        date_range=slots.date_range,
        phases=list(slots.phases),
        populations=list(slots.populations),
        organisations=list(slots.organisations),
    )
    return scope, phrases
