"""Stream relevance offline by words and meaning: with the embedding model on, an item that
shares no word with the stream but means what it follows scores above an unrelated one and
its reason says so; a run offline with semantic ranking on scores with the library's model;
and a model that fails leaves the run scored by words."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence

from scholarstream.papers import Paper, paper_key
from scholarstream.search.core import LabelledPaper
from scholarstream.search.scoring import MEANING_NOTE
from scholarstream.settings import Settings
from scholarstream.sources import MultiSearchResult, SourceStatus
from scholarstream.streams import PartialStreamConfig, Stream, finish_config
from scholarstream.streams.monitoring import (
    StreamJudge,
    build_result,
    run_stream_now,
    stream_judge,
)
from tests.helpers import BrokenEmbedder, ConceptEmbedder, RecordingEmbedder, make_runtime
from tests.search.world import LiteratureWorld
from tests.streams.runner import runner
from tests.streams.test_monitoring import NOW, new_stream

CONCEPTS = (
    ("heart", "attack", "myocardial", "infarction", "coronary"),
    ("soil", "bacteria", "microbiome", "meadow"),
    ("aspirin", "acetylsalicylic"),
)


def heart_stream() -> Stream:
    config = finish_config(
        PartialStreamConfig(
            purpose="Follow aspirin for heart attack",
            business_goals=["Track the evidence"],
            expected_outcomes="A weekly reading list",
            stream_name="Aspirin watch",
            stream_type="scientific",
            focus_areas=["prevention"],
            keywords=["aspirin", "heart attack"],
            report_frequency="weekly",
        )
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


PARAPHRASE = Paper(
    title="Acetylsalicylic acid after myocardial infarction",
    abstract="Fewer coronary events in the treated group.",
    year=2026,
    record_id="paraphrase",
)
UNRELATED = Paper(
    title="Soil bacteria of alpine meadows",
    abstract="We sequenced the microbiome of meadow soils at three altitudes.",
    year=2026,
    record_id="unrelated",
)


def found(*papers: Paper) -> MultiSearchResult:
    status = SourceStatus(source="pubmed", ok=True, returned=len(papers), elapsed_ms=1)
    return MultiSearchResult(records=list(papers), statuses=[status])


async def offline_judge(settings: Settings, embedder: ConceptEmbedder | None) -> StreamJudge:
    """The judge of a run offline, with ``embedder`` as the library's model (or none)."""
    runtime = make_runtime(settings)
    try:
        return stream_judge(
            runtime.llm,
            runtime.database,
            runtime.settings.streams,
            uuid.uuid4(),
            offline=True,
            embedder=embedder,
        )
    finally:
        await runtime.close()


async def test_offline_with_meaning_a_paraphrase_scores_above_an_unrelated_item(
    settings: Settings,
) -> None:
    judge = await offline_judge(settings, ConceptEmbedder(CONCEPTS))
    words_only = await offline_judge(settings, None)
    stream = heart_stream()
    since = NOW.date() - dt.timedelta(days=7)
    result = await build_result(
        stream, found(UNRELATED, PARAPHRASE), since=since, reported=set(), by=judge
    )
    items = result.report.items
    assert [item.record.title for item in items] == [PARAPHRASE.title, UNRELATED.title]
    assert items[0].score > items[1].score
    assert MEANING_NOTE in items[0].reason and MEANING_NOTE not in items[1].reason
    assert result.report.scorer == "lexical"  # offline: no model calls

    by_words = await build_result(
        stream, found(UNRELATED, PARAPHRASE), since=since, reported=set(), by=words_only
    )
    assert {item.score for item in by_words.report.items} == {0.0}


async def run_offline(
    settings: Settings, *, semantic: bool, embedder: ConceptEmbedder
) -> Sequence[tuple[str, float]]:
    on = settings.model_copy(
        update={"semantic": settings.semantic.model_copy(update={"enabled": semantic})}
    )
    runtime = make_runtime(on, source_transport=LiteratureWorld().transport(), embedder=embedder)
    try:
        owner, stream = await new_stream(runtime)
        stored = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    finally:
        await runtime.close()
    report = stored.report
    assert report is not None and report.items and report.scorer == "lexical"
    return sorted((item.key, item.score) for item in report.items)


async def test_a_run_offline_with_semantic_ranking_on_scores_with_the_librarys_model(
    db_settings: Settings,
) -> None:
    recording = RecordingEmbedder([("sentiment", "opinion"), ("learning", "neural")])
    with_meaning = await run_offline(db_settings, semantic=True, embedder=recording)
    assert recording.texts  # the judge embedded the items' passages

    off = RecordingEmbedder([("sentiment", "opinion")])
    by_words = await run_offline(db_settings, semantic=False, embedder=off)
    assert not off.texts
    assert [key for key, _ in with_meaning] == [key for key, _ in by_words]

    broken = await run_offline(db_settings, semantic=True, embedder=BrokenEmbedder([("x",)]))
    assert broken == by_words  # the run goes on, by words alone


async def test_the_feedback_on_earlier_reports_reads_the_titles_meaning(
    settings: Settings,
) -> None:
    recording = RecordingEmbedder(CONCEPTS)
    judge = await offline_judge(settings, recording)
    marked = Paper(title="Aspirin and heart attack", year=2026, record_id="marked")
    unwanted = Paper(title="Alpine soil bacteria", year=2026, record_id="unwanted")
    labelled = [
        LabelledPaper(id=paper_key(marked), record=marked, relevant=True),
        LabelledPaper(id=paper_key(unwanted), record=unwanted, relevant=False),
    ]
    since = NOW.date() - dt.timedelta(days=7)
    result = await build_result(
        heart_stream(),
        found(UNRELATED, PARAPHRASE),
        since=since,
        reported=set(),
        by=judge,
        labelled=labelled,
    )
    assert marked.title in recording.texts  # only the feedback model embeds marked items
    assert result.report.items[0].record.title == PARAPHRASE.title
