"""The ResultOrganizer skill: ranked list, groups (theme, year, study type, source) and
summary statistics. ``RuleResultOrganizer`` needs no model; ``LLMResultOrganizer`` only
names the themes with one."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

from scholarstream.search.core import (
    CollectionStats,
    GroupDimension,
    Grouping,
    PaperCollection,
    PaperGroup,
    ScoredPaper,
    SearchResults,
    SearchStrategy,
)
from scholarstream.search.organize._origins import origin_labels
from scholarstream.search.organize._study_types import study_type
from scholarstream.search.organize._themes import merge_themes, rule_themes

Grouper = Callable[[Sequence[ScoredPaper]], list[PaperGroup]]


def _grouped(keys: dict[str, list[str]], labels: dict[str, str] | None = None) -> list[PaperGroup]:
    return [
        PaperGroup(key=key, label=(labels or {}).get(key, key), paper_ids=ids)
        for key, ids in keys.items()
    ]


def by_year(papers: Sequence[ScoredPaper]) -> list[PaperGroup]:
    years: dict[str, list[str]] = defaultdict(list)
    for paper in papers:
        year = paper.record.year
        years[str(year) if year else "unknown"].append(paper.id)
    order = sorted(years, key=lambda y: (y == "unknown", -int(y) if y.isdigit() else 0))
    return _grouped({y: years[y] for y in order}, {"unknown": "Year unknown"})


def by_study_type(papers: Sequence[ScoredPaper]) -> list[PaperGroup]:
    kinds: dict[str, list[str]] = defaultdict(list)
    for paper in papers:
        kinds[study_type(paper.record)].append(paper.id)
    order = sorted(kinds, key=lambda k: (-len(kinds[k]), k))
    return _grouped({k: kinds[k] for k in order})


def by_source(papers: Sequence[ScoredPaper]) -> list[PaperGroup]:
    sources: dict[str, list[str]] = defaultdict(list)
    for paper in papers:
        for source in paper.sources or ["unknown"]:
            sources[source].append(paper.id)
    return _grouped({s: sources[s] for s in sorted(sources)})


# Dimension -> how to group; the theme grouper is the organizer's own.
GROUPERS: dict[GroupDimension, Grouper] = {
    "year": by_year,
    "study_type": by_study_type,
    "source": by_source,
}


def collection_stats(
    papers: Sequence[ScoredPaper], results: SearchResults | None
) -> CollectionStats:
    years = [p.record.year for p in papers if p.record.year]
    by_source: Counter[str] = Counter()
    by_origin: Counter[str] = Counter()
    for paper in papers:
        by_source.update(paper.sources)
        by_origin.update(paper.origins)
    found = len(results.records) if results else len(papers)
    return CollectionStats(
        total=len(papers),
        found=found,
        duplicates_removed=max(0, found - len(papers)),
        by_source=dict(sorted(by_source.items())),
        by_origin=dict(sorted(by_origin.items())),
        origin_labels=origin_labels(by_origin),
        by_year={str(y): n for y, n in sorted(Counter(years).items(), reverse=True)},
        year_min=min(years, default=None),
        year_max=max(years, default=None),
        with_abstract=sum(1 for p in papers if _has_abstract(p)),
        mean_score=round(statistics.fmean(p.score for p in papers), 3) if papers else None,
        sources_failed=[s.source for s in results.statuses if not s.ok] if results else [],
    )


def _has_abstract(paper: ScoredPaper) -> bool:
    record = paper.record
    text = record.abstract if record.kind == "paper" else record.summary
    return bool(text and text.strip())


class RuleResultOrganizer:
    async def organize(
        self,
        scored: Sequence[ScoredPaper],
        strategy: SearchStrategy,
        user_input: str,
        *,
        results: SearchResults | None = None,
    ) -> PaperCollection:
        return build_collection(scored, strategy, user_input, results, await self.themes(scored))

    async def themes(self, papers: Sequence[ScoredPaper]) -> list[PaperGroup]:
        return rule_themes(papers)


# The groupings offered even as one group of every paper: it says where they came from.
_ALWAYS_SHOWN: frozenset[GroupDimension] = frozenset({"source"})


def _splits(grouping: Grouping, total: int) -> bool:
    """A grouping is offered when it tells papers apart: one group holding every paper
    ("Other (50)" of study types beside "All papers (50)") is the same set again."""
    groups = grouping.groups
    if not groups:
        return False
    one_set = len(groups) == 1 and len(groups[0].paper_ids) >= total
    return not one_set or grouping.dimension in _ALWAYS_SHOWN


def build_collection(
    scored: Sequence[ScoredPaper],
    strategy: SearchStrategy,
    user_input: str,
    results: SearchResults | None,
    themes: list[PaperGroup],
) -> PaperCollection:
    papers = sorted(scored, key=lambda p: -p.score)  # stable: equal scores keep their order
    themes = merge_themes(themes)
    groupings = [Grouping(dimension="theme", groups=themes)] if themes else []
    groupings += [
        Grouping(dimension=dimension, groups=group(papers)) for dimension, group in GROUPERS.items()
    ]
    return PaperCollection(
        question=user_input,
        strategy=strategy,
        papers=papers,
        groupings=[g for g in groupings if _splits(g, len(papers))],
        stats=collection_stats(papers, results),
        source_statuses=results.statuses if results else [],
    )
