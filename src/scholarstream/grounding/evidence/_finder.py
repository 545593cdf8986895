"""The evidence phase: a question turned into queries by the paper-search skills, the
library and the sources searched, duplicates merged, every work ranked for the question,
and the best kept as the evidence pack. It runs straight through: no checkpoint."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from scholarstream.embeddings import Embedder
from scholarstream.errors import InvalidInputError
from scholarstream.grounding.core import EvidencePack, as_paper
from scholarstream.grounding.evidence._models import (
    EvidenceRequest,
    EvidenceResult,
    EvidenceSearch,
    FoundIn,
    QueryUsed,
    SourceSearched,
)
from scholarstream.grounding.evidence._ranking import fused_order
from scholarstream.papers import Record, record_sources
from scholarstream.search import (
    FallbackLog,
    SearchOptions,
    SearchServices,
    SourceSearcher,
    build_skills,
    check_sources,
)
from scholarstream.search.core import QueryBuilderInput, ScoredPaper
from scholarstream.search.scoring import meaning
from scholarstream.settings import GroundingSettings
from scholarstream.sources import SourceStatus
from scholarstream.sources.library import LIBRARY_INFO

if TYPE_CHECKING:
    from scholarstream.runtime import Runtime

log = logging.getLogger(__name__)

LIBRARY = "library"


class EvidenceFinder:
    """Finds the evidence for a question with the search's own skills: the model's when
    the user has one (and ``offline`` is not asked), the deterministic ones otherwise; and
    ranks it by meaning too when ``embedder`` is given."""

    def __init__(
        self,
        services: SearchServices,
        settings: GroundingSettings,
        *,
        embedder: Embedder | None = None,
    ) -> None:
        self.services = services
        self.settings = settings
        self.embedder = embedder

    @classmethod
    def for_runtime(cls, runtime: Runtime) -> EvidenceFinder:
        """The finder of this process: its sources, library, models and settings, and the
        library's embedding model when it can run."""
        library = runtime.library
        embedder = library.semantic.embedder if library.semantic.available else None
        services = SearchServices(
            settings=runtime.settings.search,
            sources=runtime.sources,
            library=library,
            llm=runtime.llm,
            database=runtime.database,
        )
        return cls(services, runtime.settings.grounding, embedder=embedder)

    def sources_for(self, request: EvidenceRequest) -> list[str]:
        """The sources a request searches: those it names, else the configured defaults
        that can run here; the library added unless ``library`` is off."""
        hub = self.services.sources
        check_sources(hub, request.sources)
        if request.sources is not None:
            names = list(request.sources)
        else:
            known = set(hub.names())
            names = [
                name
                for name in self.services.settings.default_sources
                if name == LIBRARY or (name in known and hub.get(name).info.configured)
            ]
        names = [name for name in names if name != LIBRARY]
        if request.library:
            names.append(LIBRARY)
        if not names:
            raise InvalidInputError(
                "There is nothing to search: no source is chosen and the library is left out.",
                hint="Name a source (for example pubmed), or search your library too.",
            )
        return names

    async def find(
        self,
        owner_id: uuid.UUID,
        request: EvidenceRequest,
        *,
        on_source_done: Callable[[SourceStatus], None] | None = None,
    ) -> EvidenceResult:
        """The pack for ``request.question`` and what was searched; a source that fails is
        reported in the summary and the others still give the pack."""
        size = request.size or self.settings.pack_size
        names = self.sources_for(request)
        per_source = max(self.settings.results_per_source, size)
        options = SearchOptions(
            sources=names,
            strategy_checkpoint=False,
            results_per_source=min(per_source, 500),
            offline=request.offline,
        )
        no_model = request.offline or await self.services.llm.registry.offline_for_owner(
            self.services.database, owner_id
        )
        fallbacks = FallbackLog()
        parser, builder, searcher, deduplicator, scorer, _ = build_skills(
            self.services,
            owner_id,
            options,
            on_source_done=on_source_done,
            fallbacks=fallbacks,
            offline=no_model,
            by_meaning=False,  # fused in below, once, with this finder's embedder
        )
        if not request.library:
            # Not even in place of unreachable sources: the library was left out.
            searcher = SourceSearcher(self.services.sources, on_source_done=on_source_done)

        intent = await parser.parse(request.question)
        strategy = await builder.build(QueryBuilderInput(intent=intent))
        results = await searcher.search(strategy)
        works = await deduplicator.deduplicate(results.records)
        scored = await scorer.score(works, intent)
        ranked, by_meaning = await self._ranked(request.question, scored)

        pack = EvidencePack.of(
            request.question,
            [(as_paper(p.record), _origin(p.record, names), score) for p, score in ranked],
        )
        pack = pack.model_copy(update={"items": pack.items[:size]})
        searched = [status.source for status in results.statuses]
        found_in = [
            FoundIn(key=item.key, sources=_sources_of(item.paper, searched)) for item in pack.items
        ]
        summary = EvidenceSearch(
            queries=[
                QueryUsed(source=q.source, query=q.query, filters=dict(q.filters))
                for q in strategy.queries
            ],
            sources=[
                *(self._searched(status, found_in) for status in results.statuses),
                *self._not_searched(names, results.statuses),
            ],
            found=len(results.records),
            distinct=len(works),
            related=len(ranked),
            scored_by="rules" if no_model else "model",
            by_meaning=by_meaning,
            notices=list(results.notices),
            fallbacks=fallbacks.items,
        )
        return EvidenceResult(pack=pack, search=summary, found_in=found_in)

    async def _ranked(
        self, question: str, scored: Sequence[ScoredPaper]
    ) -> tuple[list[tuple[ScoredPaper, float]], bool]:
        """The works related to the question, best first, with their fused scores; and
        whether meaning took part (it does not when the model cannot run: words alone)."""
        closeness: list[float] | None = None
        if self.embedder is not None and scored:
            records = [paper.record for paper in scored]
            try:
                closeness = await asyncio.to_thread(meaning, self.embedder, question, records)
            except Exception:
                # The ranking by the search's score stands on its own; the summary says
                # that meaning did not take part.
                log.exception("the embedding model failed on the evidence; ranking by score")
        fusion = self.services.library.fusion
        order = fused_order([paper.score for paper in scored], closeness, fusion)
        return [(scored[i], score) for i, score in order], closeness is not None

    def _searched(self, status: SourceStatus, found_in: Sequence[FoundIn]) -> SourceSearched:
        return SourceSearched(
            source=status.source,
            label=self._label(status.source),
            ok=status.ok,
            total=status.total,
            returned=status.returned,
            in_pack=sum(1 for found in found_in if status.source in found.sources),
            unreachable=status.unreachable,
            error_code=status.error_code,
            error=status.error,
            hint=status.hint,
        )

    def _not_searched(
        self, names: Sequence[str], statuses: Sequence[SourceStatus]
    ) -> list[SourceSearched]:
        """The sources asked for that the strategy wrote no query for: said, not dropped."""
        searched = {status.source for status in statuses}
        return [
            SourceSearched(
                source=name,
                label=self._label(name),
                ok=False,
                error=f"{self._label(name)} was not searched: no query was written for it "
                "from this question.",
                hint="Search it on its own (scholarstream sources search), or word the "
                "question for it.",
            )
            for name in names
            if name not in searched
        ]

    def _label(self, name: str) -> str:
        if name == LIBRARY:
            return LIBRARY_INFO.label
        if name in self.services.sources.names():
            return self.services.sources.get(name).info.label
        return name


def _sources_of(record: Record, searched: Sequence[str]) -> list[str]:
    return [source for source in record_sources(record) if source in searched]


def _origin(record: Record, searched: Sequence[str]) -> str:
    """Where a record was found: the library when it is there (the user's own copy), else
    the first source that returned it."""
    sources = _sources_of(record, searched)
    if LIBRARY in sources:
        return LIBRARY
    return (sources or record_sources(record) or ["unknown"])[0]
