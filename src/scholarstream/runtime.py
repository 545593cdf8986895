"""The process's shared objects, built once from the settings and handed to the API, the
CLI and the durable workflows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic_ai.models import Model

from scholarstream.db.session import Database
from scholarstream.llm import CredentialStore, LLMGateway, ModelRegistry
from scholarstream.secret_box import SecretBox, load_server_secret
from scholarstream.settings import Settings


@dataclass
class Runtime:
    settings: Settings
    database: Database
    credentials: CredentialStore
    models: ModelRegistry
    llm: LLMGateway

    async def close(self) -> None:
        await self.database.dispose()


def build_runtime(
    settings: Settings, *, model_overrides: Mapping[str, Model] | None = None
) -> Runtime:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    credentials = CredentialStore(settings, SecretBox(load_server_secret(settings)))
    models = ModelRegistry(settings, credentials, overrides=model_overrides)
    return Runtime(
        settings=settings,
        database=Database(settings.app_database_url),
        credentials=credentials,
        models=models,
        llm=LLMGateway(settings, models),
    )
