"""Each source's query language, as a registry of renderers: a ``QueryPlan`` in, the
query text and filters that source's module accepts out (see each module's
``QUERY_SYNTAX`` and ``FILTERS``). A source without a renderer of its own gets plain
keywords. Dates are not written here: they travel on the strategy, and every source
module applies them its own way (PubMed mindate/maxdate, OpenAlex publication-date
filters, arXiv submittedDate, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from scholarstream.search.core import ConceptBlock, SourceQuery
from scholarstream.search.query._plan import QueryPlan
from scholarstream.understanding import LANGUAGE_NAMES

MAX_TERMS_PER_BLOCK = 12


@dataclass(frozen=True)
class Rendered:
    query: str
    filters: dict[str, str] = field(default_factory=dict)


Renderer = Callable[[QueryPlan], Rendered]


@dataclass(frozen=True)
class _Syntax:
    render: Renderer
    max_length: int


_SYNTAXES: dict[str, _Syntax] = {}


def register_syntax(source: str, *, max_length: int = 1000) -> Callable[[Renderer], Renderer]:
    """Registers how ``source`` writes a plan; ``max_length`` caps its query text (longer
    plans lose their last synonyms first)."""

    def decorator(render: Renderer) -> Renderer:
        if source in _SYNTAXES:
            raise ValueError(f"query syntax for {source!r} is registered twice")
        _SYNTAXES[source] = _Syntax(render, max_length)
        return render

    return decorator


def syntax_sources() -> list[str]:
    return sorted(_SYNTAXES)


def render(source: str, plan: QueryPlan) -> SourceQuery:
    """The plan in ``source``'s own syntax, shortened to fit the source's limit."""
    syntax = _SYNTAXES.get(source) or _Syntax(_keywords, 500)
    rendered = syntax.render(plan)
    while len(rendered.query) > syntax.max_length:
        shorter = _without_last_synonym(plan)
        if shorter is None:
            break
        plan = shorter
        rendered = syntax.render(plan)
    return SourceQuery(
        source=source, query=rendered.query, filters=rendered.filters, limit=plan.limit
    )


def _without_last_synonym(plan: QueryPlan) -> QueryPlan | None:
    """The plan with one term fewer: MeSH headings go first, then the last synonym of the
    block with the most terms; every block keeps its first term."""
    blocks = list(plan.blocks)
    widest = max(
        range(len(blocks)), key=lambda i: len(blocks[i].terms) + len(blocks[i].mesh_headings)
    )
    block = blocks[widest]
    if block.mesh_headings and len(block.terms) <= 1:
        blocks[widest] = block.model_copy(update={"mesh_headings": block.mesh_headings[:-1]})
    elif len(block.terms) > 1:
        blocks[widest] = block.model_copy(update={"terms": block.terms[:-1]})
    elif block.mesh_headings:
        blocks[widest] = block.model_copy(update={"mesh_headings": block.mesh_headings[:-1]})
    else:
        return None
    return replace(plan, blocks=tuple(blocks))


# --- shared writing helpers ----------------------------------------------------------

_PLAIN_WORD = re.compile(r"[A-Za-z0-9]+")


def clean(term: str) -> str:
    """A term without double quotes or repeated spaces (they would break the syntax)."""
    return " ".join(term.replace('"', " ").split())


def quoted(term: str) -> str:
    return f'"{clean(term)}"'


def maybe_quoted(term: str) -> str:
    """A bare word as is; anything with spaces or punctuation as a phrase."""
    term = clean(term)
    return term if _PLAIN_WORD.fullmatch(term) else f'"{term}"'


def terms_of(block: ConceptBlock) -> list[str]:
    terms = [clean(t) for t in (block.terms or [block.concept])]
    unique = list(dict.fromkeys(t for t in terms if t))
    return unique[:MAX_TERMS_PER_BLOCK]


def group(parts: Sequence[str]) -> str:
    return "(" + " OR ".join(parts) + ")"


def boolean(
    plan: QueryPlan,
    term: Callable[[str, bool], str],
    *,
    extra: Sequence[str] = (),
    not_: str = "NOT",
) -> str:
    """``(a OR b) AND (c) ... NOT (x OR y)`` with each term written by ``term(text,
    title_only)``; ``extra`` clauses are AND-ed on."""
    clauses = [
        group([term(t, plan.in_title(i)) for t in terms_of(block)])
        for i, block in enumerate(plan.blocks)
    ]
    query = " AND ".join([*clauses, *extra])
    if plan.exclude:
        query += f" {not_} " + group([term(t, False) for t in plan.exclude])
    return query


def keyword_text(plan: QueryPlan, *, synonyms: int = 0, extra: Sequence[str] = ()) -> str:
    """Plain words: each block's first term (and up to ``synonyms`` more)."""
    words: list[str] = []
    for block in plan.blocks:
        words.extend(terms_of(block)[: 1 + synonyms])
    words.extend(extra)
    return " ".join(dict.fromkeys(words))


# --- study types, per source ------------------------------------------------------------

# Canonical study type -> PubMed clause (publication type, or MeSH for designs without one).
PUBMED_STUDY_TYPES = {
    "randomized controlled trial": '"Randomized Controlled Trial"[pt]',
    "systematic review": '"Systematic Review"[pt]',
    "meta-analysis": '"Meta-Analysis"[pt]',
    "review": '"Review"[pt]',
    "clinical trial": '"Clinical Trial"[pt]',
    "case report": '"Case Reports"[pt]',
    "practice guideline": '"Practice Guideline"[pt]',
    "observational study": '"Observational Study"[pt]',
    "cohort study": '"Cohort Studies"[MeSH]',
    "case-control study": '"Case-Control Studies"[MeSH]',
    "cross-sectional study": '"Cross-Sectional Studies"[MeSH]',
    "longitudinal study": '"Longitudinal Studies"[MeSH]',
    "prospective study": '"Prospective Studies"[MeSH]',
    "qualitative study": '"Qualitative Research"[MeSH]',
    "case series": '"case series"[tiab]',
}
REVIEW_TYPES = frozenset({"systematic review", "meta-analysis", "review"})
S2_PUBLICATION_TYPES = {
    "randomized controlled trial": "ClinicalTrial",
    "clinical trial": "ClinicalTrial",
    "meta-analysis": "MetaAnalysis",
    "systematic review": "Review",
    "review": "Review",
    "case report": "CaseReport",
}
TRIAL_STUDY_TYPES = {
    "randomized controlled trial": "interventional",
    "clinical trial": "interventional",
    "cohort study": "observational",
    "case-control study": "observational",
    "cross-sectional study": "observational",
    "observational study": "observational",
    "real-world study": "observational",
    "longitudinal study": "observational",
    "prospective study": "observational",
}
# How the study type is written in text, for sources that can only search words.
STUDY_TYPE_WORDS = {
    "randomized controlled trial": ("randomized controlled trial", "randomised controlled trial"),
    "meta-analysis": ("meta-analysis",),
    "systematic review": ("systematic review",),
}


def _mesh_tag(block: ConceptBlock, heading: str, title: bool) -> str:
    """[majr] for titles only, [Mesh:NoExp] for a broader heading, else [MeSH]."""
    if title:
        return "majr"
    return "Mesh:NoExp" if heading in block.mesh_unexploded else "MeSH"


def study_type_words(plan: QueryPlan) -> list[str]:
    return [w for s in plan.study_types for w in STUDY_TYPE_WORDS.get(s, (s,))]


def _only_reviews(plan: QueryPlan) -> bool:
    return bool(plan.study_types) and set(plan.study_types) <= REVIEW_TYPES


# --- the sources -------------------------------------------------------------------------


@register_syntax("pubmed", max_length=4000)
def _pubmed(plan: QueryPlan) -> Rendered:
    """``("Heading"[MeSH] OR "term"[tiab]) AND ... NOT (...)``; titles only: [ti] and
    [majr]; study types as [pt]; languages as [la]."""
    free_text = "All Fields" if plan.all_fields else "tiab"
    clauses = []
    for i, block in enumerate(plan.blocks):
        title = plan.in_title(i)
        # ("Heading"[MeSH] OR "term"[tiab] OR "synonym"[tiab]): the headings first.
        parts = [f"{quoted(h)}[{_mesh_tag(block, h, title)}]" for h in block.mesh_headings]
        if block.mesh_together and len(parts) > 1:  # (A[MeSH] AND B[MeSH]) OR "a b"[tiab]
            parts = [f"({' AND '.join(dict.fromkeys(parts))})"]
        parts += [f"{quoted(t)}[{'ti' if title else free_text}]" for t in terms_of(block)]
        clauses.append(group(list(dict.fromkeys(parts))))
    if plan.study_types:
        kinds = [PUBMED_STUDY_TYPES.get(s) or f"{quoted(s)}[tiab]" for s in plan.study_types]
        clauses.append(group(list(dict.fromkeys(kinds))))
    languages = [LANGUAGE_NAMES[c] for c in plan.languages if c in LANGUAGE_NAMES]
    if languages:
        clauses.append(group([f"{name}[la]" for name in languages]))
    query = " AND ".join(clauses)
    if plan.exclude:
        query += " NOT " + group([f"{quoted(t)}[tiab]" for t in plan.exclude])
    return Rendered(query)


@register_syntax("openalex", max_length=2000)
def _openalex(plan: QueryPlan) -> Rendered:
    """Boolean search text (OpenAlex has no field tags in ``search``); review-only study
    types as the ``type`` filter, other study types as words; languages as a filter."""
    filters: dict[str, str] = {}
    extra: list[str] = []
    if _only_reviews(plan):
        filters["type"] = "review"
    elif plan.study_types:
        extra.append(group([quoted(w) for w in study_type_words(plan)]))
    if plan.languages:
        filters["language"] = "|".join(plan.languages)
    query = boolean(plan, lambda t, _title: maybe_quoted(t), extra=extra)
    return Rendered(query, filters)


@register_syntax("arxiv", max_length=1000)
def _arxiv(plan: QueryPlan) -> Rendered:
    """Fielded: ``all:`` (or ``ti:`` when titles only), AND, OR and ANDNOT."""
    return Rendered(
        boolean(
            plan,
            lambda t, title: f"{'ti' if title else 'all'}:{maybe_quoted(t)}",
            not_="ANDNOT",
        )
    )


@register_syntax("semantic_scholar", max_length=300)
def _semantic_scholar(plan: QueryPlan) -> Rendered:
    """Relevance search takes plain keywords (no operators; hyphens become spaces): the
    concepts' own terms. Study types become the publicationTypes filter."""
    text = keyword_text(plan).replace("-", " ")
    kinds = list(
        dict.fromkeys(
            S2_PUBLICATION_TYPES[s] for s in plan.study_types if s in S2_PUBLICATION_TYPES
        )
    )
    filters = {"publicationTypes": ",".join(kinds)} if kinds else {}
    return Rendered(" ".join(text.split()), filters)


@register_syntax("crossref", max_length=500)
def _crossref(plan: QueryPlan) -> Rendered:
    """Keywords ranked by relevance (no operators): each concept and its first synonym,
    and the study type as words."""
    return Rendered(keyword_text(plan, synonyms=1, extra=study_type_words(plan)[:1]))


@register_syntax("google_scholar", max_length=256)
def _google_scholar(plan: QueryPlan) -> Rendered:
    """``"a" OR b "c" -"x"``: OR binds adjacent alternatives, words are AND-ed;
    ``intitle:`` when titles only; review-only as as_rr=1; languages as lr."""
    clauses = []
    for i, block in enumerate(plan.blocks):
        prefix = "intitle:" if plan.in_title(i) else ""
        clauses.append(" OR ".join(f"{prefix}{maybe_quoted(t)}" for t in terms_of(block)))
    filters: dict[str, str] = {}
    if _only_reviews(plan):
        filters["as_rr"] = "1"
    elif plan.study_types:
        clauses.append(" OR ".join(quoted(w) for w in study_type_words(plan)))
    if plan.languages:
        filters["lr"] = "|".join(f"lang_{code}" for code in plan.languages)
    clauses.extend(f"-{maybe_quoted(t)}" for t in plan.exclude)
    return Rendered(" ".join(clauses), filters)


@register_syntax("clinicaltrials", max_length=1500)
def _clinicaltrials(plan: QueryPlan) -> Rendered:
    """Essie: condition and intervention blocks go to their own fields (query.cond,
    query.intr); the other blocks are the all-fields query. Designs become study_type."""
    filters: dict[str, str] = {}
    rest = []
    for i, block in enumerate(plan.blocks):
        expression = " OR ".join(maybe_quoted(t) for t in terms_of(block))
        if i == plan.condition_block:
            filters["condition"] = expression
        elif i == plan.intervention_block:
            filters["intervention"] = expression
        else:
            rest.append(group([maybe_quoted(t) for t in terms_of(block)]))
    if not rest:  # the all-fields query cannot be empty: repeat the main concept there
        rest.append(group([maybe_quoted(t) for t in terms_of(plan.blocks[0])]))
    query = " AND ".join(rest)
    if plan.exclude:
        query += " NOT " + group([maybe_quoted(t) for t in plan.exclude])
    designs = {TRIAL_STUDY_TYPES[s] for s in plan.study_types if s in TRIAL_STUDY_TYPES}
    if len(designs) == 1:
        filters["study_type"] = designs.pop()
    return Rendered(query, filters)


@register_syntax("library", max_length=1000)
def _library(plan: QueryPlan) -> Rendered:
    """BM25 over words: every term of every concept (more words, more ways to match)."""
    words = [t for block in plan.blocks for t in terms_of(block)]
    return Rendered(" ".join(dict.fromkeys(words)))


def _keywords(plan: QueryPlan) -> Rendered:
    """Any other source: the concepts' own terms as plain words."""
    return Rendered(keyword_text(plan))
