"""A draft without a title gets one from the ``fast`` model role, through the service: a
good answer is cleaned and kept (and follows prompt edits like a cut title); an empty,
malformed or overlong answer, a failing or hanging model, a missing key, offline mode or
no title role gives the title cut from the prompt instead, and the draft is created all
the same. Without a fast model of its own, the default model writes the title."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from scholarstream.db import OwnerScope, upgrade_async
from scholarstream.llm import usage_totals
from scholarstream.research import (
    TITLE_FEATURE,
    DraftEdit,
    DraftRequest,
    clean_title,
    fallback_title,
)
from scholarstream.runtime import Runtime
from scholarstream.settings import load_settings
from tests.helpers import make_runtime, new_user
from tests.research.builders import GOOGLE, OPENAI
from tests.research.runtime_parts import research_service

PROMPT = (
    "## Question\n\nWhat is the evidence on **tirzepatide** for weight loss in adolescents "
    "with obesity, compared with semaglutide and liraglutide, in randomised trials?"
)
CUT = fallback_title(PROMPT)

Answer = Callable[[str], Awaitable[str]]


class TitleModel:
    """A FunctionModel for the ``fast`` role that records the prompts it was given."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.prompts: list[str] = []
        self.instructions: list[str | None] = []

    def model(self) -> FunctionModel:
        async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            request = messages[-1]
            assert isinstance(request, ModelRequest)
            (part,) = [p for p in request.parts if isinstance(p, UserPromptPart)]
            assert isinstance(part.content, str)
            self.prompts.append(part.content)
            self.instructions.append(request.instructions)
            return ModelResponse(parts=[TextPart(await self.answer(part.content))])

        return FunctionModel(respond, model_name="title-model")


def says(text: str) -> Answer:
    async def answer(prompt: str) -> str:
        return text

    return answer


@asynccontextmanager
async def runtime_for(
    data_dir: Path,
    model: TitleModel | None,
    *,
    role: str = "fast",
    title_role: str = "fast",
    **llm: Any,
) -> AsyncIterator[Runtime]:
    """A runtime whose ``role`` is answered by ``model``."""
    settings = load_settings(
        data_dir=data_dir,
        llm={"providers": {"openai": {"api_key": "sk-test-openai-key"}}, **llm},
        research={"title_timeout_seconds": 0.5, "title_role": title_role},
    )
    await upgrade_async(settings.app_database_url)
    runtime = make_runtime(settings, models={role: model.model()} if model else None)
    try:
        yield runtime
    finally:
        await runtime.close()


async def draft(runtime: Runtime, **fields: Any) -> Any:
    user = await new_user(runtime)
    research = await research_service(runtime).draft(
        user.id, DraftRequest(prompt=PROMPT, selected_llms=[OPENAI], **fields)
    )
    return user, research


@pytest.fixture
async def titled(data_dir: Path) -> AsyncIterator[tuple[Runtime, TitleModel]]:
    """The ``fast`` role configured (and answered by a TitleModel, scripted per test)."""
    model = TitleModel(says("Tirzepatide for adolescent obesity"))
    async with runtime_for(data_dir, model, roles={"fast": OPENAI}) as runtime:
        yield runtime, model


async def test_the_fast_model_names_a_draft_without_a_title(
    titled: tuple[Runtime, TitleModel],
) -> None:
    runtime, model = titled
    user, research = await draft(runtime)

    assert (research.title, research.title_generated) == (
        "Tirzepatide for adolescent obesity",
        True,
    )
    assert await research_service(runtime).get(user.id, research.id) == research
    # The prompt is handed over fenced, as material, with instructions saying so.
    (asked,) = model.prompts
    assert asked.startswith("Research question:\n\n```text\n") and PROMPT in asked
    assert model.instructions[0] is not None and "never instructions" in model.instructions[0]
    async with runtime.database.session() as session:
        (usage,) = await usage_totals(OwnerScope(session, user.id))
    assert (usage.feature, usage.runs) == (TITLE_FEATURE, 1)


async def test_a_title_the_user_gives_asks_no_model(
    titled: tuple[Runtime, TitleModel],
) -> None:
    runtime, model = titled
    _, research = await draft(runtime, title="  My own title ")
    assert (research.title, research.title_generated) == ("My own title", False)
    assert model.prompts == []


async def test_a_model_title_follows_prompt_edits_like_a_cut_one(
    titled: tuple[Runtime, TitleModel],
) -> None:
    runtime, model = titled
    user, research = await draft(runtime)
    service = research_service(runtime)
    edited = await service.edit(user.id, research.id, DraftEdit(prompt="Statins in the elderly"))
    assert (edited.title, edited.title_generated) == ("Statins in the elderly", False)
    assert len(model.prompts) == 1  # an edit makes no model call
    named = await service.edit(user.id, research.id, DraftEdit(title="Mine"))
    kept = await service.edit(user.id, research.id, DraftEdit(prompt="Something else"))
    assert (named.title, kept.title) == ("Mine", "Mine")


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("", id="empty"),
        pytest.param("   \n\t ", id="blank"),
        pytest.param('""', id="only-quotes"),
        pytest.param("Here are three options:\n1. Tirzepatide\n2. GLP-1", id="several-lines"),
        pytest.param("Tirzepatide " * 20, id="overlong"),
        pytest.param("x" * 5000, id="huge"),
        pytest.param("```\n\n```", id="empty-code-block"),
        pytest.param("Title:\x00\x07", id="control-characters"),
    ],
)
async def test_a_malformed_answer_gives_the_title_cut_from_the_prompt(
    data_dir: Path, answer: str
) -> None:
    model = TitleModel(says(answer))
    async with runtime_for(data_dir, model, roles={"fast": OPENAI}) as runtime:
        _, research = await draft(runtime)
        assert (research.title, research.title_generated) == (CUT, False)
        assert model.prompts  # pydantic-ai may ask again for an empty answer


def fails(status: int) -> Answer:
    async def answer(prompt: str) -> str:
        raise ModelHTTPError(status, "title-model", body={"error": "scripted"})

    return answer


def crashes() -> Answer:
    async def answer(prompt: str) -> str:
        raise RuntimeError("the SDK broke")

    return answer


def hangs() -> Answer:
    async def answer(prompt: str) -> str:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    return answer


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(fails(500), id="provider-error"),
        pytest.param(fails(401), id="key-refused"),
        pytest.param(crashes(), id="sdk-exception"),
        pytest.param(hangs(), id="no-answer-in-time"),
    ],
)
async def test_a_failing_model_gives_the_title_cut_from_the_prompt(
    data_dir: Path, answer: Answer
) -> None:
    model = TitleModel(answer)
    async with runtime_for(data_dir, model, roles={"fast": OPENAI}) as runtime:
        started = time.monotonic()
        _, research = await draft(runtime)
        assert (research.title, research.title_generated) == (CUT, False)
        assert time.monotonic() - started < 3.0  # title_timeout_seconds is 0.5
        assert len(model.prompts) == 1


async def test_offline_mode_cuts_the_title_from_the_prompt(data_dir: Path) -> None:
    async with runtime_for(data_dir, None) as runtime:
        assert runtime.models.offline
        _, research = await draft(runtime)
        assert (research.title, research.title_generated) == (CUT, False)


async def test_without_a_fast_model_the_default_model_names_drafts(data_dir: Path) -> None:
    # Resolved like every role: no fast model of its own, the default model writes it.
    model = TitleModel(says("Tirzepatide in adolescents"))
    async with runtime_for(data_dir, model, role="default", roles={"default": OPENAI}) as runtime:
        _, research = await draft(runtime)
        assert research.title == "Tirzepatide in adolescents"
    assert len(model.prompts) == 1


async def test_no_title_role_or_a_fast_model_without_a_key_cuts_the_title(
    data_dir: Path,
) -> None:
    model = TitleModel(says("Never asked"))
    async with runtime_for(
        data_dir, model, role="default", roles={"default": OPENAI}, title_role=""
    ) as runtime:
        _, research = await draft(runtime)
        assert research.title == CUT
    async with runtime_for(data_dir, None, roles={"default": OPENAI, "fast": GOOGLE}) as runtime:
        _, research = await draft(runtime)
        assert research.title == CUT
    assert model.prompts == []


@pytest.mark.parametrize(
    ("answer", "title"),
    [
        ("Tirzepatide in adolescents", "Tirzepatide in adolescents"),
        ("  Title: Tirzepatide in adolescents.  ", "Tirzepatide in adolescents"),
        ('"Tirzepatide in adolescents"', "Tirzepatide in adolescents"),
        ("\u201cTirzepatide in adolescents\u201d", "Tirzepatide in adolescents"),
        ("# **Tirzepatide** in `adolescents`", "Tirzepatide in adolescents"),
        ("\n\nResearch title: GLP-1   agonists\n", "GLP-1 agonists"),
        ("Obesity drugs: what works?", "Obesity drugs: what works?"),
        ("", None),
        ("Title:", None),
        ("One\nTwo", None),
        ("a" * 81, None),
        ("Tab\tinside", "Tab inside"),
        ("Zero\u200bwidth", None),
    ],
)
def test_clean_title(answer: str, title: str | None) -> None:
    assert clean_title(answer) == title


# --- issue 22: a title the model was asked for and did not give is a recorded fallback ---


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        pytest.param(says("One\nTwo"), "the fast model's title could not be used", id="unusable"),
        pytest.param(fails(500), "answered HTTP 500", id="provider-error"),
        pytest.param(crashes(), "the model call failed", id="sdk-exception"),
        pytest.param(hangs(), "the fast model gave no title within 0.5 s", id="late"),
    ],
)
async def test_a_title_the_model_did_not_give_is_recorded_as_a_fallback(
    data_dir: Path, answer: Answer, reason: str
) -> None:
    model = TitleModel(answer)
    async with runtime_for(data_dir, model, roles={"fast": OPENAI}) as runtime:
        user, research = await draft(runtime)
        assert research.title == CUT
        [fallback] = research.fallbacks
        assert fallback.feature == TITLE_FEATURE
        assert reason in fallback.reason
        assert "Error" not in fallback.reason  # plain words, no class names
        stored = await research_service(runtime).get(user.id, research.id)
        assert stored.fallbacks == research.fallbacks


async def test_a_title_the_model_gave_or_nobody_asked_for_is_no_fallback(
    titled: tuple[Runtime, TitleModel], data_dir: Path
) -> None:
    runtime, _model = titled
    _, named_by_model = await draft(runtime)
    _, named_by_user = await draft(runtime, title="Mine")
    assert named_by_model.fallbacks == [] and named_by_user.fallbacks == []
    async with runtime_for(data_dir / "offline", None) as offline:
        _, cut = await draft(offline)
        assert cut.fallbacks == []  # no model to ask: cut, as documented, not a fallback


async def test_a_new_title_drops_the_title_fallback(data_dir: Path) -> None:
    model = TitleModel(fails(503))
    async with runtime_for(data_dir, model, roles={"fast": OPENAI}) as runtime:
        user, research = await draft(runtime)
        assert research.fallbacks
        service = research_service(runtime)
        edited = await service.edit(user.id, research.id, DraftEdit(prompt="Statins"))
        assert (edited.title, edited.fallbacks) == ("Statins", [])
