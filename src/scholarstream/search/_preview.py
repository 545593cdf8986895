"""A question's search strategy without searching: what ``scholarstream search strategy``
prints and ``bench/mesh_strategy.py`` measures. The question is parsed and the strategy
built by the run's own skills (a model's, or the rule-based ones), and every concept's
MeSH mapping is shown as the rule-based mapping finds it."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from scholarstream.search._mesh import ConceptMapping
from scholarstream.search.core import (
    IntentParser,
    ParsedIntent,
    QueryBuilder,
    QueryBuilderInput,
    SearchStrategy,
)
from scholarstream.search.query import RuleQueryBuilder

# A MeSH-tagged term of a PubMed query: "Heading"[MeSH], Heading[mh], "Heading"[majr].
_MESH_TAG = re.compile(
    r'(?:"(?P<quoted>[^"]+)"|(?P<bare>[A-Za-z][\w\-]*))\s*'
    r"\[(?:mesh|mh|mesh terms|majr|mesh major topic|mesh:noexp|mh:noexp)\]",
    re.I,
)


class HeadingOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    term: str
    heading: str
    how: str
    matched: str
    description: str


class ConceptMeshOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    concept: str
    headings: list[HeadingOut] = Field(default_factory=list)


class StrategyPreview(BaseModel):
    """A strategy as it would be searched, with the concepts' MeSH mapping."""

    model_config = ConfigDict(extra="forbid")

    question: str
    intent: ParsedIntent
    strategy: SearchStrategy
    mesh: list[ConceptMeshOut] = Field(default_factory=list)
    builder: str = Field(description="rules, or model")

    def searched_headings(self) -> list[str]:
        """The MeSH headings the strategy searches: PubMed's [MeSH] terms, else the
        concept blocks' headings (a strategy without a PubMed query)."""
        query = self.strategy.query_for("pubmed")
        if query is not None:
            names = (m.group("quoted") or m.group("bare") for m in _MESH_TAG.finditer(query.query))
            return list(dict.fromkeys(" ".join(n.split()) for n in names))
        return list(dict.fromkeys(h for b in self.strategy.concepts for h in b.mesh_headings))


def _mesh_out(mapping: ConceptMapping) -> ConceptMeshOut:
    return ConceptMeshOut(
        concept=mapping.concept,
        headings=[
            HeadingOut(
                term=m.term,
                heading=m.heading,
                how=m.how,
                matched=m.matched,
                description=m.describe(),
            )
            for m in mapping.mappings
        ],
    )


async def preview_strategy(
    question: str,
    *,
    parser: IntentParser,
    builder: QueryBuilder,
    rules: RuleQueryBuilder,
) -> StrategyPreview:
    """The strategy ``builder`` writes for ``question`` as ``parser`` reads it; ``rules``
    (the rule-based builder of the same sources and vocabulary) gives the MeSH mapping."""
    intent = await parser.parse(question)
    strategy = await builder.build(QueryBuilderInput(intent=intent))
    return StrategyPreview(
        question=question,
        intent=intent,
        strategy=strategy,
        mesh=[_mesh_out(m) for m in rules.mappings(intent)],
        builder="rules" if builder is rules else "model",
    )
