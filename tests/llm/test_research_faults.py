"""A provider's faults in multi-LLM research (seed 001), through the durable engine and the
real client stack (pydantic-ai's OpenAI model, the openai SDK, httpx) against the fake
OpenAI-compatible server: a transient fault is retried inside the call and leaves no trace
in the lifecycle; a persistent one is that model's failure, so the research reaches the
seed's partial failure (``awaiting_confirmation``) and waits there for the user's proceed,
retry or cancel, or, when every model failed, ``failed``. A hang ends at
``llm.timeout_seconds`` as that model's failure. A retry calls only the failed models."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from scholarstream.db import upgrade
from scholarstream.durable import runtime_holder
from scholarstream.research import (
    ALL_LLMS_FAILED,
    MAX_RETRIES_EXCEEDED,
    ConfirmAction,
    DraftRequest,
    FailureReason,
    LLMResultStatus,
    Research,
    ResearchStatus,
)
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from tests.fake_openai import Cut, FakeOpenAI, Hang, Status, Text
from tests.helpers import make_runtime, new_user
from tests.llm.fault_world import FAKE, gaps, provider_settings
from tests.research.conftest import research_settings
from tests.research.engine_world import ScriptedModels, World, running_engine

pytestmark = pytest.mark.asyncio(loop_scope="module")

A, B, C, SYN = "model-a", "model-b", "model-c", "synth"
TIMEOUT = 5.0  # llm.timeout_seconds of the engine: room for two retries of a 5xx


def model(name: str) -> str:
    return f"{FAKE}:{name}"


def fault_settings(data_dir: Path, fake: FakeOpenAI, timeout: float) -> Settings:
    return research_settings(
        data_dir,
        f"sqlite+aiosqlite:///{data_dir}/scholarstream.sqlite",
        timeout_seconds=timeout,
        # The retries of a request not streamed (a cloud provider's); a local server's
        # streamed requests are in test_model_calls.
        providers={FAKE: {**provider_settings(fake)[FAKE], "streamed_requests": False}},
    )


@pytest.fixture(scope="module")
def settings_of_module(
    tmp_path_factory: pytest.TempPathFactory, fake_server: FakeOpenAI
) -> Settings:
    settings = fault_settings(tmp_path_factory.mktemp("research-faults"), fake_server, TIMEOUT)
    upgrade(settings.app_database_url)
    return settings


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def engine_runtime(settings_of_module: Settings) -> AsyncIterator[Runtime]:
    runtime = make_runtime(settings_of_module)  # no model overrides: the real client stack
    async with running_engine(runtime):
        yield runtime


@pytest_asyncio.fixture(loop_scope="module")
async def world(engine_runtime: Runtime, fake: FakeOpenAI) -> World:
    user = await new_user(engine_runtime)
    return World(engine_runtime, ScriptedModels(), user.id)  # its scripted models go unused


async def started(world: World, *names: str, synthesis: str | None = SYN) -> Research:
    draft = await world.service.draft(
        world.owner_id,
        DraftRequest(
            prompt="Does tirzepatide reduce cardiovascular events in adults with obesity?",
            selected_llms=[model(n) for n in names],
            synthesis_llm=model(synthesis) if synthesis else None,
        ),
    )
    research = await world.service.start(world.owner_id, draft.id)
    assert research.status == ResearchStatus.PROCESSING
    return research


async def event_types(world: World, research_id: uuid.UUID) -> list[str]:
    return [e.event.type for e in await world.service.events(world.owner_id, research_id)]


def calls(fake: FakeOpenAI) -> dict[str, int]:
    return {name: fake.calls(name) for name in (A, B, C, SYN) if fake.calls(name)}


async def test_transient_faults_are_retried_inside_the_call_without_a_partial_failure(
    world: World, fake: FakeOpenAI
) -> None:
    fake.script(A, Status(429, retry_after=0.3), Text("Answer A"))
    # Research calls are not streamed: a cut is a connection dropped before any answer.
    fake.script(B, Cut("lost"), Text("Answer B"))
    fake.script(SYN, Status(503), Text("Both agree [M1][M2]."))
    research = await started(world, A, B)

    done = await world.settled(research.id, ResearchStatus.COMPLETED)

    assert [(r.model, r.status, r.content, r.attempt) for r in done.llm_results] == [
        (model(A), LLMResultStatus.COMPLETED, "Answer A", 1),
        (model(B), LLMResultStatus.COMPLETED, "Answer B", 1),
    ]
    assert done.partial_failure is None
    assert done.synthesized_result == "Both agree [M1][M2]."
    assert calls(fake) == {A: 2, B: 2, SYN: 2}
    (gap,) = gaps(fake, A)
    assert gap >= 0.3  # retry-after-ms: 300 was honoured
    assert "research.awaiting_confirmation" not in await event_types(world, research.id)


async def test_a_model_failing_persistently_waits_for_the_user_and_a_retry_calls_only_it(
    world: World, fake: FakeOpenAI
) -> None:
    fake.default(B, Status(500))
    research = await started(world, A, B)

    waiting = await world.settled(research.id, ResearchStatus.AWAITING_CONFIRMATION)

    assert waiting.partial_failure is not None
    assert waiting.partial_failure.failed_providers == [model(B)]
    failed = waiting.result_for(model(B))
    assert failed is not None and failed.error is not None
    assert (failed.status, failed.error_code) == (LLMResultStatus.FAILED, "llm_error")
    assert failed.error.startswith(
        f"{model(B)} answered HTTP 500, a failure of the provider's service, to all 3 attempts."
    )
    assert f"pick another model than {model(B)}" in failed.error  # the hint
    assert calls(fake) == {A: 1, B: 3}
    # No automatic proceed: the research waits for the user's decision, calling nobody.
    await world.quiet()
    assert (await world.service.get(world.owner_id, research.id)).status == (
        ResearchStatus.AWAITING_CONFIRMATION
    )
    assert calls(fake) == {A: 1, B: 3}

    fake.default(B, Text("Answer B"))
    retrying = await world.service.confirm(world.owner_id, research.id, ConfirmAction.RETRY)
    assert retrying.status == ResearchStatus.RETRYING
    done = await world.settled(research.id, ResearchStatus.COMPLETED)

    retried = done.result_for(model(B))
    assert retried is not None
    assert (retried.status, retried.content, retried.attempt) == (
        LLMResultStatus.COMPLETED,
        "Answer B",
        2,
    )
    assert done.retry_count == 1
    # The completed call of A was not made again; B once more, then the synthesis.
    assert calls(fake) == {A: 1, B: 4, SYN: 1}


async def test_a_provider_asking_to_wait_ten_minutes_fails_at_once_and_proceed_synthesises(
    world: World, fake: FakeOpenAI
) -> None:
    fake.script(B, Status(429, retry_after=600))
    clock = time.monotonic()
    research = await started(world, A, B, C)

    waiting = await world.settled(research.id, ResearchStatus.AWAITING_CONFIRMATION)

    assert time.monotonic() - clock < TIMEOUT  # not waited on, nor run into the timeout
    failed = waiting.result_for(model(B))
    assert failed is not None and failed.error is not None
    assert failed.error.startswith(
        f"{model(B)} is rate-limiting requests (HTTP 429) and asked to wait 600 s; "
        "ScholarStream waits at most 30 s for a provider."
    )
    assert calls(fake) == {A: 1, B: 1, C: 1}

    proceeding = await world.service.confirm(world.owner_id, research.id, ConfirmAction.PROCEED)
    assert proceeding.status == ResearchStatus.SYNTHESIZING
    done = await world.settled(research.id, ResearchStatus.COMPLETED)

    assert done.synthesized_result == f"fake answer from {SYN}"
    assert calls(fake) == {A: 1, B: 1, C: 1, SYN: 1}
    (synthesis,) = [r.body for r in fake.received if r.model == SYN]
    assert f"These models failed and are not among the sources: {model(B)}" in str(synthesis)


async def test_a_hang_ends_at_the_timeout_as_that_models_failure(
    world: World,
    fake: FakeOpenAI,
    settings_of_module: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The same engine and database, with a short call timeout.
    impatient_settings = fault_settings(settings_of_module.data_dir, fake, timeout=1.0)
    impatient = make_runtime(impatient_settings)
    runtime_holder().install(impatient)
    try:
        fake.script(B, Hang(30))
        clock = time.monotonic()
        research = await started(world, A, B)
        waiting = await world.settled(research.id, ResearchStatus.AWAITING_CONFIRMATION)
        elapsed = time.monotonic() - clock
    finally:
        runtime_holder().install(world.runtime)
        await impatient.close()

    assert 1.0 <= elapsed < 3.5  # the timeout, plus the engine's own work
    timed_out = waiting.result_for(model(B))
    assert timed_out is not None and timed_out.error is not None
    assert timed_out.status == LLMResultStatus.FAILED
    assert timed_out.error.startswith(f"{model(B)} did not answer within 1 s.")
    assert calls(fake) == {A: 1, B: 1}  # a hang is not retried: its budget is spent

    await world.service.confirm(world.owner_id, research.id, ConfirmAction.RETRY)
    done = await world.settled(research.id, ResearchStatus.COMPLETED)
    assert [r.attempt for r in done.llm_results] == [1, 2]
    assert calls(fake) == {A: 1, B: 2, SYN: 1}


async def test_every_model_failing_fails_the_research_and_a_retry_recovers_it(
    world: World, fake: FakeOpenAI
) -> None:
    fake.script(A, *[Status(503)] * 3)
    fake.script(B, *[Status(429, retry_after=0.2)] * 3)
    research = await started(world, A, B)

    failed = await world.settled(research.id, ResearchStatus.FAILED)

    assert failed.error == ALL_LLMS_FAILED
    assert failed.failure_reason == FailureReason.ALL_LLMS_FAILED
    assert all(r.status == LLMResultStatus.FAILED for r in failed.llm_results)
    assert calls(fake) == {A: 3, B: 3}
    assert (await event_types(world, research.id))[-1] == "research.failed"

    # The providers have recovered (their scripts are used up): retry from failed.
    retrying = await world.service.retry(world.owner_id, research.id)
    assert retrying.status == ResearchStatus.RETRYING
    done = await world.settled(research.id, ResearchStatus.COMPLETED)
    assert [r.attempt for r in done.llm_results] == [2, 2]
    assert done.synthesized_result == f"fake answer from {SYN}"
    assert calls(fake) == {A: 4, B: 4, SYN: 1}


async def test_a_refused_key_is_not_retried_and_the_seeds_two_retries_then_fail(
    world: World, fake: FakeOpenAI
) -> None:
    fake.default(B, Status(401, message="Incorrect API key provided"))
    research = await started(world, A, B)

    for retries in (1, 2):
        waiting = await world.settled(research.id, ResearchStatus.AWAITING_CONFIRMATION)
        refused = waiting.result_for(model(B))
        assert refused is not None and refused.error_code == "api_key_invalid"
        assert calls(fake) == {A: 1, B: retries}  # one request per attempt: 401 is final
        await world.service.confirm(world.owner_id, research.id, ConfirmAction.RETRY)
    await world.settled(research.id, ResearchStatus.AWAITING_CONFIRMATION)
    assert calls(fake) == {A: 1, B: 3}

    failed = await world.service.confirm(world.owner_id, research.id, ConfirmAction.RETRY)
    assert (failed.status, failed.error) == (ResearchStatus.FAILED, MAX_RETRIES_EXCEEDED)
    await world.quiet()
    assert calls(fake) == {A: 1, B: 3}
