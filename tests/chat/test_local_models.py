"""Chat with the models users run themselves (issue 22, points 4 and 6): tool calls written
as text run as tool calls or are hidden with a plain notice, a model without tools gets the
slash commands, and local servers get a compact prompt whose prefix stays byte-identical
from turn to turn.

Scripted with FunctionModel through the API, and through the real client stack (pydantic-ai's
OpenAI model, the openai SDK, httpx) against the fake OpenAI-compatible server, whose
received request bodies are what a real server would read."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pydantic_ai.models
import pytest
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)

from scholarstream.chat import ChatContext, build_turn_prompt, resolve, tool_definitions
from scholarstream.chat._agent_loop import EARLIER_TURNS_LEFT_OUT
from scholarstream.settings import DEFAULT_MAX_TOKENS
from tests.chat.test_chat_api import chat_server, send
from tests.chat.world import Event, Script, call, context, read_events
from tests.fake_openai import FakeOpenAI, Status, Text, context_too_long, fake_openai
from tests.web.live import clean_settings, serve

SPLIT = '{"name": "chat_test_split", "arguments": {"text": "alpha beta gamma"}}'
STYLES = {
    "bare": SPLIT,
    "fenced": f"```json\n{SPLIT}\n```",
    "tagged": f"<tool_call>\n{SPLIT}\n</tool_call>",
    "hermes parameters, arguments as a string": (
        '{"name": "chat_test_split", "parameters": "{\\"text\\": \\"alpha beta gamma\\"}"}'
    ),
}


def pieces(text: str, size: int = 3) -> list[str]:
    """The text as a stream of small deltas, as a model streams it."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def streamed(events: list[Event]) -> str:
    return "".join(e.data["text"] for e in events if e.type == "text_delta")


@pytest.mark.parametrize("style", list(STYLES))
def test_a_tool_call_written_as_text_runs_as_a_tool_call(tmp_path: Path, style: str) -> None:
    script = Script(pieces(STYLES[style]), ["Three words: alpha, beta, gamma."])
    with chat_server(tmp_path, script) as (_, client):
        events = send(client, "Split alpha beta gamma")
        types = [e.type for e in events]
        assert [t for t in types if t.startswith("tool_")] == [
            "tool_start",
            "tool_progress",
            "tool_complete",
        ]
        start = next(e for e in events if e.type == "tool_start")
        assert start.data["input"] == {"text": "alpha beta gamma"}
        done = next(e for e in events if e.type == "tool_complete")
        assert done.data["ok"] is True
        assert done.data["payload"]["data"] == {"words": ["alpha", "beta", "gamma"]}
        # Nothing of the call was streamed; the answer came after the tool's result.
        assert streamed(events) == "Three words: alpha, beta, gamma."
        assert types.index("tool_complete") < types.index("text_delta")
        assert "3 words: alpha, beta, gamma" in script.last_tool_return()
        complete = events[-1].data["payload"]
        assert complete["message"] == "Three words: alpha, beta, gamma."
        assert complete["custom_payload"]["type"] == "chat_test_items"
        assert [h["tool_name"] for h in complete["tool_history"]] == ["chat_test_split"]

        # The history is the one a native call leaves: the call, then its result.
        script.steps.append(["Still three."])
        send(client, "And now?", conversation_id=events[0].data["conversation_id"])
        history = script.seen[-1]
        calls = [
            p
            for m in history
            if isinstance(m, ModelResponse)
            for p in m.parts
            if isinstance(p, ToolCallPart)
        ]
        assert [(c.tool_name, c.args_as_dict()) for c in calls] == [
            ("chat_test_split", {"text": "alpha beta gamma"})
        ]
        returns = [
            p
            for m in history
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        ]
        assert [r.tool_call_id for r in returns] == [calls[0].tool_call_id]
        assert not any("{" in str(p) for m in history for p in m.parts if "TextPart" in str(p))


def test_prose_before_a_tagged_call_streams_and_the_call_never_does(tmp_path: Path) -> None:
    answer = f"Let me split that.\n<tool_call>\n{SPLIT}\n</tool_call>"
    script = Script(pieces(answer, 2), ["Done: three words."])
    with chat_server(tmp_path, script) as (_, client):
        events = send(client, "Split alpha beta gamma")
        text = streamed(events)
        assert text == "Let me split that.\n\nDone: three words."
        assert "tool_call" not in text and "chat_test_split" not in text
        first_delta = next(i for i, e in enumerate(events) if e.type == "text_delta")
        assert first_delta < [e.type for e in events].index("tool_start")


def test_an_unknown_tool_written_as_text_is_hidden_with_a_plain_notice(tmp_path: Path) -> None:
    script = Script(
        pieces('{"name": "chat_test_splitter", "arguments": {"text": "alpha beta"}}'),
        ["(not reached)"],
    )
    with chat_server(tmp_path, script) as (_, client):
        events = send(client, "Split alpha beta")
        assert not any(e.type.startswith("tool_") for e in events)
        assert len(script.seen) == 1  # the model was not asked again
        text = streamed(events)
        assert "{" not in text
        complete = events[-1].data["payload"]
        assert complete["message"] == text.strip()
        assert "does not have (“Chat test splitter”), so nothing was run" in text
        assert "The nearest command here is /split alpha beta" in text
        assert {"label": "/split alpha beta", "value": "/split alpha beta"} in complete[
            "suggested_values"
        ]


def test_a_call_to_a_tool_of_another_page_with_more_text_is_never_shown(tmp_path: Path) -> None:
    """Seen with Qwen2.5-Coder-0.5B on llama-server: a bare call to a product tool this page
    does not offer, followed by more text, reached the user as raw JSON."""
    other = '{"name": "compare_reports", "arguments": {"report_id": "r1"}}'
    script = Script(pieces(f"{other}\nI will compare the reports now."), ["(not reached)"])
    with chat_server(tmp_path, script) as (_, client):
        events = send(client, "Compare the reports")
        assert not any(e.type.startswith("tool_") for e in events)
        text = streamed(events)
        assert "{" not in text and '"arguments"' not in text
        # Named in the plain notice in words, never as JSON or by its identifier.
        assert "“Compare reports”" in text
        assert "compare_reports" not in text
        assert events[-1].type == "complete"


def test_a_call_in_tags_that_cannot_be_read_is_hidden_and_the_command_offered(
    tmp_path: Path,
) -> None:
    script = Script(['<tool_call>{"name": "chat_test_split", "arguments": {"text": </tool_call>'])
    with chat_server(tmp_path, script) as (_, client):
        events = send(client, "Split alpha beta")
        assert not any(e.type.startswith("tool_") for e in events)
        message = events[-1].data["payload"]["message"]
        assert message == (
            "The model tried to run “Chat test split”, but it is not readable JSON, so nothing "
            "was run. You can run it yourself: /split TEXT"
        )
        assert {"label": "/split TEXT", "value": "/split "} in events[-1].data["payload"][
            "suggested_values"
        ]


def test_a_text_call_with_arguments_the_tool_refuses_is_reported_like_a_native_one(
    tmp_path: Path,
) -> None:
    bad = '{"name": "chat_test_split", "arguments": {"words": "alpha"}}'
    script = Script([bad], ["Sorry, I could not split it."])
    with chat_server(tmp_path, script) as (_, client):
        events = send(client, "Split alpha")
        done = next(e for e in events if e.type == "tool_complete")
        assert done.data["ok"] is False
        assert "Invalid arguments for chat_test_split" in str(script.seen[1][-1])
        complete = events[-1].data["payload"]
        assert complete["message"] == "Sorry, I could not split it."
        assert any("You can run it yourself: /split TEXT" in w for w in complete["warnings"])


def test_optional_arguments_given_as_null_count_as_not_given(tmp_path: Path) -> None:
    call = '{"name": "chat_test_split", "arguments": {"text": "alpha beta", "limit": null}}'
    script = Script([call], ["Two words."])
    with chat_server(tmp_path, script) as (_, client):
        events = send(client, "Split alpha beta")
        start = next(e for e in events if e.type == "tool_start")
        assert start.data["input"] == {"text": "alpha beta"}
        assert next(e for e in events if e.type == "tool_complete").data["ok"] is True
        assert events[-1].data["payload"]["message"] == "Two words."


REFUSED = '{"name": "chat_test_split", "arguments": {"text": 5}}'
ECHO = '{"error": "Invalid arguments for chat_test_split: text: 5 is not of type \'string\'"}'


def test_an_answer_that_repeats_the_refusal_is_never_shown_and_the_model_asked_again(
    tmp_path: Path,
) -> None:
    script = Script([REFUSED], pieces(ECHO), ["Sorry, I could not split it."])
    with chat_server(tmp_path, script) as (_, client):
        events = send(client, "Split alpha")
        assert "Invalid arguments" not in streamed(events)
        assert streamed(events) == "Sorry, I could not split it."
        assert "repeated the message you were sent" in str(script.seen[2][-1])
        complete = events[-1].data["payload"]
        assert complete["message"] == "Sorry, I could not split it."

        # The next turn reads the answer, not the repetition.
        script.steps.append(["Fine."])
        send(client, "Thanks", conversation_id=events[0].data["conversation_id"])
        answers = [
            p.content
            for m in script.seen[-1]
            if isinstance(m, ModelResponse)
            for p in m.parts
            if isinstance(p, TextPart)
        ]
        assert answers == ["Sorry, I could not split it."]


def test_an_answer_that_recites_the_tools_it_was_given_is_never_shown(tmp_path: Path) -> None:
    # A small model answers with its chat template's tools section, read back.
    recital = (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n"
        '<tools>\n{"type": "function", "function": {"name": "chat_test_split", '
        '"description": "Splits text into words. Streams progress.", "parameters": {}}}\n'
        "</tools>"
    )
    script = Script(pieces(recital), ["Three words."])
    with chat_server(tmp_path, script) as (_, client):
        events = send(client, "Split alpha beta gamma")
    assert events[-1].data["payload"]["message"] == "Three words."
    assert "repeated the message you were sent" in str(script.seen[1][-1])


@pytest.mark.parametrize(
    "recital",
    [
        # The conversation's context pack, read back.
        "This message reads as a slot fill (only changes the scope). It follows on from the "
        "conversation: rewrite it into one standalone search query that keeps the topic.",
        "- User: what about the EMA instead?\n  Searched: library: EMA confirmatory trials",
        # Its instructions, printed because a message asked for them.
        "### System Prompt\nYou are ScholarStream's research assistant: an expert colleague "
        "who can see what the user sees in the application.",
    ],
)
def test_an_answer_that_recites_its_instructions_is_never_shown(
    tmp_path: Path, recital: str
) -> None:
    script = Script(pieces(recital), ["Three words."])
    with chat_server(tmp_path, script) as (_, client):
        events = send(client, "Split alpha beta gamma")
    assert events[-1].data["payload"]["message"] == "Three words."
    assert "repeated the message you were sent" in str(script.seen[1][-1])


def test_a_model_that_only_repeats_the_refusal_ends_in_a_plain_error(tmp_path: Path) -> None:
    script = Script([REFUSED], [ECHO], [f"As I was told: {ECHO}"])
    with chat_server(tmp_path, script) as (_, client):
        events = send(client, "Split alpha")
        error = events[-1]
        assert error.type == "error"
        assert error.data["message"] == (
            "The model repeated the messages it was sent instead of answering."
        )
        assert "Settings → Models" in error.data["hint"]
        assert "{" not in error.data["message"] + error.data["hint"]


def test_a_repetition_after_a_tool_ran_completes_with_the_tools_results(tmp_path: Path) -> None:
    script = Script(
        [REFUSED],
        [call("chat_test_split", {"text": "alpha beta"})],
        [ECHO],
    )
    with chat_server(tmp_path, script) as (_, client):
        events = send(client, "Split alpha beta")
        assert "Invalid arguments" not in streamed(events)
        complete = events[-1].data["payload"]
        assert complete["fallback"]["reason"] == "unusable"
        assert "Invalid arguments" not in complete["message"]
        assert complete["custom_payload"]["data"] == {"words": ["alpha", "beta"]}


def test_an_answer_with_a_json_example_is_shown_as_text(tmp_path: Path) -> None:
    answer = (
        "A tool call looks like this:\n```json\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n```\n'
        "The model fills in the arguments."
    )
    script = Script(pieces(answer, 7))
    with chat_server(tmp_path, script) as (_, client):
        events = send(client, "Show me what a tool call looks like in JSON")
        assert not any(e.type.startswith("tool_") for e in events)
        assert streamed(events) == answer
        assert events[-1].data["payload"]["message"] == answer
        assert events[-1].data["payload"]["warnings"] == []


# --- Through the real client stack, against the fake OpenAI-compatible server -----------


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeOpenAI]:
    with fake_openai() as fake:
        yield fake


@pytest.fixture
def fake(fake_server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    fake_server.reset()
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    return fake_server


@contextmanager
def local_server(tmp_path: Path, fake: FakeOpenAI, **provider: Any) -> Iterator[httpx.Client]:
    """The app with its default role on ``local:tiny``: an OpenAI-compatible endpoint the
    product does not know, so it gets the local-server defaults (compact prompt, tools)
    unless ``provider`` overrides them."""
    settings = clean_settings(
        tmp_path / "data",
        llm={
            "roles": {"default": "local:tiny"},
            "providers": {"local": {"base_url": fake.base_url, **provider}},
        },
    )
    with serve(settings) as live, httpx.Client(base_url=live.base_url, timeout=30) as client:
        yield client


def chat(client: httpx.Client, message: str, **body: Any) -> list[Event]:
    payload = {"message": message, "context": context(), **body}
    with client.stream("POST", "/api/v1/chat/messages", json=payload) as response:
        assert response.status_code == 200, response.read()
        return list(read_events(response))


def bodies(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [r.body for r in fake.received]


def test_a_local_models_prompt_keeps_its_prefix_from_turn_to_turn(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script("tiny", Text("Forty-two."), Text("Still forty-two."))
    with local_server(tmp_path, fake) as client:
        first = chat(client, "What is the answer?", context=context(search_form={"q": "one"}))
        assert first[-1].type == "complete", first[-1]
        second = chat(
            client,
            "Say it again",
            conversation_id=first[0].data["conversation_id"],
            context=context(search_form={"q": "two"}),
        )
        assert second[-1].type == "complete", second[-1]
    one, two = bodies(fake)
    # System prompt and tools byte-identical; the whole first turn is the second's prefix.
    assert json.dumps(two["tools"]) == json.dumps(one["tools"])
    assert two["messages"][: len(one["messages"])] == one["messages"]
    assert [m["role"] for m in two["messages"]] == ["system", "user", "assistant", "user"]
    system = one["messages"][0]["content"]
    assert "Form:" not in system  # the page state is per turn: not in the system prompt
    assert "Form: {'q': 'one'}" in one["messages"][1]["content"]
    assert "Form: {'q': 'two'}" in two["messages"][-1]["content"]
    assert two["messages"][-1]["content"].endswith("## The user's message\nSay it again")
    # Every request carries the chat's answer budget.
    assert one["max_tokens"] == two["max_tokens"] == DEFAULT_MAX_TOKENS["chat"]
    # Compact tool definitions: the first sentence, the argument types.
    split = next(t for t in one["tools"] if t["function"]["name"] == "chat_test_split")
    assert split["function"]["description"] == "Splits text into words."
    assert split["function"]["parameters"]["properties"] == {"text": {"type": "string"}}


def test_a_text_call_from_a_real_stack_runs_and_the_next_turn_sees_it(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script("tiny", Text(f"```json\n{SPLIT}\n```", chunks=9), Text("Three words."))
    with local_server(tmp_path, fake) as client:
        events = chat(client, "Split alpha beta gamma")
    assert [e.type for e in events if e.type.startswith("tool_")][-1] == "tool_complete"
    assert streamed(events) == "Three words."
    answer = bodies(fake)[1]["messages"]
    assert answer[-2]["tool_calls"][0]["function"]["name"] == "chat_test_split"
    assert answer[-1]["role"] == "tool" and "3 words" in answer[-1]["content"]


def test_a_model_without_tools_gets_no_tools_and_its_question_is_searched_for_it(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(
        "tiny",
        Text("I cannot search from here."),
        Text('{"name": "chat_test_split", "arguments": {"text": "alpha beta"}}'),
    )
    with local_server(tmp_path, fake, supports_tools=False) as client:
        plain = chat(client, "Find reviews on EGFR resistance in my library")
        written = chat(client, "Split alpha beta")
    first, second = bodies(fake)
    assert "tools" not in first and "tools" not in second
    system = first["messages"][0]["content"]
    assert "You cannot run tools" in system and "- /split TEXT:" in system
    # The search the model could not run is run for it, after its answer.
    searched = next(e.data for e in plain if e.type == "tool_start")
    assert searched["tool"] == "search_library" and "EGFR" in searched["input"]["query"]
    assert (
        plain[-1]
        .data["payload"]["message"]
        .startswith(
            "I cannot search from here.\n\nThe model answered without searching, so the search "
            "was run for it.\n\nSearching for “reviews EGFR resistance”."
        )
    )
    # A call the model writes anyway is not run, and the command is offered.
    assert not any(e.type.startswith("tool_") for e in written)
    message = written[-1].data["payload"]["message"]
    assert message == (
        "This model is set up to answer without tools, so its request to run "
        "“Chat test split” was not carried out. You can run it yourself: /split alpha beta"
    )
    assert "/split alpha beta" in [
        c["value"] for c in written[-1].data["payload"]["suggested_values"]
    ]


def test_a_model_without_tools_reads_earlier_tool_calls_as_text(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script("tiny", Text(SPLIT), Text("Three words."), Text("Yes, three."))
    with local_server(tmp_path, fake) as client:
        first = chat(client, "Split alpha beta gamma")
    conversation_id = first[0].data["conversation_id"]
    # The same conversation, after the provider was set up without tools.
    with local_server(tmp_path, fake, supports_tools=False) as client:
        second = chat(client, "Three, right?", conversation_id=conversation_id)
    assert second[-1].type == "complete", second[-1]
    later = bodies(fake)[-1]
    assert "tools" not in later
    roles = [m["role"] for m in later["messages"]]
    assert "tool" not in roles
    assert not any(m.get("tool_calls") for m in later["messages"])
    said = [m["content"] for m in later["messages"] if isinstance(m.get("content"), str)]
    assert "(I ran the tool chat_test_split.)" in said
    assert any("3 words: alpha, beta, gamma" in c for c in said)
    assert not any('"name"' in c for c in said)


def test_a_server_that_refuses_tools_is_answered_without_them(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(
        "tiny",
        Status(500, message="tools param requires --jinja flag"),
        Text("Here is what I know."),
    )
    with local_server(tmp_path, fake) as client:
        events = chat(client, "What is EGFR?")
    assert events[-1].type == "complete", events[-1]
    refused, answered = bodies(fake)
    assert "tools" in refused and "tools" not in answered
    assert "You cannot run tools" in answered["messages"][0]["content"]
    notes = [e.data["message"] for e in events if e.type == "status"][1:]
    assert len(notes) == 1 and "does not take tool calls" in notes[0]
    payload = events[-1].data["payload"]
    assert payload["message"] == "Here is what I know."
    assert any("--jinja" in w for w in payload["warnings"])
    assert any(c["value"].startswith("/") for c in payload["suggested_values"])


def test_a_conversation_longer_than_the_context_window_goes_on_without_earlier_turns(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script("tiny", Text("First answer."), context_too_long(9002, 8192), Text("Second answer."))
    with local_server(tmp_path, fake) as client:
        first = chat(client, "Explain what an odds ratio is")
        second = chat(
            client, "explain it more simply", conversation_id=first[0].data["conversation_id"]
        )
    assert second[-1].type == "complete", second[-1]
    payload = second[-1].data["payload"]
    assert payload["message"] == "Second answer."
    assert payload["warnings"] == [EARLIER_TURNS_LEFT_OUT]
    refused, retried = bodies(fake)[1:]
    said = [m.get("content") for m in refused["messages"]]
    assert "First answer." in said  # the earlier turn was sent, then left out
    assert "First answer." not in [m.get("content") for m in retried["messages"]]


# --- Prompt size ---------------------------------------------------------------------------

# Characters per token of these prompts, measured with the o200k_base tokenizer (bpe-openai
# 0.1.4, 2026-11-26): 3.75 to 3.82 for the compact and the full prompts of every page. The
# tokenizer's tables cannot be fetched in tests, so the budget is checked with 3.3, which
# overestimates the count by about 15%.
CHARS_PER_TOKEN = 3.3
COMPACT_BUDGET = 1500


def _prompt_chars(page: str, tab: str | None, *, compact: bool) -> int:
    chat_context = ChatContext(current_page=page, active_tab=tab)
    resolution = resolve(chat_context)
    prompt = build_turn_prompt(
        resolution,
        chat_context,
        compact=compact,
        server_actions=[("run_search", "Runs a literature search with the given query.")],
    )
    tools = [
        {"name": d.name, "description": d.description, "parameters": d.parameters_json_schema}
        for d in tool_definitions(resolution.tools, compact=compact)
    ]
    return len(prompt.system) + len(json.dumps(tools))


@pytest.mark.parametrize(
    ("page", "tab"),
    [("home", None), ("search", "results"), ("library", None), ("trials", None)],
)
def test_the_compact_prompt_with_its_tools_fits_the_budget(page: str, tab: str | None) -> None:
    compact = _prompt_chars(page, tab, compact=True) / CHARS_PER_TOKEN
    full = _prompt_chars(page, tab, compact=False) / CHARS_PER_TOKEN
    assert compact < COMPACT_BUDGET
    assert full > 3 * compact


# --- A small model that does not finish its answer (issue 22, point 3 applied to chat) --


def test_calls_written_again_and_again_are_cut_on_the_wire(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """Qwen2.5-Coder-0.5B on llama-server, after the tool's result: the same list of calls
    until the answer budget ran out (1,500 tokens, 161 s). The stream is closed after the
    first round, so the server stops writing, and the turn completes."""
    other = '{"name": "chat_test_split", "arguments": {"text": "delta"}}'
    repeated = "\n".join([f"[{SPLIT}, {other}]"] * 60)
    fake.script(
        "tiny",
        Text(SPLIT),
        Text(repeated, chunks=600, delay=0.02),
        Text(repeated, chunks=600, delay=0.02),
    )
    with local_server(tmp_path, fake, max_tokens={"chat": 10_000}) as client:
        events = chat(client, "Split alpha beta gamma")
    assert events[-1].type == "complete"
    assert [e.data["input"]["text"] for e in events if e.type == "tool_start"] == [
        "alpha beta gamma",
        "delta",
    ]
    assert events[-1].data["payload"]["fallback"]["reason"] == "unusable"
    assert "{" not in streamed(events)
    deadline = time.monotonic() + 5  # the server notices the client left at its next write
    while not all(r.cancelled for r in fake.received[1:]) and time.monotonic() < deadline:
        time.sleep(0.05)
    for cut in fake.received[1:]:
        assert cut.cancelled
        assert cut.ended_at is not None and cut.ended_at - cut.at < 5  # not 12 s


def test_an_answer_cut_by_its_budget_after_a_tool_ran_is_completed_with_a_note(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script("tiny", Text(SPLIT), Text("The three words are alpha, beta and gamma. " * 20))
    with local_server(tmp_path, fake, max_tokens={"chat": 40}) as client:
        events = chat(client, "Split alpha beta gamma")
    answer = events[-1].data["payload"]
    assert answer["message"].startswith("The three words are")
    assert answer["message"].endswith(
        "The model did not finish its answer; the results above are what the tools found."
    )
    assert answer["fallback"]["reason"] == "unusable"
