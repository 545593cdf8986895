"""``POST /api/v1/evidence``: the evidence pack for a question and what was searched, with
no model configured and with a source failing (recorded answers, no network)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.api.conftest import ClientFactory
from tests.conftest import SHARED_DATA
from tests.helpers import assert_plain
from tests.search.world import QUESTION, LiteratureWorld

WOS = SHARED_DATA / "exports" / "asysd_testthat" / "wos_test.ris"  # 50 papers on cocker spaniels


def evidence(client: TestClient, **body: Any) -> Any:
    return client.post("/api/v1/evidence", json=body)


def test_a_library_and_a_failing_source_give_a_pack(make_client: ClientFactory) -> None:
    world = LiteratureWorld(failing={"semantic_scholar"})
    client = make_client(source_transport=world.transport())
    imported = client.post(
        "/api/v1/library/imports",
        files={"file": ("wos.ris", WOS.read_bytes())},
        headers={"Origin": "http://127.0.0.1"},
    )
    assert imported.status_code == 201, imported.text

    response = evidence(
        client,
        question="primary cataract in cocker spaniels",
        size=5,
        sources=["semantic_scholar"],
    )

    assert response.status_code == 200, response.text
    body = response.json()
    items = body["pack"]["items"]
    assert [item["key"] for item in items] == [1, 2, 3, 4, 5]
    assert "cataract" in items[0]["paper"]["title"].lower()
    assert {item["origin"] for item in items} == {"library"}
    assert body["found_in"][0] == {"key": 1, "sources": ["library"]}
    search = body["search"]
    assert search["scored_by"] == "rules"  # no model is configured
    assert {q["source"] for q in search["queries"]} == {"semantic_scholar", "library"}
    by_name = {s["source"]: s for s in search["sources"]}
    assert by_name["library"]["ok"] and by_name["library"]["in_pack"] == 5
    failed = by_name["semantic_scholar"]
    assert not failed["ok"] and failed["error_code"] == "source_credentials"
    assert failed["error"] and failed["hint"]
    assert world.searched("semantic_scholar")


def test_sources_only(make_client: ClientFactory) -> None:
    client = make_client(source_transport=LiteratureWorld().transport())
    response = evidence(client, question=QUESTION, sources=["pubmed"], library=False, size=3)
    assert response.status_code == 200, response.text
    body = response.json()
    assert len(body["pack"]["items"]) == 3
    assert [s["source"] for s in body["search"]["sources"]] == ["pubmed"]


def test_bad_requests_are_refused_in_plain_words(client: TestClient) -> None:
    refused: list[tuple[dict[str, Any], str, str]] = [
        ({"question": "  "}, "question", "question is empty"),
        ({"question": "x", "size": 0}, "size", "at least 1"),
        ({"question": "x", "size": "many"}, "size", "whole number"),
        ({"question": "x", "sources": []}, "sources", "sources"),
        ({"size": 3}, "question", "required"),
    ]
    for body, field, words in refused:
        response = evidence(client, **body)
        assert response.status_code == 422, (body, response.text)
        error = response.json()
        assert error["code"] == "validation_error"
        assert any(f["field"] == field and words in f["message"] for f in error["fields"]), error
        assert_plain(response.text)

    unknown = evidence(client, question="x", sources=["scopus"])
    assert unknown.status_code == 422, unknown.text
    error = unknown.json()
    assert error["code"] == "invalid_input" and "scopus" in error["message"]
    assert "pubmed" in error["hint"]

    nothing = evidence(client, question="x", sources=["library"], library=False)
    assert nothing.status_code == 422 and nothing.json()["code"] == "invalid_input"
