"""A chat turn never fails for what the model wrote (issue 22, point 3 applied to chat).
A small local model (Qwen2.5-Coder-0.5B on llama-server) writes its tool calls as text,
then after the tool's result writes a list of calls again and again until its answer budget
or the deadline runs out, and invents arguments the tools refuse. The turn still completes:
the stream is closed after one round of calls, a call already run is not run again, a tool
whose arguments keep being refused is skipped with the command that would do it, and a
model that fails or is cut off after tools ran leaves their results and a plain note, with
``fallback`` on the finished answer (what the benchmark reads). Nothing at all from the
model is still an error."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls

from scholarstream.chat._agent_loop import UNFINISHED_AFTER_TOOLS
from tests.chat.test_chat_api import send
from tests.chat.world import Event, Script, call
from tests.web.live import clean_settings, serve


def text_call(text: str) -> str:
    return json.dumps({"name": "chat_test_split", "arguments": {"text": text}})


def pieces(text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class Fails:
    """A step that streams ``before`` and then fails the request as a server would."""

    def __init__(self, *before: str) -> None:
        self.before = before


class Counting(Script):
    """A script that counts the chunks each step streamed (a closed stream stops early),
    and plays ``Fails`` steps."""

    def __init__(self, *steps: Sequence[str | DeltaToolCalls] | Fails, pace: float = 0.0) -> None:
        super().__init__(*[s for s in steps if not isinstance(s, Fails)], pace=pace)
        self.all_steps = list(steps)
        self.streamed: list[int] = []

    async def stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        step = self.all_steps.pop(0) if self.all_steps else ["(script finished)"]
        if isinstance(step, Fails):
            self.seen.append(list(messages))
            for text in step.before:
                yield text
            raise ModelHTTPError(status_code=500, model_name="scripted", body="slot busy")
        self.steps = [step]
        self.streamed.append(0)
        async for chunk in super().stream(messages, info):
            self.streamed[-1] += 1
            yield chunk


@contextmanager
def chat_server(tmp_path: Path, script: Script, **llm: Any) -> Iterator[httpx.Client]:
    settings = clean_settings(tmp_path / "data", llm=llm)
    with (
        serve(settings, models={"default": script.model()}) as live,
        httpx.Client(base_url=live.base_url, timeout=30) as client,
    ):
        yield client


def streamed(events: list[Event]) -> str:
    return "".join(e.data["text"] for e in events if e.type == "text_delta")


def tool_inputs(events: list[Event]) -> list[dict[str, Any]]:
    return [e.data["input"] for e in events if e.type == "tool_start"]


def test_a_list_of_calls_written_again_and_again_is_cut_after_one_round(tmp_path: Path) -> None:
    first = text_call("alpha beta gamma")
    round_ = f"[{first}, {text_call('delta')}]"
    repeated = pieces("\n".join([round_] * 40))
    script = Counting(pieces(first), repeated, repeated)
    with chat_server(tmp_path, script) as client:
        events = send(client, "Split alpha beta gamma")
        assert events[-1].type == "complete"
        # Each distinct call ran once: the repeat of the first call was not run again.
        assert tool_inputs(events) == [{"text": "alpha beta gamma"}, {"text": "delta"}]
        # The stream was closed after the first round, long before the repeats ran out.
        assert len(script.streamed) == 3
        assert script.streamed[1] < len(repeated) / 10
        assert script.streamed[2] < len(repeated) / 10
        # The third answer only repeated calls already run: the turn ends with the results.
        text = streamed(events)
        assert "{" not in text and "chat_test_split" not in text
        answer = events[-1].data["payload"]
        assert answer["message"] == UNFINISHED_AFTER_TOOLS
        assert answer["fallback"] == {
            "skill": "chat",
            "reason": "unusable",
            "message": UNFINISHED_AFTER_TOOLS,
            "hint": None,
        }
        assert [p["data"]["words"] for p in answer["payloads"]] == [
            ["alpha", "beta", "gamma"],
            ["delta"],
        ]

        # The next turn reads a closed exchange: every call with its result, then the note.
        script.all_steps.append(["Two splits."])
        send(client, "Thanks", conversation_id=events[0].data["conversation_id"])
        history = script.seen[-1]
        previous = history[-2]
        assert isinstance(previous, ModelResponse)
        assert previous.parts == [TextPart(UNFINISHED_AFTER_TOOLS)]
        calls = [p for m in history for p in m.parts if isinstance(p, ToolCallPart)]
        returned = {
            p.tool_call_id
            for m in history
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        }
        assert all(c.tool_call_id in returned for c in calls)


def test_a_model_that_answers_after_its_calls_completes_with_the_model(tmp_path: Path) -> None:
    script = Counting(pieces(text_call("alpha beta")), ["Two words: alpha and beta."])
    with chat_server(tmp_path, script) as client:
        events = send(client, "Split alpha beta")
        answer = events[-1].data["payload"]
        assert answer["message"] == "Two words: alpha and beta."
        assert answer["fallback"] is None


def test_arguments_refused_until_the_retries_are_used_up_skip_the_call(tmp_path: Path) -> None:
    bad = [[call("chat_test_split", {"words": w}, f"c{w}")] for w in ("a", "b", "c")]
    script = Counting(*bad, ["I could not split it; the command above will."])
    with chat_server(tmp_path, script) as client:
        events = send(client, "Split alpha")
        assert events[-1].type == "complete"
        answer = events[-1].data["payload"]
        # The model was told to answer with what it has, and did.
        assert "Not run" in str(script.seen[-1][-1])
        assert answer["message"] == "I could not split it; the command above will."
        notice = (
            "The model could not give “Chat test split” details it takes, so it was skipped. "
            "You can run it yourself: /split TEXT"
        )
        assert notice in answer["warnings"]
        assert any(e.type == "status" and e.data["message"] == notice for e in events)
        assert {"label": "/split TEXT", "value": "/split "} in answer["suggested_values"]
        assert answer["fallback"] is None  # the model finished the answer


def test_the_same_refused_call_written_again_ends_the_turn_without_an_error(
    tmp_path: Path,
) -> None:
    bad = text_call("x").replace('"text"', '"words"')
    script = Counting(pieces(text_call("alpha")), *[pieces(bad)] * 5)
    with chat_server(tmp_path, script) as client:
        events = send(client, "Split alpha")
        assert events[-1].type == "complete"
        answer = events[-1].data["payload"]
        assert answer["fallback"]["reason"] == "unusable"
        assert answer["message"].endswith(UNFINISHED_AFTER_TOOLS)
        assert any("You can run it yourself: /split" in w for w in answer["warnings"])
        # Three refusals (the third skips the tool), then the skipped repeat ends the turn.
        assert len(script.seen) == 5


def test_the_deadline_after_a_tool_ran_completes_with_the_tools_results(tmp_path: Path) -> None:
    slow = ["The words ", "are ", *["alpha "] * 30]
    script = Counting([call("chat_test_split", {"text": "alpha beta"})], slow, pace=0.1)
    with chat_server(tmp_path, script, deadline_seconds=1.0) as client:
        events = send(client, "Split alpha beta")
        assert events[-1].type == "complete"
        answer = events[-1].data["payload"]
        assert answer["message"].startswith("The words are")
        assert answer["message"].endswith(UNFINISHED_AFTER_TOOLS)
        assert answer["fallback"]["reason"] == "late"
        assert answer["fallback"]["hint"]  # what to change (the deadline, a faster model)
        assert answer["payloads"][0]["data"]["words"] == ["alpha", "beta"]


def test_a_model_failure_after_a_tool_ran_completes_with_the_tools_results(
    tmp_path: Path,
) -> None:
    script = Counting([call("chat_test_split", {"text": "alpha beta"})], Fails())
    with chat_server(tmp_path, script) as client:
        events = send(client, "Split alpha beta")
        assert not any(e.type == "error" for e in events)
        answer = events[-1].data["payload"]
        assert answer["message"] == UNFINISHED_AFTER_TOOLS
        assert answer["fallback"]["reason"] == "failed"
        assert [h["tool_name"] for h in answer["tool_history"]] == ["chat_test_split"]


def test_a_model_failure_mid_answer_without_tools_is_a_failed_answer(tmp_path: Path) -> None:
    """Part of an answer and no tool result: an error, not a complete answer (the text shown
    is kept with the error; tests/llm/test_provider_faults.py checks what is stored)."""
    script = Counting(Fails("Alpha is ", "the first "))
    with chat_server(tmp_path, script) as client:
        events = send(client, "What is alpha?")
        assert events[-1].type == "error"
        assert not any(e.type == "complete" for e in events)


def test_a_model_failure_before_anything_came_is_an_error(tmp_path: Path) -> None:
    script = Counting(Fails())
    with chat_server(tmp_path, script) as client:
        events = send(client, "What is alpha?")
        assert events[-1].type == "error"
        assert "slot busy" in events[-1].data["message"]
