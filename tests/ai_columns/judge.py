"""A scripted model for AI columns: a pydantic-ai ``FunctionModel`` that reads the column's
criteria and the item's title from the prompt and answers with ``answer(criteria, title)``
as the structured output (or raises what ``answer`` raises)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

Answer = Callable[[str, str], tuple[Any, str]]

_TITLE = re.compile(r"^Title: (.*)$", re.M)
_CRITERIA = re.compile(r"^Criteria: (.*)$", re.M)


def user_prompt(messages: list[ModelMessage]) -> str:
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    raise AssertionError("no user prompt")


def mentions_trial(criteria: str, title: str) -> tuple[Any, str]:
    """Yes when the title says "trial"."""
    if "trial" in title.lower():
        return True, f"The title names a trial: {title}."
    return False, "The title names no trial."


class Judge:
    def __init__(self, answer: Answer = mentions_trial) -> None:
        self.answer = answer
        self.titles: list[str] = []
        self.prompts: list[str] = []
        self.value_schemas: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = user_prompt(messages)
        title_match = _TITLE.search(prompt)
        criteria_match = _CRITERIA.search(prompt)
        assert title_match and criteria_match, prompt
        (tool,) = info.output_tools
        with self._lock:
            self.titles.append(title_match.group(1))
            self.prompts.append(prompt)
            self.value_schemas.append(tool.parameters_json_schema["properties"]["value"])
        value, reason = self.answer(criteria_match.group(1), title_match.group(1))
        return ModelResponse(
            parts=[ToolCallPart(tool_name=tool.name, args={"value": value, "reason": reason})]
        )

    def model(self) -> FunctionModel:
        return FunctionModel(self, model_name="judge")

    def reset(self) -> None:
        with self._lock:
            self.titles.clear()
            self.prompts.clear()
            self.value_schemas.clear()
