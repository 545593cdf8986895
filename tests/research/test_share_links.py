"""The share link a reader is given (``shareInfo.shareUrl`` in every API answer, and so on
the research's page): on ``server.public_url`` when it is set, else on the address the
request reached the server at (scheme, host and port), never the port the server guessed
when it shared the report (8000 unless configured, whatever port it runs on). Also where a
title came from (``titleSource``), and the model that writes titles (``GET /models``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from scholarstream.accounts import ensure_local_user
from scholarstream.bootstrap import create_app
from scholarstream.db import upgrade
from scholarstream.research import (
    ResearchStatus,
    ResearchStore,
    ShareInfo,
    shared_at,
)
from scholarstream.settings import Settings, load_settings
from tests.helpers import make_runtime
from tests.research.builders import LATER, research, results

TOKEN = "k" * 43
STORED = f"http://127.0.0.1:8000/shared/research/{TOKEN}"  # what the share step wrote


def _settings(data_dir: Path, public_url: str | None) -> Settings:
    settings = load_settings(data_dir=data_dir, server={"public_url": public_url})
    upgrade(settings.app_database_url)
    return settings


def _shared_research(settings: Settings) -> str:
    """A completed research of the single-user mode's user, shared under ``STORED``."""
    shared = research(
        ResearchStatus.COMPLETED,
        llm_results=results("completed"),
        share_info=ShareInfo(
            share_url=STORED, storage_url="memory://x", created_at=LATER, token=TOKEN
        ),
    )

    async def store() -> None:
        runtime = make_runtime(settings)
        try:
            async with runtime.database.session(write=True) as session:
                owner = await ensure_local_user(session)
            await ResearchStore(runtime.database).create(owner.id, shared)
        finally:
            await runtime.close()

    asyncio.run(store())
    return str(shared.id)


@pytest.fixture
def without_public_url(data_dir: Path) -> Iterator[tuple[TestClient, str]]:
    settings = _settings(data_dir, None)
    research_id = _shared_research(settings)
    with TestClient(create_app(make_runtime(settings)), base_url="http://127.0.0.1:8731") as client:
        yield client, research_id


def test_without_public_url_the_link_is_on_the_address_the_reader_used(
    without_public_url: tuple[TestClient, str],
) -> None:
    client, research_id = without_public_url

    read = client.get(f"/api/v1/research/{research_id}")
    listed = client.get("/api/v1/research")

    assert read.status_code == 200, read.text
    expected = f"http://127.0.0.1:8731/shared/research/{TOKEN}"
    assert read.json()["shareInfo"]["shareUrl"] == expected
    assert [r["shareInfo"]["shareUrl"] for r in listed.json()["research"]] == [expected]
    # Reached by another name and port (a single-user server answers loopback names only),
    # the link follows.
    other = client.get(f"/api/v1/research/{research_id}", headers={"host": "localhost:9443"})
    assert other.status_code == 200, other.text
    assert other.json()["shareInfo"]["shareUrl"] == f"http://localhost:9443/shared/research/{TOKEN}"


def test_public_url_names_the_one_address_to_send_people(data_dir: Path) -> None:
    settings = _settings(data_dir, "https://scholar.example.org/app/")
    research_id = _shared_research(settings)
    with TestClient(create_app(make_runtime(settings)), base_url="http://127.0.0.1:8731") as client:
        read = client.get(f"/api/v1/research/{research_id}")

    assert read.json()["shareInfo"]["shareUrl"] == (
        f"https://scholar.example.org/app/shared/research/{TOKEN}"
    )


def test_a_link_stored_without_its_token_keeps_its_path() -> None:
    old = research(
        ResearchStatus.COMPLETED,
        llm_results=results("completed"),
        share_info=ShareInfo(share_url=STORED, storage_url="memory://x", created_at=LATER),
    )
    moved = shared_at(old, "https://example.org:8443/")
    assert moved.share_info is not None
    assert moved.share_info.share_url == f"https://example.org:8443/shared/research/{TOKEN}"
    assert shared_at(research(), "https://example.org") == research()  # nothing shared


def test_titles_say_where_they_came_from_and_who_writes_them(
    without_public_url: tuple[TestClient, str],
) -> None:
    client, _ = without_public_url
    cut = client.post("/api/v1/research/draft", json={"prompt": "Semaglutide and the kidney"})
    typed = client.post(
        "/api/v1/research/draft", json={"prompt": "Semaglutide and the kidney", "title": "Mine"}
    )
    assert cut.status_code == typed.status_code == 201, cut.text
    assert (cut.json()["title"], cut.json()["titleSource"]) == (
        "Semaglutide and the kidney",
        "prompt",
    )
    assert typed.json()["titleSource"] == "user"
    emptied = client.patch(f"/api/v1/research/{typed.json()['id']}", json={"title": ""})
    assert emptied.json()["titleSource"] == "prompt"
    # No model here: no model writes titles, and the form is told so.
    defaults = client.get("/api/v1/research/models").json()
    assert defaults == {"selectedLlms": [], "synthesisLlm": None, "titleModel": None}
