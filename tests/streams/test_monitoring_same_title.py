"""Monitoring's "already reported" check and the within-run deduplication agree on works
that share a title and year (issue 20, point 16): conflicting identifiers (another DOI,
PMID, PMCID or arXiv id) keep records apart in both, so a "Correction", "Erratum",
"Editorial" or "Reply" reported once does not hide every later one, while a work found
again under one of its identifiers, or under its title from a source that gives no
identifier, is still recognised."""

from __future__ import annotations

import uuid

import pytest

from scholarstream.papers import Paper
from scholarstream.sources import MultiSearchResult, SourceStatus
from scholarstream.streams import Stream, build_retrieval_config
from scholarstream.streams.monitoring import (
    already_reported,
    build_result,
    item_keys,
)
from tests.streams.test_monitoring import NOW, nlp_stream


def stream() -> Stream:
    config = nlp_stream()
    config = config.model_copy(
        update={"retrieval": build_retrieval_config(keywords=config.keywords, sources=["pubmed"])}
    )
    return Stream.model_validate(
        {
            **config.model_dump(),
            "id": uuid.uuid4(),
            "enabled": True,
            "last_run_at": None,
            "created_at": NOW,
            "updated_at": NOW,
        }
    )


def paper(title: str, **ids: str) -> Paper:
    return Paper.model_validate(
        {"title": title, "year": 2026, "ids": ids, "provenance": [{"source": "pubmed"}]}
    )


def found(*papers: Paper) -> MultiSearchResult:
    status = SourceStatus(source="pubmed", ok=True, returned=len(papers), elapsed_ms=1)
    return MultiSearchResult(records=list(papers), statuses=[status])


async def run(reported: set[str], *papers: Paper) -> list[Paper]:
    result = await build_result(stream(), found(*papers), since=NOW.date(), reported=reported)
    for keys in result.reported_keys.values():
        reported.update(keys)
    new = [item.record for item in result.report.items]
    assert all(isinstance(record, Paper) for record in new)
    return [record for record in new if isinstance(record, Paper)]


@pytest.mark.parametrize("title", ["Correction", "Erratum", "Editorial", "Reply"])
async def test_a_notice_reported_once_does_not_hide_later_ones(title: str) -> None:
    reported: set[str] = set()
    first = paper(title, doi="10.1000/first", pmid="1001")
    assert [p.ids.doi for p in await run(reported, first)] == ["10.1000/first"]

    other_doi = paper(title, doi="10.1000/second")
    other_pmid = paper(title, pmid="1003")
    again = paper(title, doi="10.1000/first")
    new = await run(reported, other_doi, other_pmid, again)

    # Within the run the two new ones stay apart, and across runs neither is hidden.
    assert sorted((p.ids.doi or "", p.ids.pmid or "") for p in new) == [
        ("", "1003"),
        ("10.1000/second", ""),
    ]
    # Each of them is known from now on, and nothing is reported twice.
    assert await run(reported, other_doi, other_pmid, paper(title, pmid="1001")) == []


async def test_different_works_sharing_a_title_and_year_are_each_reported() -> None:
    title = "Deep learning for sentiment analysis"
    reported: set[str] = set()
    works = [
        paper(title, doi="10.1000/a"),
        paper(title, doi="10.1000/b"),
        paper(title, arxiv_id="2101.00001"),
        paper(title, pmcid="PMC1234567", doi="10.1000/c"),
    ]
    # One run: the within-run deduplication keeps them apart.
    assert len(await run(reported, *works)) == 4
    # Later runs: each is known under its own identifiers; another work whose
    # identifiers conflict with every reported one is new.
    later = paper(title, doi="10.1000/d", arxiv_id="2101.00002")
    assert [p.ids.doi for p in await run(reported, *works, later)] == ["10.1000/d"]


async def test_a_work_found_again_without_conflicting_identifiers_is_known() -> None:
    title = "Transformers for clinical text classification"
    reported: set[str] = set()
    await run(reported, paper(title, pmid="2001"))

    # The same work from a source without identifiers, or with only a DOI (a kind the
    # reported copy did not carry): recognised by title and year, as before.
    assert already_reported(paper(title), reported)
    assert already_reported(paper(title, doi="10.1000/x"), reported)
    assert not already_reported(paper(title, pmid="2002"), reported)
    assert not already_reported(paper(title, pmid="2002", doi="10.1000/x"), reported)
    keys = item_keys(paper(title, pmid="2001"))
    assert keys[0] == "pmid:2001" and keys[-1].endswith("|pmid")
