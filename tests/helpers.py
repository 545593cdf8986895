"""Shared test helpers (not fixtures): run async work against a migrated runtime."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable, Mapping, Sequence

import httpx
import numpy as np
from pydantic_ai.models import Model

from scholarstream.accounts import create_user
from scholarstream.db import OwnerScope
from scholarstream.db.tables import User
from scholarstream.embeddings import Embedder, Vectors, unit_rows
from scholarstream.notify import Notifier
from scholarstream.runtime import Runtime, build_runtime
from scholarstream.settings import Settings


def make_runtime(
    settings: Settings,
    models: Mapping[str, Model] | None = None,
    *,
    source_transport: httpx.AsyncBaseTransport | None = None,
    notifier: Notifier | None = None,
    embedder: Embedder | None = None,
) -> Runtime:
    """A runtime whose literature sources go to ``source_transport``; by default to a
    transport that fails every request, so a test can never reach a real source."""
    return build_runtime(
        settings,
        model_overrides=models,
        source_transport=source_transport or httpx.MockTransport(_no_network),
        notifier=notifier,
        embedder=embedder,
    )


def _no_network(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError(f"tests do not reach the network ({request.url.host})")


PASSWORD = "correct horse battery"


def create_users(settings: Settings, *names: str) -> None:
    """Accounts ``names`` with ``PASSWORD``, from synchronous test code (a runtime of its own)."""

    async def create() -> None:
        runtime = make_runtime(settings)
        try:
            async with runtime.database.session() as session:
                for name in names:
                    await create_user(session, name, PASSWORD)
        finally:
            await runtime.close()

    asyncio.run(create())


async def new_user(runtime: Runtime, name: str | None = None) -> User:
    async with runtime.database.session() as session:
        return await create_user(
            session, name or f"user-{uuid.uuid4().hex[:8]}", "correct horse battery"
        )


def scope_for(session: object, user: User) -> OwnerScope:
    from sqlalchemy.ext.asyncio import AsyncSession

    assert isinstance(session, AsyncSession)
    return OwnerScope(session, user.id)


# What a library's own error text looks like; none of it may reach a user.
LIBRARY_WORDING = (
    "Input should",
    "Value error",
    "errors.pydantic.dev",
    "validation error for",
    "Field required",
    "Extra inputs",
    "dictionary or object",
    "String should",
    "JSON decode error",
    "ValidationError",
    "Traceback",
)


def assert_plain(text: str) -> None:
    """``text`` holds none of a library's own error wording."""
    for words in LIBRARY_WORDING:
        assert words not in text, (words, text)


class ConceptEmbedder:
    """A test embedding model: the words of one concept share a dimension, so two texts that
    share no word can mean the same ("heart attack", "myocardial infarction"); every text
    is a little alike, as with a real model. ``calls`` counts the batches embedded."""

    name = "test-concepts"

    def __init__(self, concepts: Sequence[Iterable[str]]) -> None:
        self.concepts = [frozenset(words) for words in concepts]
        self.dimension = len(self.concepts) + 1
        self.calls = 0

    def _vector(self, text: str) -> Vectors:
        vector = np.zeros(self.dimension, dtype=np.float32)
        vector[-1] = 0.05
        for word in text.lower().replace(".", " ").split():
            for dim, words in enumerate(self.concepts):
                if word in words:
                    vector[dim] += 1.0
        unit: Vectors = unit_rows(vector[None, :])[0]
        return unit

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> Vectors:
        return self._vector(text)


class RecordingEmbedder(ConceptEmbedder):
    """A ``ConceptEmbedder`` that keeps every text it embedded (``texts``)."""

    def __init__(self, concepts: Sequence[Iterable[str]]) -> None:
        super().__init__(concepts)
        self.texts: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.texts += texts
        return super().embed_documents(texts)


class BrokenEmbedder(ConceptEmbedder):
    """An embedding model that cannot run here (a corrupt file, a CPU it does not know)."""

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        raise RuntimeError("the model file is corrupt")
