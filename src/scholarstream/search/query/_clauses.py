"""The pieces of a strategy the review compares: the top-level clauses of a Boolean query
(AND-ed and NOT-ed), what kind of limit each is, and whether a record, read offline on
its title, abstract, year, types, language and MeSH headings, passes it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from scholarstream.papers import Paper, Record, Trial
from scholarstream.search.core import ChangeKind

_OPERATOR = re.compile(r"\s+(ANDNOT|AND|NOT)\s+")
_TAG = re.compile(r"\[([^\]]*)\]")
_TITLE_TAGS = {"ti": "tiab", "majr": "mesh", "mesh major topic": "mesh"}
_FIELD_TAGS = {
    "mh": "mesh",
    "mesh terms": "mesh",
    "all fields": "tiab",
    "tw": "tiab",
    "mh:noexp": "mesh",
}
_PREFIX = re.compile(r"\b(ti|abs|all|intitle):", re.I)
STUDY_KEYS = {"publication_type", "type", "publicationTypes", "study_type", "as_rr"}
LANGUAGE_KEYS = {"language", "lr"}
DATE_KEYS = {"year", "publication_year"}
CONCEPT_KEYS = {"condition", "intervention", "mesh"}
_STUDY_WORDS = (
    "randomized controlled trial",
    "randomised controlled trial",
    "systematic review",
    "meta-analysis",
    "clinical trial",
    "cohort stud",
    "case-control stud",
    "cross-sectional stud",
    "case report",
    "observational study",
    "practice guideline",
    "review",
)
_LANGUAGE_NAMES = {
    "en": "english",
    "de": "german",
    "fr": "french",
    "es": "spanish",
    "it": "italian",
    "pt": "portuguese",
    "nl": "dutch",
    "zh": "chinese",
    "ja": "japanese",
    "ru": "russian",
}
HUMANS_CLAUSE = '("Animals"[mh] NOT "Humans"[mh])'
HUMANS_PRESENT = re.compile(r'humans"?\s*\[(?:mh|mesh)', re.I)


# --- clauses --------------------------------------------------------------------------


@dataclass(frozen=True)
class Clause:
    text: str
    negated: bool = False

    @property
    def key(self) -> str:
        return " ".join(_unwrap(self.text).lower().split())

    @property
    def field_key(self) -> str:
        """The clause with every field widened to title/abstract (and MeSH)."""
        text = self.key

        def tag(match: re.Match[str]) -> str:
            name = match.group(1).strip()
            name = _TITLE_TAGS.get(name, _FIELD_TAGS.get(name, name))
            return f"[{name}]"

        text = _TAG.sub(tag, text)
        text = re.sub(r"\bti:", "all:", text)
        return re.sub(r"\bintitle:", "", text)

    @property
    def in_title(self) -> bool:
        text = self.text.lower()
        return bool(re.search(r"\[(?:ti|majr)\]|\bti:|\bintitle:", text))

    @property
    def terms(self) -> list[str]:
        text = _TAG.sub(" ", self.text)
        text = _PREFIX.sub(" ", text)
        text = re.sub(r"[()]", " ", text)
        parts = re.split(r"\s+(?:OR|AND|NOT)\s+", text)
        found = [" ".join(p.replace('"', " ").split()).strip("-").lower() for p in parts]
        return [t for t in dict.fromkeys(found) if t]

    @property
    def tags(self) -> set[str]:
        return {t.strip().lower() for t in _TAG.findall(self.text)}


def _unwrap(text: str) -> str:
    """Without parentheses around the whole of it."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")") and _closes_at_end(text):
        text = text[1:-1].strip()
    return text


def _closes_at_end(text: str) -> bool:
    depth = 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and index < len(text) - 1:
            return False
    return True


def split_clauses(query: str) -> list[Clause]:
    """The top-level clauses of a Boolean query: AND-ed ones, then NOT-ed ones."""
    clauses: list[Clause] = []
    depth, quoted, start, negated = 0, False, 0, False
    index = 0
    while index < len(query):
        char = query[index]
        if char == '"':
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
        elif not quoted and char == ")":
            depth -= 1
        elif not quoted and depth == 0 and char.isspace():
            match = _OPERATOR.match(query, index)
            if match:
                piece = query[start:index].strip()
                if piece:
                    clauses.append(Clause(piece, negated))
                negated = match.group(1) in ("NOT", "ANDNOT")
                index = start = match.end()
                continue
        index += 1
    piece = query[start:].strip()
    if piece:
        clauses.append(Clause(piece, negated))
    return clauses


def join_clauses(clauses: Sequence[Clause], *, not_word: str = "NOT") -> str:
    kept = [c.text for c in clauses if not c.negated]
    query = " AND ".join(kept)
    for clause in clauses:
        if clause.negated:
            query += f" {not_word} {clause.text}" if query else clause.text
    return query


def kind_of(clause: Clause) -> ChangeKind:
    tags = clause.tags
    terms = clause.terms
    if "la" in tags:
        return "languages"
    if tags & {"dp", "pdat", "edat"}:
        return "dates"
    if terms and set(terms) <= {"animals", "humans", "animal", "human"}:
        return "humans"
    if clause.negated:
        return "exclusions"
    if "pt" in tags or (terms and all(any(w in t for w in _STUDY_WORDS) for t in terms)):
        return "study_types"
    return "concepts"


# --- records --------------------------------------------------------------------------


def _text_of(record: Record) -> str:
    if isinstance(record, Trial):
        parts = [record.title, record.official_title or "", record.summary or ""]
        parts += [*record.conditions, *record.keywords, *record.mesh_terms]
        parts += [i.name for i in record.interventions]
    else:
        parts = [record.title, record.abstract or "", *record.keywords, *record.mesh_terms]
    return " ".join(parts).lower()


def has(text: str, term: str) -> bool:
    term = term.lower().rstrip("*").strip()
    return bool(term) and term in text


def matches(record: Record, terms: Sequence[str], *, title_only: bool = False) -> bool:
    text = record.title.lower() if title_only else _text_of(record)
    return any(has(text, t) for t in terms)


def _types_of(record: Record) -> list[str]:
    if isinstance(record, Trial):
        return [record.study_type] if record.study_type else []
    return [t.lower() for t in record.publication_types]


def typed_as(record: Record, wanted: Sequence[str]) -> bool | None:
    """Whether the record has one of the wanted study types; None when it says none."""
    types = [t.lower() for t in _types_of(record)]
    if not types:
        return None
    wanted = [w.lower().rstrip("s") for w in wanted if w]
    return any(w in t or t in w for w in wanted for t in types)


def in_language(record: Record, wanted: Sequence[str]) -> bool | None:
    language = record.language.lower() if isinstance(record, Paper) and record.language else None
    if language is None:
        return None
    names = {w.lower() for w in wanted} | {_LANGUAGE_NAMES.get(w.lower(), "") for w in wanted}
    return language in names or _LANGUAGE_NAMES.get(language, language) in names


def animal_only(record: Record) -> bool:
    mesh = {m.lower() for m in record.mesh_terms}
    return "animals" in mesh and "humans" not in mesh
