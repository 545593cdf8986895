"""The six skills of the search workflow, as protocols. Each has a deterministic
implementation (offline mode) and an LLM one; ``SearchWorkflow`` takes any of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from scholarstream.papers import Record
from scholarstream.search.core._models import (
    LabelledPaper,
    PaperCollection,
    ParsedIntent,
    QueryBuilderInput,
    ScoredPaper,
    SearchResults,
    SearchStrategy,
)


class IntentParser(Protocol):
    async def parse(self, user_input: str) -> ParsedIntent: ...


class QueryBuilder(Protocol):
    async def build(self, data: QueryBuilderInput) -> SearchStrategy:
        """A strategy for the intent; never one whose fingerprint was rejected."""
        ...


class Searcher(Protocol):
    async def search(self, strategy: SearchStrategy) -> SearchResults:
        """Runs every query of the strategy; a failed source is reported, not raised."""
        ...


class Deduplicator(Protocol):
    async def deduplicate(self, records: Sequence[Record]) -> list[Record]:
        """One merged record per work: every identifier and the provenance of all copies."""
        ...


class RelevanceScorer(Protocol):
    async def score(
        self,
        records: Sequence[Record],
        intent: ParsedIntent,
        *,
        labelled: Sequence[LabelledPaper] = (),
    ) -> list[ScoredPaper]:
        """A 0-1 score and a one-sentence reason per record, best first; ``labelled`` are
        the user's earlier judgements, which re-rank the rest."""
        ...


class ResultOrganizer(Protocol):
    async def organize(
        self,
        scored: Sequence[ScoredPaper],
        strategy: SearchStrategy,
        user_input: str,
        *,
        results: SearchResults | None = None,
    ) -> PaperCollection:
        """Ranked list, groups and statistics; ``results`` adds per-source counts and
        failures."""
        ...
