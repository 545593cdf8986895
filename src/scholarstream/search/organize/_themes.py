"""Themes without a model: the subject terms (MeSH, keywords, else title words) that
split the results best, picked greedily."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from scholarstream.search.core import PaperGroup, ScoredPaper

MAX_THEMES = 6
OTHER_THEME = "other"

# MeSH check tags and other terms that describe nearly every clinical paper.
_GENERIC = {
    "humans", "human", "male", "female", "adult", "aged", "middle aged", "young adult",
    "adolescent", "child", "infant", "animals", "aged, 80 and over", "mice", "rats",
    "treatment outcome", "retrospective studies", "prospective studies", "risk factors",
    "time factors", "follow-up studies", "cohort studies", "child, preschool",
}  # fmt: skip
_WORD = re.compile(r"[a-z][a-z0-9-]{3,}")
_TITLE_STOP = {
    "with", "from", "that", "this", "study", "using", "among", "their", "after", "versus",
    "between", "effect", "effects", "patients", "based", "analysis", "results", "during",
    "trial", "review", "randomized", "randomised", "controlled", "systematic", "meta-analysis",
}  # fmt: skip


def _subject_terms(paper: ScoredPaper) -> set[str]:
    record = paper.record
    terms = {t.strip().lower() for t in [*record.mesh_terms, *record.keywords] if t.strip()}
    return {t for t in terms if t not in _GENERIC}


def _title_terms(paper: ScoredPaper) -> set[str]:
    return {w for w in _WORD.findall(paper.record.title.lower()) if w not in _TITLE_STOP}


def _pick(
    papers: Sequence[ScoredPaper], terms_of: dict[str, set[str]]
) -> list[tuple[str, list[str]]]:
    unassigned = {p.id for p in papers}
    total = len(papers)
    themes: list[tuple[str, list[str]]] = []
    while unassigned and len(themes) < MAX_THEMES:
        counts: Counter[str] = Counter()
        for pid in unassigned:
            counts.update(terms_of[pid])
        # A term on (nearly) every paper separates nothing; one on a single paper is no group.
        candidates = [
            (n, term) for term, n in counts.items() if n >= 2 and n <= max(2, 0.8 * total)
        ]
        if not candidates:
            break
        _, term = max(candidates, key=lambda c: (c[0], -len(c[1]), c[1]))
        members = [p.id for p in papers if p.id in unassigned and term in terms_of[p.id]]
        themes.append((term, members))
        unassigned -= set(members)
    return themes


def rule_themes(papers: Sequence[ScoredPaper]) -> list[PaperGroup]:
    if not papers:
        return []
    with_subjects = sum(1 for p in papers if _subject_terms(p))
    use_subjects = with_subjects >= len(papers) / 2
    terms_of = {p.id: (_subject_terms(p) if use_subjects else _title_terms(p)) for p in papers}
    groups = [
        PaperGroup(key=term, label=term[:1].upper() + term[1:], paper_ids=members)
        for term, members in _pick(papers, terms_of)
    ]
    assigned = {pid for g in groups for pid in g.paper_ids}
    rest = [p.id for p in papers if p.id not in assigned]
    if rest:
        groups.append(PaperGroup(key=OTHER_THEME, label="Other", paper_ids=rest))
    return groups
