"""A stream's run on demand, for the API and the schedule: claim the stream, run it with
the sources, the owner's library and the judge the settings call for, store the report.
``finish_run`` is the part after the claim, which the schedule's durable workflow runs as
a step of its own: ``resume_run`` finishes a claimed run after a crash. A run receives
what it uses as one ``StreamRunner`` (the durable step and the tests build it from the
runtime's parts)."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from dataclasses import dataclass

from scholarstream.db import Database
from scholarstream.embeddings import Embedder
from scholarstream.errors import ScholarStreamError
from scholarstream.llm import LLMGateway
from scholarstream.notify import NotificationTargetStore, Notifier
from scholarstream.runtime import Runtime
from scholarstream.search import FallbackLog, GatewaySkillLLM, library_embedder, offline_scorer
from scholarstream.search.scoring import LLMRelevanceScorer
from scholarstream.settings import Settings, StreamSettings
from scholarstream.sources import SourceHub
from scholarstream.sources.library import Library, LibrarySource
from scholarstream.streams.monitoring._announce import announce
from scholarstream.streams.monitoring._engine import run_stream
from scholarstream.streams.monitoring._relevance import OFFLINE_JUDGE, StreamJudge
from scholarstream.streams.monitoring._report import StoredReport
from scholarstream.streams.monitoring._store import ReportStore, RunStart

log = logging.getLogger(__name__)

LIBRARY = "library"
FEATURE = "streams.relevance"


@dataclass(frozen=True)
class StreamRunner:
    """What a stream's run uses: the database (reports, usage, notification targets), the
    sources, the owner's library, the model gateway (the judge), the notifier, and the
    settings (three sections: ``streams`` for the judge, ``server`` for the report's link,
    and the server secret the notification targets are encrypted with)."""

    database: Database
    sources: SourceHub
    library: Library
    llm: LLMGateway
    notifier: Notifier
    settings: Settings

    @property
    def reports(self) -> ReportStore:
        return ReportStore(self.database)


def stream_runner(runtime: Runtime) -> StreamRunner:
    """The parts of ``runtime`` a run uses: what the durable steps build from the runtime
    the durable layer holds."""
    return StreamRunner(
        database=runtime.database,
        sources=runtime.sources,
        library=runtime.library,
        llm=runtime.llm,
        notifier=runtime.notifier,
        settings=runtime.settings,
    )


def stream_judge(
    llm: LLMGateway,
    database: Database,
    settings: StreamSettings,
    owner_id: uuid.UUID,
    *,
    offline: bool | None = None,
    embedder: Embedder | None = None,
) -> StreamJudge:
    """The owner's ``fast`` model when one is configured and ``streams.model_relevance``
    allows it (what it cannot judge is scored offline); the offline scorer otherwise. The
    offline scorer ranks by words and meaning with ``embedder`` (the library's, when
    semantic ranking is on), by words alone without."""
    if (llm.offline if offline is None else offline) or not settings.model_relevance:
        if embedder is None:
            return OFFLINE_JUDGE
        return StreamJudge(offline_scorer(embedder), embed_documents=embedder.embed_documents)
    fallbacks = FallbackLog()  # one per run: the report tells the user once
    scorer = LLMRelevanceScorer(
        GatewaySkillLLM(llm, database, owner_id),
        batch_size=settings.relevance_batch_size,
        fallback=offline_scorer(embedder),
        feature=FEATURE,
        fallbacks=fallbacks,
    )
    return StreamJudge(
        scorer,
        name="model",
        explains=True,
        fallbacks=fallbacks,
        embed_documents=embedder.embed_documents if embedder else None,
    )


async def run_stream_now(
    runner: StreamRunner,
    owner_id: uuid.UUID,
    stream_id: uuid.UUID,
    *,
    now: dt.datetime | None = None,
    if_due: bool = False,
) -> StoredReport:
    """Runs the stream, stores its report, announces it to the notification targets, and
    returns it (``failed`` when every source failed; the run is then searched again from
    the same date next time). ``ConflictError`` when the stream is already running (or,
    ``if_due``, not due at ``now``), ``NotFoundError`` for another user's stream."""
    start = await runner.reports.begin(owner_id, stream_id, now=now, if_due=if_due)
    return await finish_run(runner, owner_id, start)


async def resume_run(
    runner: StreamRunner, owner_id: uuid.UUID, report_id: uuid.UUID
) -> StoredReport | None:
    """Finishes the run of ``report_id`` if it is still ``running`` (its process died: the
    run starts over under the same report); ``None`` when it is not running any more."""
    start = await runner.reports.resume(owner_id, report_id)
    if start is None:
        return None
    return await finish_run(runner, owner_id, start)


async def finish_run(runner: StreamRunner, owner_id: uuid.UUID, start: RunStart) -> StoredReport:
    """Runs the claimed run ``start``, stores and announces its report (see
    ``run_stream_now``)."""
    store = runner.reports
    stream_id = start.stream.id
    try:
        result = await run_stream(
            start.stream,
            runner.sources,
            since=start.since.date(),
            windows=start.windows,
            reported=start.reported,
            local={LIBRARY: LibrarySource(runner.library, owner_id)},
            by=stream_judge(
                runner.llm,
                runner.database,
                runner.settings.streams,
                owner_id,
                offline=await runner.llm.registry.offline_for_owner(runner.database, owner_id),
                embedder=library_embedder(runner.library),
            ),
            labelled=start.labelled,
        )
    except BaseException as exc:
        # Frees the stream for the next run; the error itself goes on to the caller.
        await store.abort(owner_id, start.report_id, str(exc) or type(exc).__name__)
        raise
    stored = await store.finish(owner_id, start, result)
    try:
        deliveries = await announce(
            runner.settings.server,
            NotificationTargetStore.for_server(runner.settings, runner.database),
            runner.notifier,
            owner_id,
            stored,
            start.stream.stream_name,
        )
        return await store.record_notifications(owner_id, stored, deliveries)
    except ScholarStreamError as exc:
        # The report is stored; a notification that could not even be attempted (the
        # stream was deleted meanwhile) must not turn the run into an error.
        log.warning("stream %s: the report was not announced: %s", stream_id, exc)
        return stored
