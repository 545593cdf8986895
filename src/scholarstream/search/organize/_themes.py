"""Themes without a model: the subject terms (MeSH, keywords, else title words) that
split the results best, picked greedily.

A subject is written many ways ("Dogs" in MeSH, "dog" as a keyword, "DOGS" in Web of
Science's Keywords Plus, "CONGESTIVE-HEART-FAILURE" for "congestive heart failure"):
every way is counted under one key (``theme_key``), and the theme is named by the most
readable of the ways its papers wrote it (``readable_label``). ``merge_themes`` applies
the same rule to themes named elsewhere (by a model)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from scholarstream.mesh import normalize, singular_word, us_spelling
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
_LETTERS = re.compile(r"[^\W\d_]")
# Words a subject keeps in capitals when the rest of it is lowered: roman numerals and
# single letters ("CHIARI I MALFORMATION" -> "Chiari I malformation", "HEPATITIS B").
_KEPT_CAPITALS = re.compile(r"(?:I{1,3}|IV|VI{0,3}|IX|X{1,3}|[A-Z])[,;:.)]?")


def theme_key(term: str) -> str:
    """One key for every way of writing a subject: case, accents, hyphens and punctuation,
    British or US spelling, the singular or plural of each word. "Dogs", "dog" and "DOGS"
    -> "dog"; "CONGESTIVE-HEART-FAILURE" -> "congestive heart failure"; "Tumours" ->
    "tumor". Irregular plurals and Latin singulars are known ("mice", "diagnoses",
    "diabetes" stays)."""
    singular = " ".join(singular_word(word) or word for word in normalize(term).split())
    return us_spelling(singular)


_GENERIC_KEYS = frozenset(theme_key(term) for term in _GENERIC)
_TITLE_STOP_KEYS = frozenset(theme_key(term) for term in _TITLE_STOP)


def _shouted(form: str) -> bool:
    letters = _LETTERS.findall(form)
    return len(letters) > 1 and all(letter.isupper() for letter in letters)


def _slug(form: str) -> bool:
    """Words joined by hyphens instead of spaces ("congestive-heart-failure")."""
    return " " not in form.strip() and form.count("-") >= 2


def _display(form: str) -> str:
    """A way of writing a subject as a label: words apart, not in capitals, the first
    letter upper case ("CONGESTIVE-HEART-FAILURE" -> "Congestive heart failure")."""
    text = " ".join(form.split())
    if _slug(text):
        text = text.replace("-", " ")
    if _shouted(text):
        text = " ".join(w if _KEPT_CAPITALS.fullmatch(w) else w.lower() for w in text.split(" "))
    first = text.split(" ", 1)[0]
    if any(c.isupper() for c in first[1:]):  # "mRNA vaccines", "HbA1c" keep their case
        return text
    return text[:1].upper() + text[1:]


def readable_label(forms: Counter[str]) -> str:
    """The label of a theme from the ways its papers wrote it: a way written with its own
    case and spaces before capitals or hyphen-joined words, then the most used, then the
    shortest."""
    best = min(forms, key=lambda f: (_shouted(f) or _slug(f), -forms[f], len(f), f))
    return _display(best)


def _subject_terms(paper: ScoredPaper) -> dict[str, str]:
    """The paper's subject terms by key, each as the paper wrote it."""
    record = paper.record
    terms: dict[str, str] = {}
    for term in [*record.mesh_terms, *record.keywords]:
        key = theme_key(term)
        if key and key not in _GENERIC_KEYS:
            terms.setdefault(key, term.strip())
    return terms


def _title_terms(paper: ScoredPaper) -> dict[str, str]:
    terms: dict[str, str] = {}
    for word in _WORD.findall(paper.record.title.lower()):
        key = theme_key(word)
        if key and key not in _TITLE_STOP_KEYS:
            terms.setdefault(key, word)
    return terms


def _pick(
    papers: Sequence[ScoredPaper], terms_of: dict[str, dict[str, str]]
) -> list[tuple[str, list[str]]]:
    unassigned = {p.id for p in papers}
    total = len(papers)
    themes: list[tuple[str, list[str]]] = []
    while unassigned and len(themes) < MAX_THEMES:
        counts: Counter[str] = Counter()
        for pid in unassigned:
            counts.update(terms_of[pid].keys())
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
    groups = []
    for key, members in _pick(papers, terms_of):
        forms = Counter(terms_of[pid][key] for pid in members)
        groups.append(PaperGroup(key=key, label=readable_label(forms), paper_ids=members))
    assigned = {pid for g in groups for pid in g.paper_ids}
    rest = [p.id for p in papers if p.id not in assigned]
    if rest:
        groups.append(PaperGroup(key=OTHER_THEME, label="Other", paper_ids=rest))
    return groups


def merge_themes(groups: Iterable[PaperGroup]) -> list[PaperGroup]:
    """Themes whose labels are one subject written two ways ("Dogs", "Dog") as one theme,
    where the first of them was, named by the most readable label (the larger theme's
    way first); every label shown as ``readable_label`` writes it."""
    merged: dict[str, tuple[PaperGroup, Counter[str]]] = {}
    for group in groups:
        key = theme_key(group.label) or group.key
        if key not in merged:
            merged[key] = (group, Counter({group.label: len(group.paper_ids)}))
            continue
        first, forms = merged[key]
        ids = list(dict.fromkeys([*first.paper_ids, *group.paper_ids]))
        forms[group.label] += len(group.paper_ids)
        merged[key] = (first.model_copy(update={"paper_ids": ids}), forms)
    return [
        group.model_copy(update={"label": readable_label(forms)})
        for group, forms in merged.values()
    ]
