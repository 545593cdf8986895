"""Scripted models for the stream guide, and a turn runner.

``GuideScript`` is a pydantic-ai ``FunctionModel`` that plays one step per model request:
an answer (a dict, streamed as the output tool's JSON arguments in small chunks, so the
message arrives token by token), ``Malformed`` JSON, or ``Plain`` text with no structured
output. It keeps the system prompt and messages of every request."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from scholarstream.llm import ResolvedModel
from scholarstream.streams import (
    CreationSession,
    Guide,
    GuideError,
    GuideEvent,
    GuideRetry,
    GuideTextDelta,
    GuideTurnResult,
    ModelGuide,
    UserAction,
    advance,
)

CHUNK = 6


@dataclass(frozen=True)
class Malformed:
    """Output tool arguments that are not valid JSON."""

    raw: str


@dataclass(frozen=True)
class Plain:
    """A text answer with no structured output at all."""

    text: str


Step = Mapping[str, Any] | Malformed | Plain


class GuideScript:
    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.instructions: list[str | None] = []
        self.seen: list[list[ModelMessage]] = []

    async def stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        self.instructions.append(info.instructions)
        self.seen.append(list(messages))
        step = self.steps.pop(0)
        if isinstance(step, Plain):
            yield step.text
            return
        raw = step.raw if isinstance(step, Malformed) else json.dumps(dict(step))
        tool = info.output_tools[0].name
        for i in range(0, len(raw), CHUNK):
            yield {
                0: DeltaToolCall(
                    name=tool if i == 0 else None, json_args=raw[i : i + CHUNK], tool_call_id="o1"
                )
            }

    def model(self) -> FunctionModel:
        return FunctionModel(stream_function=self.stream, model_name="guide-script")

    def guide(self, **kwargs: Any) -> ModelGuide:
        resolved = ResolvedModel("default", "test:guide-script", "test", self.model(), "none")
        return ModelGuide(resolved, **kwargs)

    @property
    def system_prompt(self) -> str:
        """The system prompt of the last request."""
        assert self.instructions and self.instructions[-1] is not None
        return self.instructions[-1]

    @property
    def user_prompt(self) -> str:
        """The user prompt of the last request (the turn's message, action and config)."""
        assert self.seen, "the model was not asked"
        parts = [
            part.content
            for message in self.seen[-1]
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, UserPromptPart) and isinstance(part.content, str)
        ]
        assert parts, "the last request had no user prompt"
        return parts[-1]


def answer(message: str, *, mode: str = "question", **fields: Any) -> dict[str, Any]:
    return {"mode": mode, "message": message, **fields}


@dataclass
class Turn:
    events: list[GuideEvent] = field(default_factory=list)

    @property
    def deltas(self) -> list[str]:
        return [e.text for e in self.events if isinstance(e, GuideTextDelta)]

    @property
    def retries(self) -> list[GuideRetry]:
        return [e for e in self.events if isinstance(e, GuideRetry)]

    @property
    def result(self) -> GuideTurnResult:
        last = self.events[-1]
        assert isinstance(last, GuideTurnResult), f"the turn ended with {last!r}"
        return last

    @property
    def error(self) -> GuideError:
        last = self.events[-1]
        assert isinstance(last, GuideError), f"the turn ended with {last!r}"
        return last

    @property
    def session(self) -> CreationSession:
        return self.result.session


async def run_turn(
    session: CreationSession,
    message: str,
    action: UserAction | None,
    guide: Guide,
    *,
    edits: Mapping[str, object] | None = None,
) -> Turn:
    turn = Turn()
    async for event in advance(session, message, action, guide, edits=edits):
        turn.events.append(event)
    return turn


def at_step(step: str, **config: Any) -> CreationSession:
    """A session at ``step`` with ``config`` entered."""
    return CreationSession.model_validate({"current_step": step, "config": config})


FULL_CONFIG: dict[str, Any] = {
    "purpose": "Track Palatin Technologies' melanocortin programs",
    "business_goals": ["Track competitive landscape"],
    "expected_outcomes": "Go/no-go decisions on our own program",
    "stream_name": "Palatin Pipeline Tracker",
    "stream_type": "competitive",
    "focus_areas": ["Obesity", "Sexual dysfunction"],
    "keywords": ["bremelanotide", "setmelanotide", "melanocortin"],
    "competitors": ["Palatin Technologies"],
    "report_frequency": "weekly",
}
