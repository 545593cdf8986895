"""Which kind of study a record reports, from its publication types and title."""

from __future__ import annotations

import re
from dataclasses import dataclass

from scholarstream.papers import Paper, Record


@dataclass(frozen=True)
class StudyTypeRule:
    label: str
    publication_types: tuple[str, ...]
    title_pattern: re.Pattern[str] | None = None

    def matches(self, publication_types: set[str], title: str) -> bool:
        if publication_types & set(self.publication_types):
            return True
        return bool(self.title_pattern and self.title_pattern.search(title))


# Most specific first: a meta-analysis is also a review.
RULES: tuple[StudyTypeRule, ...] = (
    StudyTypeRule(
        "Meta-analysis", ("meta-analysis",), re.compile(r"\bmeta[- ]?analys[ie]s\b", re.I)
    ),
    StudyTypeRule(
        "Systematic review",
        ("systematic review",),
        re.compile(r"\bsystematic (literature )?review\b", re.I),
    ),
    StudyTypeRule(
        "Randomized controlled trial",
        ("randomized controlled trial", "randomised controlled trial"),
        re.compile(r"\brandomi[sz]ed\b.*\btrial\b", re.I),
    ),
    StudyTypeRule(
        "Clinical trial",
        ("clinical trial", "clinical trial, phase ii", "clinical trial, phase iii"),
        re.compile(r"\b(clinical|phase [1-4i]+) trial\b", re.I),
    ),
    StudyTypeRule(
        "Observational study",
        ("observational study", "cohort study"),
        re.compile(r"\b(cohort|case[- ]control|cross[- ]sectional|observational)\b", re.I),
    ),
    StudyTypeRule("Review", ("review",), re.compile(r"\breview\b", re.I)),
    StudyTypeRule("Preprint", ("preprint", "posted-content")),
    StudyTypeRule("Case report", ("case reports", "case report"), re.compile(r"\bcase report\b")),
)

REGISTERED_TRIAL = "Registered trial"
OTHER = "Other"


def study_type(record: Record) -> str:
    if not isinstance(record, Paper):
        return REGISTERED_TRIAL
    types = {t.strip().lower() for t in record.publication_types}
    for rule in RULES:
        if rule.matches(types, record.title):
            return rule.label
    return OTHER
