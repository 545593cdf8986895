"""Suggestions the rule-based guide builds from a reading of what the user typed: names
for the stream, and purposes, each a different aim for the same subject."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from scholarstream.streams.core._reading import Reading

MAX_NAME_CHARS = 80
_SMALL_WORDS = frozenset("a an and as at by for from in of on or the to vs with".split())  # noqa: SIM905
# Words in the text that make an aim about trials, or about regulation, worth offering.
_CLINICAL_CUES = re.compile(
    r"\b(trials?|patients?|therap\w*|treatments?|drugs?|diseases?|clinical|disorders?)\b",
    re.IGNORECASE,
)
_REGULATORY_CUES = re.compile(
    r"\b(regulat\w*|polic(y|ies)|guidelines?|approvals?|legislation|law|compliance)\b",
    re.IGNORECASE,
)


def _unique(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    kept: list[str] = []
    for value in values:
        if value and value.lower() not in seen:
            seen.add(value.lower())
            kept.append(value)
    return kept


def title_case(phrase: str) -> str:
    """ "heart failure and SGLT2 inhibitors" -> "Heart Failure and SGLT2 Inhibitors"."""
    words = phrase.split()
    return " ".join(
        w if (i and w.lower() in _SMALL_WORDS) else w[:1].upper() + w[1:]
        for i, w in enumerate(words)
    )


def joined(values: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    if len(values) <= 1:
        return "".join(values)
    return f"{', '.join(values[:-1])} and {values[-1]}"


def name_ideas(reading: Reading, *, limit: int = 3) -> list[str]:
    """Stream names: the topics ("Heart Failure and SGLT2 Inhibitors"), an organisation
    and its topic ("Palatin Technologies Melanocortin"), a watch on the main topic."""
    topics = [title_case(t) for t in reading.terms]
    organisations = list(reading.organisations)
    ideas: list[str] = []
    if organisations and topics:
        ideas.append(f"{organisations[0]} {topics[0]}")
    if len(topics) > 1:
        ideas.append(f"{topics[0]} and {topics[1]}")
    if topics:
        ideas.append(f"{topics[0]} Watch")
    elif organisations:
        ideas.append(f"{organisations[0]} Watch")
    fitting = [idea for idea in ideas if len(idea) <= MAX_NAME_CHARS]
    return _unique(fitting)[:limit]


def purpose_ideas(reading: Reading) -> list[str]:
    """Different aims for the subject the user named: keeping up, evidence for a review,
    what named organisations do (or new methods), trials or policy where the text is about
    them. Empty when there is no subject to name."""
    subject = joined(list(reading.terms[:3]))
    if not subject:
        return []
    ideas = [
        f"Keep up with new research on {subject}",
        f"Collect evidence on {subject} for a review, a grant or a guideline",
    ]
    if reading.organisations:
        ideas.append(f"Follow what {joined(list(reading.organisations))} publish on {subject}")
    else:
        ideas.append(f"Spot new methods, data and results on {subject}")
    if _CLINICAL_CUES.search(reading.text):
        ideas.append(f"Track clinical trials on {subject}")
    elif _REGULATORY_CUES.search(reading.text):
        ideas.append(f"Watch for regulatory and policy changes on {subject}")
    return ideas
