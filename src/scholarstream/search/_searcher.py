"""The Searcher skill: every query of a strategy against its source, concurrently."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from scholarstream.search.core import SearchResults, SearchStrategy
from scholarstream.sources import LiteratureSource, SearchQuery, SourceHub, SourceStatus


class SourceSearcher:
    """Runs on the process's ``SourceHub``; ``local`` adds per-user sources (the library).

    There is no model in this skill: the same searcher serves offline and LLM mode.
    """

    def __init__(
        self,
        hub: SourceHub,
        *,
        local: Mapping[str, LiteratureSource] | None = None,
        on_source_done: Callable[[SourceStatus], None] | None = None,
    ) -> None:
        self.hub = hub
        self.local = dict(local or {})
        self.on_source_done = on_source_done

    async def search(self, strategy: SearchStrategy) -> SearchResults:
        searches = [
            (
                q.source,
                SearchQuery(
                    text=q.query,
                    limit=q.limit,
                    date_from=strategy.date_from,
                    date_to=strategy.date_to,
                    filters=q.filters,
                ),
            )
            for q in strategy.queries
        ]
        found = await self.hub.search_each(searches, local=self.local, on_done=self.on_source_done)
        return SearchResults(records=found.records, statuses=found.statuses)
