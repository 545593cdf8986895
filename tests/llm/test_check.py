"""The model check (the web UI's "Test", ``scholarstream models --check``): each step against
the development provider answering as a capable server, as llama-server without ``--jinja``,
as a small model writing tool calls as text, and as nothing at all."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from scholarstream.errors import ApiKeyInvalidError, LLMError
from scholarstream.llm import (
    LOCAL_ANSWER_BUDGETS,
    CheckReport,
    ModelCapabilities,
    ModelRegistry,
    check_model,
    list_endpoint_models,
)
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings, load_settings
from tests.fake_openai import Auto, FakeOpenAI, Text
from tests.helpers import make_runtime
from tests.llm.fault_world import FAKE

NAME = "small-model"
MODEL = f"{FAKE}:{NAME}"


def _settings(data_dir: Path, base_url: str) -> Settings:
    return load_settings(
        data_dir=data_dir,
        llm={
            "roles": {"default": MODEL},
            "providers": {FAKE: {"base_url": base_url}},
            "timeout_seconds": 5.0,
        },
    )


async def _check(data_dir: Path, base_url: str) -> CheckReport:
    settings = _settings(data_dir, base_url)
    runtime: Runtime = make_runtime(settings)
    try:
        registry: ModelRegistry = runtime.models
        resolved = await registry.resolve("default", None)
        return await check_model(resolved, settings=settings)
    finally:
        await runtime.close()


def _details(report: CheckReport) -> dict[str, tuple[bool, str]]:
    return {step.name: (step.ok, step.detail) for step in report.steps}


async def test_a_capable_server_passes_every_step_and_native_output_is_suggested(
    fake: FakeOpenAI, data_dir: Path
) -> None:
    fake.default(NAME, Auto(text="OK"))

    report = await _check(data_dir, fake.base_url)

    steps = _details(report)
    assert [step.name for step in report.steps] == [
        "reachable",
        "completion",
        "tools",
        "json_schema",
    ]
    assert all(ok for ok, _ in steps.values()), steps
    assert NAME in steps["reachable"][1]
    assert report.usable
    assert report.suggested.structured_output == "native"
    assert report.suggested.supports_tools is True
    assert all(step.seconds >= 0 for step in report.steps)
    # What was asked on the wire: a short completion, a forced tool call, a JSON schema.
    completion, tools, schema = (r.body for r in fake.received)
    assert completion["max_tokens"] <= 8
    assert tools["tool_choice"] == "required" and "response_format" not in tools
    assert schema["response_format"]["type"] == "json_schema" and "tools" not in schema


async def test_llama_server_without_jinja_is_told_to_use_it_and_native_output_is_kept(
    fake: FakeOpenAI, data_dir: Path
) -> None:
    fake.default(NAME, Auto(text="OK"))
    fake.set_modes("no-tools")

    report = await _check(data_dir, fake.base_url)

    steps = _details(report)
    ok, detail = steps["tools"]
    assert not ok
    assert "tools param requires --jinja flag" in detail  # the server's own words
    assert "Start llama-server with --jinja" in detail  # what to change
    assert steps["json_schema"][0]
    assert report.usable
    assert report.suggested.structured_output == "native"
    assert report.suggested.supports_tools is False
    assert fake.calls(NAME) == 3  # each step once: the 500 was not retried


async def test_a_tool_call_written_as_text_is_a_no_and_without_schemas_prompted_is_suggested(
    fake: FakeOpenAI, data_dir: Path
) -> None:
    fake.default(NAME, Auto(text="OK"))
    fake.set_modes("tool-as-text=tagged", "no-json-schema")

    report = await _check(data_dir, fake.base_url)

    steps = _details(report)
    assert steps["tools"] == (
        False,
        "It wrote the tool call as text instead of calling the tool: the server does not "
        "turn it into a tool call (llama-server needs --jinja and a model whose chat "
        "template knows tools).",
    )
    ok, detail = steps["json_schema"]
    assert not ok and "does not accept a JSON schema" in detail
    assert 'structured_output = "tool"' in detail
    assert report.suggested == ModelCapabilities(
        structured_output="prompted",
        supports_tools=False,
        compact_prompt=True,
        streamed_requests=True,
        default_max_tokens=LOCAL_ANSWER_BUDGETS,
    )


async def test_json_that_does_not_fit_the_schema_is_a_no(fake: FakeOpenAI, data_dir: Path) -> None:
    fake.script(NAME, Text("OK"), Text("not a tool call"), Text('{"answer": "five"}'))

    report = await _check(data_dir, fake.base_url)

    steps = _details(report)
    assert steps["tools"] == (False, "It answered in text instead of calling the tool.")
    assert steps["json_schema"] == (False, "It answered with JSON that does not fit the schema.")
    assert report.suggested.structured_output == "prompted"


async def test_a_server_that_is_not_running_stops_the_check_at_the_first_step(
    data_dir: Path,
) -> None:
    with socket.socket() as probe:  # a free port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    report = await _check(data_dir, f"http://127.0.0.1:{port}/v1")

    steps = _details(report)
    ok, detail = steps["reachable"]
    assert not ok and detail.startswith(f"Could not reach http://127.0.0.1:{port}/v1")
    assert "llama-server" in detail  # how to start one
    for name in ("completion", "tools", "json_schema"):
        assert steps[name] == (False, "Not tried: the server could not be reached.")
    assert not report.usable
    # Nothing was learnt: the provider's capabilities stay as they were.
    assert report.suggested == ModelCapabilities(
        structured_output="native",
        compact_prompt=True,
        streamed_requests=True,
        default_max_tokens=LOCAL_ANSWER_BUDGETS,
    )


async def test_a_test_model_is_checked_without_a_network(data_dir: Path) -> None:
    from pydantic_ai.models.test import TestModel

    runtime = make_runtime(load_settings(data_dir=data_dir), models={"default": TestModel()})
    try:
        resolved = await runtime.models.resolve("default", None)
        report = await check_model(resolved, settings=runtime.settings)
    finally:
        await runtime.close()
    assert report.usable
    assert report.ok("tools")
    # pydantic-ai's test model takes no JSON schema: refused before anything is sent.
    assert _details(report)["json_schema"] == (
        False,
        "This kind of model cannot be asked this way: nothing was sent.",
    )
    assert report.suggested.structured_output == "tool"


# Listing an endpoint's models (the web UI's model picker).


async def test_the_endpoints_models_are_listed(fake: FakeOpenAI) -> None:
    fake.default(NAME, Auto())
    models = await list_endpoint_models(fake.base_url, None)
    assert NAME in models
    assert len(models) == len(set(models))


def _answering(status: int, body: bytes) -> httpx.MockTransport:
    return httpx.MockTransport(lambda request: httpx.Response(status, content=body))


@pytest.mark.parametrize(
    ("status", "body", "error", "words"),
    [
        (401, b'{"error": "bad key"}', ApiKeyInvalidError, "refused the key (HTTP 401)"),
        (404, b"Not Found", LLMError, "does not exist (HTTP 404)"),
        (200, b"<html>a web page</html>", LLMError, "did not answer like an OpenAI-compatible"),
        (200, b'{"models": []}', LLMError, "did not answer like an OpenAI-compatible"),
        (502, b"", LLMError, "answered HTTP 502"),
    ],
)
async def test_listing_says_what_is_wrong_in_plain_words(
    status: int, body: bytes, error: type[LLMError], words: str
) -> None:
    with pytest.raises(error) as caught:
        await list_endpoint_models(
            "http://models.example/v1", "sk-key", transport=_answering(status, body)
        )
    assert words in caught.value.message
    assert caught.value.hint


async def test_listing_sends_the_key_and_reads_the_ids_in_order() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"data": [{"id": "b"}, {"id": "a"}, {"id": "b"}, {}]})

    models = await list_endpoint_models(
        "http://models.example/v1/", "sk-key", transport=httpx.MockTransport(answer)
    )
    assert models == ["b", "a"]
    (request,) = seen
    assert str(request.url) == "http://models.example/v1/models"
    assert request.headers["authorization"] == "Bearer sk-key"
