"""Which implementation of each skill a run gets: the LLM skills when the user has a
model, the deterministic ones in offline mode; and which sources it searches."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from scholarstream.errors import InvalidInputError
from scholarstream.papers.dedup import RecordDeduplicator
from scholarstream.search._adjudicate import LLMPairAdjudicator
from scholarstream.search._fallbacks import FallbackLog
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
from scholarstream.search.scoring import (
    HybridRelevanceScorer,
    LexicalRelevanceScorer,
    LLMRelevanceScorer,
    OfflineScorer,
)
from scholarstream.sources import SourceHub, SourceInfo, SourceStatus
from scholarstream.sources.library import LIBRARY_INFO, Library, LibrarySource

if TYPE_CHECKING:
    from scholarstream.db import Database
    from scholarstream.embeddings import Embedder
    from scholarstream.llm import LLMGateway
    from scholarstream.settings import SearchSettings

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


@dataclass(frozen=True)
class SearchServices:
    """What a search run works with: the search settings, the literature sources and the
    library, and the model gateway with the database its skills record usage in."""

    settings: SearchSettings
    sources: SourceHub
    library: Library
    llm: LLMGateway
    database: Database


Skills = tuple[IntentParser, QueryBuilder, Searcher, Deduplicator, RelevanceScorer, ResultOrganizer]


def source_infos(sources: SourceHub) -> dict[str, SourceInfo]:
    return {LIBRARY: LIBRARY_INFO, **{info.name: info for info in sources.infos()}}


def check_sources(sources: SourceHub, names: Sequence[str] | None) -> None:
    if names is None:
        return
    if not names:
        raise InvalidInputError(
            "No source was chosen.", hint="Name at least one source, or leave sources out."
        )
    known = source_infos(sources)
    unknown = [name for name in names if name not in known]
    if unknown:
        raise InvalidInputError(
            f"Unknown source {', '.join(map(repr, unknown))}.",
            hint=f"Sources: {', '.join(sorted(known))}.",
        )


def chosen_sources(
    sources: SourceHub, settings: SearchSettings, options: SearchOptions
) -> list[str]:
    """The sources asked for; by default the configured defaults that can run here."""
    check_sources(sources, options.sources)
    if options.sources is not None:
        return list(dict.fromkeys(options.sources))
    infos = source_infos(sources)
    usable = [name for name in settings.default_sources if name in infos and infos[name].configured]
    return usable or [LIBRARY]


def offline_scorer(embedder: Embedder | None) -> OfflineScorer:
    """Relevance without a model: by words and meaning with an embedding model (``None``
    when semantic ranking is off or its model failed to load), else by words alone."""
    return LexicalRelevanceScorer() if embedder is None else HybridRelevanceScorer(embedder)


def library_embedder(library: Library) -> Embedder | None:
    """The library's embedding model when semantic ranking is on and the model can run."""
    semantic = library.semantic
    return semantic.embedder if semantic.available else None


def build_skills(
    services: SearchServices,
    owner_id: uuid.UUID,
    options: SearchOptions,
    *,
    on_source_done: Callable[[SourceStatus], None] | None = None,
    fallbacks: FallbackLog | None = None,
    offline: bool | None = None,
    by_meaning: bool = True,
) -> Skills:
    """The run's skills; the LLM ones record their fallbacks in ``fallbacks`` (one log per
    run, shared with the workflow that shows and stores them). ``offline``: whether this
    user has no model (``ModelRegistry.offline_for_owner``); unset, the server's.
    ``by_meaning``: the offline relevance uses the library's embedding model when it can
    run (false for a caller that fuses meaning in itself)."""
    settings = services.settings
    fallbacks = fallbacks if fallbacks is not None else FallbackLog()
    sources = chosen_sources(services.sources, settings, options)
    infos = {name: info for name, info in source_infos(services.sources).items() if name in sources}
    per_source = options.results_per_source or settings.results_per_source
    mesh = MeshVocabulary.load(settings.mesh_file)
    rule_builder = RuleQueryBuilder(
        sources=sources, source_infos=infos, mesh=mesh, results_per_source=per_source
    )
    searcher = SourceSearcher(
        services.sources,
        local={LIBRARY: LibrarySource(services.library, owner_id)},
        on_source_done=on_source_done,
    )
    lexical = offline_scorer(library_embedder(services.library) if by_meaning else None)
    if offline is None:
        offline = services.llm.offline
    if options.offline or offline:
        return (
            RuleIntentParser(),
            rule_builder,
            searcher,
            RecordDeduplicator(),
            lexical,
            RuleResultOrganizer(),
        )
    llm = GatewaySkillLLM(services.llm, services.database, owner_id)
    adjudicator = (
        LLMPairAdjudicator(llm, fallbacks=fallbacks) if settings.llm_adjudication else None
    )
    return (
        LLMIntentParser(llm, fallbacks=fallbacks),
        LLMQueryBuilder(
            llm,
            sources=sources,
            source_infos=infos,
            mesh=mesh,
            fallback=rule_builder,
            results_per_source=per_source,
            fallbacks=fallbacks,
        ),
        searcher,
        RecordDeduplicator(adjudicator=adjudicator),
        LLMRelevanceScorer(
            llm, batch_size=settings.scoring_batch_size, fallback=lexical, fallbacks=fallbacks
        ),
        LLMResultOrganizer(llm, fallbacks=fallbacks),
    )
