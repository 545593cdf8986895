"""Research runs in the durable engine (DBOS): one workflow per model call (the seed's
``llm.call`` messages) and one per synthesis, all on the ``llm-calls`` queue.

A call workflow records the call started, asks the model, then records the outcome and
applies the transitions that follow (``advance``) in one locked transaction
(``ResearchStore.apply``). The one call whose outcome completes the set sees the research
become ``synthesizing`` and enqueues the synthesis workflow; every other call sees models
still pending, or the research already moved on. Each of these is a checkpointed step:
after a crash a completed model call is not made again; a record step that runs again
changes nothing, or is dropped as stale.

Per-provider limits: the queue is partitioned by provider (``openai``, ``anthropic`` ...),
so at most ``partition_concurrency`` calls per provider run at once across every process
sharing the engine's database, while other providers' calls go ahead.

Workflow ids are derived from what they run (research, model, attempt; research and
revision for a synthesis), so dispatching the same work twice starts it once. That makes
``redispatch_active`` safe: the engine runs it on a schedule and it re-enqueues the work
of every research in flight, which covers a process that stopped between saving a change
and enqueueing its calls.

After every saved change, ``dispatch`` also starts what follows it outside the model
calls: a research that became ``completed`` (by any path) is shared once
(``share_workflow``), and the events the change saved are delivered to the configured
webhooks (``webhook_delivery``). The sweep covers both as well: it shares research
completed recently but not shared, and restarts the deliveries webhooks are owed.

Workflow functions are module-level and reach the process's ``Runtime`` through
``scholarstream.durable.current_runtime()``; their steps unpack it, handing what they call
only the parts it uses (a store, the model registry and gateway, the ``research``
settings). This module is research's registration module (``bootstrap.REGISTRATIONS``):
importing it declares the workflows (those of ``share_workflow`` and ``webhook_delivery``
with them) and registers the sweep's schedule.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from dbos import DBOS, SetEnqueueOptions, SetWorkflowID
from pydantic import Field

from scholarstream.durable import (
    ScheduleSpec,
    current_runtime,
    register_schedule,
    require_engine,
)
from scholarstream.errors import ConflictError, EngineError, InvalidInputError, NotFoundError
from scholarstream.grounding import CitationAudit
from scholarstream.llm import split_model_string
from scholarstream.research._citation_audit import audit_content
from scholarstream.research._engine import RECORD_STEP as _RECORD_STEP
from scholarstream.research._model_calls import CallOutcome, ask_model, ask_synthesis_model
from scholarstream.research._share_workflow import start_share, unshared_editions
from scholarstream.research._store import AppliedChange, ResearchStore, StoredResearch
from scholarstream.research._webhook_cursors import WebhookCursors
from scholarstream.research._webhook_delivery import start_webhooks, webhook_backlog
from scholarstream.research.core import (
    CamelModel,
    LLMCallEvent,
    LLMResultStatus,
    Research,
    ResearchChange,
    ResearchStatus,
    SynthesisPrompt,
    advance,
    build_synthesis_prompt,
    record_call_failed,
    record_call_started,
    record_call_succeeded,
    record_synthesis_failed,
    record_synthesis_succeeded,
    research_prompt,
)

__all__ = [
    "CALL_QUEUE",
    "SWEEP_CRON",
    "Dispatch",
    "call_workflow_id",
    "dispatch",
    "dispatch_for",
    "redispatch_active",
    "require_engine",
    "research_call_workflow",
    "research_sweep_workflow",
    "research_synthesis_workflow",
    "synthesis_workflow_id",
]

log = logging.getLogger(__name__)

CALL_QUEUE = "llm-calls"
SWEEP_CRON = "30 */2 * * * *"  # every two minutes; work already dispatched is not repeated
DROPPED = "dropped"


class Dispatch(CamelModel):
    """The work a saved change asks the engine to run."""

    owner_id: uuid.UUID
    research_id: uuid.UUID
    revision: int
    status: ResearchStatus
    calls: list[LLMCallEvent] = Field(default_factory=list)
    synthesis_llm: str | None = None
    announced: bool = Field(
        default=False, description="The change saved events: deliver them to the webhooks."
    )
    share_edition: int = Field(
        default=0,
        description="Which completion of the research is shared: 0, then one more each time "
        "Retry re-ran a synthesis that had failed (its report is shared again).",
    )

    @property
    def runs_synthesis(self) -> bool:
        return self.status == ResearchStatus.SYNTHESIZING

    @property
    def shares(self) -> bool:
        return self.status == ResearchStatus.COMPLETED


def dispatch_for(applied: AppliedChange[Any]) -> Dispatch:
    research = applied.research
    return Dispatch(
        owner_id=applied.owner_id,
        research_id=research.id,
        revision=applied.revision,
        status=research.status,
        calls=applied.change.llm_calls,
        synthesis_llm=research.synthesis_llm,
        announced=bool(applied.change.events),
        share_edition=research.synthesis_retries,
    )


def _resumed(stored: StoredResearch) -> Dispatch:
    """Everything ``stored`` may still be waiting for: a call per unfinished result, the
    synthesis if it is synthesising."""
    research = stored.research
    unfinished = (LLMResultStatus.PENDING, LLMResultStatus.PROCESSING)
    return Dispatch(
        owner_id=stored.owner_id,
        research_id=research.id,
        revision=stored.revision,
        status=research.status,
        calls=[
            LLMCallEvent(research_id=research.id, model=r.model, attempt=r.attempt)
            for r in research.llm_results
            if r.status in unfinished
        ],
        synthesis_llm=research.synthesis_llm,
    )


def call_workflow_id(research_id: uuid.UUID, model: str, attempt: int) -> str:
    return f"research-{research_id}-call-{attempt}-{model}"


def synthesis_workflow_id(research_id: uuid.UUID, revision: int) -> str:
    return f"research-{research_id}-synthesis-{revision}"


def _partition(model: str | None) -> str:
    return split_model_string(model)[0] if model else "none"


async def dispatch(work: Dispatch) -> None:
    """Enqueue ``work``'s calls and synthesis, share a research that completed, deliver
    the events the change saved; work already started (same id) is kept."""
    await _enqueue(work)
    if work.shares:
        await start_share(work.owner_id, work.research_id, edition=work.share_edition)
    if work.announced:
        await start_webhooks(work.research_id, str(work.revision))


async def _enqueue(work: Dispatch) -> None:
    if not work.calls and not work.runs_synthesis:
        return
    queue = await DBOS.retrieve_queue_async(CALL_QUEUE)
    if queue is None:
        raise EngineError(
            f"The durable engine has no {CALL_QUEUE!r} queue.",
            hint="Start ScholarStream with 'scholarstream serve' or 'scholarstream worker'.",
        )
    owner, research = str(work.owner_id), str(work.research_id)
    for call in work.calls:
        with (
            SetWorkflowID(call_workflow_id(work.research_id, call.model, call.attempt)),
            SetEnqueueOptions(queue_partition_key=_partition(call.model)),
        ):
            await queue.enqueue_async(
                research_call_workflow, owner, research, call.model, call.attempt
            )
    if work.runs_synthesis:
        with (
            SetWorkflowID(synthesis_workflow_id(work.research_id, work.revision)),
            SetEnqueueOptions(queue_partition_key=_partition(work.synthesis_llm)),
        ):
            await queue.enqueue_async(research_synthesis_workflow, owner, research, work.revision)


async def redispatch_active(store: ResearchStore) -> list[Dispatch]:
    """Dispatch again the work of every research in flight (outside a workflow: tests,
    the CLI). Returns what it dispatched."""
    work = [_resumed(stored) for stored in await store.active()]
    for item in work:
        await dispatch(item)
    return work


# -- steps: plain functions of strings and models, checkpointed by the workflows --------


async def _apply(
    owner_id: str,
    research_id: str,
    change_fn: Callable[[Research], ResearchChange],
    *,
    expected_revision: int | None = None,
) -> AppliedChange[ResearchChange] | None:
    """The change applied, or ``None`` when it no longer applies (the research moved on:
    a late or repeated outcome; or it was deleted), which is dropped."""
    store = ResearchStore(current_runtime().database)
    try:
        return await store.apply(
            uuid.UUID(owner_id),
            uuid.UUID(research_id),
            change_fn,
            expected_revision=expected_revision,
        )
    except (ConflictError, NotFoundError) as exc:
        log.info("research %s: dropped a stale update (%s)", research_id, exc.message)
        return None


async def _record_started(owner_id: str, research_id: str, model: str, attempt: int) -> str | None:
    """The research prompt to ask (with the evidence pack, if any), once the call is
    recorded as started."""
    applied = await _apply(owner_id, research_id, lambda r: record_call_started(r, model, attempt))
    return research_prompt(applied.research) if applied else None


async def _ask_model(owner_id: str, model: str, prompt: str) -> CallOutcome:
    runtime = current_runtime()
    return await ask_model(
        uuid.UUID(owner_id),
        model,
        prompt,
        database=runtime.database,
        models=runtime.models,
        llm=runtime.llm,
        timeout_seconds=runtime.settings.llm.deadline_seconds,
    )


def _recorded_call(
    model: str, attempt: int, outcome: CallOutcome, audit: CitationAudit | None
) -> Callable[[Research], ResearchChange]:
    def record(research: Research) -> ResearchChange:
        if outcome.content is not None:
            change = record_call_succeeded(
                research, model, attempt, outcome.content, cut_off=outcome.cut_off, audit=audit
            )
        else:
            change = record_call_failed(
                research,
                model,
                attempt,
                outcome.error or "The model call failed.",
                error_code=outcome.error_code,
            )
        return advance(change)

    return record


async def _record_call(
    owner_id: str,
    research_id: str,
    model: str,
    attempt: int,
    outcome: CallOutcome,
    audit: CitationAudit | None,
) -> Dispatch | None:
    applied = await _apply(owner_id, research_id, _recorded_call(model, attempt, outcome, audit))
    return dispatch_for(applied) if applied else None


class SynthesisJob(CamelModel):
    model: str | None
    prompt: SynthesisPrompt


async def _synthesis_job(owner_id: str, research_id: str, revision: int) -> SynthesisJob | None:
    store = ResearchStore(current_runtime().database)
    try:
        stored = await store.get_stored(uuid.UUID(owner_id), uuid.UUID(research_id))
    except NotFoundError:
        return None
    research = stored.research
    if stored.revision != revision or research.status != ResearchStatus.SYNTHESIZING:
        log.info("research %s: synthesis of revision %d is stale", research_id, revision)
        return None
    return SynthesisJob(model=research.synthesis_llm, prompt=build_synthesis_prompt(research))


async def _ask_synthesis_model(owner_id: str, job: SynthesisJob) -> CallOutcome:
    if job.model is None:
        return CallOutcome(
            error="No synthesis model was chosen.", error_code=InvalidInputError.code
        )
    runtime = current_runtime()
    return await ask_synthesis_model(
        uuid.UUID(owner_id),
        job.model,
        job.prompt,
        database=runtime.database,
        models=runtime.models,
        llm=runtime.llm,
        timeout_seconds=runtime.settings.llm.deadline_seconds,
    )


def _recorded_synthesis(
    outcome: CallOutcome, audit: CitationAudit | None
) -> Callable[[Research], ResearchChange]:
    def record(research: Research) -> ResearchChange:
        if outcome.content is not None:
            return record_synthesis_succeeded(
                research, outcome.content, cut_off=outcome.cut_off, audit=audit
            )
        return record_synthesis_failed(
            research,
            outcome.error or "The synthesis call failed.",
            error_code=outcome.error_code,
        )

    return record


async def _record_synthesis(
    owner_id: str,
    research_id: str,
    revision: int,
    outcome: CallOutcome,
    audit: CitationAudit | None,
) -> Dispatch | None:
    applied = await _apply(
        owner_id, research_id, _recorded_synthesis(outcome, audit), expected_revision=revision
    )
    if applied is not None and outcome.content is None:
        # The model failure itself is logged by the LLM layer; this is what it meant here.
        log.warning(
            "research %s: synthesis not available (the research completes without it): %s",
            research_id,
            outcome.error,
        )
    return dispatch_for(applied) if applied else None


async def _active_work() -> list[Dispatch]:
    return [_resumed(stored) for stored in await ResearchStore(current_runtime().database).active()]


async def _unshared() -> list[tuple[uuid.UUID, uuid.UUID, int]]:
    runtime = current_runtime()
    return await unshared_editions(ResearchStore(runtime.database), runtime.settings.research)


async def _webhook_backlog() -> list[uuid.UUID]:
    runtime = current_runtime()
    return await webhook_backlog(WebhookCursors(runtime.database), runtime.settings.research)


# -- workflows ------------------------------------------------------------------------


@DBOS.workflow()
async def research_call_workflow(owner_id: str, research_id: str, model: str, attempt: int) -> str:
    """One ``llm.call``: ``model`` answers the research prompt (attempt ``attempt``)."""
    prompt = await DBOS.run_step_async(
        {**_RECORD_STEP, "name": "research.call.started"},
        _record_started,
        owner_id,
        research_id,
        model,
        attempt,
    )
    if prompt is None:
        return DROPPED
    outcome = await DBOS.run_step_async(
        {"name": "research.call.model"}, _ask_model, owner_id, model, prompt
    )
    audit = await DBOS.run_step_async(
        {**_RECORD_STEP, "name": "research.call.audit"},
        audit_content,
        owner_id,
        research_id,
        outcome.content,
    )
    recorded = await DBOS.run_step_async(
        {**_RECORD_STEP, "name": "research.call.recorded"},
        _record_call,
        owner_id,
        research_id,
        model,
        attempt,
        outcome,
        audit,
    )
    if recorded is None:
        return DROPPED
    await dispatch(recorded)
    return recorded.status.value


@DBOS.workflow()
async def research_synthesis_workflow(owner_id: str, research_id: str, revision: int) -> str:
    """The synthesis of a research that became ``synthesizing`` at ``revision``."""
    job = await DBOS.run_step_async(
        {**_RECORD_STEP, "name": "research.synthesis.prompt"},
        _synthesis_job,
        owner_id,
        research_id,
        revision,
    )
    if job is None:
        return DROPPED
    outcome = await DBOS.run_step_async(
        {"name": "research.synthesis.model"}, _ask_synthesis_model, owner_id, job
    )
    audit = await DBOS.run_step_async(
        {**_RECORD_STEP, "name": "research.synthesis.audit"},
        audit_content,
        owner_id,
        research_id,
        outcome.content,
    )
    recorded: Dispatch | None = await DBOS.run_step_async(
        {**_RECORD_STEP, "name": "research.synthesis.recorded"},
        _record_synthesis,
        owner_id,
        research_id,
        revision,
        outcome,
        audit,
    )
    if recorded is None:
        return DROPPED
    await dispatch(recorded)  # a completed research is shared; its events delivered
    return recorded.status.value


@DBOS.workflow()
async def research_sweep_workflow(scheduled_at: datetime, context: Any) -> None:
    """Scheduled: re-enqueue the work of every research in flight, share the research
    completed recently but not shared, and deliver the events webhooks are owed (see the
    module)."""
    work = await DBOS.run_step_async({"name": "research.sweep"}, _active_work)
    for item in work:
        await dispatch(item)
    unshared = await DBOS.run_step_async({"name": "research.sweep.unshared"}, _unshared)
    for owner_id, research_id, edition in unshared:
        await start_share(owner_id, research_id, edition=edition)
    owed = await DBOS.run_step_async({"name": "research.sweep.webhooks"}, _webhook_backlog)
    for research_id in owed:
        await start_webhooks(research_id, f"sweep-{scheduled_at:%Y%m%dT%H%M%S}")


# Re-enqueues the calls of research in flight that a stopped process never enqueued.
SWEEP = register_schedule(ScheduleSpec("redispatch-research", SWEEP_CRON, research_sweep_workflow))
