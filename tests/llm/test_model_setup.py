"""Models users bring, resolved (issue 22, point 1): the order of the choices (the user's
for the role, the user's default, an admin's server default, the settings), a user's
endpoint as a provider with its capabilities, per-user offline mode, and research's
models."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.models.openai import OpenAIChatModel

from scholarstream.accounts import create_user
from scholarstream.db import OwnerScope, upgrade_async
from scholarstream.errors import OfflineModeError, PermissionDeniedError
from scholarstream.llm import EndpointInput
from scholarstream.research import research_service
from scholarstream.runtime import Runtime
from scholarstream.settings import load_settings
from tests.helpers import make_runtime


async def _runtime(data_dir: Path, **overrides: Any) -> Runtime:
    settings = load_settings(data_dir=data_dir, **overrides)
    await upgrade_async(settings.app_database_url)
    return make_runtime(settings)


async def _user(runtime: Runtime, name: str, *, admin: bool = False) -> uuid.UUID:
    async with runtime.database.session() as session:
        return (await create_user(session, name, "correct horse battery", is_admin=admin)).id


async def _choose(
    runtime: Runtime, owner: uuid.UUID, role: str, model: str, *, server: bool = False
) -> None:
    async with runtime.database.session() as session:
        await runtime.models.choices.set_choice(
            OwnerScope(session, owner), role, model, server_default=server
        )


async def _model_for(runtime: Runtime, owner: uuid.UUID, role: str) -> tuple[str, str]:
    async with runtime.database.session() as session:
        choice = await runtime.models.choice(role, OwnerScope(session, owner))
    assert choice is not None
    return choice.model, choice.source


async def test_choices_resolve_in_order(data_dir: Path) -> None:
    runtime = await _runtime(data_dir, llm={"roles": {"default": "ollama:from-settings"}})
    try:
        admin, ada = await _user(runtime, "root", admin=True), await _user(runtime, "ada")
        assert await _model_for(runtime, ada, "fast") == ("ollama:from-settings", "settings")
        await _choose(runtime, admin, "default", "ollama:server-default", server=True)
        assert await _model_for(runtime, ada, "fast") == ("ollama:server-default", "server default")
        await _choose(runtime, admin, "fast", "ollama:server-fast", server=True)
        assert await _model_for(runtime, ada, "fast") == ("ollama:server-fast", "server default")
        await _choose(runtime, ada, "default", "ollama:ada-default")
        assert await _model_for(runtime, ada, "fast") == ("ollama:ada-default", "user")
        await _choose(runtime, ada, "fast", "ollama:ada-fast")
        assert await _model_for(runtime, ada, "fast") == ("ollama:ada-fast", "user")
        # The admin's own choices are not the server defaults, and the other way round.
        assert await _model_for(runtime, admin, "fast") == ("ollama:server-fast", "server default")
    finally:
        await runtime.close()


async def test_a_choice_ends_offline_mode_for_that_user_only(data_dir: Path) -> None:
    runtime = await _runtime(data_dir)
    try:
        ada, bob = await _user(runtime, "ada"), await _user(runtime, "bob")
        assert runtime.models.offline
        await _choose(runtime, ada, "default", "ollama:qwen2.5")
        assert not await runtime.models.offline_for_owner(runtime.database, ada)
        assert await runtime.models.offline_for_owner(runtime.database, bob)
        async with runtime.database.session() as session:
            resolved = await runtime.models.resolve("fast", OwnerScope(session, ada))
            assert resolved.model_string == "ollama:qwen2.5"
            with pytest.raises(OfflineModeError) as raised:
                await runtime.models.resolve("default", OwnerScope(session, bob))
        assert "Settings" in (raised.value.hint or "")  # where to turn a model on
    finally:
        await runtime.close()


async def test_an_endpoint_is_a_provider_with_its_address_key_and_capabilities(
    data_dir: Path,
) -> None:
    runtime = await _runtime(data_dir)
    try:
        ada = await _user(runtime, "ada")
        async with runtime.database.session() as session:
            scope = OwnerScope(session, ada)
            await runtime.models.choices.save_endpoint(
                scope,
                EndpointInput(
                    name="mylocal",
                    base_url="http://127.0.0.1:8080/v1",
                    api_key="local-secret-1",
                    compact_prompt=False,
                ),
            )
            row = await runtime.models.choices.get_endpoint(scope, "mylocal")
            assert row.key_ciphertext is not None
            assert "local-secret-1" not in row.key_ciphertext  # encrypted at rest
            resolved = await runtime.models.resolve_model_string("mylocal:qwen2.5", scope)
            assert isinstance(resolved.model, OpenAIChatModel)
            assert str(resolved.model.client.base_url).rstrip("/") == "http://127.0.0.1:8080/v1"
            assert resolved.model.client.api_key == "local-secret-1"
            # A local server's default (native), the user's override (no compact prompt).
            assert resolved.capabilities.structured_output == "native"
            assert resolved.capabilities.compact_prompt is False

            # What a check found is used from then on, under the user's overrides.
            await runtime.models.choices.record_endpoint_check(
                row,
                model="mylocal:qwen2.5",
                ok=True,
                detail="all steps passed",
                detected=resolved.capabilities.replace(
                    structured_output="tool", supports_tools=False
                ),
            )
            again = await runtime.models.resolve_model_string("mylocal:qwen2.5", scope)
            assert again.capabilities.structured_output == "tool"
            assert again.capabilities.supports_tools is False
    finally:
        await runtime.close()


async def test_a_server_default_on_an_admins_endpoint_serves_other_users(
    data_dir: Path,
) -> None:
    runtime = await _runtime(data_dir, server={"multi_user": True})
    try:
        admin, ada = await _user(runtime, "root", admin=True), await _user(runtime, "ada")
        async with runtime.database.session() as session:
            await runtime.models.choices.save_endpoint(
                OwnerScope(session, admin),
                EndpointInput(name="lab", base_url="http://10.1.2.3:8000/v1"),
            )
        await _choose(runtime, admin, "default", "lab:llama", server=True)
        async with runtime.database.session() as session:
            scope = OwnerScope(session, ada)
            resolved = await runtime.models.resolve("default", scope)
            assert isinstance(resolved.model, OpenAIChatModel)
            assert "10.1.2.3" in str(resolved.model.client.base_url)
            # Named outside a role (multi-LLM research), the same model resolves too.
            assert await runtime.models.can_call(scope, "lab:llama")
            # Ada herself may not put an endpoint on the server's network.
            with pytest.raises(PermissionDeniedError):
                await runtime.models.choices.save_endpoint(
                    scope, EndpointInput(name="mine", base_url="http://10.1.2.3:8000/v1")
                )
    finally:
        await runtime.close()


async def test_research_offers_the_users_models(data_dir: Path) -> None:
    runtime = await _runtime(data_dir)
    try:
        ada = await _user(runtime, "ada")
        service = research_service(runtime)
        assert await service.available_models(ada) == []
        async with runtime.database.session() as session:
            scope = OwnerScope(session, ada)
            await runtime.models.choices.save_endpoint(
                scope, EndpointInput(name="mylocal", base_url="http://127.0.0.1:8080/v1")
            )
            row = await runtime.models.choices.get_endpoint(scope, "mylocal")
            await runtime.models.choices.record_endpoint_check(
                row, model="mylocal:checked", ok=True, detail="ok", detected=None
            )
        await _choose(runtime, ada, "default", "ollama:qwen2.5")
        await _choose(runtime, ada, "synthesis", "mylocal:big")
        available = await service.available_models(ada)
        assert set(available) == {"ollama:qwen2.5", "mylocal:big", "mylocal:checked"}
        assert await service.synthesis_model(ada) == "mylocal:big"
    finally:
        await runtime.close()
