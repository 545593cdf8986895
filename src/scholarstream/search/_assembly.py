"""Which implementation of each skill a run gets: the LLM skills when the user has a
model, the deterministic ones in offline mode; and which sources it searches."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from scholarstream.errors import InvalidInputError
from scholarstream.papers.dedup import RecordDeduplicator
from scholarstream.search._adjudicate import LLMPairAdjudicator
from scholarstream.search._llm import GatewaySkillLLM
from scholarstream.search._mesh import MeshVocabulary
from scholarstream.search._searcher import SourceSearcher
from scholarstream.search.core import (
    Deduplicator,
    IntentParser,
    QueryBuilder,
    RelevanceScorer,
    ResultOrganizer,
    Searcher,
)
from scholarstream.search.intent import LLMIntentParser, RuleIntentParser
from scholarstream.search.organize import LLMResultOrganizer, RuleResultOrganizer
from scholarstream.search.query import LLMQueryBuilder, RuleQueryBuilder
from scholarstream.search.scoring import LexicalRelevanceScorer, LLMRelevanceScorer
from scholarstream.sources import SourceInfo, SourceStatus
from scholarstream.sources.library import LibrarySource
from scholarstream.sources.library.source import INFO as LIBRARY_INFO

if TYPE_CHECKING:
    from scholarstream.runtime import Runtime

LIBRARY = "library"


class SearchOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sources: list[str] | None = Field(
        default=None, description="Sources to search; default: the configured ones."
    )
    strategy_checkpoint: bool = Field(
        default=True, description="Stop to confirm the strategy before searching."
    )
    results_per_source: int | None = Field(default=None, ge=1, le=500)
    offline: bool = Field(
        default=False, description="Use the deterministic skills even when a model is set."
    )


Skills = tuple[IntentParser, QueryBuilder, Searcher, Deduplicator, RelevanceScorer, ResultOrganizer]


def source_infos(runtime: Runtime) -> dict[str, SourceInfo]:
    return {LIBRARY: LIBRARY_INFO, **{info.name: info for info in runtime.sources.infos()}}


def check_sources(runtime: Runtime, names: Sequence[str] | None) -> None:
    if names is None:
        return
    if not names:
        raise InvalidInputError(
            "No source was chosen.", hint="Name at least one source, or leave sources out."
        )
    known = source_infos(runtime)
    unknown = [name for name in names if name not in known]
    if unknown:
        raise InvalidInputError(
            f"Unknown source {', '.join(map(repr, unknown))}.",
            hint=f"Sources: {', '.join(sorted(known))}.",
        )


def chosen_sources(runtime: Runtime, options: SearchOptions) -> list[str]:
    """The sources asked for; by default the configured defaults that can run here."""
    check_sources(runtime, options.sources)
    if options.sources is not None:
        return list(dict.fromkeys(options.sources))
    infos = source_infos(runtime)
    usable = [
        name
        for name in runtime.settings.search.default_sources
        if name in infos and infos[name].configured
    ]
    return usable or [LIBRARY]


def build_skills(
    runtime: Runtime,
    owner_id: uuid.UUID,
    options: SearchOptions,
    *,
    on_source_done: Callable[[SourceStatus], None] | None = None,
) -> Skills:
    settings = runtime.settings.search
    sources = chosen_sources(runtime, options)
    infos = {name: info for name, info in source_infos(runtime).items() if name in sources}
    per_source = options.results_per_source or settings.results_per_source
    mesh = MeshVocabulary.load(settings.mesh_file)
    rule_builder = RuleQueryBuilder(
        sources=sources, source_infos=infos, mesh=mesh, results_per_source=per_source
    )
    searcher = SourceSearcher(
        runtime.sources,
        local={LIBRARY: LibrarySource(runtime.library, owner_id)},
        on_source_done=on_source_done,
    )
    lexical = LexicalRelevanceScorer()
    if options.offline or runtime.llm.offline:
        return (
            RuleIntentParser(),
            rule_builder,
            searcher,
            RecordDeduplicator(),
            lexical,
            RuleResultOrganizer(),
        )
    llm = GatewaySkillLLM(runtime.llm, runtime.database, owner_id)
    adjudicator = LLMPairAdjudicator(llm) if settings.llm_adjudication else None
    return (
        LLMIntentParser(llm),
        LLMQueryBuilder(
            llm,
            sources=sources,
            source_infos=infos,
            mesh=mesh,
            fallback=rule_builder,
            results_per_source=per_source,
        ),
        searcher,
        RecordDeduplicator(adjudicator=adjudicator),
        LLMRelevanceScorer(llm, batch_size=settings.scoring_batch_size, fallback=lexical),
        LLMResultOrganizer(llm),
    )
