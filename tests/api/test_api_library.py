"""Library and sources endpoints: upload, search, read, delete, export, live search."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from fastapi.testclient import TestClient

from scholarstream.settings import Settings
from tests.api.conftest import ClientFactory, login
from tests.conftest import SHARED_DATA

EXPORTS = SHARED_DATA / "exports" / "asysd_testthat"
Response = Any  # starlette's TestClient returns its own httpx flavour's Response


def upload(client: TestClient, name: str, content: bytes, **form: str) -> Response:
    return client.post(
        "/api/v1/library/imports",
        files={"file": (name, content)},
        data=form,
        headers={"Origin": "http://127.0.0.1"},  # what our own pages send
    )


def test_upload_search_show_delete(client: TestClient) -> None:
    response = upload(client, "scopus.ris", (EXPORTS / "scopus.ris").read_bytes())
    assert response.status_code == 201, response.text
    report = response.json()
    assert (report["format"], report["imported"], report["skipped"]) == ("ris", 10, 0)

    found = client.get("/api/v1/library/records", params={"q": "taurine dogs"}).json()
    assert found["total"] >= 1
    top = found["items"][0]
    assert top["record"]["title"].startswith("Development and Validation of a Robust")
    assert top["record"]["ids"]["doi"] == "10.3390/ani15010003"
    assert top["score"] > 0

    shown = client.get(f"/api/v1/library/records/{top['id']}").json()
    assert shown["record"]["authors"][0]["family"] == "Furlanello"

    assert client.delete(f"/api/v1/library/records/{top['id']}").status_code == 204
    assert client.get(f"/api/v1/library/records/{top['id']}").status_code == 404
    assert client.get("/api/v1/library/records").json()["total"] == 9


def test_upload_reports_bad_records_and_unknown_formats(client: TestClient) -> None:
    unknown = upload(client, "notes.bin", b"\x00\x01\x02 nothing bibliographic")
    assert unknown.status_code == 422
    body = unknown.json()
    assert body["code"] == "invalid_input" and "ris" in body["hint"]

    wrong_name = upload(client, "scopus.ris", b"TY  - JOUR\nER  - \n", format="nonsense")
    assert wrong_name.status_code == 422
    assert "bibtex" in wrong_name.json()["hint"]

    no_title = upload(client, "one.ris", b"TY  - JOUR\nAU  - Doe, J\nER  - \n")
    assert no_title.status_code == 201
    assert no_title.json()["skipped"] == 1
    assert no_title.json()["problems"][0]["record_number"] == 1


def test_export_downloads_every_format(client: TestClient) -> None:
    upload(client, "wos.ris", (EXPORTS / "wos_test.ris").read_bytes())
    for name, marker in (("ris", "TY  - "), ("bibtex", "@"), ("csv", "title"), ("json", "[")):
        response = client.get("/api/v1/library/export", params={"format": name})
        assert response.status_code == 200, response.text
        assert "attachment" in response.headers["content-disposition"]
        assert marker in response.text[:2000]
    records = json.loads(client.get("/api/v1/library/export?format=json").text)
    assert len(records) == 50
    assert client.get("/api/v1/library/export?format=docx").status_code == 422


def test_query_validation_names_the_problem(client: TestClient) -> None:
    response = client.get("/api/v1/library/records", params={"year_from": 2020, "year_to": 2000})
    assert response.status_code == 422
    assert "year_from" in response.json()["message"]


def test_library_is_private_in_multi_user_mode(
    multi: tuple[Settings, ClientFactory],
) -> None:
    settings, make_client = multi
    alice, bob = make_client(settings), make_client(settings)
    assert upload(alice, "x.ris", b"TY  - JOUR\nTI  - A").status_code == 401
    login(alice, "alice")
    login(bob, "bob")
    assert upload(alice, "scopus.ris", (EXPORTS / "scopus.ris").read_bytes()).status_code == 201
    alices = alice.get("/api/v1/library/records").json()
    assert alices["total"] == 10
    assert bob.get("/api/v1/library/records").json()["total"] == 0
    assert bob.get("/api/v1/library/records", params={"q": "taurine"}).json()["total"] == 0
    record_id = alices["items"][0]["id"]
    assert bob.get(f"/api/v1/library/records/{record_id}").status_code == 404
    origin = {"Origin": "http://127.0.0.1"}
    assert bob.delete(f"/api/v1/library/records/{record_id}", headers=origin).status_code == 404
    assert json.loads(bob.get("/api/v1/library/export?format=json").text) == []


def test_sources_list_and_library_search(client: TestClient) -> None:
    infos = {info["name"]: info for info in client.get("/api/v1/sources").json()}
    assert {"library", "pubmed", "openalex", "crossref", "arxiv", "clinicaltrials"} <= set(infos)
    assert infos["library"]["configured"] is True

    upload(client, "scopus.ris", (EXPORTS / "scopus.ris").read_bytes())
    page = client.get("/api/v1/sources/library/search", params={"q": "taurine"}).json()
    assert page["source"] == "library" and page["total"] == 1

    bad = client.get("/api/v1/sources/nowhere/search", params={"q": "x"})
    assert bad.status_code == 422 and "pubmed" in bad.json()["hint"]
    bad_filter = client.get("/api/v1/sources/library/search", params={"q": "x", "filter": "y"})
    assert bad_filter.status_code == 422


def test_multi_source_search_reports_a_failed_source(make_client: ClientFactory) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"message": "bad key"})

    client = make_client(source_transport=httpx.MockTransport(refuse))
    upload(client, "scopus.ris", (EXPORTS / "scopus.ris").read_bytes())
    response = client.post(
        "/api/v1/sources/search",
        json={"sources": ["library", "crossref"], "query": {"text": "taurine", "limit": 5}},
    )
    assert response.status_code == 200, response.text
    result = response.json()
    statuses = {s["source"]: s for s in result["statuses"]}
    assert statuses["library"]["ok"] is True and statuses["library"]["returned"] == 1
    assert statuses["crossref"]["ok"] is False
    assert statuses["crossref"]["error_code"] == "source_credentials"
    assert "Development and Vali" in [r["title"][:20] for r in result["records"]]


def test_semantic_index_is_built_after_an_upload_and_reported(
    make_client: ClientFactory,
) -> None:
    client = make_client(semantic={"enabled": True})
    assert client.get("/api/v1/library/semantic").json()["total"] == 0
    assert upload(client, "scopus.ris", (EXPORTS / "scopus.ris").read_bytes()).status_code == 201

    status: dict[str, Any] = {}
    for _ in range(200):  # the shipped model embeds ten abstracts in about a second
        status = client.get("/api/v1/library/semantic").json()
        if not status["building"] and status["embedded"] == status["total"]:
            break
        time.sleep(0.1)
    assert status == {
        "available": True,
        "model": "all-MiniLM-L6-v2-int8",
        "embedded": 10,
        "total": 10,
        "building": False,
        "problem": None,
        "ranking": "in process",  # SQLite
        "ranking_note": None,
    }
    # Found by meaning: no record says "viral" or "young".
    found = client.get(
        "/api/v1/library/records", params={"q": "young dogs with viral gut infection"}
    )
    assert found.json()["items"][0]["record"]["title"].startswith("Calcium and magnesium")


def test_semantic_search_turned_off_is_reported_in_plain_words(client: TestClient) -> None:
    status = client.get("/api/v1/library/semantic").json()
    assert status["available"] is False
    assert status["problem"].startswith("Semantic search is turned off")
