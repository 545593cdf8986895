"""Issue 22 for research, through the real durable engine (SQLite and PostgreSQL): no
model answer the research can do without fails it. A synthesis that fails for any reason
of its model (an HTTP error, an answer that cannot be used, no answer in time, a server
that lacks a capability; scripted models, and an OpenAI-compatible server on loopback)
completes the research with the models' answers and says why there is no synthesis;
Retry runs the synthesis again. An answer cut off at its length limit is kept and marked."""

from __future__ import annotations

from collections.abc import Iterator

import pydantic_ai.models
import pytest

from scholarstream.durable import runtime_holder
from scholarstream.research import (
    DraftRequest,
    LLMResultStatus,
    Research,
    ResearchService,
    ResearchStatus,
    error_summary,
    research_service,
    synthesis_notice,
)
from scholarstream.settings import Settings
from tests.fake_openai import FakeOpenAI, Status, Text, fake_openai
from tests.helpers import make_runtime
from tests.research.builders import ANTHROPIC, MODELS, OPENAI
from tests.research.conftest import PROVIDER_KEYS, research_settings
from tests.research.engine_world import SYNTHESIZER, World, answer, cut_off, hang

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROMPT = "Does tirzepatide reduce cardiovascular events in adults with obesity?"
SYNTHESIS = "Both models agree [M1][M2]."
LOCAL_SYNTHESIZER = "local:qwen2.5-coder-0.5b"
JINJA = "tools param requires --jinja flag"


async def started(
    world: World, synthesis: str = SYNTHESIZER, service: ResearchService | None = None
) -> Research:
    service = service or world.service
    draft = await service.draft(
        world.owner_id,
        DraftRequest(prompt=PROMPT, selected_llms=[OPENAI, ANTHROPIC], synthesis_llm=synthesis),
    )
    return await service.start(world.owner_id, draft.id)


def assert_unavailable(research: Research, *fragments: str) -> None:
    """Completed with every answer and no synthesis, the reason in plain words."""
    assert research.status == ResearchStatus.COMPLETED
    assert [r.status for r in research.llm_results] == [LLMResultStatus.COMPLETED] * 2
    assert research.synthesized_result is None
    assert research.synthesis_error is not None
    assert error_summary(research) is None
    notice = synthesis_notice(research)
    assert notice is not None
    assert notice.startswith("Synthesis not available: ")
    assert notice.endswith(". Retry runs the synthesis again.")
    for fragment in fragments:
        assert fragment in notice
    assert "Error" not in notice.replace("LLMError", "")  # no exception class names
    assert "Exception" not in notice


async def test_a_synthesis_answer_that_cannot_be_used_completes_without_it(world: World) -> None:
    # A blank answer every time it is asked (pydantic-ai asks once more, then gives up).
    world.models.plan(SYNTHESIZER, *[answer("  ")] * 4)
    research = await started(world)

    done = await world.settled(research.id, ResearchStatus.COMPLETED)

    assert_unavailable(done, SYNTHESIZER)
    world.models.plans.pop(SYNTHESIZER, None)  # the next synthesis answers
    world.models.plan(SYNTHESIZER, answer(SYNTHESIS))
    await world.service.retry(world.owner_id, research.id)
    again = await world.settled(research.id, ResearchStatus.COMPLETED)
    assert again.synthesized_result == SYNTHESIS
    assert again.synthesis_error is None


async def test_a_synthesis_that_does_not_answer_in_time_completes_without_it(
    world: World, module_settings: Settings
) -> None:
    impatient = make_runtime(
        research_settings(
            module_settings.data_dir, module_settings.app_database_url, timeout_seconds=0.5
        ),
        models=world.models.overrides([*MODELS, SYNTHESIZER]),
    )
    runtime_holder().install(impatient)
    try:
        world.models.plan(SYNTHESIZER, hang())
        research = await started(world)
        done = await world.settled(research.id, ResearchStatus.COMPLETED)
    finally:
        runtime_holder().install(world.runtime)
        await impatient.close()

    assert_unavailable(done, f"{SYNTHESIZER} did not answer within 0.5 s")


async def test_an_answer_cut_off_at_its_length_limit_is_kept_and_marked(world: World) -> None:
    world.models.plan(ANTHROPIC, cut_off("A long report that stops mid-sen"))
    world.models.plan(SYNTHESIZER, answer(SYNTHESIS))
    research = await started(world)

    done = await world.settled(research.id, ResearchStatus.COMPLETED)

    cut = done.result_for(ANTHROPIC)
    whole = done.result_for(OPENAI)
    assert cut is not None and whole is not None
    assert (cut.status, cut.content, cut.cut_off) == (
        LLMResultStatus.COMPLETED,
        "A long report that stops mid-sen",
        True,
    )
    assert not whole.cut_off
    assert done.synthesized_result == SYNTHESIS
    (prompt,) = world.models.prompts[SYNTHESIZER]
    assert f"{ANTHROPIC} (cut off at its length limit" in prompt


async def test_a_synthesis_cut_off_at_its_length_limit_is_kept_and_marked(world: World) -> None:
    world.models.plan(SYNTHESIZER, cut_off("# Synthesis\n\nBoth agree [M1][M2] that"))
    research = await started(world)

    done = await world.settled(research.id, ResearchStatus.COMPLETED)

    assert done.synthesized_result == "# Synthesis\n\nBoth agree [M1][M2] that"
    assert done.synthesis_cut_off
    assert done.synthesis_error is None


# --- an OpenAI-compatible server (llama.cpp's llama-server, as the fake plays it) --------


@pytest.fixture(scope="module")
def local_server() -> Iterator[FakeOpenAI]:
    with fake_openai() as fake:
        yield fake


async def test_a_local_server_that_refuses_the_synthesis_completes_without_it(
    world: World,
    module_settings: Settings,
    local_server: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The HTTP path: the synthesis model is a real OpenAI-compatible client against a
    server that answers 500 with its own message; the research completes with that
    message in the reason, and Retry (the server now answering) writes the synthesis."""
    # Real requests, to the loopback server only (sockets elsewhere stay blocked).
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    local_server.reset()
    local_server.script("qwen2.5-coder-0.5b", *[Status(500, message=JINJA)] * 4, Text(SYNTHESIS))
    providers = {**PROVIDER_KEYS, "local": {"base_url": local_server.base_url, "api_key": "none"}}
    local = make_runtime(
        research_settings(
            module_settings.data_dir, module_settings.app_database_url, providers=providers
        ),
        # The answering models stay scripted; the synthesis goes over HTTP.
        models=world.models.overrides(MODELS, default=False),
    )
    runtime_holder().install(local)
    try:
        service = research_service(local)  # it knows the local provider
        research = await started(world, synthesis=LOCAL_SYNTHESIZER, service=service)
        done = await world.settled(research.id, ResearchStatus.COMPLETED)
        # The provider's own message, as the LLM layer words it.
        assert_unavailable(done, LOCAL_SYNTHESIZER, JINJA)
        calls = local_server.calls("qwen2.5-coder-0.5b")
        assert 1 <= calls <= 4

        local_server.reset()
        local_server.script("qwen2.5-coder-0.5b", Text(SYNTHESIS))
        await service.retry(world.owner_id, research.id)
        again = await world.settled(research.id, ResearchStatus.COMPLETED)
    finally:
        runtime_holder().install(world.runtime)
        await local.close()
    assert again.synthesized_result == SYNTHESIS
    assert again.synthesis_retries == 1
