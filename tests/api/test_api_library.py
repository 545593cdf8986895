"""Library and sources endpoints: upload, search, read, delete, export, live search."""

from __future__ import annotations

import json
import time
from collections import Counter
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
    assert body["code"] == "invalid_input" and "RIS" in body["hint"]

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


def test_export_of_a_search_or_a_selection(client: TestClient) -> None:
    upload(client, "wos.ris", (EXPORTS / "wos_test.ris").read_bytes())
    found = client.get("/api/v1/library/records", params={"q": "taurine", "limit": 100}).json()
    assert 0 < found["total"] < 50
    ranked = [item["record"]["title"] for item in found["items"]]

    searched = client.get("/api/v1/library/export", params={"format": "json", "q": "taurine"})
    assert searched.status_code == 200, searched.text
    assert [record["title"] for record in json.loads(searched.text)] == ranked

    everything = client.get("/api/v1/library/records", params={"limit": 100}).json()["items"]
    chosen = [everything[7]["id"], everything[2]["id"], everything[7]["id"]]
    selection = client.get(
        "/api/v1/library/export",
        params=[("format", "json"), *(("id", record_id) for record_id in chosen)],
    )
    assert selection.status_code == 200, selection.text
    titles = [record["title"] for record in json.loads(selection.text)]
    assert titles == [everything[7]["record"]["title"], everything[2]["record"]["title"]]

    too_many = [("id", everything[0]["id"])] * 1001
    refused = client.get("/api/v1/library/export", params=[("format", "ris"), *too_many])
    assert refused.status_code == 422
    assert "at most 1000" in refused.json()["message"]


def test_facets_count_types_and_years_of_what_a_search_finds(client: TestClient) -> None:
    upload(client, "wos.ris", (EXPORTS / "wos_test.ris").read_bytes())
    records = json.loads(client.get("/api/v1/library/export?format=json").text)
    facets = client.get("/api/v1/library/facets").json()
    assert facets["total"] == len(records) == 50
    years = {facet["value"]: facet["count"] for facet in facets["years"]}
    assert years == dict(Counter(str(r["year"]) for r in records if r.get("year")))
    assert list(years) == sorted(years, reverse=True)
    types = Counter(t.lower() for r in records for t in r.get("publication_types", []))
    assert {f["value"]: f["count"] for f in facets["publication_types"]} == dict(types)

    found = client.get("/api/v1/library/records", params={"q": "taurine"}).json()
    searched = client.get("/api/v1/library/facets", params={"q": "taurine"}).json()
    assert searched["total"] == found["total"]
    assert sum(facet["count"] for facet in searched["years"]) <= found["total"]
    newest = searched["years"][0]["value"]
    narrowed = client.get(
        "/api/v1/library/records",
        params={"q": "taurine", "year_from": newest, "year_to": newest},
    ).json()
    assert narrowed["total"] == searched["years"][0]["count"]


def test_query_validation_names_the_problem(client: TestClient) -> None:
    response = client.get("/api/v1/library/records", params={"year_from": 2020, "year_to": 2000})
    assert response.status_code == 422
    assert response.json()["message"] == (
        "Invalid library query: the first year (2020) is after the last (2000): give the"
        " earlier year first."
    )
    too_early = client.get("/api/v1/library/records", params={"year_from": 20})
    assert too_early.json()["message"] == (
        "Invalid library query: the first year must be 1000 or later (you gave 20): give years"
        " as four digits."
    )


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
    # Bob's own library is empty: nothing of Alice's is exported, and Bob is told so.
    empty = bob.get("/api/v1/library/export?format=json")
    assert empty.status_code == 404
    assert empty.json()["message"] == "Your library is empty: nothing was exported."
    # A selection naming another user's record exports nothing of it.
    taken = bob.get("/api/v1/library/export", params={"format": "json", "id": record_id})
    assert taken.status_code == 404 and record_id not in taken.text


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
