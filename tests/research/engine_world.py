"""Running research through the real durable engine in tests: scripted models (answer,
fail, hang, wait for each other) in place of the providers, keyed by model string, and
helpers to wait for a research to settle. The engine itself is a module-scoped fixture of
the test files (``conftest.py``): launching one costs seconds."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TypeVar

import pytest
from dbos import DBOS
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import (
    FinishReason,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from scholarstream.bootstrap import build_engine
from scholarstream.research import Research, ResearchService, ResearchStatus
from scholarstream.runtime import Runtime
from tests.research.runtime_parts import research_service

SYNTHESIZER = "google-gla:gemini-2.5-pro"
"""The synthesis model of the tests: not one of ``builders.MODELS``, so its calls count apart."""

SETTLE_TIMEOUT_SEC = 30.0  # a healthy run settles in about a second; this only stops a hang

Behaviour = Callable[[str], Awaitable[str]]
"""What a model does with the prompt it is given: return its answer, or raise."""


def answer(text: str) -> Behaviour:
    async def respond(prompt: str) -> str:
        return text

    return respond


def fail(status_code: int = 500) -> Behaviour:
    async def respond(prompt: str) -> str:
        raise ModelHTTPError(status_code, "scripted", body={"error": "scripted failure"})

    return respond


class _CutText(str):
    """An answer that stopped at its length limit (the provider's finish reason 'length')."""


def cut_off(text: str) -> Behaviour:
    """Answers ``text`` as a model that ran out of its answer budget does."""

    async def respond(prompt: str) -> str:
        return _CutText(text)

    return respond


def hang() -> Behaviour:
    async def respond(prompt: str) -> str:
        await asyncio.Event().wait()  # until the call's timeout cancels it
        raise AssertionError("unreachable")

    return respond


def together(barrier: asyncio.Barrier, text: str) -> Behaviour:
    """Answers only once every party of ``barrier`` is answering: they return together."""

    async def respond(prompt: str) -> str:
        await barrier.wait()
        return text

    return respond


def slowly(seconds: float, text: str, in_flight: InFlight) -> Behaviour:
    async def respond(prompt: str) -> str:
        with in_flight:
            await asyncio.sleep(seconds)
        return text

    return respond


@dataclass
class InFlight:
    """Counts calls running at once."""

    now: int = 0
    most: int = 0

    def __enter__(self) -> None:
        self.now += 1
        self.most = max(self.most, self.now)

    def __exit__(self, *exc: object) -> None:
        self.now -= 1


def _prompt_of(messages: list[ModelMessage]) -> str:
    parts = [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and isinstance(part.content, str)
    ]
    return parts[-1]


@dataclass
class ScriptedModels:
    """One FunctionModel per model string; each call takes the model's next planned
    behaviour (answering ``Answer of <model>`` once the plan is used up)."""

    plans: dict[str, deque[Behaviour]] = field(default_factory=dict)
    calls: Counter[str] = field(default_factory=Counter)
    prompts: dict[str, list[str]] = field(default_factory=dict)

    def plan(self, model: str, *behaviours: Behaviour) -> None:
        self.plans.setdefault(model, deque()).extend(behaviours)

    def reset(self) -> None:
        self.plans.clear()
        self.calls.clear()
        self.prompts.clear()

    def overrides(self, models: Iterable[str], *, default: bool = True) -> dict[str, Model]:
        """Model-string overrides, and ``default`` for any other model string (without
        it, other model strings reach their real provider: a fake server's)."""
        names = [*models, "default"] if default else list(models)
        return {name: self._model(name) for name in names}

    def _model(self, key: str) -> FunctionModel:
        async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            prompt = _prompt_of(messages)
            self.calls[key] += 1
            self.prompts.setdefault(key, []).append(prompt)
            plan = self.plans.get(key)
            behaviour = plan.popleft() if plan else answer(f"Answer of {key}")
            text = await behaviour(prompt)
            finish: FinishReason = "length" if isinstance(text, _CutText) else "stop"
            return ModelResponse(parts=[TextPart(str(text))], finish_reason=finish)

        return FunctionModel(respond, model_name=key)


SETTLED = (ResearchStatus.AWAITING_CONFIRMATION, ResearchStatus.COMPLETED, ResearchStatus.FAILED)


@dataclass
class World:
    """The module's engine, its runtime, the scripted models and a fresh user per test."""

    runtime: Runtime
    models: ScriptedModels
    owner_id: uuid.UUID

    @property
    def service(self) -> ResearchService:
        return research_service(self.runtime)

    async def settled(self, research_id: uuid.UUID, status: ResearchStatus) -> Research:
        """The research once it is ``status``; fails if it settles otherwise."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_SEC
        while True:
            research = await self.service.get(self.owner_id, research_id)
            if research.status == status:
                return research
            if research.status in SETTLED:
                pytest.fail(f"research settled {research.status}, not {status}: {research}")
            if time.monotonic() > deadline:
                pytest.fail(f"research did not become {status}: {research}")
            await asyncio.sleep(0.05)

    async def quiet(self, seconds: float = 0.6) -> None:
        """Give any (wrongly) dispatched work time to run: longer than the queue's poll."""
        await asyncio.sleep(seconds)


T = TypeVar("T")


async def eventually(check: Callable[[], Awaitable[T | None]], what: str) -> T:
    """The first thing ``check`` returns that is not ``None``, polled until
    ``SETTLE_TIMEOUT_SEC`` (work the engine finishes after a research settles: sharing,
    webhook deliveries)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_SEC
    while (found := await check()) is None:
        if time.monotonic() > deadline:
            pytest.fail(f"never happened: {what}")
        await asyncio.sleep(0.05)
    return found


@asynccontextmanager
async def running_engine(runtime: Runtime) -> AsyncIterator[Runtime]:
    """The durable engine launched on ``runtime`` for the block, then the runtime closed.
    DBOS is one instance per process: none may be left over from another test."""
    DBOS.destroy(destroy_registry=False)
    engine = build_engine(runtime)
    try:
        await engine.launch()
        yield runtime
    finally:
        await engine.shutdown()
        DBOS.destroy(destroy_registry=False)
        await runtime.close()
