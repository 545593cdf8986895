"""Monitoring relevance never breaks a stream run: when the fast model's answers are
unusable or fail, the items are scored offline, the report says so once
(``report.fallbacks``), and a model that judges every item records nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from scholarstream.settings import Settings
from scholarstream.streams.monitoring import StoredReport, run_stream_now
from tests.helpers import make_runtime
from tests.search.broken_models import KINDS, broken_model
from tests.search.world import LiteratureWorld
from tests.streams.runner import runner
from tests.streams.test_monitoring import NOW, new_stream

_NUMBERED = re.compile(r"^\[(\d+)\]", re.MULTILINE)


async def run_with(settings: Settings, model: Model) -> StoredReport:
    runtime = make_runtime(
        settings, models={"fast": model}, source_transport=LiteratureWorld().transport()
    )
    try:
        owner, stream = await new_stream(runtime)
        return await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    finally:
        await runtime.close()


@pytest.mark.parametrize("kind", KINDS)
async def test_items_the_model_cannot_judge_are_scored_offline_with_one_notice(
    db_settings: Settings, kind: str
) -> None:
    stored = await run_with(db_settings, broken_model(kind))
    report = stored.report
    assert report is not None and report.items
    assert all(item.reason.startswith("Scored offline because") for item in report.items)
    assert [f.skill for f in report.fallbacks] == ["streams.relevance"]
    assert report.fallbacks[0].message.startswith(
        "The model call failed" if kind == "http_error" else "The model's answer could not"
    )
    assert stored.status != "failed"


async def test_a_model_that_judges_every_item_records_nothing(db_settings: Settings) -> None:
    def judge_all(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = " ".join(str(getattr(p, "content", "")) for p in messages[-1].parts)
        numbers = [int(n) for n in _NUMBERED.findall(prompt)]
        scores: list[dict[str, Any]] = [
            {"paper": n, "score": 0.5, "reason": "Judged."} for n in numbers
        ]
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"scores": scores})])

    stored = await run_with(db_settings, FunctionModel(judge_all))
    assert stored.report is not None and stored.report.items
    assert {item.reason for item in stored.report.items} == {"Judged."}
    assert stored.report.fallbacks == []
