"""The screening ranker reads the titles' meaning when an embedding model runs (each
title embedded once, when the ranker is built), and ranks by words alone when the model
fails: screening goes on either way."""

from __future__ import annotations

import dataclasses
import io

from scholarstream.runtime import Runtime
from scholarstream.screening import (
    DecisionIn,
    FromLibrary,
    ProjectSettings,
    screening_service,
)
from scholarstream.settings import Settings
from tests.helpers import (
    BrokenEmbedder,
    ConceptEmbedder,
    RecordingEmbedder,
    make_runtime,
    new_user,
)
from tests.screening.world import EXCLUSION, KEYWORDS, QUESTION, triptans

CONCEPTS = [["migraine", "headache", "triptan", "sumatriptan"], ["placebo", "trial"]]


async def screen(runtime: Runtime, embedder: ConceptEmbedder, decisions: int) -> list[str]:
    """Screens ``decisions`` records as the review decided; the bases of the steps."""
    service = dataclasses.replace(screening_service(runtime), embedder=embedder)
    owner = await new_user(runtime)
    review = triptans()
    await runtime.library.import_stream(owner.id, io.BytesIO(review.csv_bytes), "triptans.csv")
    settings = ProjectSettings(
        name="Triptans", question=QUESTION, keywords=KEYWORDS, exclusion_criteria=EXCLUSION
    )
    project = await service.create(owner.id, settings, FromLibrary())
    step = await service.next(owner.id, project.id)
    bases = []
    for _ in range(decisions):
        assert step.record is not None
        relevant = review.relevant(step.record.title)
        body = DecisionIn(
            record_id=step.record.id,
            decision="include" if relevant else "exclude",
            reason=None if relevant else EXCLUSION[0],
        )
        step = await service.decide(owner.id, project.id, body)
        bases.append(step.basis)
    return [str(b) for b in bases]


async def test_the_ranker_reads_each_title_once(db_settings: Settings) -> None:
    runtime = make_runtime(db_settings)
    try:
        embedder = RecordingEmbedder(CONCEPTS)
        bases = await screen(runtime, embedder, decisions=12)
    finally:
        await runtime.close()
    assert "ranker" in bases
    # Every title embedded, once, however many times the ranker was refitted.
    assert sorted(embedder.texts) == sorted(triptans().titles)


async def test_a_failing_embedding_model_leaves_the_words(db_settings: Settings) -> None:
    runtime = make_runtime(db_settings)
    try:
        bases = await screen(runtime, BrokenEmbedder(CONCEPTS), decisions=12)
    finally:
        await runtime.close()
    assert "ranker" in bases
