"""What the provider-fault tests share: the provider name that points at the fake server,
and timing helpers read off the requests the server received."""

from __future__ import annotations

import itertools

from tests.fake_openai import FakeOpenAI

FAKE = "fake"
"""A provider name not registered by the product but configured with the fake server's
base URL: an OpenAI-compatible endpoint (model strings ``fake:<model>``)."""


def provider_settings(fake: FakeOpenAI) -> dict[str, dict[str, str]]:
    """``llm.providers`` pointing the ``fake`` provider at the server."""
    return {FAKE: {"base_url": fake.base_url, "api_key": "sk-fake-provider-key"}}


def gaps(fake: FakeOpenAI, model: str) -> list[float]:
    """Seconds between consecutive requests for ``model``, in order."""
    times = [r.at for r in fake.received if r.model == model]
    return [later - earlier for earlier, later in itertools.pairwise(times)]
