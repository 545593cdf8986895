from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.test import TestModel
from sqlalchemy import select

from scholarstream.db import OwnerScope
from scholarstream.db.tables import LLMUsage, ProviderKey
from scholarstream.errors import (
    ConfigurationError,
    InvalidInputError,
    LLMError,
    MissingCredentialsError,
    OfflineModeError,
    UnknownProviderError,
)
from scholarstream.llm import split_model_string, usage_totals
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings, load_settings
from tests.helpers import make_runtime, new_user


def _settings(data_dir: Path, db_settings: Settings, **overrides: Any) -> Settings:
    return load_settings(data_dir=data_dir, database_url=db_settings.app_database_url, **overrides)


@pytest.fixture
async def offline(db_settings: Settings) -> AsyncIterator[Runtime]:
    runtime = make_runtime(db_settings)
    yield runtime
    await runtime.close()


@pytest.fixture
async def configured(data_dir: Path, db_settings: Settings) -> AsyncIterator[Runtime]:
    settings = _settings(
        data_dir,
        db_settings,
        llm={
            "roles": {"default": "openai:gpt-4.1-mini", "synthesis": "anthropic:claude-sonnet-4-5"},
            "providers": {"openai": {"api_key": "sk-server-openai-key"}},
        },
    )
    runtime = make_runtime(settings)
    yield runtime
    await runtime.close()


def test_model_strings_name_their_provider() -> None:
    assert split_model_string("openai:gpt-4.1-mini") == ("openai", "gpt-4.1-mini")
    assert split_model_string("google-gla:gemini-2.5-flash") == ("google", "gemini-2.5-flash")
    assert split_model_string("openrouter:anthropic/claude-3.5") == (
        "openrouter",
        "anthropic/claude-3.5",
    )
    for bad in ("gpt-4", ":x", "openai:"):
        with pytest.raises(UnknownProviderError, match="provider:model"):
            split_model_string(bad)


async def test_offline_mode_says_what_to_configure(offline: Runtime) -> None:
    assert offline.models.offline
    with pytest.raises(OfflineModeError) as caught:
        await offline.models.resolve("default", None)
    assert "offline mode" in caught.value.message
    assert caught.value.hint is not None
    assert "SCHOLARSTREAM_LLM__ROLES__DEFAULT" in caught.value.hint
    statuses = {s.role: s for s in await offline.models.status(None)}
    assert set(statuses) >= {"default", "fast", "synthesis"}
    assert not statuses["default"].ready


async def test_roles_fall_back_to_default_and_build_real_models(configured: Runtime) -> None:
    assert not configured.models.offline
    fast = await configured.models.resolve("fast", None)
    assert fast.model_string == "openai:gpt-4.1-mini"
    assert isinstance(fast.model, OpenAIChatModel)
    assert fast.credential_source == "server"
    with pytest.raises(MissingCredentialsError) as caught:
        await configured.models.resolve("synthesis", None)
    assert "Anthropic" in caught.value.message
    assert caught.value.hint is not None
    assert "ANTHROPIC" in caught.value.hint
    statuses = {s.role: s for s in await configured.models.status(None)}
    assert statuses["default"].ready
    assert not statuses["synthesis"].ready


async def test_every_provider_builds_without_the_network(configured: Runtime) -> None:
    user = await new_user(configured)
    async with configured.database.session() as session:
        scope = OwnerScope(session, user.id)
        await configured.credentials.store_user_key(scope, "anthropic", "anthropic-user-key-1")
        await configured.credentials.store_user_key(scope, "google", "google-user-key-123")
        anthropic = await configured.models.resolve_model_string(
            "anthropic:claude-sonnet-4-5", scope
        )
        google = await configured.models.resolve_model_string("google-gla:gemini-2.5-flash", scope)
        ollama = await configured.models.resolve_model_string("ollama:llama3.1", scope)
    assert isinstance(anthropic.model, AnthropicModel)
    assert isinstance(google.model, GoogleModel)
    assert isinstance(ollama.model, OpenAIChatModel)
    assert ollama.credential_source == "none"
    assert "11434" in str(ollama.model.base_url)


async def test_openai_compatible_endpoint_by_configuration(
    data_dir: Path, db_settings: Settings
) -> None:
    settings = _settings(
        data_dir, db_settings, llm={"providers": {"vllm": {"base_url": "http://127.0.0.1:9000/v1"}}}
    )
    runtime = make_runtime(settings)
    try:
        resolved = await runtime.models.resolve_model_string("vllm:meta-llama/Llama-3.1-8B", None)
        assert isinstance(resolved.model, OpenAIChatModel)
        assert "127.0.0.1:9000" in str(resolved.model.base_url)
        with pytest.raises(UnknownProviderError, match="Unknown model provider 'mystery'"):
            await runtime.models.resolve_model_string("mystery:model", None)
    finally:
        await runtime.close()


async def test_user_key_wins_and_is_encrypted_at_rest(configured: Runtime) -> None:
    user = await new_user(configured)
    async with configured.database.session() as session:
        scope = OwnerScope(session, user.id)
        await configured.credentials.store_user_key(scope, "openai", "sk-user-own-key-999")
        resolved = await configured.credentials.resolve(scope, "openai")
        assert (resolved.api_key, resolved.source) == ("sk-user-own-key-999", "user")
        row = await session.scalar(select(ProviderKey))
        assert row is not None
        assert "sk-user-own-key-999" not in row.ciphertext
        assert [k.provider for k in await configured.credentials.list_user_keys(scope)] == [
            "openai"
        ]
        with pytest.raises(InvalidInputError):
            await configured.credentials.store_user_key(scope, "openai", "has space in it")
        await configured.credentials.delete_user_key(scope, "openai")
        server = await configured.credentials.resolve(scope, "openai")
        assert (server.api_key, server.source) == ("sk-server-openai-key", "server")


async def test_keys_of_one_user_are_invisible_to_another(configured: Runtime) -> None:
    alice, bob = await new_user(configured), await new_user(configured)
    async with configured.database.session() as session:
        await configured.credentials.store_user_key(
            OwnerScope(session, alice.id), "anthropic", "alice-anthropic-key"
        )
    async with configured.database.session() as session:
        bob_scope = OwnerScope(session, bob.id)
        assert await configured.credentials.list_user_keys(bob_scope) == []
        with pytest.raises(MissingCredentialsError):
            await configured.credentials.resolve(bob_scope, "anthropic")


async def test_changed_server_secret_is_reported(
    data_dir: Path, db_settings: Settings, configured: Runtime
) -> None:
    user = await new_user(configured)
    async with configured.database.session() as session:
        await configured.credentials.store_user_key(
            OwnerScope(session, user.id), "openai", "sk-user-key-abc"
        )
    other = make_runtime(
        _settings(data_dir, db_settings, server={"secret_key": "a different secret"})
    )
    try:
        async with other.database.session() as session:
            with pytest.raises(ConfigurationError, match="cannot be decrypted"):
                await other.credentials.resolve(OwnerScope(session, user.id), "openai")
    finally:
        await other.close()


class Verdict(BaseModel):
    relevant: bool
    reason: str


async def test_gateway_runs_a_test_model_and_records_usage(
    data_dir: Path, db_settings: Settings
) -> None:
    settings = _settings(
        data_dir,
        db_settings,
        llm={"prices": {"test:test": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}},
    )
    runtime = make_runtime(settings, models={"default": TestModel()})
    try:
        user = await new_user(runtime)
        agent = Agent(output_type=Verdict)
        async with runtime.database.session() as session:
            scope = OwnerScope(session, user.id)
            result = await runtime.llm.run(
                agent, "Is this paper relevant?", scope=scope, feature="screening"
            )
            assert isinstance(result.output, Verdict)
        async with runtime.database.session() as session:
            (row,) = (await session.scalars(select(LLMUsage))).all()
            assert (row.owner_id, row.feature, row.model, row.role) == (
                user.id,
                "screening",
                "test:test",
                "default",
            )
            assert row.input_tokens > 0
            assert row.output_tokens > 0
            expected = (Decimal(row.input_tokens) + 2 * Decimal(row.output_tokens)) / Decimal(
                1_000_000
            )
            assert row.cost_usd is not None
            assert abs(row.cost_usd - expected) < Decimal("0.000001")
            (total,) = await usage_totals(OwnerScope(session, user.id))
            assert (total.runs, total.input_tokens) == (1, row.input_tokens)
            other = await new_user(runtime)
            assert await usage_totals(OwnerScope(session, other.id)) == []
    finally:
        await runtime.close()


def test_known_model_prices_come_from_the_price_table(data_dir: Path) -> None:
    from pydantic_ai.usage import RunUsage

    from scholarstream.llm import estimate_cost

    settings = load_settings(data_dir=data_dir)
    cost = estimate_cost(
        settings, "openai:gpt-4.1-mini", RunUsage(input_tokens=1000, output_tokens=500)
    )
    assert cost is not None
    assert cost > 0
    assert estimate_cost(settings, "ollama:nobody-knows-this", RunUsage(input_tokens=10)) is None


async def test_provider_failures_become_llm_errors_with_hints(db_settings: Settings) -> None:
    def refuse(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ModelHTTPError(status_code=429, model_name="scripted", body="slow down")

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("fine")])

    runtime = make_runtime(
        db_settings, models={"default": FunctionModel(refuse), "fast": FunctionModel(answer)}
    )
    try:
        user = await new_user(runtime)
        async with runtime.database.session() as session:
            scope = OwnerScope(session, user.id)
            with pytest.raises(LLMError) as caught:
                await runtime.llm.run(Agent(), "hi", scope=scope, feature="chat")
            assert "429" in caught.value.message
            assert caught.value.hint is not None
            assert "rate-limiting" in caught.value.hint
            ok = await runtime.llm.run(Agent(), "hi", scope=scope, feature="chat", role="fast")
            assert ok.output == "fine"
    finally:
        await runtime.close()


async def test_built_models_are_reused_while_the_credential_stays_the_same(
    configured: Runtime,
) -> None:
    user = await new_user(configured)
    first = await configured.models.resolve("default", None)
    again = await configured.models.resolve("fast", None)
    assert again.model is first.model  # same provider, model and server key: built once
    assert again.role == "fast"
    async with configured.database.session() as session:
        scope = OwnerScope(session, user.id)
        await configured.credentials.store_user_key(scope, "openai", "sk-user-own-key-999")
        own = await configured.models.resolve("default", scope)
        assert own.credential_source == "user"
        assert own.model is not first.model  # the user's key gets its own model
        await configured.credentials.store_user_key(scope, "openai", "sk-user-new-key-000")
        changed = await configured.models.resolve("default", scope)
        assert changed.model is not own.model  # a changed key never finds the old model
        assert isinstance(changed.model, OpenAIChatModel)
        assert changed.model.client.api_key == "sk-user-new-key-000"
        await configured.credentials.delete_user_key(scope, "openai")
        server = await configured.models.resolve("default", scope)
        assert (server.credential_source, server.model) == ("server", first.model)


async def test_the_model_cache_is_bounded_and_per_event_loop() -> None:
    from scholarstream.llm import Credential
    from scholarstream.llm._model_cache import ModelCache

    built: list[str] = []

    def build(name: str, credential: Credential) -> Any:
        built.append(name)
        return TestModel(custom_output_text=f"{name}:{credential.api_key}")

    cache = ModelCache(size=2)
    key = Credential("k1", None, "server")
    a = cache.get(build, "p", "a", key)
    assert cache.get(build, "p", "a", key) is a
    assert cache.get(build, "p", "a", Credential("k2", None, "user")) is not a
    cache.get(build, "p", "b", key)  # three entries for two places: "a" with k1 goes
    assert cache.get(build, "p", "a", key) is not a
    assert built == ["a", "a", "b", "a"]

    async def elsewhere() -> Any:
        return cache.get(build, "p", "b", key)

    import asyncio
    import threading

    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(asyncio.run(elsewhere())))
    thread.start()
    thread.join()
    assert built[-1] == "b" and len(built) == 5  # another loop builds its own
