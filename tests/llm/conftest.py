"""The fake OpenAI-compatible provider of the fault tests: one server per module on
loopback, forgotten between tests, and real model requests allowed while a test runs
(they can only reach loopback: tests/conftest.py guards every socket)."""

from __future__ import annotations

from collections.abc import Iterator

import pydantic_ai.models
import pytest

from tests.fake_openai import FakeOpenAI, fake_openai


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeOpenAI]:
    with fake_openai() as fake:
        yield fake


@pytest.fixture
def fake(fake_server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    """The module's fake provider with no scripts and no requests yet; the product's real
    client stack (pydantic-ai's OpenAI model, the openai SDK, httpx) may call it."""
    fake_server.reset()
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    return fake_server
