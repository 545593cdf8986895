"""Relevance feedback and the model judge in stream runs, on each backend, with the sources
answered from recorded responses: items the user marks in one report train the ranking of
the next run's items (what looks like the relevant ones scores higher, and the reason says so);
judgements can be changed and taken back; only the report's own items can be judged, and
only by their owner; with a model configured, the model judges each item and what it
fails to judge is scored offline."""

from __future__ import annotations

import datetime as dt
import re
import statistics
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from scholarstream.errors import ConflictError, NotFoundError
from scholarstream.search.scoring import record_text
from scholarstream.settings import Settings
from scholarstream.streams.monitoring import (
    FeedbackStore,
    ItemJudgement,
    ReportStore,
    StoredReport,
    run_stream_now,
)
from tests.helpers import make_runtime, new_user
from tests.search.world import LiteratureWorld
from tests.streams.conftest import Make
from tests.streams.runner import runner
from tests.streams.test_monitoring import NOW, new_stream

LATER = NOW + dt.timedelta(days=7)
DOWN = ("openalex", "semantic_scholar")


def about_sentiment(text: str) -> bool:
    return "sentiment" in text.lower()


async def test_marked_items_train_the_next_runs_ranking(make: Make) -> None:
    # The first run misses two sources, so the second has new items to rank.
    runtime = make(LiteratureWorld(failing=DOWN))
    owner, stream = await new_stream(runtime)
    first = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    assert first.report is not None and first.report.feedback_used == 0
    feedback = FeedbackStore(runtime.database)
    items = first.report.items
    relevant = [i for i in items if about_sentiment(record_text(i.record))]
    irrelevant = [i for i in items if not about_sentiment(record_text(i.record))][:5]
    assert len(relevant) >= 2 and len(irrelevant) == 5
    for item in relevant:
        await feedback.mark(
            owner.id, stream.id, first.id, ItemJudgement(key=item.key, relevant=True)
        )
    for item in irrelevant:
        marked = await feedback.mark(
            owner.id, stream.id, first.id, ItemJudgement(key=item.key, relevant=False)
        )
    assert marked.stream_judgements == len(relevant) + 5
    assert marked.judgements == {i.key: i in relevant for i in relevant + irrelevant}

    healthy = make(LiteratureWorld())
    second = await run_stream_now(runner(healthy), owner.id, stream.id, now=LATER)

    report = second.report
    assert report is not None and report.items
    assert report.feedback_used == len(relevant) + 5
    assert not {i.key for i in report.items} & {i.key for i in items}
    assert all(item.feedback is not None for item in report.items)
    sentiment = [i.feedback for i in report.items if about_sentiment(record_text(i.record))]
    other = [i.feedback for i in report.items if not about_sentiment(record_text(i.record))]
    assert sentiment and other
    assert statistics.mean(x for x in sentiment if x is not None) > statistics.mean(
        x for x in other if x is not None
    )
    assert any("similar to papers you marked relevant" in i.reason for i in report.items)
    scores = [item.score for item in report.items]
    assert scores == sorted(scores, reverse=True)


async def test_a_judgement_can_be_changed_and_taken_back(make: Make) -> None:
    runtime = make(LiteratureWorld())
    owner, stream = await new_stream(runtime)
    stored = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    assert stored.report is not None
    key = stored.report.items[0].key
    feedback = FeedbackStore(runtime.database)

    await feedback.mark(owner.id, stream.id, stored.id, ItemJudgement(key=key, relevant=True))
    changed = await feedback.mark(
        owner.id, stream.id, stored.id, ItemJudgement(key=key, relevant=False)
    )
    assert changed.judgements == {key: False} and changed.stream_judgements == 1
    start = await ReportStore(runtime.database).begin(owner.id, stream.id, now=LATER)
    assert [(p.id, p.relevant, p.record.title) for p in start.labelled] == [
        (key, False, stored.report.items[0].record.title)
    ]
    await ReportStore(runtime.database).abort(owner.id, start.report_id, "test")

    removed = await feedback.mark(
        owner.id, stream.id, stored.id, ItemJudgement(key=key, relevant=None)
    )
    assert removed.judgements == {} and removed.stream_judgements == 0
    assert (await feedback.of_report(owner.id, stream.id, stored.id)).judgements == {}


async def test_only_the_reports_own_items_and_only_by_their_owner(make: Make) -> None:
    runtime = make(LiteratureWorld())
    owner, stream = await new_stream(runtime)
    stored = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    assert stored.report is not None
    key = stored.report.items[0].key
    feedback = FeedbackStore(runtime.database)
    other = await new_user(runtime)

    with pytest.raises(NotFoundError, match="has no item"):
        await feedback.mark(
            owner.id, stream.id, stored.id, ItemJudgement(key="doi:10.0/none", relevant=True)
        )
    with pytest.raises(NotFoundError):
        await feedback.mark(other.id, stream.id, stored.id, ItemJudgement(key=key, relevant=True))
    with pytest.raises(NotFoundError):
        await feedback.of_report(other.id, stream.id, stored.id)
    running = await ReportStore(runtime.database).begin(owner.id, stream.id, now=LATER)
    with pytest.raises(ConflictError, match="no report"):
        await feedback.mark(
            owner.id, stream.id, running.report_id, ItemJudgement(key=key, relevant=True)
        )
    assert (await feedback.of_report(owner.id, stream.id, stored.id)).judgements == {}


_NUMBERED = re.compile(r"^\[(\d+)\]", re.MULTILINE)


class Judge:
    """A scripted fast model: scores items by whether they mention sentiment, and skips
    the last item of every batch (so the offline fallback is exercised)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls += 1
        request = messages[-1]
        prompt = " ".join(str(getattr(part, "content", "")) for part in request.parts)
        texts = [c.strip() for c in _NUMBERED.split(prompt.split("Papers:", 1)[1])[2::2]]
        scores: list[dict[str, Any]] = [
            {
                "paper": n,
                "score": 0.95 if about_sentiment(text) else 0.05,
                "reason": "Studies sentiment." if about_sentiment(text) else "Not about it.",
            }
            for n, text in enumerate(texts[:-1], start=1)
        ]
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"scores": scores})])


async def run_with_judge(settings: Settings, judge: Judge) -> StoredReport:
    """A first run of a new stream on a runtime whose fast model is ``judge``."""
    runtime = make_runtime(
        settings,
        models={"fast": FunctionModel(judge)},
        source_transport=LiteratureWorld().transport(),
    )
    try:
        owner, stream = await new_stream(runtime)
        return await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    finally:
        await runtime.close()


async def test_with_a_model_configured_the_model_judges_each_item(db_settings: Settings) -> None:
    judge = Judge()
    stored = await run_with_judge(db_settings, judge)

    report = stored.report
    assert report is not None and report.scorer == "model" and judge.calls > 0
    reasons = {item.reason for item in report.items}
    assert {"Studies sentiment.", "Not about it."} <= reasons
    offline = [i for i in report.items if i.reason.startswith("Scored offline because")]
    assert offline, "the items the model skipped are scored offline, and say so"
    judged = {(i.reason, i.score) for i in report.items if i not in offline}
    assert judged == {("Studies sentiment.", 0.95), ("Not about it.", 0.05)}


async def test_the_offline_judge_is_used_when_model_relevance_is_off(db_settings: Settings) -> None:
    settings = db_settings.model_copy(
        update={"streams": db_settings.streams.model_copy(update={"model_relevance": False})}
    )
    judge = Judge()
    stored = await run_with_judge(settings, judge)
    assert stored.report is not None and stored.report.scorer == "lexical"
    assert judge.calls == 0
