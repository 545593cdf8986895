"""The durable engine for the research tests that need one: launched once per module and
database backend (each launch costs seconds), with scripted models; every test gets a
fresh user and fresh scripts (``world``). Tests using it run on the module's event loop:
``pytestmark = pytest.mark.asyncio(loop_scope="module")``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from scholarstream.db import upgrade
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from tests.conftest import throwaway_postgres_database
from tests.helpers import make_runtime, new_user
from tests.research.builders import MODELS
from tests.research.engine_world import SYNTHESIZER, ScriptedModels, World, running_engine
from tests.web.live import clean_settings

# Server-wide keys: the models of the tests can be called without a user's own key.
PROVIDER_KEYS = {
    "openai": {"api_key": "sk-test-openai-key"},
    "anthropic": {"api_key": "sk-test-anthropic-key"},
    "google": {"api_key": "test-google-key"},
}


def research_settings(
    data_dir: Path,
    database_url: str,
    *,
    timeout_seconds: float = 10.0,
    providers: Mapping[str, Any] = PROVIDER_KEYS,
    research: Mapping[str, Any] | None = None,
    **overrides: Any,
) -> Settings:
    """Settings from nothing but the arguments (no SCHOLARSTREAM_* of the environment);
    ``research`` is laid over the research defaults below, ``overrides`` are sections."""
    return clean_settings(
        data_dir,
        database_url=database_url,
        # A research call ends within the total deadline; here the same as the timeout.
        llm={
            "providers": dict(providers),
            "timeout_seconds": timeout_seconds,
            "deadline_seconds": timeout_seconds,
        },
        # Sharing and titles have their own tests (test_share.py, test_titles.py): here a
        # research ends where it completes, and only its models are called.
        research={"share_reports": False, "title_role": None, **(research or {})},
        # Citations are judged by the offline score: only the research's models are called.
        grounding={"judge_with_model": False, **overrides.pop("grounding", {})},
        **overrides,
    )


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def module_database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    backend: str = request.param
    if backend == "sqlite":
        path = tmp_path_factory.mktemp("research-db") / "scholarstream.sqlite"
        yield f"sqlite+aiosqlite:///{path}"
        return
    server: str = request.getfixturevalue("postgres_server_url")
    with throwaway_postgres_database(server) as url:
        yield url


@pytest.fixture(scope="module")
def module_settings(module_database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    settings = research_settings(tmp_path_factory.mktemp("research-data"), module_database_url)
    upgrade(settings.app_database_url)
    return settings


@pytest.fixture(scope="module")
def scripted_models() -> ScriptedModels:
    return ScriptedModels()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def engine_runtime(
    module_settings: Settings, scripted_models: ScriptedModels
) -> AsyncIterator[Runtime]:
    runtime = make_runtime(
        module_settings, models=scripted_models.overrides([*MODELS, SYNTHESIZER])
    )
    async with running_engine(runtime):
        yield runtime


@pytest_asyncio.fixture(loop_scope="module")
async def world(engine_runtime: Runtime, scripted_models: ScriptedModels) -> World:
    scripted_models.reset()
    user = await new_user(engine_runtime)
    return World(engine_runtime, scripted_models, user.id)
