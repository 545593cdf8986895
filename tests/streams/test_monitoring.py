"""Monitoring runs of a stream, on each backend, with the sources answered from recorded
responses: a first run reports ranked, grouped items with counts and a timeline; a second
run reports nothing already reported; a failing source gives a partial report with what
the others found; every source failing gives a failed run that does not move the window;
one run of a stream at a time; exports that parse; another user's stream is not found."""

from __future__ import annotations

import csv
import datetime as dt
import io
import uuid
from collections.abc import Collection

import pytest
import rispy
from bibtexparser.entrypoint import parse_string

from scholarstream.db.tables import User
from scholarstream.errors import ConflictError, NotFoundError
from scholarstream.papers import Paper
from scholarstream.runtime import Runtime
from scholarstream.sources import MultiSearchResult, SourceStatus
from scholarstream.streams import (
    PartialStreamConfig,
    RetrievalUpdate,
    Stream,
    StreamConfig,
    StreamQueryUpdate,
    StreamStore,
    StreamUpdate,
    build_retrieval_config,
    finish_config,
)
from scholarstream.streams.monitoring import (
    DEFAULT_WINDOW,
    ReportStore,
    build_result,
    export_report,
    item_keys,
    run_stream_now,
)
from tests.helpers import new_user
from tests.search.world import LiteratureWorld
from tests.streams.conftest import Make
from tests.streams.runner import runner

SOURCES = ["arxiv", "library", "openalex", "pubmed", "semantic_scholar"]
NOW = dt.datetime(2026, 11, 30, 9, 0, tzinfo=dt.UTC)
FOCUS = ["sentiment analysis", "deep learning"]
COMPETITORS = ["ChatGPT"]
KEYWORDS = ["natural language processing", "machine learning"]


def nlp_stream() -> StreamConfig:
    config = finish_config(
        PartialStreamConfig(
            purpose="Follow natural language processing with machine learning",
            business_goals=["Track the research landscape"],
            expected_outcomes="A weekly reading list",
            stream_name="NLP watch",
            stream_type="scientific",
            focus_areas=FOCUS,
            keywords=KEYWORDS,
            competitors=COMPETITORS,
            report_frequency="weekly",
        )
    )
    retrieval = build_retrieval_config(
        keywords=KEYWORDS, focus_areas=FOCUS, competitors=COMPETITORS, sources=SOURCES
    )
    return config.model_copy(update={"retrieval": retrieval})


async def new_stream(runtime: Runtime) -> tuple[User, Stream]:
    owner = await new_user(runtime)
    return owner, await StreamStore(runtime.database).create(owner.id, nlp_stream())


async def test_a_first_run_reports_ranked_grouped_items_with_counts_and_a_timeline(
    make: Make,
) -> None:
    world = LiteratureWorld()
    runtime = make(world)
    owner, stream = await new_stream(runtime)

    stored = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)

    assert stored.status == "complete"
    assert stored.started_at == NOW
    assert stored.finished_at is not None
    assert stored.since == NOW - DEFAULT_WINDOW
    report = stored.report
    assert report is not None
    assert report.since == (NOW - DEFAULT_WINDOW).date()
    # PubMed was asked for items it added since the window's start (its Entrez date);
    # OpenAlex, which can only filter by publication date, from the look-back before it.
    pubmed = world.searched("pubmed")[0].url.params
    assert (pubmed["datetype"], pubmed["mindate"]) == ("edat", "2026/10/31")
    assert "from_publication_date:2026-08-02" in world.searched("openalex")[0].url.params["filter"]

    counts = report.counts
    assert counts.by_source == {s: (0 if s == "library" else 50) for s in SOURCES}
    assert counts.found == 200
    assert 0 < counts.duplicates_dropped == counts.found - counts.distinct
    assert counts.already_reported == 0
    assert counts.new == counts.distinct == len(report.items)
    assert {o.source: (o.ok, o.found) for o in stored.sources} == {
        s: (True, counts.by_source[s]) for s in SOURCES
    }
    # An item found by two sources is reported once, with both.
    assert any(len(item.sources) > 1 for item in report.items)
    assert sum(o.new for o in stored.sources) > counts.new

    scores = [item.score for item in report.items]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] > scores[-1]
    assert len({item.key for item in report.items}) == len(report.items)
    for item in report.items:
        assert item.reason and "\n" not in item.reason
    best = report.items[0]
    assert best.keywords and best.reason.startswith("Mentions ")

    groups = {(g.kind, g.name): g.item_keys for g in report.groups}
    assert set(groups) == {
        ("focus_area", "sentiment analysis"),
        ("focus_area", "deep learning"),
        ("competitor", "ChatGPT"),
    }
    assert all(groups.values())
    by_key = {item.key: item for item in report.items}
    for (kind, name), keys in groups.items():
        for key in keys:
            named = by_key[key].focus_areas if kind == "focus_area" else by_key[key].competitors
            assert name in named
        assert [by_key[k].score for k in keys] == sorted(
            (by_key[k].score for k in keys), reverse=True
        )
    chatgpt = by_key[groups[("competitor", "ChatGPT")][0]]
    assert "competitor ChatGPT" in chatgpt.reason
    in_two = set(groups[("focus_area", "sentiment analysis")]) & set(
        groups[("focus_area", "deep learning")]
    )
    assert in_two, "an item can be in several groups"
    grouped = {key for keys in groups.values() for key in keys}
    assert set(report.ungrouped) == set(by_key) - grouped

    timeline = report.timeline
    assert sum(b.count for b in timeline.by_year) + timeline.undated == counts.new
    assert [b.period for b in timeline.by_year] == sorted(b.period for b in timeline.by_year)
    assert {"2020", "2022"} <= {b.period for b in timeline.by_year}
    assert all(len(b.period) == 7 for b in timeline.by_month)

    assert (await StreamStore(runtime.database).get(owner.id, stream.id)).last_run_at == NOW
    store = ReportStore(runtime.database)
    assert await store.get(owner.id, stream.id, stored.id) == stored
    (summary,) = await store.list(owner.id, stream.id)
    assert (summary.id, summary.status, summary.counts) == (stored.id, "complete", counts)


async def test_a_second_run_reports_nothing_already_reported(make: Make) -> None:
    runtime = make(LiteratureWorld())
    owner, stream = await new_stream(runtime)
    first = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    later = NOW + dt.timedelta(days=7)

    second = await run_stream_now(runner(runtime), owner.id, stream.id, now=later)

    assert first.report is not None and second.report is not None
    assert second.status == "complete"
    assert second.since == NOW  # from the previous run on
    assert second.report.items == [] and second.report.groups[0].item_keys == []
    assert second.report.counts.new == 0
    assert second.report.counts.already_reported == first.report.counts.distinct
    assert second.report.timeline.by_year == []
    reports = await ReportStore(runtime.database).list(owner.id, stream.id)
    assert [r.id for r in reports] == [second.id, first.id]  # newest first


async def test_a_failing_source_gives_a_partial_report_of_what_the_others_found(
    make: Make,
) -> None:
    runtime = make(LiteratureWorld(failing=("openalex",), empty=("arxiv",)))
    owner, stream = await new_stream(runtime)

    stored = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)

    assert stored.status == "partial"
    outcomes = {o.source: o for o in stored.sources}
    assert not outcomes["openalex"].ok
    assert outcomes["openalex"].error_code and outcomes["openalex"].error
    assert outcomes["arxiv"].ok and outcomes["arxiv"].found == 0
    assert stored.report is not None and stored.report.items
    assert stored.report.counts.by_source["openalex"] == 0
    assert all("openalex" not in item.sources for item in stored.report.items)
    assert {"pubmed", "semantic_scholar"} <= {s for i in stored.report.items for s in i.sources}
    (summary,) = await ReportStore(runtime.database).list(owner.id, stream.id)
    assert summary.failed_sources == ["openalex"]
    assert (await StreamStore(runtime.database).get(owner.id, stream.id)).last_run_at == NOW

    # What openalex (and arxiv, empty before) would have found is reported once it is back.
    healthy = make(LiteratureWorld())
    again = await run_stream_now(
        runner(healthy), owner.id, stream.id, now=NOW + dt.timedelta(days=1)
    )
    assert again.report is not None
    assert again.report.items
    assert all({"openalex", "arxiv"} & set(i.sources) for i in again.report.items)
    assert any("openalex" in i.sources for i in again.report.items)


async def test_a_run_where_every_source_fails_keeps_the_window(make: Make) -> None:
    runtime = make(LiteratureWorld())
    owner, stream = await new_stream(runtime)
    no_library = StreamUpdate(
        retrieval=RetrievalUpdate(queries={"library": StreamQueryUpdate(enabled=False)})
    )
    await StreamStore(runtime.database).update(owner.id, stream.id, no_library)
    first = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    down = make(LiteratureWorld(failing=("pubmed", "openalex", "semantic_scholar", "arxiv")))

    stored = await run_stream_now(runner(down), owner.id, stream.id, now=NOW + dt.timedelta(days=7))

    assert (first.status, stored.status) == ("complete", "failed")
    assert stored.report is not None and stored.report.items == []
    assert [o.source for o in stored.sources if not o.ok] == sorted(SOURCES[:1] + SOURCES[2:])
    assert (await StreamStore(runtime.database).get(owner.id, stream.id)).last_run_at == NOW
    retry = await run_stream_now(
        runner(runtime), owner.id, stream.id, now=NOW + dt.timedelta(days=8)
    )
    assert (retry.status, retry.since) == ("complete", NOW)


async def test_one_run_of_a_stream_at_a_time(make: Make) -> None:
    runtime = make(LiteratureWorld())
    owner, stream = await new_stream(runtime)
    store = ReportStore(runtime.database)
    start = await store.begin(owner.id, stream.id, now=NOW)

    with pytest.raises(ConflictError, match="already running"):
        await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    (running,) = await store.list(owner.id, stream.id)
    assert running.status == "running" and running.counts is None

    await store.abort(owner.id, start.report_id, "stopped by the test")
    done = await run_stream_now(
        runner(runtime), owner.id, stream.id, now=NOW + dt.timedelta(minutes=1)
    )
    assert done.status == "complete"

    # A run left "running" by a process that died frees the stream after a while.
    await store.begin(owner.id, stream.id, now=NOW + dt.timedelta(days=1))
    later = await run_stream_now(
        runner(runtime), owner.id, stream.id, now=NOW + dt.timedelta(days=2)
    )
    assert later.status == "complete"
    statuses = [r.status for r in await store.list(owner.id, stream.id)]
    assert statuses == ["complete", "failed", "complete", "failed"]


async def test_exports_of_a_report_parse(make: Make) -> None:
    runtime = make(LiteratureWorld())
    owner, stream = await new_stream(runtime)
    stored = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    report = stored.report
    assert report is not None
    titles = [item.record.title for item in report.items]

    ris = io.StringIO()
    assert export_report(report, "ris", ris) == len(titles)
    entries = rispy.loads(ris.getvalue())
    assert [e.get("title") or e.get("primary_title") for e in entries] == titles

    bib = io.StringIO()
    export_report(report, "bibtex", bib)
    library = parse_string(bib.getvalue())
    assert len(library.entries) == len(titles) and not library.failed_blocks

    table = io.StringIO()
    export_report(report, "csv", table)
    rows = list(csv.DictReader(io.StringIO(table.getvalue())))
    assert [row["title"] for row in rows] == titles


async def test_another_users_stream_is_not_found(make: Make) -> None:
    runtime = make(LiteratureWorld())
    owner, stream = await new_stream(runtime)
    stored = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    other = await new_user(runtime)
    store = ReportStore(runtime.database)

    with pytest.raises(NotFoundError):
        await run_stream_now(runner(runtime), other.id, stream.id)
    with pytest.raises(NotFoundError):
        await store.list(other.id, stream.id)
    with pytest.raises(NotFoundError):
        await store.get(other.id, stream.id, stored.id)
    with pytest.raises(NotFoundError):
        await store.get(owner.id, uuid.uuid4(), stored.id)
    assert [r.id for r in await store.list(owner.id, stream.id)] == [stored.id]


def _paper(title: str, **ids: str) -> Paper:
    return Paper.model_validate({"title": title, "year": 2026, "ids": ids})


async def test_an_item_reported_under_one_identifier_is_known_under_its_others() -> None:
    stream = Stream.model_validate(
        {
            **nlp_stream().model_dump(),
            "id": uuid.uuid4(),
            "enabled": True,
            "last_run_at": None,
            "created_at": NOW,
            "updated_at": NOW,
        }
    )
    first = _paper("Deep learning for sentiment analysis", pmid="123")
    again = _paper("Deep learning for sentiment analysis", doi="10.1234/x", pmid="123")
    other = _paper("Machine learning for ChatGPT prompts", doi="10.1234/y")

    def found(*papers: Paper) -> MultiSearchResult:
        status = SourceStatus(source="pubmed", ok=True, returned=len(papers), elapsed_ms=1)
        return MultiSearchResult(records=list(papers), statuses=[status])

    reported: Collection[str] = set(item_keys(first))
    result = await build_result(stream, found(again, other), since=NOW.date(), reported=reported)

    assert [item.record.title for item in result.report.items] == [other.title]
    assert result.report.counts.already_reported == 1
    assert result.reported_keys == {"doi:10.1234/y": item_keys(other)}
    assert item_keys(again)[0] == "doi:10.1234/x" and "pmid:123" in item_keys(again)
