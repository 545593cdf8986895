"""The AI columns API through the real app (TestClient): create (201, 409, 422), list per
table, edit, delete (404 after), values for up to 100 items with cached ones marked, the
offline answer (503), and privacy between two users in multi-user mode. Runs on SQLite and
PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic_ai.models import Model

from scholarstream.accounts import create_api_token, create_user
from scholarstream.bootstrap import create_app
from scholarstream.db import OwnerScope
from scholarstream.settings import Settings, load_settings
from tests.ai_columns.judge import Judge
from tests.helpers import PASSWORD, create_users, make_runtime

Client = Any  # starlette's TestClient returns its own httpx flavour's Response
Factory = Callable[..., Client]
ORIGIN = {"Origin": "http://127.0.0.1"}  # what our own pages send with a write
URL = "/api/v1/ai-columns"

RCT: dict[str, Any] = {
    "name": "RCT",
    "criteria": "Is it a randomized trial?",
    "output_type": "yes_no",
}
ITEMS: list[dict[str, Any]] = [
    {"key": "a", "title": "A randomized trial of taurine", "abstract": "We randomized 40 dogs."},
    {"key": "b", "title": "Taurine in cats: a survey", "fields": {"year": "2021"}},
]


@pytest.fixture
def clients(db_settings: Settings) -> Iterator[Factory]:
    """Builds TestClients for the app on the given settings and models."""
    started: list[TestClient] = []

    def factory(settings: Settings = db_settings, models: dict[str, Model] | None = None) -> Client:
        runtime = make_runtime(settings, models=models)
        client = TestClient(create_app(runtime), base_url="http://127.0.0.1")
        client.__enter__()
        started.append(client)
        return client

    yield factory
    for client in started:
        client.__exit__(None, None, None)


def post(client: Client, path: str, body: dict[str, Any]) -> Any:
    return client.post(path, json=body, headers=ORIGIN)


def create(client: Client, table: str = "library", **spec: Any) -> Any:
    return post(client, URL, {"table": table, **(spec or RCT)})


def values(client: Client, column_id: str, items: list[dict[str, Any]]) -> Any:
    return post(client, f"{URL}/{column_id}/values", {"items": items})


def test_create_list_edit_delete(clients: Factory, judge: Judge) -> None:
    client = clients(models={"default": judge.model()})
    created = create(client)
    assert created.status_code == 201, created.text
    column = created.json()
    assert {k: column[k] for k in ("table", "name", "output_type", "categories")} == {
        "table": "library",
        "name": "RCT",
        "output_type": "yes_no",
        "categories": None,
    }
    design = create(
        client,
        name="Design",
        criteria="Which design?",
        output_type="category",
        categories=["RCT", "cohort"],
    )
    assert design.status_code == 201, design.text

    listed = client.get(URL, params={"table": "library"}).json()
    assert [c["name"] for c in listed["columns"]] == ["RCT", "Design"]
    assert (listed["can_evaluate"], listed["problem"]) == (True, None)
    assert client.get(URL, params={"table": "trials"}).json()["columns"] == []
    assert client.get(f"{URL}/{column['id']}").json()["criteria"] == RCT["criteria"]

    edited = client.patch(f"{URL}/{column['id']}", json={"criteria": "Randomized?"}, headers=ORIGIN)
    assert edited.status_code == 200, edited.text
    assert (edited.json()["criteria"], edited.json()["name"]) == ("Randomized?", "RCT")

    assert client.delete(f"{URL}/{column['id']}", headers=ORIGIN).status_code == 204
    assert client.get(f"{URL}/{column['id']}").status_code == 404
    assert client.delete(f"{URL}/{column['id']}", headers=ORIGIN).status_code == 404
    assert values(client, column["id"], ITEMS).status_code == 404
    assert [c["name"] for c in client.get(URL, params={"table": "library"}).json()["columns"]] == [
        "Design"
    ]


def test_refusals_say_why(clients: Factory, judge: Judge) -> None:
    client = clients(models={"default": judge.model()})
    column = create(client).json()

    duplicate = create(client)
    assert duplicate.status_code == 409
    assert duplicate.json()["code"] == "conflict"
    assert "already has an AI column named 'RCT'" in duplicate.json()["message"]
    assert create(client, table="trials").status_code == 201, "another table, another column"

    other = create(client, name="Other", criteria="x", output_type="text").json()
    rename = client.patch(f"{URL}/{other['id']}", json={"name": "RCT"}, headers=ORIGIN)
    assert rename.status_code == 409

    no_categories = create(client, name="Design", criteria="Which?", output_type="category")
    assert no_categories.status_code == 422
    assert "at least 2 categories" in no_categories.text
    bad_type = client.patch(
        f"{URL}/{other['id']}", json={"output_type": "category"}, headers=ORIGIN
    )
    assert bad_type.status_code == 422 and bad_type.json()["code"] == "invalid_input"
    assert create(client, table="Not A Key").status_code == 422
    assert client.get(URL, params={"table": "no spaces"}).status_code == 422
    assert client.get(URL).status_code == 422

    too_many = [{"key": str(i), "title": f"Paper {i}"} for i in range(101)]
    refused = values(client, column["id"], too_many)
    assert refused.status_code == 422
    assert any(f["field"] == "items" for f in refused.json()["fields"])
    twice = values(client, column["id"], [ITEMS[0], ITEMS[0]])
    assert twice.status_code == 422 and "appears twice" in twice.text
    huge = values(client, column["id"], [{"key": "x", "title": "t", "abstract": "a" * 20_001}])
    assert huge.status_code == 422
    assert values(client, "not-a-uuid", ITEMS).status_code == 422
    assert judge.titles == [], "nothing refused reached the model"

    hundred = [{"key": str(i), "title": f"Paper {i}"} for i in range(100)]
    assert values(client, column["id"], hundred).status_code == 200


def test_values_are_computed_then_cached(clients: Factory, judge: Judge) -> None:
    client = clients(models={"default": judge.model()})
    column = create(client).json()

    first = values(client, column["id"], ITEMS)
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["column_id"] == column["id"]
    assert [(v["item_key"], v["value"], v["cached"]) for v in body["values"]] == [
        ("a", True, False),
        ("b", False, False),
    ]
    assert body["values"][0]["reason"] == "The title names a trial: A randomized trial of taurine."

    judge.reset()
    again = values(client, column["id"], [*ITEMS, {"key": "c", "title": "A trial in mice"}]).json()
    assert [(v["item_key"], v["value"], v["cached"]) for v in again["values"]] == [
        ("a", True, True),
        ("b", False, True),
        ("c", True, False),
    ]
    assert judge.titles == ["A trial in mice"]

    # An edited criterion: every value is computed again.
    judge.reset()
    client.patch(f"{URL}/{column['id']}", json={"criteria": "About dogs?"}, headers=ORIGIN)
    edited = values(client, column["id"], ITEMS).json()
    assert [v["cached"] for v in edited["values"]] == [False, False]
    assert len(judge.titles) == 2


def test_offline_mode_lists_columns_but_cannot_compute(clients: Factory) -> None:
    client = clients()
    listed = client.get(URL, params={"table": "library"}).json()
    assert listed["can_evaluate"] is False
    assert "offline mode" in listed["problem"]
    column = create(client)
    assert column.status_code == 201, "columns can be set up without a model"
    refused = values(client, column.json()["id"], ITEMS)
    assert refused.status_code == 503
    assert refused.json()["code"] == "offline_mode"
    assert "need a language model" in refused.json()["message"]
    assert "SCHOLARSTREAM_LLM__ROLES__DEFAULT" in refused.json()["hint"]


def _login(client: Client, name: str) -> None:
    response = client.post("/api/v1/auth/login", json={"username": name, "password": PASSWORD})
    assert response.status_code == 200, response.text


def test_columns_and_values_are_private(
    clients: Factory, judge: Judge, data_dir: Path, db_settings: Settings
) -> None:
    settings = load_settings(
        data_dir=data_dir, database_url=db_settings.app_database_url, server={"multi_user": True}
    )
    create_users(settings, "alice", "bob")
    models: dict[str, Model] = {"default": judge.model()}
    alice, bob = clients(settings, models), clients(settings, models)
    assert alice.get(URL, params={"table": "library"}).status_code == 401
    _login(alice, "alice")
    _login(bob, "bob")

    column = create(alice).json()
    assert values(alice, column["id"], ITEMS).status_code == 200
    judge.reset()

    assert bob.get(URL, params={"table": "library"}).json()["columns"] == []
    assert bob.get(f"{URL}/{column['id']}").status_code == 404
    assert values(bob, column["id"], ITEMS).status_code == 404
    patch = bob.patch(f"{URL}/{column['id']}", json={"name": "Mine"}, headers=ORIGIN)
    assert patch.status_code == 404
    assert bob.delete(f"{URL}/{column['id']}", headers=ORIGIN).status_code == 404
    assert judge.titles == []
    # Bob's own column of the same name is his, with values of its own.
    mine = create(bob)
    assert mine.status_code == 201
    fresh = values(bob, mine.json()["id"], ITEMS).json()
    assert [v["cached"] for v in fresh["values"]] == [False, False]
    # A cookie write from another site is refused.
    foreign = bob.post(
        URL, json={"table": "library", **RCT}, headers={"Origin": "http://evil.example"}
    )
    assert foreign.status_code == 403
    assert [c["name"] for c in alice.get(URL, params={"table": "library"}).json()["columns"]] == [
        "RCT"
    ]


def test_values_through_an_api_token(
    clients: Factory, judge: Judge, data_dir: Path, db_settings: Settings
) -> None:
    """A bearer token marks itself used in the request's transaction; the evaluations, each
    in a transaction of its own, must not wait for it (SQLite has one writer at a time)."""
    settings = load_settings(
        data_dir=data_dir, database_url=db_settings.app_database_url, server={"multi_user": True}
    )

    async def make_token() -> str:
        runtime = make_runtime(settings)
        try:
            async with runtime.database.session() as session:
                user = await create_user(session, "carol", PASSWORD)
                _, plaintext = await create_api_token(OwnerScope(session, user.id), "cli")
                return plaintext
        finally:
            await runtime.close()

    token = asyncio.run(make_token())
    client = clients(settings, {"default": judge.model()})
    client.headers["Authorization"] = f"Bearer {token}"
    column = create(client).json()
    answer = values(client, column["id"], ITEMS)
    assert answer.status_code == 200, answer.text
    assert [(v["value"], v["failed"]) for v in answer.json()["values"]] == [
        (True, False),
        (False, False),
    ]
    again = values(client, column["id"], ITEMS).json()
    assert [v["cached"] for v in again["values"]] == [True, True]
