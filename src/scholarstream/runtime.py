"""The process's shared objects, built once from the settings and handed to the API, the
CLI and the durable workflows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import httpx
from pydantic_ai.models import Model

from scholarstream import __version__
from scholarstream.db import Database
from scholarstream.embeddings import Embedder, shipped_embedder
from scholarstream.llm import CredentialStore, LLMGateway, ModelRegistry
from scholarstream.login_throttle import LoginThrottle
from scholarstream.notify import AppriseNotifier, Notifier, TargetHosts
from scholarstream.secret_box import SecretBox, load_server_secret
from scholarstream.settings import Settings, prepare_data_dir
from scholarstream.sources import SourceHttp, SourceHub
from scholarstream.sources.library import Library


@dataclass
class Runtime:
    settings: Settings
    database: Database
    credentials: CredentialStore
    models: ModelRegistry
    llm: LLMGateway
    sources: SourceHub
    library: Library
    notifier: Notifier
    login_throttle: LoginThrottle

    async def close(self) -> None:
        await self.library.semantic.close()
        await self.sources.http.client.aclose()
        await self.database.dispose()


def _source_client(
    settings: Settings, transport: httpx.AsyncBaseTransport | None
) -> httpx.AsyncClient:
    contact = settings.sources.contact_email
    agent = f"ScholarStream/{__version__}" + (f" (mailto:{contact})" if contact else "")
    return httpx.AsyncClient(
        transport=transport,
        timeout=httpx.Timeout(30.0, connect=10.0),
        headers={"User-Agent": agent},
        follow_redirects=True,
    )


def build_runtime(
    settings: Settings,
    *,
    model_overrides: Mapping[str, Model] | None = None,
    source_transport: httpx.AsyncBaseTransport | None = None,
    notifier: Notifier | None = None,
    embedder: Embedder | None = None,
) -> Runtime:
    """``source_transport`` replaces the network for the literature sources (tests pass an
    ``httpx.MockTransport``); ``notifier`` replaces apprise for notifications; ``embedder``
    replaces the embedding model that ships (used only when semantic search is enabled)."""
    prepare_data_dir(settings)
    credentials = CredentialStore(settings, SecretBox(load_server_secret(settings)))
    models = ModelRegistry(settings, credentials, overrides=model_overrides)
    database = Database(settings.app_database_url)
    return Runtime(
        settings=settings,
        database=database,
        credentials=credentials,
        models=models,
        llm=LLMGateway(settings, models),
        sources=SourceHub(settings.sources, SourceHttp(_source_client(settings, source_transport))),
        library=Library(
            database,
            limits=settings.limits,
            embedder=(embedder or shipped_embedder(settings.semantic.threads))
            if settings.semantic.enabled
            else None,
            embedding_batch=settings.semantic.batch_size,
        ),
        notifier=notifier
        if notifier is not None
        else AppriseNotifier(hosts=TargetHosts.for_server(settings)),
        login_throttle=LoginThrottle.from_settings(settings.server),
    )
