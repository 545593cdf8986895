"""``LLMQueryBuilder``: a model writes the strategy, and the builder checks it.

The model sees the intent, each source's query syntax and filters, the MeSH headings the
vocabulary found for the concepts, the previous and the rejected strategies and the
user's feedback. Its answer is repaired where it can be (queries for unknown sources,
blank queries, unbalanced ones and filters a source does not accept are dropped; MeSH
headings the vocabulary does not know are searched as [tiab] words) and refused where
it cannot: no usable query left, or a strategy the user rejected. A refused answer is
asked for once more with the reason; after that, or when the model fails, the rule
builder writes the strategy, and its rationale says so.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_ai import Agent

from scholarstream.search._bounds import Items, OneOf, Text
from scholarstream.search._fallbacks import FALLBACK_ERRORS, FallbackLog
from scholarstream.search._llm import SkillLLM
from scholarstream.search._mesh import MeshVocabulary
from scholarstream.search.core import (
    ConceptBlock,
    FallbackReason,
    ParsedIntent,
    QueryBuilderInput,
    SearchStrategy,
    SourceQuery,
)
from scholarstream.search.query._rules import RuleQueryBuilder
from scholarstream.sources import SourceInfo

FEATURE = "search.query"

INSTRUCTIONS = """\
You are an expert literature searcher (an information specialist). Write one search
strategy for the request: one query per listed source, each in that source's own syntax
as described, using only that source's listed filters (a filter it does not list is an
error).

- Combine the concepts with AND and each concept's synonyms with OR; quote phrases.
- PubMed: each term as "term"[tiab], plus "Heading"[MeSH] using only the MeSH headings
  given (others do not exist); study types as [pt], e.g. "Randomized Controlled
  Trial"[pt]; languages as english[la]; exclusions with NOT.
- Put the publication date range in date_from/date_to (ISO dates), never in a query.
- Follow the user's feedback: to broaden, add synonyms, drop the least essential concept,
  widen the dates, lift restrictions; to narrow, search titles, add study types, drop
  loose synonyms, require every concept. Excluded terms go in NOT clauses.
- Never propose a strategy identical to a rejected one.
- Leave out a source that cannot help (a trial registry for a question that is not
  clinical); every other listed source gets a query.
- concepts: one block per concept with its terms and MeSH headings.
- rationale: one or two sentences, saying what changed from the previous strategy and why.
"""

# A MeSH-tagged term: quoted, or one bare word standing alone (after a bracket, an
# operator or the start), so "Type 2[mh]" in an unquoted phrase is left as written.
_MESH_TAG = re.compile(
    r'(?:"(?P<quoted>[^"]+)"|(?:\A|(?<=\()|(?<=AND )|(?<=OR )|(?<=NOT ))'
    r"(?P<bare>[A-Za-z][\w\-]*))\s*"
    r"\[(?P<tag>mesh|mh|mesh terms|majr|mesh major topic|mesh:noexp|mh:noexp)\]",
    re.I,
)


_WHY: dict[FallbackReason, str] = {
    "unusable": "its answer could not be used",
    "late": "it did not answer in time",
    "failed": "the call failed",
    "not_configured": "no model is set up for it",
}


# The schema is what a local server's grammar follows: the queries come first and are
# required, each non-empty, so a small model cannot spend its budget on the rationale and
# leave the strategy empty; lists and strings are bounded so the answer fits the
# ``search.query`` budget (700 tokens). Validation is looser (``search._bounds``), so a
# flawed answer is still repaired by ``_checked``.
_Word = Annotated[str, Text(80)]


class _QueryOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str
    query: Annotated[str, Text(1500, least=1)]
    filters: dict[str, str] = Field(default_factory=dict)


class _BlockOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    concept: Annotated[str, Text(80, least=1)]
    terms: Annotated[list[_Word], Items(8)] = Field(default_factory=list)
    mesh_headings: Annotated[list[_Word], Items(4)] = Field(default_factory=list)


class _StrategyOut(BaseModel):
    """SearchStrategy without its checks, so a flawed answer can be repaired."""

    model_config = ConfigDict(extra="forbid")

    queries: Annotated[list[_QueryOut], Items(12, least=1)]
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    concepts: Annotated[list[_BlockOut], Items(6)] = Field(default_factory=list)
    rationale: Annotated[str, Text(300)] = ""


def _output_type(sources: Sequence[str]) -> type[_StrategyOut]:
    """``_StrategyOut`` whose schema names the chosen sources (``enum``) and allows one
    query each (in the schema only: a second query for a source is dropped with a note by
    ``_checked``, and the queries after it are kept)."""
    query = create_model(
        "_QueryOut",
        __base__=_QueryOut,
        source=(Annotated[str, OneOf(tuple(sources))], ...),
    )
    return create_model(
        "_StrategyOut",
        __base__=_StrategyOut,
        queries=(Annotated[list[query], Items(max(1, len(sources)), least=1, cut=False)], ...),
    )


# A PubMed field tag: [MeSH], [tiab], [mh], [pt], ...
_FIELD_TAG = re.compile(r"\[[A-Za-z: ]+\]")
# Punctuation a model leaves at a term's edges ("Mobility,").
_TERM_EDGES = re.compile(r"^[\s,;:.]+|[\s,;:.]+$")


def balanced(query: str) -> bool:
    """Parentheses close in order and double quotes pair up."""
    depth = 0
    for char in query:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0 and query.count('"') % 2 == 0


_LIMITS: dict[str, Callable[[ParsedIntent], object]] = {
    # A filter of these kinds narrows by what the question must state: one the question
    # does not ask for is the model's invention (a small model adds "trial phase" or a
    # year to any strategy), and it can empty the search.
    "publication_type": lambda intent: intent.study_types,
    "type": lambda intent: intent.study_types,
    "language": lambda intent: intent.languages,
    "lr": lambda intent: intent.languages,
    "year": lambda intent: intent.date_from or intent.date_to,
}


def _asked_for(key: str, intent: ParsedIntent) -> bool:
    stated = _LIMITS.get(key)
    return stated is None or bool(stated(intent))


class LLMQueryBuilder:
    def __init__(
        self,
        llm: SkillLLM,
        *,
        sources: Sequence[str],
        mesh: MeshVocabulary,
        fallback: RuleQueryBuilder,
        source_infos: Mapping[str, SourceInfo] | None = None,
        results_per_source: int = 50,
        fallbacks: FallbackLog | None = None,
    ) -> None:
        self._llm = llm
        self.fallbacks = fallbacks if fallbacks is not None else FallbackLog()
        self.sources = list(dict.fromkeys(sources))
        self.mesh = mesh
        self.fallback = fallback
        self.source_infos = dict(source_infos or {})
        self.results_per_source = results_per_source
        self._agent: Agent[None, _StrategyOut] = Agent(
            output_type=_output_type(self.sources), instructions=INSTRUCTIONS, name="query_builder"
        )

    async def build(self, data: QueryBuilderInput) -> SearchStrategy:
        prompt = self._prompt(data)
        reason: str | None = None
        for _attempt in range(2):
            asked = prompt
            if reason is not None:
                asked += (
                    f"\n\nYour previous answer could not be used: it {reason}. "
                    "Answer again with a valid strategy that differs from every rejected one."
                )
            try:
                output = await self._llm.structured(self._agent, asked, feature=FEATURE)
            except FALLBACK_ERRORS as exc:
                # The rationale is shown to the user: the plain reason, not the error's text.
                why = _WHY[self.fallbacks.failed(FEATURE, exc).reason]
                return await self._fall_back(data, f"the model failed ({why})")
            strategy, reason = self._checked(output, data)
            if strategy is not None:
                return strategy
        self.fallbacks.unusable(FEATURE, f"the model's strategy {reason}, twice")
        return await self._fall_back(data, f"the model's strategy {reason}, twice")

    async def _fall_back(self, data: QueryBuilderInput, why: str) -> SearchStrategy:
        strategy = await self.fallback.build(data)
        rationale = f"Written by the rule-based builder because {why}. {strategy.rationale}"
        return strategy.model_copy(update={"rationale": rationale.strip()})

    # --- the prompt --------------------------------------------------------------------

    def _source_notes(self) -> str:
        lines = []
        for name in self.sources:
            info = self.source_infos.get(name)
            if info is None:
                lines.append(f"- {name}: plain keywords. Filters: none.")
                continue
            filters = "; ".join(f"{k}: {v}" for k, v in info.filters.items()) or "none"
            lines.append(f"- {name} ({info.label}): {info.query_syntax} Filters: {filters}")
        return "\n".join(lines)

    def _mesh_notes(self, data: QueryBuilderInput) -> str:
        """Each concept's headings as the rule builder maps them (entry terms, phrase
        parts, the tree, the question's own words), and the ideas of the question the
        rules search as concepts of their own."""
        if not self.mesh:
            return "(no MeSH vocabulary is available: use [tiab] terms only)"
        found = self.fallback.question_mesh(data.intent)
        lines = [
            f"- {mapping.concept}: {', '.join(mapping.headings) or 'none found'}"
            for mapping in found.mappings
        ]
        return "\n".join(lines) or "(no concepts)"

    @staticmethod
    def _searches(strategies: Sequence[SearchStrategy]) -> str:
        shown = [
            {
                "queries": [q.model_dump(exclude={"limit"}) for q in s.queries],
                "date_from": str(s.date_from) if s.date_from else None,
                "date_to": str(s.date_to) if s.date_to else None,
                "rationale": s.rationale,
            }
            for s in strategies
        ]
        return json.dumps(shown, indent=1) if shown else "none"

    def _prompt(self, data: QueryBuilderInput) -> str:
        feedback = (
            data.user_feedback.model_dump_json(exclude={"marked_relevant", "marked_irrelevant"})
            if data.user_feedback is not None
            else "none"
        )
        return "\n\n".join(
            [
                f"Request: {data.intent.question}",
                f"Parsed intent: {data.intent.model_dump_json(exclude={'question'})}",
                f"Sources:\n{self._source_notes()}",
                f"MeSH headings for the concepts:\n{self._mesh_notes(data)}",
                f"Previous strategies (oldest first): {self._searches(data.previous_strategies)}",
                f"Rejected strategies (never again): {self._searches(data.rejected_strategies)}",
                f"User feedback on the last strategy or results: {feedback}",
            ]
        )

    # --- checking the answer -----------------------------------------------------------

    def _known_mesh(self, query: str, notes: list[str]) -> str:
        """MeSH-tagged terms the vocabulary does not know, as [tiab] words instead."""
        if not self.mesh:
            return query

        def replace(match: re.Match[str]) -> str:
            name = match.group("quoted") or match.group("bare")
            if name in self.mesh:
                return match.group(0)
            notes.append(f"'{name}' is no MeSH heading, searched as a title/abstract word")
            return f'"{name}"[tiab]'

        return _MESH_TAG.sub(replace, query)

    def _query(
        self, raw: _QueryOut, notes: list[str], intent: ParsedIntent | None
    ) -> SourceQuery | None:
        """``raw`` checked; with ``intent``, filters it does not ask for are dropped too."""
        text = " ".join(raw.query.split())
        if not text:
            notes.append(f"dropped the empty query for {raw.source}")
            return None
        if not balanced(text):
            notes.append(f"dropped the {raw.source} query: unbalanced parentheses or quotes")
            return None
        info = self.source_infos.get(raw.source)
        allowed = info.filters if info is not None else {}
        filters = {k: v for k, v in raw.filters.items() if k in allowed and v.strip()}
        refused = sorted(set(raw.filters) - set(filters))
        if refused:
            notes.append(f"dropped {raw.source} filter(s) it does not accept: {', '.join(refused)}")
        unasked = sorted(k for k in filters if intent and not _asked_for(k, intent))
        if unasked:
            for key in unasked:
                filters.pop(key)
            notes.append(
                f"dropped {raw.source} filter(s) the question does not ask for: "
                f"{', '.join(unasked)}"
            )
        if raw.source == "pubmed":
            text = self._known_mesh(text, notes)
            if "mesh" in filters and filters["mesh"] not in self.mesh and self.mesh:
                notes.append(f"dropped the unknown MeSH filter '{filters.pop('mesh')}'")
        return SourceQuery(
            source=raw.source, query=text, filters=filters, limit=self.results_per_source
        )

    def _blocks(self, answered: Sequence[_BlockOut]) -> list[ConceptBlock]:
        blocks = [
            ConceptBlock(**b.model_dump()).model_copy(
                update={"terms": [t for t in (_TERM_EDGES.sub("", t) for t in b.terms) if t]}
            )
            for b in answered
            if b.concept.strip()
        ]
        if not self.mesh:
            return blocks
        checked = []
        for block in blocks:
            known = [h for h in block.mesh_headings if h in self.mesh]
            unknown = [h for h in block.mesh_headings if h not in self.mesh]
            checked.append(
                block.model_copy(update={"terms": [*block.terms, *unknown], "mesh_headings": known})
            )
        return checked

    def _checked(
        self, output: _StrategyOut, data: QueryBuilderInput
    ) -> tuple[SearchStrategy | None, str | None]:
        """The usable strategy, or ``None`` and the reason it cannot be used."""
        notes: list[str] = []
        queries: dict[str, SourceQuery] = {}
        for raw in output.queries:
            if raw.source not in self.sources:
                notes.append(f"dropped a query for '{raw.source}', which is not a chosen source")
                continue
            if raw.source in queries:
                notes.append(f"dropped a second query for {raw.source}")
                continue
            # Feedback may ask for limits the question did not state.
            query = self._query(raw, notes, None if data.user_feedback else data.intent)
            if query is not None:
                queries[raw.source] = query
        pubmed = queries.get("pubmed")
        if pubmed is not None and self.mesh and not _FIELD_TAG.search(pubmed.query):
            # A PubMed query without [MeSH] or [tiab] searches every field loosely and
            # none of the headings: the rules' query for PubMed is used instead.
            ruled = self.fallback.build_now(data)
            replacement = next((q for q in ruled.queries if q.source == "pubmed"), None)
            if replacement is not None:
                queries["pubmed"] = replacement
                notes.append(
                    "used the rule-based PubMed query: the model's had no [MeSH] or [tiab] tags"
                )
        if not queries:
            detail = f" ({'; '.join(notes)})" if notes else ""
            return None, f"had no usable query{detail}"
        date_from, date_to = output.date_from, output.date_to
        if date_from and date_to and date_from > date_to:
            date_from, date_to = date_to, date_from
            notes.append("swapped the reversed date range")
        rationale = " ".join(output.rationale.split())
        if notes:
            rationale = f"{rationale} Checks: {'; '.join(notes)}.".strip()
        try:
            strategy = SearchStrategy(
                queries=list(queries.values()),
                date_from=date_from,
                date_to=date_to,
                concepts=self._blocks(output.concepts),
                rationale=rationale,
            )
        except ValidationError as exc:
            return None, f"was not a valid strategy ({exc.errors()[0]['msg']})"
        if strategy.fingerprint() in {s.fingerprint() for s in data.rejected_strategies}:
            return None, "repeats a strategy the user rejected"
        return strategy, None
