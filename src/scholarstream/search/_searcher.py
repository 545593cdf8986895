"""The Searcher skill: every query of a strategy against its source, concurrently."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from scholarstream.search.core import SearchResults, SearchStrategy
from scholarstream.sources import LiteratureSource, SearchQuery, SourceHub, SourceStatus

LIBRARY = "library"

# Field tags, fielded prefixes and Boolean operators: what is left are the words.
_SYNTAX = re.compile(r"\[[^\]]*\]|\b(?:ti|abs|all|au|intitle):|\b(?:AND|OR|NOT|ANDNOT)\b|[()\"*]")


def library_text(strategy: SearchStrategy) -> str:
    """The strategy as plain words for the library (BM25): its concepts' terms, else the
    words of its first query without operators and field tags."""
    words = [term for block in strategy.concepts for term in (block.terms or [block.concept])]
    if not words:
        words = [_SYNTAX.sub(" ", strategy.queries[0].query)]
    return " ".join(dict.fromkeys(" ".join(words).split()))


class SourceSearcher:
    """Runs on the process's ``SourceHub``; ``local`` adds per-user sources (the library).

    There is no model in this skill: the same searcher serves offline and LLM mode. When
    the machine appears offline (no remote source could be reached), the library is
    searched even if the strategy did not name it, and the results carry one notice.
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
        def query(text: str, limit: int, filters: dict[str, str]) -> SearchQuery:
            return SearchQuery(
                text=text,
                limit=limit,
                date_from=strategy.date_from,
                date_to=strategy.date_to,
                filters=filters,
            )

        searches = [(q.source, query(q.query, q.limit, q.filters)) for q in strategy.queries]
        when_offline = []
        if LIBRARY in self.local and LIBRARY not in strategy.sources:
            text = library_text(strategy) or strategy.queries[0].query
            limit = max(q.limit for q in strategy.queries)
            when_offline.append((LIBRARY, query(text, limit, {})))
        found = await self.hub.search_each(
            searches, local=self.local, on_done=self.on_source_done, when_offline=when_offline
        )
        return SearchResults(
            records=found.records,
            statuses=found.statuses,
            notices=[found.notice] if found.notice else [],
        )
