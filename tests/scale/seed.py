"""What the process tests put in the database before starting processes, through the
product's own API in the test process: the local user's library (the only source the
processes search, so they never reach the network) and a stream watching it."""

from __future__ import annotations

import datetime as dt
import io
import uuid

from scholarstream.accounts import ensure_local_user
from scholarstream.runtime import build_runtime
from scholarstream.settings import Settings
from scholarstream.streams import (
    PartialStreamConfig,
    StreamStore,
    build_retrieval_config,
    finish_config,
)

YEAR = dt.datetime.now(dt.UTC).year
TOPICS = [
    ("Sentiment analysis of clinical notes with deep learning", "sentiment analysis"),
    ("Natural language processing for adverse event detection", "natural language processing"),
    ("Machine learning screening of systematic review abstracts", "machine learning"),
    ("Large language models for natural language processing of trial registries", "ChatGPT"),
]
KEYWORDS = ["natural language processing", "machine learning"]
FOCUS = ["sentiment analysis", "deep learning"]


def library_ris() -> str:
    """Records published this year, so a stream's first run (the last 30 days, by year for
    the library) finds them."""
    entries = []
    for number, (title, subject) in enumerate(TOPICS, start=1):
        entries.append(
            "\n".join(
                [
                    "TY  - JOUR",
                    f"TI  - {title}",
                    f"AB  - We study {subject} with machine learning and natural language "
                    "processing; deep learning models are compared on public data.",
                    f"PY  - {YEAR}",
                    "JO  - Journal of Process Tests",
                    f"DO  - 10.5555/process-test.{number}",
                    "ER  - ",
                ]
            )
        )
    return "\n".join(entries) + "\n"


async def seed_library(settings: Settings) -> uuid.UUID:
    """The local user (single-user mode's only user) with the library records; its id."""
    runtime = build_runtime(settings)
    try:
        async with runtime.database.session() as session:
            owner = (await ensure_local_user(session)).id
        report = await runtime.library.import_stream(
            owner, io.BytesIO(library_ris().encode()), "seed.ris"
        )
        assert report.imported == len(TOPICS), report
        return owner
    finally:
        await runtime.close()


async def seed_stream(settings: Settings, owner_id: uuid.UUID) -> uuid.UUID:
    """A daily stream of ``owner_id`` searching only the library; never run, so due."""
    config = finish_config(
        PartialStreamConfig(
            purpose="Follow natural language processing with machine learning",
            business_goals=["Track the research landscape"],
            expected_outcomes="A daily reading list",
            stream_name="Process test watch",
            stream_type="scientific",
            focus_areas=FOCUS,
            keywords=KEYWORDS,
            competitors=["ChatGPT"],
            report_frequency="daily",
        )
    )
    retrieval = build_retrieval_config(
        keywords=KEYWORDS, focus_areas=FOCUS, competitors=["ChatGPT"], sources=["library"]
    )
    runtime = build_runtime(settings)
    try:
        stream = await StreamStore(runtime.database).create(
            owner_id, config.model_copy(update={"retrieval": retrieval})
        )
        return stream.id
    finally:
        await runtime.close()
