"""The development provider through real clients (the openai SDK, httpx, a pydantic-ai agent)
on loopback: what it answers, each failure mode, the record of abandoned requests, and the
standalone command."""

from __future__ import annotations

import json
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, Literal

import httpx
import openai
import pydantic_ai.models
import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field
from pydantic_ai import Agent, NativeOutput, PromptedOutput, ToolOutput
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from scholarstream.devtools import (
    Auto,
    Endless,
    FakeOpenAI,
    InvalidJSON,
    Slow,
    Text,
    TextToolCall,
    ToolCall,
    fake_openai,
    parse_modes,
)

MODEL = "dev-model"


class Finding(BaseModel):
    claim: str = Field(min_length=10)
    confidence: float = Field(ge=0, le=1)
    kind: str = Field(json_schema_extra={"enum": ["trial", "review"]})
    sources: list[int] = Field(min_length=1)


SCHEMA = Finding.model_json_schema()

SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "search_library",
        "description": "Search the user's library.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 3},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            },
            "required": ["query", "limit"],
        },
    },
}
FINAL_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {"name": "final_result", "parameters": SCHEMA},
}
ASK = [{"role": "user", "content": "What did SURPASS show?"}]
JSON_SCHEMA_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "Finding", "schema": SCHEMA},
}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with fake_openai(fallback=Auto()) as fake:
        yield fake


@pytest.fixture
def fake(server: FakeOpenAI) -> FakeOpenAI:
    server.reset()
    return server


@pytest.fixture
def client(fake: FakeOpenAI) -> openai.OpenAI:
    return openai.OpenAI(base_url=fake.base_url, api_key="sk-dev", max_retries=0, timeout=10)


def create(client: openai.OpenAI, **request: Any) -> Any:
    request.setdefault("model", MODEL)
    request.setdefault("messages", ASK)
    return client.chat.completions.create(**request)


def valid(document: Any) -> bool:
    return Draft202012Validator(SCHEMA).is_valid(document)


# --- what it answers ---------------------------------------------------------------------


def test_models_lists_the_default_models_and_the_scripted_ones(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.script("scripted-model", Text("hi"))

    ids = [model.id for model in client.models.list()]

    assert ids == ["dev-model", "dev-small", "scripted-model"]
    assert client.models.retrieve("dev-small").id == "dev-small"


def test_a_json_schema_request_gets_a_document_that_validates(client: openai.OpenAI) -> None:
    answer = create(client, response_format=JSON_SCHEMA_FORMAT)

    document = json.loads(answer.choices[0].message.content)
    assert valid(document), document
    assert answer.choices[0].message.tool_calls is None


def test_a_streamed_json_schema_answer_validates_too(client: openai.OpenAI) -> None:
    stream = create(client, response_format=JSON_SCHEMA_FORMAT, stream=True)

    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)

    assert valid(json.loads(text))


def test_the_user_asking_with_tools_gets_the_first_tool_called_then_a_text_answer(
    client: openai.OpenAI,
) -> None:
    first = create(client, tools=[SEARCH_TOOL, FINAL_TOOL])

    call = first.choices[0].message.tool_calls[0]
    assert first.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "search_library"
    arguments = json.loads(call.function.arguments)
    assert Draft202012Validator(SEARCH_TOOL["function"]["parameters"]).is_valid(arguments)

    history = [
        *ASK,
        {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
        {"role": "tool", "tool_call_id": call.id, "content": "3 papers on SURPASS-2"},
    ]
    second = create(client, messages=history, tools=[SEARCH_TOOL])

    assert second.choices[0].message.tool_calls is None
    assert "search_library" in second.choices[0].message.content
    assert "3 papers on SURPASS-2" in second.choices[0].message.content


def test_a_streamed_tool_call_arrives_in_pieces_the_sdk_joins(client: openai.OpenAI) -> None:
    stream = create(client, tools=[SEARCH_TOOL], stream=True)

    names, arguments, finish = "", "", None
    for chunk in stream:
        for choice in chunk.choices:
            for part in choice.delta.tool_calls or []:
                names += part.function.name or ""
                arguments += part.function.arguments or ""
            finish = choice.finish_reason or finish

    assert names == "search_library"
    assert json.loads(arguments)["limit"] >= 1
    assert finish == "tool_calls"


def test_a_forced_final_result_tool_is_called_with_a_valid_document(
    client: openai.OpenAI,
) -> None:
    answer = create(
        client,
        tools=[SEARCH_TOOL, FINAL_TOOL],
        tool_choice={"type": "function", "function": {"name": "final_result"}},
    )

    call = answer.choices[0].message.tool_calls[0]
    assert call.function.name == "final_result"
    assert valid(json.loads(call.function.arguments))


@pytest.mark.parametrize(
    "output", [NativeOutput(Finding), ToolOutput(Finding), PromptedOutput(Finding)]
)
def test_a_pydantic_ai_agent_gets_its_typed_answer_in_every_structured_output_mode(
    fake: FakeOpenAI, output: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    provider = OpenAIProvider(base_url=fake.base_url, api_key="sk-dev")
    agent = Agent(OpenAIChatModel(MODEL, provider=provider), output_type=output)

    result = agent.run_sync("Summarise SURPASS-2.")

    assert isinstance(result.output, Finding)
    assert fake.calls(MODEL) == 1


class Changes(BaseModel):
    title: str | None = None
    year: int | None = None


class Decision(BaseModel):
    answer: str
    next: Literal["draft", "submitted", "accepted", "rejected"] | None = None
    changes: Changes = Field(default_factory=Changes)


@pytest.mark.parametrize(
    "output", [NativeOutput(Decision), ToolOutput(Decision), PromptedOutput(Decision)]
)
def test_a_structured_answer_reads_the_prompt_it_answers(
    fake: FakeOpenAI, output: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A capable model picks from the values its instructions offer (the furthest: it moves
    the work on) and puts in an object of optional values only what it was given."""
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    provider = OpenAIProvider(base_url=fake.base_url, api_key="sk-dev")
    agent = Agent(
        OpenAIChatModel(MODEL, provider=provider),
        output_type=output,
        instructions="The record may move to: submitted, accepted",
    )

    result = agent.run_sync('Current record: {"title": "Otitis in spaniels"}')

    assert isinstance(result.output, Decision)
    assert result.output.next == "accepted"
    assert result.output.changes == Changes(title="Otitis in spaniels")


def test_max_tokens_cuts_the_answer_with_finish_reason_length_and_usage_counts_it(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.script(MODEL, Text("word " * 100), Text("word " * 100))

    cut = create(client, max_tokens=5)
    whole = create(client, messages=[{"role": "user", "content": "x" * 4000}])

    assert cut.choices[0].finish_reason == "length"
    assert cut.choices[0].message.content == ("word " * 4)  # 5 tokens of 4 characters
    assert cut.usage.completion_tokens == 5
    assert whole.choices[0].finish_reason == "stop"
    assert whole.usage.completion_tokens == 125
    assert whole.usage.prompt_tokens > 1000 > cut.usage.prompt_tokens > 0
    assert whole.usage.total_tokens == whole.usage.prompt_tokens + 125


def test_a_scripted_tool_call_is_sent_as_scripted(fake: FakeOpenAI, client: openai.OpenAI) -> None:
    fake.script(MODEL, ToolCall("search_library", {"query": "tirzepatide", "limit": 3}))

    call = create(client, tools=[SEARCH_TOOL]).choices[0].message.tool_calls[0]

    assert (call.function.name, json.loads(call.function.arguments)) == (
        "search_library",
        {"query": "tirzepatide", "limit": 3},
    )


def test_a_key_is_required_when_the_server_has_one() -> None:
    with fake_openai(api_key="sk-right") as fake:
        wrong = openai.OpenAI(base_url=fake.base_url, api_key="sk-wrong", max_retries=0)
        right = openai.OpenAI(base_url=fake.base_url, api_key="sk-right", max_retries=0)

        with pytest.raises(openai.AuthenticationError):
            wrong.models.list()
        assert next(m.id for m in right.models.list()) == "dev-model"


# --- failure modes -------------------------------------------------------------------------


def test_no_tools_answers_a_request_with_tools_exactly_as_llama_server_does(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.set_modes("no-tools")

    with pytest.raises(openai.InternalServerError) as refused:
        create(client, tools=[SEARCH_TOOL])
    plain = create(client)

    assert refused.value.response.json() == {
        "error": {
            "code": 500,
            "message": "tools param requires --jinja flag",
            "type": "server_error",
        }
    }
    assert plain.choices[0].message.content.startswith("Development answer from dev-model")


def test_no_json_schema_refuses_response_format_with_an_openai_style_400(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.set_modes("no-json-schema")

    with pytest.raises(openai.BadRequestError) as refused:
        create(client, response_format=JSON_SCHEMA_FORMAT)

    error = refused.value.response.json()["error"]
    assert error["param"] == "response_format"
    assert "'json_schema' is not supported" in error["message"]
    assert create(client, tools=[SEARCH_TOOL]).choices[0].message.tool_calls


def test_context_too_long_sends_llama_servers_message_above_the_limit_only(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.set_modes("context-too-long=200")

    short = create(client)
    with pytest.raises(openai.BadRequestError) as refused:
        create(client, messages=[{"role": "user", "content": "word " * 400}])

    assert short.choices[0].finish_reason == "stop"
    error = refused.value.response.json()["error"]
    assert error["message"] == "the request exceeds the available context size, try increasing it"
    assert (error["type"], error["n_ctx"]) == ("exceed_context_size_error", 200)
    assert error["n_prompt_tokens"] > 200


TOOL_TEXT = {
    "bare": r"^(?P<call>\{.*\})$",
    "fenced": r"^```json\n(?P<call>\{.*\})\n```$",
    "tagged": r"^<tool_call>\n(?P<call>\{.*\})\n</tool_call>$",
}


@pytest.mark.parametrize("style", sorted(TOOL_TEXT))
def test_tool_as_text_writes_the_call_in_the_content_instead_of_calling(
    fake: FakeOpenAI, client: openai.OpenAI, style: str
) -> None:
    fake.set_modes(f"tool-as-text={style}")

    message = create(client, tools=[SEARCH_TOOL]).choices[0].message

    assert message.tool_calls is None
    found = re.match(TOOL_TEXT[style], message.content, re.DOTALL)
    assert found is not None, message.content
    call = json.loads(found["call"])
    assert call["name"] == "search_library"
    assert call["arguments"]["limit"] >= 1


def test_a_scripted_text_tool_call_names_the_given_tool(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.script(MODEL, TextToolCall("final_result", style="tagged"))

    content = create(client, tools=[SEARCH_TOOL, FINAL_TOOL]).choices[0].message.content

    call = json.loads(content.removeprefix("<tool_call>\n").removesuffix("\n</tool_call>"))
    assert call["name"] == "final_result"
    assert valid(call["arguments"])


def test_invalid_json_syntax_breaks_the_document_and_schema_breaks_its_shape(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.set_modes("invalid-json")
    broken = create(client, response_format=JSON_SCHEMA_FORMAT).choices[0].message.content
    fake.set_modes("invalid-json=schema")
    shaped = create(client, response_format=JSON_SCHEMA_FORMAT).choices[0].message.content

    with pytest.raises(json.JSONDecodeError):
        json.loads(broken)
    assert not valid(json.loads(shaped))


def test_invalid_json_breaks_a_forced_output_tools_arguments(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.script(MODEL, InvalidJSON("schema"))
    forced = {"type": "function", "function": {"name": "final_result"}}

    call = create(client, tools=[FINAL_TOOL], tool_choice=forced).choices[0].message.tool_calls[0]

    assert call.function.name == "final_result"
    assert not valid(json.loads(call.function.arguments))


def test_an_endless_stream_outlives_the_read_timeout_and_its_abandonment_is_recorded(
    fake: FakeOpenAI,
) -> None:
    fake.set_modes("endless=0.05")
    tokens = 0
    started = time.monotonic()
    with (
        httpx.Client(timeout=httpx.Timeout(5, read=0.5)) as http,
        http.stream(
            "POST",
            f"{fake.base_url}/chat/completions",
            json={"model": MODEL, "messages": ASK, "stream": True},
        ) as response,
    ):
        for line in response.iter_lines():
            tokens += '"more "' in line
            if time.monotonic() - started > 1.5:  # three read timeouts have passed
                break

    assert tokens > 10
    assert fake.wait_cancelled(MODEL, timeout=5)
    assert fake.in_flight(MODEL) == 0


def test_a_non_streamed_endless_answer_waits_until_the_client_leaves(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.script(MODEL, Endless())

    with pytest.raises(openai.APITimeoutError):
        create(client.with_options(timeout=0.5))

    assert fake.wait_cancelled(MODEL, timeout=5)


def test_slow_starts_late_and_a_client_that_stops_waiting_is_recorded(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.set_modes("slow=0.6")
    started = time.monotonic()
    answer = create(client)
    waited = time.monotonic() - started

    with pytest.raises(openai.APITimeoutError):
        create(client.with_options(timeout=0.2))

    assert waited >= 0.6
    assert answer.choices[0].message.content
    assert fake.wait_cancelled(MODEL, timeout=5)
    assert fake.cancelled(MODEL) == 1  # the answered request was not


def test_a_slow_scripted_reply_answers_its_reply_after_the_delay(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.script(MODEL, Slow(0.3, Text("late answer")))
    started = time.monotonic()

    answer = create(client)

    assert answer.choices[0].message.content == "late answer"
    assert time.monotonic() - started >= 0.3


def test_modes_for_one_model_leave_the_others_alone(
    fake: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake.set_modes("no-tools", model="dev-small")

    with pytest.raises(openai.InternalServerError):
        create(client, model="dev-small", tools=[SEARCH_TOOL])
    assert create(client, tools=[SEARCH_TOOL]).choices[0].message.tool_calls


def test_mode_names_and_values_are_checked() -> None:
    modes = parse_modes(["no-tools,slow=2", "tool-as-text=tagged", "context-too-long"])

    assert (modes.no_tools, modes.slow, modes.tool_as_text) == (True, 2.0, "tagged")
    assert modes.context_limit == 0
    with pytest.raises(ValueError, match="unknown mode 'no-tool': the modes are no-tools"):
        parse_modes(["no-tool"])
    with pytest.raises(ValueError, match="mode 'slow' needs a number"):
        parse_modes(["slow=soon"])
    with pytest.raises(ValueError, match="mode 'tool-as-text' must be one of bare"):
        parse_modes(["tool-as-text=yaml"])


# --- the command line ----------------------------------------------------------------------

COMMAND = [sys.executable, "-m", "scholarstream.devtools.fake_openai"]


def read_until(process: subprocess.Popen[str], pattern: str, timeout: float = 20) -> list[str]:
    """Lines of the process's standard output up to the one matching ``pattern``.

    A thread reads the lines: ``select`` on the pipe cannot see lines that the text
    wrapper has already buffered, so it would wait for output that has arrived."""
    assert process.stdout is not None
    stdout = process.stdout
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in stdout:
            lines.put(line.rstrip("\n"))
            if re.search(pattern, line):
                break
        else:
            lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if re.search(pattern, line):
            return seen
    raise AssertionError(f"no line matching {pattern!r} in {seen}")


def test_the_command_serves_prints_the_settings_and_stops_cleanly_on_ctrl_c() -> None:
    process = subprocess.Popen(
        [*COMMAND, "--port", "0", "--mode", "no-tools", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = read_until(process, "Ctrl-C stops it")
        base_url = re.search(r"http://127\.0\.0\.1:\d+/v1", lines[0])
        assert base_url is not None, lines
        models = httpx.get(f"{base_url[0]}/models", timeout=5).json()
        refused = httpx.post(
            f"{base_url[0]}/chat/completions",
            json={"model": MODEL, "messages": ASK, "tools": [SEARCH_TOOL]},
            timeout=5,
        )
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10)
    finally:
        process.kill()

    assert [m["id"] for m in models["data"]] == ["dev-model", "dev-small"]
    assert refused.status_code == 500
    assert f"  export SCHOLARSTREAM_LLM__PROVIDERS__DEV__BASE_URL={base_url[0]}" in lines
    assert "  export SCHOLARSTREAM_LLM__ROLES__DEFAULT=dev:dev-model" in lines
    assert process.returncode == 0, err
    assert "Development provider stopped." in out
    assert "Traceback" not in err


def test_mode_down_prints_the_settings_and_leaves_the_port_closed() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    done = subprocess.run(
        [*COMMAND, "--port", str(port), "--mode", "down"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert done.returncode == 0
    assert f"BASE_URL=http://127.0.0.1:{port}/v1" in done.stdout
    assert "connection refused" in done.stdout
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2)


def test_a_taken_port_and_an_unknown_mode_are_refused_with_what_to_do() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = subprocess.run(
            [*COMMAND, "--port", str(port)], capture_output=True, text=True, timeout=30, check=False
        )
    unknown = subprocess.run(
        [*COMMAND, "--mode", "sluggish"], capture_output=True, text=True, timeout=30, check=False
    )

    assert busy.returncode == 2
    assert f"Cannot listen on 127.0.0.1:{port}" in busy.stderr
    assert "Choose another with --port" in busy.stderr
    assert unknown.returncode == 2
    assert "unknown mode 'sluggish'" in unknown.stderr
    assert "Traceback" not in busy.stderr + unknown.stderr
