"""The broadening and narrowing ladder: fixed, ordered steps, so that "broader" and
"narrower" always mean the same next strategy, and a rejected strategy can be stepped
past deterministically.

Level 0 is the strategy the intent asks for; level +n has taken the first n broadening
steps, level -n the first n narrowing steps. A step that would change nothing (no dates
to widen, a single concept left) is skipped, so neighbouring levels always differ.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from scholarstream.understanding import is_abbreviation, years_before

Role = Literal["population", "condition", "intervention", "comparison", "outcome", "other"]

# The order concepts are given up in when broadening: outcomes are often unreported in
# abstracts, comparators and populations are the next most restrictive.
_DROP_ORDER: tuple[Role, ...] = (
    "outcome",
    "comparison",
    "population",
    "other",
    "condition",
    "intervention",
)
# What narrowing adds to a clinical question that named no study type: the designs
# that answer clinical questions best.
CLINICAL_EVIDENCE = ("randomized controlled trial", "systematic review", "meta-analysis")


@dataclass(frozen=True)
class DraftConcept:
    term: str
    synonyms: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    mesh: tuple[str, ...] = ()
    role: Role = "other"
    required: bool = False
    # The headings name parts of the concept: searched together (AND), not each alone.
    mesh_together: bool = False
    # Broader headings, searched as indexed (not exploded).
    mesh_unexploded: tuple[str, ...] = ()

    def terms(self, shape: Shape) -> list[str]:
        if shape.main_only:
            return [self.term]
        synonyms = list(self.synonyms)
        if shape.strong_only:
            synonyms = [s for s in synonyms if not is_abbreviation(s)]
        if shape.related:
            synonyms += self.related
        return list(dict.fromkeys([self.term, *synonyms]))


@dataclass(frozen=True)
class Shape:
    """One rung of the ladder: which concepts, which terms, which restrictions."""

    concepts: tuple[DraftConcept, ...]
    study_types: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    clinical: bool = False
    related: bool = False
    strong_only: bool = False
    main_only: bool = False
    title_blocks: int = 0
    all_fields: bool = False


Step = Callable[[Shape, dt.date], tuple[Shape, str] | None]


def _names(concepts: tuple[DraftConcept, ...]) -> str:
    return ", ".join(f"'{c.term}'" for c in concepts)


def _add_related(shape: Shape, today: dt.date) -> tuple[Shape, str] | None:
    with_related = [c for c in shape.concepts if c.related]
    if shape.related or not with_related:
        return None
    added = sorted({r for c in with_related for r in c.related})
    return replace(shape, related=True), f"added related terms ({', '.join(added)})"


def _widen_dates(shape: Shape, today: dt.date) -> tuple[Shape, str] | None:
    if shape.date_from is None and shape.date_to is None:
        return None
    if shape.date_from is None:
        return replace(shape, date_to=None), "removed the end of the date range"
    span = max(5, ((shape.date_to or today) - shape.date_from).days // 365)
    start = years_before(shape.date_from, span)
    return (
        replace(shape, date_from=start, date_to=None),
        f"widened the date range to {start.year} onwards",
    )


def _all_fields(shape: Shape, today: dt.date) -> tuple[Shape, str] | None:
    if shape.all_fields:
        return None
    return replace(
        shape, all_fields=True
    ), "searched all fields in PubMed, not only titles and abstracts"


def _drop_dates(shape: Shape, today: dt.date) -> tuple[Shape, str] | None:
    if shape.date_from is None and shape.date_to is None:
        return None
    return replace(shape, date_from=None, date_to=None), "removed the date range"


def _droppable(shape: Shape) -> DraftConcept | None:
    if len(shape.concepts) < 2:
        return None
    candidates = [c for c in shape.concepts[1:] if not c.required]
    for role in _DROP_ORDER:
        of_role = [c for c in candidates if c.role == role]
        if of_role:
            return of_role[-1]
    return None


def _drop_concept(shape: Shape, today: dt.date) -> tuple[Shape, str] | None:
    weakest = _droppable(shape)
    if weakest is None:
        return None
    kept = tuple(c for c in shape.concepts if c is not weakest)
    return (
        replace(shape, concepts=kept, title_blocks=min(shape.title_blocks, len(kept))),
        f"dropped the concept '{weakest.term}'",
    )


def _lift_restrictions(shape: Shape, today: dt.date) -> tuple[Shape, str] | None:
    if not (shape.study_types or shape.languages):
        return None
    return replace(shape, study_types=(), languages=()), "lifted the study-type and language limits"


def _strong_synonyms(shape: Shape, today: dt.date) -> tuple[Shape, str] | None:
    weak = [s for c in shape.concepts for s in c.synonyms if is_abbreviation(s)]
    if shape.strong_only or shape.main_only or not weak:
        return None
    return replace(shape, strong_only=True), f"dropped ambiguous abbreviations ({', '.join(weak)})"


def _add_study_types(shape: Shape, today: dt.date) -> tuple[Shape, str] | None:
    if shape.study_types or not shape.clinical:
        return None
    return (
        replace(shape, study_types=CLINICAL_EVIDENCE),
        "limited to randomized trials, systematic reviews and meta-analyses",
    )


def _main_in_title(shape: Shape, today: dt.date) -> tuple[Shape, str] | None:
    if shape.title_blocks >= 1:
        return None
    return replace(shape, title_blocks=1), f"required '{shape.concepts[0].term}' in the title"


def _recent_only(shape: Shape, today: dt.date) -> tuple[Shape, str] | None:
    if shape.date_from is None:
        start = years_before(today, 10)
        return replace(shape, date_from=start), f"limited to {start.year} onwards"
    end = shape.date_to or today
    if (end - shape.date_from).days < 2 * 365:
        return None
    start = shape.date_from + (end - shape.date_from) / 2
    return replace(shape, date_from=start), f"limited to {start.year} onwards"


def _all_in_title(shape: Shape, today: dt.date) -> tuple[Shape, str] | None:
    if shape.title_blocks >= len(shape.concepts):
        return None
    return replace(shape, title_blocks=len(shape.concepts)), "required every concept in the title"


def _main_terms_only(shape: Shape, today: dt.date) -> tuple[Shape, str] | None:
    if shape.main_only or not any(c.synonyms for c in shape.concepts):
        return None
    return replace(shape, main_only=True), "searched each concept's own term only, no synonyms"


BROADEN: tuple[Step, ...] = (
    _add_related,
    _widen_dates,
    _drop_concept,
    _lift_restrictions,
    _all_fields,
    _drop_concept,
    _drop_dates,
)
NARROW: tuple[Step, ...] = (
    _strong_synonyms,
    _add_study_types,
    _main_in_title,
    _recent_only,
    _all_in_title,
    _main_terms_only,
)


@dataclass(frozen=True)
class Rung:
    shape: Shape
    level: int
    steps: tuple[str, ...]
    """What each step from level 0 did, in order."""


def rung(start: Shape, level: int, today: dt.date) -> Rung | None:
    """The shape ``level`` effective steps away from ``start``; ``None`` past the end."""
    steps = BROADEN if level > 0 else NARROW
    shape, done = start, list[str]()
    for step in steps:
        if len(done) == abs(level):
            break
        taken = step(shape, today)
        if taken is not None:
            shape, description = taken
            done.append(description)
    if len(done) < abs(level):
        return None
    return Rung(shape, level, tuple(done))
