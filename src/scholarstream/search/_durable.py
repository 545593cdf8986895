"""A search run as a DBOS workflow: every skill call is a checkpointed step and every
human checkpoint a durable wait (``DBOS.recv``), so a run survives a restart of the server
while it waits, and resumes without repeating the searches and model calls it has done.

The API starts runs with ``start_search_run`` and delivers decisions with
``deliver_decision``; the run's row (``SearchRunStore``) is what users see of it.

Search's registration module (``bootstrap.REGISTRATIONS``): importing it declares the
``search_run`` workflow to DBOS before the engine launches (it has no schedule).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from dbos import DBOS, SetWorkflowID

from scholarstream.durable import current_runtime
from scholarstream.errors import ConflictError, ScholarStreamError
from scholarstream.papers import Record
from scholarstream.search._assembly import SearchServices, check_sources
from scholarstream.search._fallbacks import FallbackLog
from scholarstream.search._run_store import SearchRunStore, workflow_id_for
from scholarstream.search._runs import SearchRequest, SearchRun
from scholarstream.search._workflow import SearchWorkflow, Stage

if TYPE_CHECKING:
    from scholarstream.db import Database
    from scholarstream.sources import SourceHub

from scholarstream.search.core import (
    Checkpoint,
    Decision,
    Deduplicator,
    IntentParser,
    LabelledPaper,
    ModelFallback,
    PaperCollection,
    ParsedIntent,
    QueryBuilder,
    QueryBuilderInput,
    RelevanceScorer,
    ResultOrganizer,
    ScoredPaper,
    Searcher,
    SearchResults,
    SearchStrategy,
)
from scholarstream.sources import SourceStatus

log = logging.getLogger(__name__)

# A waiting run re-arms its wait this often; it waits for as long as it takes.
_WAIT_SECONDS = 3600.0
# Sent instead of a decision to wake a waiting run that was cancelled.
_CANCEL = {"cancel": True}


T = TypeVar("T")


@dataclass(frozen=True)
class _Stepped:
    """A step's result with the run's fallbacks as they stood after it: the step's record
    keeps them, so a run resumed after a crash still knows which skills fell back."""

    output: Any
    fallbacks: list[ModelFallback]


async def _step(name: str, fallbacks: FallbackLog, call: Callable[[], Awaitable[T]]) -> T:
    async def stepped() -> _Stepped:
        return _Stepped(await call(), fallbacks.items)

    # A step recorded before fallbacks were kept holds the bare output.
    result: Any = await DBOS.run_step_async({"name": name}, stepped)
    if not isinstance(result, _Stepped):  # pragma: no cover - an older run resumed
        return result  # type: ignore[no-any-return]
    fallbacks.merge(result.fallbacks)
    return result.output  # type: ignore[no-any-return]


class _DurableIntentParser:
    def __init__(self, inner: IntentParser, fallbacks: FallbackLog) -> None:
        self.inner = inner
        self.fallbacks = fallbacks

    async def parse(self, user_input: str) -> ParsedIntent:
        return await _step("search.parse", self.fallbacks, lambda: self.inner.parse(user_input))


class _DurableQueryBuilder:
    def __init__(self, inner: QueryBuilder, fallbacks: FallbackLog) -> None:
        self.inner = inner
        self.fallbacks = fallbacks

    async def build(self, data: QueryBuilderInput) -> SearchStrategy:
        return await _step("search.build", self.fallbacks, lambda: self.inner.build(data))


class _DurableSearcher:
    def __init__(self, inner: Searcher) -> None:
        self.inner = inner

    async def search(self, strategy: SearchStrategy) -> SearchResults:
        return await DBOS.run_step_async({"name": "search.search"}, self.inner.search, strategy)


class _DurableDeduplicator:
    def __init__(self, inner: Deduplicator, fallbacks: FallbackLog) -> None:
        self.inner = inner
        self.fallbacks = fallbacks

    async def deduplicate(self, records: Sequence[Record]) -> list[Record]:
        records = list(records)
        return await _step("search.dedup", self.fallbacks, lambda: self.inner.deduplicate(records))


class _DurableScorer:
    def __init__(self, inner: RelevanceScorer, fallbacks: FallbackLog) -> None:
        self.inner = inner
        self.fallbacks = fallbacks

    async def score(
        self,
        records: Sequence[Record],
        intent: ParsedIntent,
        *,
        labelled: Sequence[LabelledPaper] = (),
    ) -> list[ScoredPaper]:
        async def call() -> list[ScoredPaper]:
            return await self.inner.score(records, intent, labelled=labelled)

        return await _step("search.score", self.fallbacks, call)


class _DurableOrganizer:
    def __init__(self, inner: ResultOrganizer, fallbacks: FallbackLog) -> None:
        self.inner = inner
        self.fallbacks = fallbacks

    async def organize(
        self,
        scored: Sequence[ScoredPaper],
        strategy: SearchStrategy,
        user_input: str,
        *,
        results: SearchResults | None = None,
    ) -> PaperCollection:
        async def call() -> PaperCollection:
            return await self.inner.organize(scored, strategy, user_input, results=results)

        return await _step("search.organize", self.fallbacks, call)


class _StoreObserver:
    def __init__(self, store: SearchRunStore) -> None:
        self.store = store

    async def stage(self, run_id: str, iteration: int, stage: Stage) -> None:
        # Not a step: a repeated status write on recovery is harmless.
        await self.store.set_stage(uuid.UUID(run_id), iteration, stage)

    def source_done(self, status: SourceStatus) -> None:
        """Sources' statuses reach the run with the results."""


class DurableCheckpointHandler:
    """Publishes the checkpoint on the run's row, then waits for the decision the API
    sends (topic: the checkpoint's id). The decision was validated before it was sent."""

    def __init__(self, store: SearchRunStore, run_id: uuid.UUID, workflow: SearchWorkflow) -> None:
        self.store = store
        self.run_id = run_id
        self.workflow = workflow

    async def handle(self, checkpoint: Checkpoint) -> Decision:
        async def publish() -> str:
            await self.store.save_state(self.run_id, self.workflow.state)
            return await self.store.set_pending(self.run_id, checkpoint)

        pending_id: str = await DBOS.run_step_async({"name": "search.checkpoint"}, publish)
        message: Any = None
        while message is None:
            message = await DBOS.recv_async(topic=pending_id, timeout_seconds=_WAIT_SECONDS)
        if message == _CANCEL:
            raise ConflictError("The search run was cancelled.", hint="Start a new search.")
        return Decision.model_validate(message)


def make_durable(workflow: SearchWorkflow) -> None:
    log_ = workflow.fallbacks
    workflow.intent_parser = _DurableIntentParser(workflow.intent_parser, log_)
    workflow.query_builder = _DurableQueryBuilder(workflow.query_builder, log_)
    workflow.searcher = _DurableSearcher(workflow.searcher)
    workflow.deduplicator = _DurableDeduplicator(workflow.deduplicator, log_)
    workflow.relevance_scorer = _DurableScorer(workflow.relevance_scorer, log_)
    workflow.result_organizer = _DurableOrganizer(workflow.result_organizer, log_)


@DBOS.workflow(name="search_run")
async def search_run_workflow(run_id: str, owner_id: str) -> None:
    runtime = current_runtime()
    store = SearchRunStore(runtime.database)
    run_uuid, owner_uuid = uuid.UUID(run_id), uuid.UUID(owner_id)
    run: SearchRun = await DBOS.run_step_async(
        {"name": "search.load"}, store.get, owner_uuid, run_uuid
    )
    services = SearchServices(
        settings=runtime.settings.search,
        sources=runtime.sources,
        library=runtime.library,
        llm=runtime.llm,
        database=runtime.database,
    )
    workflow = SearchWorkflow.from_config(
        services,
        owner_uuid,
        max_iterations=run.options.max_iterations,
        options=run.options,
        observer=_StoreObserver(store),
        offline=await runtime.models.offline_for_owner(runtime.database, owner_uuid),
    )
    workflow.checkpoint_handler = DurableCheckpointHandler(store, run_uuid, workflow)
    make_durable(workflow)
    try:
        collection = await workflow.run(run.question, run_id=run_id)
    except ScholarStreamError as exc:
        await DBOS.run_step_async(
            {"name": "search.failed"}, store.fail, run_uuid, exc, workflow.state
        )
        return
    except Exception:
        log.exception("search run %s failed", run_id)
        await DBOS.run_step_async(
            {"name": "search.failed"},
            store.fail,
            run_uuid,
            ScholarStreamError("The search failed unexpectedly.", hint="Start it again."),
            workflow.state,
        )
        return

    async def finish() -> None:
        await store.complete(run_uuid, collection, workflow.state)

    await DBOS.run_step_async({"name": "search.complete"}, finish)


async def start_search_run(
    database: Database, sources: SourceHub, owner_id: uuid.UUID, request: SearchRequest
) -> SearchRun:
    check_sources(sources, request.sources)
    store = SearchRunStore(database)
    run = await store.create(owner_id, request)
    with SetWorkflowID(workflow_id_for(run.id)):
        await DBOS.start_workflow_async(search_run_workflow, str(run.id), str(owner_id))
    return run


async def deliver_decision(
    database: Database,
    owner_id: uuid.UUID,
    run_id: uuid.UUID,
    pending_id: str,
    decision: Decision,
) -> SearchRun:
    store = SearchRunStore(database)
    workflow_id, pending = await store.accept_decision(owner_id, run_id, pending_id, decision)
    try:
        await DBOS.send_async(workflow_id, decision.model_dump(mode="json"), topic=pending.id)
    except BaseException:
        await store.restore_pending(run_id, pending)
        raise
    return await store.get(owner_id, run_id)


async def cancel_search_run(
    database: Database, owner_id: uuid.UUID, run_id: uuid.UUID
) -> SearchRun:
    store = SearchRunStore(database)
    workflow_id, pending_id = await store.cancel(owner_id, run_id)
    if pending_id is not None:
        # A waiting run ends now rather than holding its wait until shutdown.
        await DBOS.send_async(workflow_id, _CANCEL, topic=pending_id)
    else:
        await DBOS.cancel_workflow_async(workflow_id)
    return await store.get(owner_id, run_id)
