"""Every model call has a budget: ``max_tokens`` per feature on the wire, structured output
as the provider supports it, a total deadline, streamed or not, after which the request is
cancelled on the wire (the server sees its client leave and stops generating), and a
failure logged once at WARNING with the feature, the model and the request id.

Driven through the real client stack against the development provider
(``scholarstream.devtools``), which records what it received and which clients left."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.direct import model_request_stream
from pydantic_ai.messages import ModelRequest, PartDeltaEvent, PartStartEvent

from scholarstream.db import OwnerScope, upgrade_async
from scholarstream.errors import LLMError
from scholarstream.llm import LOCAL_ANSWER_BUDGETS, ModelCall, ResolvedModel
from scholarstream.logs import request_id_var
from scholarstream.runtime import Runtime
from scholarstream.settings import DEFAULT_MAX_TOKENS, load_settings
from tests.fake_openai import Endless, FakeOpenAI, Hang, Status, Text
from tests.helpers import make_runtime, new_user
from tests.llm.fault_world import FAKE, provider_settings

NAME = "local-model"
MODEL = f"{FAKE}:{NAME}"
DEADLINE = 1.0
GUARD = 10.0  # the test's own limit on a call that has no deadline
LATEST = 5.0  # well before the per-read timeout (10 s) would end a silent call


class Verdict(BaseModel):
    relevant: bool
    reason: str


async def _runtime(
    fake: FakeOpenAI, data_dir: Path, *, llm: dict[str, Any] | None = None, **provider: Any
) -> Runtime:
    providers: dict[str, dict[str, Any]] = provider_settings(fake)
    providers[FAKE].update(provider)
    settings = load_settings(
        data_dir=data_dir,
        llm={
            "roles": {"default": MODEL},
            "providers": providers,
            "timeout_seconds": 10.0,  # the per-read timeout never fires in these tests
            "deadline_seconds": DEADLINE,
            **(llm or {}),
        },
    )
    await upgrade_async(settings.app_database_url)
    return make_runtime(settings)


@pytest.fixture
async def runtime(fake: FakeOpenAI, data_dir: Path) -> AsyncIterator[Runtime]:
    built = await _runtime(fake, data_dir)
    yield built
    await built.close()


async def _run(runtime: Runtime, agent: Agent[None, Any], feature: str = "search.intent") -> Any:
    user = await new_user(runtime)
    async with runtime.database.session() as session:
        return await runtime.llm.run(
            agent, "Secret prompt text", scope=OwnerScope(session, user.id), feature=feature
        )


async def _resolved(runtime: Runtime) -> ResolvedModel:
    return await runtime.models.resolve("default", None)


# The total deadline, and the cancellation on the wire.


async def test_a_non_streamed_call_that_never_answers_is_cancelled_at_the_deadline(
    runtime: Runtime, fake: FakeOpenAI
) -> None:
    fake.default(NAME, Hang(30))
    resolved = await _resolved(runtime)
    user = await new_user(runtime)
    agent: Agent[None, str] = Agent()

    async with runtime.database.session() as session:
        scope = OwnerScope(session, user.id)
        started = time.monotonic()
        with pytest.raises(LLMError) as caught:
            await runtime.llm.run_with(agent, "Hello?", resolved, scope=scope, feature="chat")

    assert DEADLINE <= time.monotonic() - started < LATEST
    assert caught.value.message == f"{MODEL} did not answer within {DEADLINE:g} s."
    assert caught.value.hint is not None and "llm.deadline_seconds" in caught.value.hint
    # The connection was closed: the server saw its client leave and stopped.
    assert await asyncio.to_thread(fake.wait_cancelled, NAME, timeout=3)
    assert fake.calls(NAME) == 1  # a deadline is not retried


async def test_a_call_given_up_at_the_per_read_timeout_is_closed_on_the_wire_too(
    fake: FakeOpenAI, data_dir: Path
) -> None:
    fake.default(NAME, Hang(30))
    runtime = await _runtime(fake, data_dir, llm={"timeout_seconds": 0.5, "deadline_seconds": 30})
    try:
        with pytest.raises(LLMError) as caught:
            await _run(runtime, Agent(output_type=str))
    finally:
        await runtime.close()
    assert caught.value.message == f"{MODEL} did not answer within 0.5 s."
    assert await asyncio.to_thread(fake.wait_cancelled, NAME, timeout=3)
    assert fake.calls(NAME) == 1


async def test_a_local_servers_answer_is_streamed_so_only_silence_ends_it_before_the_deadline(
    fake: FakeOpenAI, data_dir: Path
) -> None:
    # A CPU server writes a typed answer for longer than the per-read timeout; streamed, it
    # completes, because every piece comes sooner than the timeout.
    fake.default(NAME, Text('{"relevant": true, "reason": "about dogs"}', delay=0.3, chunks=6))
    runtime = await _runtime(fake, data_dir, llm={"timeout_seconds": 0.5, "deadline_seconds": 30})
    try:
        started = time.monotonic()
        result = await _run(runtime, Agent(output_type=Verdict))
        took = time.monotonic() - started
    finally:
        await runtime.close()
    assert result.output == Verdict(relevant=True, reason="about dogs")
    assert took > 0.5
    assert [r.body.get("stream") for r in fake.received] == [True]


async def test_a_provider_can_have_its_requests_not_streamed(
    fake: FakeOpenAI, data_dir: Path
) -> None:
    fake.default(NAME, Text('{"relevant": false, "reason": "about cats"}'))
    runtime = await _runtime(fake, data_dir, streamed_requests=False)
    try:
        result = await _run(runtime, Agent(output_type=Verdict))
    finally:
        await runtime.close()
    assert result.output == Verdict(relevant=False, reason="about cats")
    assert [r.body.get("stream") for r in fake.received] == [False]


async def test_an_endless_stream_is_cut_off_at_the_deadline_and_closed_on_the_wire(
    runtime: Runtime, fake: FakeOpenAI
) -> None:
    # The per-read timeout never fires: a token comes every 0.1 s, for ever.
    fake.default(NAME, Endless(interval=0.1))
    resolved = await _resolved(runtime)
    received: list[str] = []

    async def stream_chat() -> None:
        async with (
            runtime.llm.call(resolved, "chat") as call,
            model_request_stream(
                resolved.model,
                [ModelRequest.user_text_prompt("Tell me everything.")],
                model_settings=call.model_settings,
            ) as stream,
        ):
            async for event in stream:
                if isinstance(event, PartStartEvent | PartDeltaEvent):
                    call.output_started()
                    received.append(repr(event))

    started = time.monotonic()
    with pytest.raises(LLMError) as caught:
        await asyncio.wait_for(stream_chat(), GUARD)  # without a deadline: a TimeoutError

    assert DEADLINE <= time.monotonic() - started < LATEST
    assert received  # text had come: the answer is cut off, not missing
    assert caught.value.message == (
        f"The answer of {MODEL} was cut off after {DEADLINE:g} s, the longest a model call "
        "may take."
    )
    assert "did not answer" not in caught.value.message
    assert await asyncio.to_thread(fake.wait_cancelled, NAME, timeout=3)
    body = fake.received[0].body
    assert body["stream"] is True
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS["chat"]


async def test_a_producer_that_yields_is_bounded_in_its_own_task(
    runtime: Runtime, fake: FakeOpenAI
) -> None:
    """The stream guide's shape: an async generator that yields while it streams."""
    fake.default(NAME, Endless(interval=0.1))
    resolved = await _resolved(runtime)

    async def produce(call: ModelCall) -> AsyncIterator[str]:
        async with model_request_stream(
            resolved.model,
            [ModelRequest.user_text_prompt("Tell me everything.")],
            model_settings=call.model_settings,
        ) as stream:
            async for event in stream:
                if isinstance(event, PartDeltaEvent):
                    yield repr(event)

    shown: list[str] = []

    async def consume() -> None:
        async for item in runtime.llm.call(resolved, "stream_guide").stream(produce):
            shown.append(item)
            await asyncio.sleep(0)  # the consumer does work of its own between items

    with pytest.raises(LLMError, match="was cut off after 1 s"):
        await asyncio.wait_for(consume(), GUARD)
    assert shown
    assert await asyncio.to_thread(fake.wait_cancelled, NAME, timeout=3)
    assert fake.received[0].body["max_tokens"] == DEFAULT_MAX_TOKENS["stream_guide"]


async def test_a_consumer_that_stops_early_closes_the_producers_connection(
    runtime: Runtime, fake: FakeOpenAI
) -> None:
    fake.default(NAME, Endless(interval=0.05))
    resolved = await _resolved(runtime)

    async def produce(call: ModelCall) -> AsyncIterator[int]:
        async with model_request_stream(
            resolved.model,
            [ModelRequest.user_text_prompt("Count.")],
            model_settings=call.model_settings,
        ) as stream:
            count = 0
            async for _ in stream:
                count += 1
                yield count

    items = runtime.llm.call(resolved, "stream_guide").stream(produce)
    async for count in items:
        if count >= 3:
            break
    await items.aclose()  # type: ignore[attr-defined]
    assert await asyncio.to_thread(fake.wait_cancelled, NAME, timeout=3)


async def test_a_call_within_its_deadline_is_untouched(runtime: Runtime, fake: FakeOpenAI) -> None:
    fake.default(NAME, Text("on time", delay=0.05))
    result = await _run(runtime, Agent(output_type=str))
    assert result.output == "on time"
    assert fake.cancelled(NAME) == 0


# The answer budget and the form of structured output, as the server receives them.


async def test_every_request_carries_the_features_answer_budget(
    runtime: Runtime, fake: FakeOpenAI
) -> None:
    await _run(runtime, Agent(output_type=str), feature="search.intent")
    await _run(runtime, Agent(output_type=str), feature="research.title")
    await _run(runtime, Agent(output_type=str), feature="a.feature.nobody.named")
    assert [r.body["max_tokens"] for r in fake.received] == [
        DEFAULT_MAX_TOKENS["search.intent"],
        DEFAULT_MAX_TOKENS["research.title"],
        DEFAULT_MAX_TOKENS["default"],
    ]


async def test_the_providers_budget_wins_over_the_servers_over_the_built_in(
    fake: FakeOpenAI, data_dir: Path
) -> None:
    runtime = await _runtime(
        fake,
        data_dir,
        llm={"max_tokens": {"search.intent": 222, "chat": 333}},
        max_tokens={"search.intent": 111},
    )
    try:
        await _run(runtime, Agent(output_type=str), feature="search.intent")
        await _run(runtime, Agent(output_type=str), feature="chat")
        await _run(runtime, Agent(output_type=str), feature="search.query")
    finally:
        await runtime.close()
    assert [r.body["max_tokens"] for r in fake.received] == [
        111,
        333,
        DEFAULT_MAX_TOKENS["search.query"],
    ]


async def test_a_local_servers_research_budgets_fit_the_deadline_unless_the_server_says(
    fake: FakeOpenAI, data_dir: Path
) -> None:
    runtime = await _runtime(fake, data_dir, llm={"max_tokens": {"research.synthesis": 2500}})
    try:
        await _run(runtime, Agent(output_type=str), feature="research")
        await _run(runtime, Agent(output_type=str), feature="research.synthesis")
    finally:
        await runtime.close()
    assert [r.body["max_tokens"] for r in fake.received] == [
        LOCAL_ANSWER_BUDGETS["research"],
        2500,
    ]
    assert LOCAL_ANSWER_BUDGETS["research"] < DEFAULT_MAX_TOKENS["research"]


async def test_native_structured_output_asks_for_a_json_schema_and_sends_no_tools(
    runtime: Runtime, fake: FakeOpenAI
) -> None:
    fake.default(NAME, Text('{"relevant": true, "reason": "on topic"}'))

    result = await _run(runtime, Agent(output_type=Verdict), feature="search.score")

    assert result.output == Verdict(relevant=True, reason="on topic")
    (request,) = fake.received
    assert request.body["response_format"]["type"] == "json_schema"
    schema = request.body["response_format"]["json_schema"]["schema"]
    assert set(schema["properties"]) == {"relevant", "reason"}
    assert "tools" not in request.body and "tool_choice" not in request.body
    assert request.body["max_tokens"] == DEFAULT_MAX_TOKENS["search.score"]


async def test_tool_structured_output_when_the_provider_says_so(
    fake: FakeOpenAI, data_dir: Path
) -> None:
    runtime = await _runtime(fake, data_dir, structured_output="tool")
    try:
        with pytest.raises(LLMError):  # the fake answers text where a tool call is required
            await _run(runtime, Agent(output_type=Verdict), feature="search.score")
    finally:
        await runtime.close()
    body = fake.received[0].body
    assert "response_format" not in body
    assert [t["function"]["name"] for t in body["tools"]] == ["final_result"]


# The WARNING log of a failed call.


async def test_a_failed_call_is_logged_once_with_feature_model_and_request_id(
    runtime: Runtime, fake: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    fake.default(NAME, Status(401, message="Incorrect API key provided"))
    token = request_id_var.set("req-0042")
    try:
        with caplog.at_level(logging.WARNING, logger="scholarstream.llm"), pytest.raises(LLMError):
            await _run(runtime, Agent(output_type=str), feature="search.intent")
    finally:
        request_id_var.reset(token)

    (record,) = [r for r in caplog.records if r.name == "scholarstream.llm"]
    assert record.levelno == logging.WARNING
    text = record.getMessage()
    for expected in ("feature=search.intent", f"model={MODEL}", f"provider={FAKE}", "req-0042"):
        assert expected in text
    assert getattr(record, "llm_request_id") == "req-0042"  # noqa: B009 - set through extra
    assert "Incorrect API key provided" in text  # the provider's words
    assert "Secret prompt text" not in text  # never the prompt
    assert "sk-fake-provider-key" not in text  # never the key


async def test_a_deadline_is_logged_too(
    runtime: Runtime, fake: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    fake.default(NAME, Hang(30))
    with caplog.at_level(logging.WARNING, logger="scholarstream.llm"), pytest.raises(LLMError):
        await _run(runtime, Agent(output_type=str), feature="research.title")
    (record,) = [r for r in caplog.records if r.name == "scholarstream.llm"]
    assert "feature=research.title" in record.getMessage()
    assert "did not answer within 1 s" in record.getMessage()


def test_only_openai_itself_is_sent_max_completion_tokens() -> None:
    """Every other OpenAI-compatible server reads ``max_tokens`` (some ignore or refuse
    OpenAI's newer ``max_completion_tokens``)."""
    from scholarstream.llm import Credential, get_provider

    def sends_completion_tokens(provider: str, base_url: str | None) -> bool:
        model = get_provider(provider).build("m", Credential("sk-test-key", base_url, "server"))
        return bool(model.profile.get("openai_chat_supports_max_completion_tokens", True))

    assert sends_completion_tokens("openai", None)
    assert sends_completion_tokens("openai", "https://api.openai.com/v1")
    assert not sends_completion_tokens("openai", "http://127.0.0.1:8080/v1")
    assert not sends_completion_tokens("ollama", "http://127.0.0.1:11434/v1")
    assert not sends_completion_tokens("openrouter", "https://openrouter.ai/api/v1")
