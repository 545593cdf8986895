"""The research service without the durable engine, on each backend: drafts take their
defaults from the configured models this user has a key for, drafts are edited and read
back by their owner only, and nothing starts while no engine could run the calls."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from scholarstream.db import OwnerScope
from scholarstream.errors import EngineError, NotFoundError
from scholarstream.research import DraftEdit, DraftRequest, ResearchStatus
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings, load_settings
from tests.helpers import make_runtime, new_user
from tests.research.builders import ANTHROPIC, GOOGLE, OPENAI
from tests.research.runtime_parts import research_service


@pytest.fixture
async def runtime(data_dir: Path, db_settings: Settings) -> AsyncIterator[Runtime]:
    settings = load_settings(
        data_dir=data_dir,
        database_url=db_settings.database_url,
        llm={
            "roles": {
                "default": OPENAI,
                "fast": GOOGLE,
                "synthesis": ANTHROPIC,
                "triage": "mystery:model",
            },
            "providers": {
                "openai": {"api_key": "sk-test-openai-key"},
                "anthropic": {"api_key": "sk-test-anthropic-key"},
            },
        },
    )
    runtime = make_runtime(settings)
    yield runtime
    await runtime.close()


async def test_a_draft_defaults_to_the_configured_models_the_user_can_call(
    runtime: Runtime,
) -> None:
    service = research_service(runtime)
    user = await new_user(runtime)
    # No key for Google, and no provider 'mystery': neither model is offered.
    assert await service.available_models(user.id) == [OPENAI, ANTHROPIC]
    draft = await service.draft(user.id, DraftRequest(prompt="Semaglutide and NASH"))
    assert draft.status == ResearchStatus.DRAFT
    assert (draft.selected_llms, draft.synthesis_llm) == ([OPENAI, ANTHROPIC], ANTHROPIC)
    assert draft.title == "Semaglutide and NASH"

    async with runtime.database.session() as session:
        await runtime.credentials.store_user_key(
            OwnerScope(session, user.id), "google", "google-user-key-123"
        )
    assert await service.available_models(user.id) == [OPENAI, GOOGLE, ANTHROPIC]


async def test_drafts_are_edited_and_read_by_their_owner_only(runtime: Runtime) -> None:
    service = research_service(runtime)
    alice, bob = await new_user(runtime), await new_user(runtime)
    draft = await service.draft(
        alice.id, DraftRequest(prompt="Semaglutide and NASH", selected_llms=[OPENAI])
    )
    edited = await service.edit(alice.id, draft.id, DraftEdit(prompt="Tirzepatide and NASH"))
    assert (edited.prompt, edited.title) == ("Tirzepatide and NASH", "Tirzepatide and NASH")
    assert await service.get(alice.id, draft.id) == edited
    assert [r.id for r in await service.list(alice.id)] == [draft.id]
    assert await service.list(bob.id) == []
    with pytest.raises(NotFoundError):
        await service.get(bob.id, draft.id)
    with pytest.raises(NotFoundError):
        await service.edit(bob.id, draft.id, DraftEdit(prompt="Mine now"))


async def test_nothing_starts_without_the_durable_engine(runtime: Runtime) -> None:
    service = research_service(runtime)
    user = await new_user(runtime)
    draft = await service.draft(
        user.id, DraftRequest(prompt="Semaglutide and NASH", selected_llms=[OPENAI])
    )
    with pytest.raises(EngineError) as caught:
        await service.start(user.id, draft.id)
    assert caught.value.hint is not None and "scholarstream serve" in caught.value.hint
    assert (await service.get(user.id, draft.id)).status == ResearchStatus.DRAFT
    assert await service.events(user.id, draft.id) == []
