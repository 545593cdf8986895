"""A multi-LLM research through the HTTP API of a ``serve`` process, and what the
processes stored for it, read back from the database."""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from scholarstream.db.tables import LLMUsage, ResearchEventRow
from tests.scale.cluster import Process, api


def start_research(serve: Process, models: list[str], synthesis: str) -> uuid.UUID:
    draft = api(
        serve,
        "POST",
        "/research/draft",
        json={
            "prompt": "What is known about semaglutide and cardiovascular outcomes?",
            "title": "Process test",
            "selectedLlms": models,
            "synthesisLlm": synthesis,
        },
    )
    started = api(serve, "POST", "/research", json={"researchId": draft["id"]})
    assert started["status"] == "processing", started
    return uuid.UUID(draft["id"])


def research(serve: Process, research_id: uuid.UUID) -> dict[str, Any]:
    found: dict[str, Any] = api(serve, "GET", f"/research/{research_id}")
    return found


def result_of(found: dict[str, Any], model: str) -> dict[str, Any]:
    (result,) = [r for r in found["llmResults"] if r["model"] == model]
    assert isinstance(result, dict)
    return result


@dataclass(frozen=True)
class Stored:
    """What the database holds for one research, beyond its record."""

    event_types: Counter[str]
    completed_models: Counter[str]
    seqs: list[int]
    usage_requests: dict[tuple[str, str], int]  # (feature, model) -> requests recorded


def stored(db: sa.Engine, research_id: uuid.UUID) -> Stored:
    with db.connect() as conn:
        events = conn.execute(
            sa.select(ResearchEventRow.seq, ResearchEventRow.type, ResearchEventRow.payload)
            .where(ResearchEventRow.research_id == research_id)
            .order_by(ResearchEventRow.seq)
        ).all()
        usage = conn.execute(
            sa.select(LLMUsage.feature, LLMUsage.model, sa.func.sum(LLMUsage.requests)).group_by(
                LLMUsage.feature, LLMUsage.model
            )
        ).all()
    return Stored(
        event_types=Counter(e.type for e in events),
        completed_models=Counter(
            e.payload["model"] for e in events if e.type == "research.llm_completed"
        ),
        seqs=[e.seq for e in events],
        usage_requests={(feature, model): int(total) for feature, model, total in usage},
    )
