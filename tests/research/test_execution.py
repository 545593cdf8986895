"""Research runs through the real durable engine, on SQLite and PostgreSQL, with scripted
models in place of the providers: every path of the seed's lifecycle (all answer; one
fails, then proceed, retry or cancel; all fail, then retry; the synthesis fails: the
research completes without it, then retry runs it), models that finish at the same
instant synthesised exactly once, a completed model call not made again when its workflow
runs again, per-provider limits, and the sweep that re-enqueues work a stopped process
never enqueued."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from dbos import DBOS

from scholarstream.db import OwnerScope
from scholarstream.durable import QUEUES, runtime_holder
from scholarstream.errors import ConflictError, MissingCredentialsError
from scholarstream.llm import usage_totals
from scholarstream.research import (
    ALL_LLMS_FAILED,
    CALL_QUEUE,
    CANCELLED_BY_USER,
    MAX_RETRIES,
    ConfirmAction,
    DraftRequest,
    ExternalReport,
    LLMResultStatus,
    Research,
    ResearchStatus,
    ResearchStore,
    UserAction,
    call_workflow_id,
    error_summary,
    redispatch_active,
    start_research,
    synthesis_workflow_id,
)
from scholarstream.settings import Settings
from tests.helpers import make_runtime
from tests.research.builders import ANTHROPIC, GOOGLE, MODELS, OPENAI
from tests.research.conftest import research_settings
from tests.research.engine_world import (
    SYNTHESIZER,
    InFlight,
    World,
    answer,
    fail,
    hang,
    slowly,
    together,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROMPT = "Does tirzepatide reduce cardiovascular events in adults with obesity?"
SYNTHESIS = "Both models agree [M1][M2]."


async def started(
    world: World,
    models: tuple[str, ...] = (OPENAI, ANTHROPIC),
    synthesis: str | None = SYNTHESIZER,
) -> Research:
    draft = await world.service.draft(
        world.owner_id,
        DraftRequest(prompt=PROMPT, selected_llms=list(models), synthesis_llm=synthesis),
    )
    research = await world.service.start(world.owner_id, draft.id)
    assert research.status == ResearchStatus.PROCESSING
    return research


async def event_types(world: World, research_id: uuid.UUID) -> list[str]:
    return [e.event.type for e in await world.service.events(world.owner_id, research_id)]


async def test_every_model_answers_and_the_synthesis_completes_the_research(
    world: World,
) -> None:
    world.models.plan(SYNTHESIZER, answer(SYNTHESIS))
    research = await started(world)

    done = await world.settled(research.id, ResearchStatus.COMPLETED)

    assert [(r.model, r.status, r.content) for r in done.llm_results] == [
        (OPENAI, LLMResultStatus.COMPLETED, f"Answer of {OPENAI}"),
        (ANTHROPIC, LLMResultStatus.COMPLETED, f"Answer of {ANTHROPIC}"),
    ]
    assert done.synthesized_result == SYNTHESIS
    assert world.models.calls == {OPENAI: 1, ANTHROPIC: 1, SYNTHESIZER: 1}
    assert world.models.prompts[OPENAI] == [PROMPT]
    # The synthesis is asked about both answers, each labelled with its model.
    (synthesis_prompt,) = world.models.prompts[SYNTHESIZER]
    assert f"[M1], answer of model {OPENAI}" in synthesis_prompt
    assert f"Answer of {ANTHROPIC}" in synthesis_prompt
    events = await event_types(world, research.id)
    assert events[0] == "research.started"
    assert sorted(events[1:3]) == ["research.llm_completed"] * 2
    assert events[3:] == ["research.synthesizing", "research.completed"]
    # Every call went through the gateway, into the user's usage ledger.
    async with world.runtime.database.session() as session:
        usage = await usage_totals(OwnerScope(session, world.owner_id))
    assert sorted((u.model, u.feature, u.runs) for u in usage) == [
        (ANTHROPIC, "research", 1),
        (SYNTHESIZER, "research.synthesis", 1),
        (OPENAI, "research", 1),
    ]


async def test_one_model_failing_then_proceed_synthesises_what_succeeded(
    world: World,
) -> None:
    world.models.plan(ANTHROPIC, fail(503))
    research = await started(world, models=MODELS)

    waiting = await world.settled(research.id, ResearchStatus.AWAITING_CONFIRMATION)
    assert waiting.partial_failure is not None
    assert waiting.partial_failure.failed_providers == [ANTHROPIC]
    failed = waiting.result_for(ANTHROPIC)
    assert failed is not None and failed.error is not None and "HTTP 503" in failed.error
    assert world.models.calls[SYNTHESIZER] == 0

    proceeding = await world.service.confirm(world.owner_id, research.id, ConfirmAction.PROCEED)
    assert proceeding.status == ResearchStatus.SYNTHESIZING
    done = await world.settled(research.id, ResearchStatus.COMPLETED)
    assert done.synthesized_result == f"Answer of {SYNTHESIZER}"
    (synthesis_prompt,) = world.models.prompts[SYNTHESIZER]
    assert f"These models failed and are not among the sources: {ANTHROPIC}" in synthesis_prompt


async def test_a_model_that_hangs_times_out_and_a_retry_that_succeeds_completes(
    world: World, module_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same engine, with a short call timeout.
    impatient = make_runtime(
        research_settings(
            module_settings.data_dir, module_settings.app_database_url, timeout_seconds=0.3
        ),
        models=world.models.overrides([*MODELS, SYNTHESIZER]),
    )
    runtime_holder().install(impatient)
    try:
        world.models.plan(ANTHROPIC, hang())
        research = await started(world)
        waiting = await world.settled(research.id, ResearchStatus.AWAITING_CONFIRMATION)
    finally:
        runtime_holder().install(world.runtime)
        await impatient.close()
    timed_out = waiting.result_for(ANTHROPIC)
    assert timed_out is not None and timed_out.error == f"{ANTHROPIC} did not answer within 0.3 s."

    retrying = await world.service.confirm(world.owner_id, research.id, ConfirmAction.RETRY)
    assert retrying.status == ResearchStatus.RETRYING
    done = await world.settled(research.id, ResearchStatus.COMPLETED)

    retried = done.result_for(ANTHROPIC)
    assert retried is not None
    assert (retried.status, retried.attempt) == (LLMResultStatus.COMPLETED, 2)
    assert done.retry_count == 1
    # Only the failed model was called again.
    assert world.models.calls == {OPENAI: 1, ANTHROPIC: 2, SYNTHESIZER: 1}
    assert "research.retrying" in await event_types(world, research.id)


async def test_one_model_failing_then_cancel_fails_the_research(world: World) -> None:
    world.models.plan(OPENAI, fail(500))
    research = await started(world)
    await world.settled(research.id, ResearchStatus.AWAITING_CONFIRMATION)

    cancelled = await world.service.confirm(world.owner_id, research.id, ConfirmAction.CANCEL)
    assert (cancelled.status, cancelled.error) == (ResearchStatus.FAILED, CANCELLED_BY_USER)
    await world.quiet()
    assert world.models.calls[SYNTHESIZER] == 0
    assert (await event_types(world, research.id))[-1] == "research.failed"


async def test_every_model_failing_fails_the_research_and_a_retry_recovers_it(
    world: World,
) -> None:
    world.models.plan(OPENAI, fail(500))
    world.models.plan(ANTHROPIC, fail(401))
    research = await started(world)

    failed = await world.settled(research.id, ResearchStatus.FAILED)
    assert failed.error == ALL_LLMS_FAILED
    refused = failed.result_for(ANTHROPIC)
    assert refused is not None and refused.error_code == "api_key_invalid"

    retrying = await world.service.retry(world.owner_id, research.id)
    assert retrying.status == ResearchStatus.RETRYING
    done = await world.settled(research.id, ResearchStatus.COMPLETED)
    assert [r.attempt for r in done.llm_results] == [2, 2]
    assert world.models.calls == {OPENAI: 2, ANTHROPIC: 2, SYNTHESIZER: 1}
    with pytest.raises(ConflictError, match="Only a failed research can be retried"):
        await world.service.retry(world.owner_id, research.id)


async def test_a_failed_synthesis_completes_without_it_and_a_retry_runs_it(world: World) -> None:
    """Issue 22 (the seed failed the research): the answers arrived, so the research
    completes without a synthesis and says why; Retry runs only the synthesis again."""
    world.models.plan(SYNTHESIZER, fail(500), answer(SYNTHESIS))
    research = await started(world)

    unavailable = await world.settled(research.id, ResearchStatus.COMPLETED)
    assert unavailable.synthesized_result is None
    assert unavailable.synthesis_error is not None and "HTTP 500" in unavailable.synthesis_error
    assert [r.status for r in unavailable.llm_results] == [LLMResultStatus.COMPLETED] * 2

    retried = await world.service.retry(world.owner_id, research.id)
    assert retried.status == ResearchStatus.SYNTHESIZING
    done = await world.settled(research.id, ResearchStatus.COMPLETED)
    assert done.synthesized_result == SYNTHESIS
    assert done.synthesis_error is None
    # The models' answers were kept: only the synthesis ran again.
    assert world.models.calls == {OPENAI: 1, ANTHROPIC: 1, SYNTHESIZER: 2}
    assert (await event_types(world, research.id))[-4:] == [
        "research.synthesizing",
        "research.completed",
        "research.synthesizing",
        "research.completed",
    ]
    with pytest.raises(ConflictError, match="Only a failed research can be retried"):
        await world.service.retry(world.owner_id, research.id)


async def test_after_proceed_a_failed_synthesis_is_retried_without_the_failed_models(
    world: World,
) -> None:
    """After Proceed the synthesis fails while a model has failed: the research completes
    with the answers received, and Retry runs the synthesis again on them (the user chose
    to go on without the failed model, which is not called again)."""
    world.models.plan(ANTHROPIC, fail(500))
    world.models.plan(SYNTHESIZER, fail(503), fail(503), answer(SYNTHESIS))
    research = await started(world, models=MODELS)

    await world.settled(research.id, ResearchStatus.AWAITING_CONFIRMATION)
    await world.service.confirm(world.owner_id, research.id, ConfirmAction.PROCEED)
    for _ in range(2):
        unavailable = await world.settled(research.id, ResearchStatus.COMPLETED)
        assert unavailable.failed_models == [ANTHROPIC]
        assert unavailable.synthesis_error is not None
        assert "HTTP 503" in unavailable.synthesis_error
        assert error_summary(unavailable) is None
        retried = await world.service.retry(world.owner_id, research.id)
        assert retried.status == ResearchStatus.SYNTHESIZING  # settles from here again

    done = await world.settled(research.id, ResearchStatus.COMPLETED)
    assert done.synthesized_result == SYNTHESIS
    assert done.synthesis_retries == 2
    assert world.models.calls == {OPENAI: 1, ANTHROPIC: 1, GOOGLE: 1, SYNTHESIZER: 3}
    final_prompt = world.models.prompts[SYNTHESIZER][-1]
    assert f"These models failed and are not among the sources: {ANTHROPIC}" in final_prompt


async def test_external_reports_alone_are_synthesised_once_no_model_may_be_retried(
    world: World,
) -> None:
    """Seed 001's skip logic, "0 successful, > 0 external reports: run synthesis (external
    only)", end to end: the only model fails every time; after the two retries, Retry
    synthesises the user's reports."""
    world.models.plan(OPENAI, *[fail(500)] * (MAX_RETRIES + 1))
    world.models.plan(SYNTHESIZER, answer("From the reports alone [R1][R2]."))
    reports = [
        ExternalReport(title="Cohort study", content="Tirzepatide lowered MACE by 20%."),
        ExternalReport(title="Registry", content="No signal of pancreatitis in 10,000 users."),
    ]
    draft = await world.service.draft(
        world.owner_id,
        DraftRequest(
            prompt=PROMPT,
            selected_llms=[OPENAI],
            synthesis_llm=SYNTHESIZER,
            external_reports=reports,
        ),
    )
    research = await world.service.start(world.owner_id, draft.id)

    for attempt in range(MAX_RETRIES):
        failed = await world.settled(research.id, ResearchStatus.FAILED)
        assert failed.retry_count == attempt and failed.error == ALL_LLMS_FAILED
        assert (await world.service.retry(world.owner_id, research.id)).status == (
            ResearchStatus.RETRYING
        )
    failed = await world.settled(research.id, ResearchStatus.FAILED)
    assert failed.retry_count == MAX_RETRIES
    summary = error_summary(failed)
    assert summary is not None and summary.user_action is UserAction.RETRY
    assert "the synthesis runs again" in summary.advice

    synthesizing = await world.service.retry(world.owner_id, research.id)
    assert synthesizing.status == ResearchStatus.SYNTHESIZING
    done = await world.settled(research.id, ResearchStatus.COMPLETED)
    assert done.synthesized_result == "From the reports alone [R1][R2]."
    assert world.models.calls == {OPENAI: MAX_RETRIES + 1, SYNTHESIZER: 1}
    (prompt,) = world.models.prompts[SYNTHESIZER]
    assert "Tirzepatide lowered MACE by 20%." in prompt
    assert "No signal of pancreatitis in 10,000 users." in prompt
    assert "[R1]" in prompt and "[R2]" in prompt and "[M1]" not in prompt
    events = await event_types(world, research.id)
    assert events[-2:] == ["research.synthesizing", "research.completed"]


async def test_a_single_model_skips_the_synthesis(world: World) -> None:
    research = await started(world, models=(OPENAI,), synthesis=None)
    done = await world.settled(research.id, ResearchStatus.COMPLETED)
    assert done.synthesized_result is None
    assert world.models.calls == {OPENAI: 1}


async def test_models_finishing_at_the_same_instant_start_exactly_one_synthesis(
    world: World,
) -> None:
    barrier = asyncio.Barrier(3)
    for model in MODELS:
        world.models.plan(model, together(barrier, f"Answer of {model}"))
    research = await started(world, models=MODELS)

    done = await world.settled(research.id, ResearchStatus.COMPLETED)
    await world.quiet()

    assert done.synthesized_result is not None
    assert world.models.calls == {OPENAI: 1, ANTHROPIC: 1, GOOGLE: 1, SYNTHESIZER: 1}
    events = await event_types(world, research.id)
    assert events.count("research.synthesizing") == 1
    assert events.count("research.llm_completed") == 3
    synthesis_runs = await DBOS.list_workflows_async(
        workflow_id_prefix=f"research-{research.id}-synthesis-"
    )
    assert len(synthesis_runs) == 1


async def test_a_completed_model_call_is_not_made_again_when_its_workflow_reruns(
    world: World,
) -> None:
    research = await started(world, models=(OPENAI,), synthesis=None)
    await world.settled(research.id, ResearchStatus.COMPLETED)
    store = ResearchStore(world.runtime.database)
    before = await store.get_stored(world.owner_id, research.id)

    # As DBOS recovery does after a crash: run the workflow again from the step that
    # records the outcome, with every earlier step's checkpointed result.
    workflow_id = call_workflow_id(research.id, OPENAI, 1)
    # The research is saved before the workflow checkpoints the step that saved it.
    assert await (await DBOS.retrieve_workflow_async(workflow_id)).get_result() == "completed"
    steps = await DBOS.list_workflow_steps_async(workflow_id)
    recorded = next(s for s in steps if s["function_name"] == "research.call.recorded")
    rerun = await DBOS.fork_workflow_async(workflow_id, recorded["function_id"])
    assert await rerun.get_result() == "dropped"  # the research has moved on

    assert world.models.calls == {OPENAI: 1}
    after = await store.get_stored(world.owner_id, research.id)
    assert (after.research, after.revision) == (before.research, before.revision)


async def test_calls_are_limited_per_provider_across_the_queue(world: World) -> None:
    (spec,) = [q for q in QUEUES if q.name == CALL_QUEUE]
    assert spec.partition_concurrency is not None
    in_flight = InFlight()
    openai_models = tuple(f"openai:model-{i}" for i in range(spec.partition_concurrency + 2))
    for model in openai_models:
        world.models.plan("default", slowly(0.6, f"Answer of {model}", in_flight))
    research = await started(world, models=openai_models)
    await world.settled(research.id, ResearchStatus.COMPLETED)

    assert in_flight.most == spec.partition_concurrency
    calls = await DBOS.list_workflows_async(workflow_id_prefix=f"research-{research.id}-call-")
    assert {c.queue_partition_key for c in calls} == {"openai"}


async def test_missing_keys_refuse_to_start_and_a_users_own_key_is_used(world: World) -> None:
    model = "openrouter:meta-llama/llama-3.1-70b"
    draft = await world.service.draft(
        world.owner_id, DraftRequest(prompt=PROMPT, selected_llms=[model])
    )
    with pytest.raises(MissingCredentialsError, match=f"No API key for {model}") as caught:
        await world.service.start(world.owner_id, draft.id)
    assert caught.value.hint is not None and "openrouter" in caught.value.hint
    assert (await world.service.get(world.owner_id, draft.id)).status == ResearchStatus.DRAFT

    async with world.runtime.database.session() as session:
        await world.runtime.credentials.store_user_key(
            OwnerScope(session, world.owner_id), "openrouter", "sk-or-user-key-1"
        )
    await world.service.start(world.owner_id, draft.id)
    done = await world.settled(draft.id, ResearchStatus.COMPLETED)
    assert done.llm_results[0].content == "Answer of default"
    async with world.runtime.database.session() as session:
        (usage,) = await usage_totals(OwnerScope(session, world.owner_id))
    assert usage.model == model


async def test_the_sweep_enqueues_work_a_stopped_process_never_enqueued(world: World) -> None:
    draft = await world.service.draft(
        world.owner_id,
        DraftRequest(prompt=PROMPT, selected_llms=[OPENAI, ANTHROPIC], synthesis_llm=SYNTHESIZER),
    )
    # Saved as started, but the process stopped before enqueueing the calls.
    await ResearchStore(world.runtime.database).apply(
        world.owner_id, draft.id, lambda r: start_research(r, has_credentials=lambda m: True)
    )
    await world.quiet()
    assert world.models.calls == {}

    dispatched = await redispatch_active(ResearchStore(world.runtime.database))
    assert [len(d.calls) for d in dispatched if d.research_id == draft.id] == [2]
    # Sweeping again while the calls run enqueues nothing new.
    await redispatch_active(ResearchStore(world.runtime.database))
    done = await world.settled(draft.id, ResearchStatus.COMPLETED)
    await redispatch_active(ResearchStore(world.runtime.database))
    await world.quiet()

    assert done.synthesized_result is not None
    assert world.models.calls == {OPENAI: 1, ANTHROPIC: 1, SYNTHESIZER: 1}
    revision = (
        await ResearchStore(world.runtime.database).get_stored(world.owner_id, draft.id)
    ).revision
    synthesis = await DBOS.list_workflows_async(
        workflow_id_prefix=f"research-{draft.id}-synthesis-"
    )
    # One synthesis, of the revision that became synthesizing (the one before completed).
    assert [(s.workflow_id, s.status) for s in synthesis] == [
        (synthesis_workflow_id(draft.id, revision - 1), "SUCCESS")
    ]
