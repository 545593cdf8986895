"""The library's HTTP API as the Library page and scripts use it: collections from a
search or a selection, tags, notes, their filters and facets, the export of a collection;
and searches, exports and imports that cannot be done saying so in plain words."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from scholarstream.bootstrap import create_app
from scholarstream.db import upgrade
from scholarstream.settings import load_settings
from tests.conftest import SHARED_DATA
from tests.helpers import make_runtime

ORIGIN = {"Origin": "http://127.0.0.1"}  # what our own pages send
SCOPUS = SHARED_DATA / "exports" / "asysd_testthat" / "scopus.ris"
API = "/api/v1/library"


@pytest.fixture
def client(data_dir: Path) -> Iterator[TestClient]:
    settings = load_settings(data_dir=data_dir)
    upgrade(settings.app_database_url)
    with TestClient(create_app(make_runtime(settings)), base_url="http://127.0.0.1") as client:
        response = client.post(
            f"{API}/imports", files={"file": ("scopus.ris", SCOPUS.read_bytes())}, headers=ORIGIN
        )
        assert response.status_code == 201, response.text
        yield client


def post(client: TestClient, path: str, body: dict[str, Any]) -> Any:
    return client.post(f"{API}{path}", json=body, headers=ORIGIN)


def ids_of(client: TestClient, **params: str) -> list[str]:
    page = client.get(f"{API}/records", params={"limit": "100", **params}).json()
    return [item["id"] for item in page["items"]]


def test_collections_tags_and_notes_through_the_api(client: TestClient) -> None:
    made = post(client, "/collections", {"name": "Taurine", "search": {"q": "taurine"}})
    assert made.status_code == 201, made.text
    taurine = made.json()["collection"]
    assert (taurine["name"], taurine["records"], made.json()["added"]) == ("Taurine", 1, 1)

    two = ids_of(client)[:2]
    added = post(client, f"/collections/{taurine['id']}/records", {"ids": two})
    assert added.json()["collection"]["records"] == len(set(two) | set(ids_of(client, q="taurine")))
    assert client.get(f"{API}/collections").json()[0]["name"] == "Taurine"

    tagged = post(client, "/tags", {"ids": two, "add": ["include, RCT"]})
    assert tagged.json() == {"records": 2, "added": 4, "removed": 0}
    note = client.put(f"{API}/records/{two[0]}/note", json={"text": "Read first."}, headers=ORIGIN)
    record = note.json()
    assert record["note"] == "Read first." and record["tags"] == ["include", "RCT"]
    assert [c["name"] for c in record["collections"]] == ["Taurine"]

    in_it = client.get(f"{API}/records", params={"collection": taurine["id"]}).json()
    assert in_it["total"] == taurine["records"] + 2 - len(
        set(two) & set(ids_of(client, q="taurine"))
    )
    noted = client.get(f"{API}/records", params={"has_note": "true"}).json()
    assert [item["id"] for item in noted["items"]] == [two[0]]
    facets = client.get(f"{API}/facets", params={"tag": "rct"}).json()
    assert facets["total"] == 2 and facets["with_note"] == 1
    assert [(t["value"], t["count"]) for t in facets["tags"]] == [("include", 2), ("RCT", 2)]
    assert facets["collections"][0]["name"] == "Taurine"

    exported = client.get(f"{API}/export", params={"format": "ris", "collection": taurine["id"]})
    assert exported.status_code == 200
    assert exported.text.count("TY  - ") == in_it["total"]

    taken = post(client, "/tags", {"search": {"collection": taurine["id"]}, "remove": ["include"]})
    assert taken.json()["removed"] == 2

    renamed = client.patch(
        f"{API}/collections/{taurine['id']}", json={"name": "Included"}, headers=ORIGIN
    )
    assert renamed.json()["name"] == "Included"
    clash = post(client, "/collections", {"name": "INCLUDED"})
    assert clash.status_code == 409
    assert clash.json()["message"] == "You already have a collection named “INCLUDED”."

    gone = client.delete(f"{API}/collections/{taurine['id']}", headers=ORIGIN)
    assert gone.status_code == 200 and gone.json()["name"] == "Included"
    assert client.get(f"{API}/collections").json() == []
    assert client.get(f"{API}/records").json()["total"] == 10  # the records stay
    missing = client.get(f"{API}/records", params={"collection": taurine["id"]})
    assert missing.status_code == 404
    assert missing.json()["message"] == (
        "That collection is not in your library (deleted, or someone else's)."
    )


def test_records_are_named_by_ids_or_by_a_search_not_both(client: TestClient) -> None:
    both = post(client, "/tags", {"ids": [], "search": {"q": "x"}, "add": ["a"]})
    assert both.status_code == 422
    assert both.json()["message"].startswith("Name the records either by id or by a search")
    unknown = post(client, "/collections", {"name": "X", "ids": [], "color": "red"})
    assert unknown.status_code == 422 and "color" in unknown.json()["message"]


def test_an_export_or_a_collection_of_nothing_is_refused_with_what_to_try(
    client: TestClient,
) -> None:
    nothing = client.get(f"{API}/export", params={"format": "ris", "q": "zebrafish"})
    assert nothing.status_code == 404
    body = nothing.json()
    assert body["message"] == "Nothing matched the words “zebrafish”: nothing was exported."
    assert "Try fewer or other words" in body["hint"]
    assert "attachment" not in nothing.headers.get("content-disposition", "")

    empty = post(client, "/collections", {"name": "Fish", "search": {"q": "zebrafish"}})
    assert empty.status_code == 404
    assert empty.json()["message"] == "Nothing matched the words “zebrafish”: nothing was saved."
    assert client.get(f"{API}/collections").json() == []


def test_records_named_that_are_not_in_the_library_are_said(client: TestClient) -> None:
    unknown = [str(uuid.UUID(int=n)) for n in range(1, 4)]
    none = post(client, "/collections", {"name": "Ghosts", "ids": unknown})
    assert none.status_code == 404
    assert none.json()["message"] == (
        "None of the 3 records named is in your library (deleted, or someone else's): "
        "nothing was saved."
    )
    assert client.get(f"{API}/collections").json() == []
    one = post(client, "/tags", {"ids": unknown[:1], "add": ["x"]})
    assert one.status_code == 404
    assert one.json()["message"].startswith("The record named is not in your library")

    mine = ids_of(client)[:2]
    mixed = post(client, "/collections", {"name": "Mixed", "ids": [*mine, *unknown, mine[0]]})
    assert mixed.status_code == 201
    assert (mixed.json()["added"], mixed.json()["not_in_library"]) == (2, 3)
    more = post(
        client, f"/collections/{mixed.json()['collection']['id']}/records", {"ids": unknown}
    )
    assert more.status_code == 404 and client.get(f"{API}/collections").json()[0]["records"] == 2
    # An empty selection still makes an empty collection, as the New collection form does.
    assert post(client, "/collections", {"name": "Later", "ids": []}).status_code == 201


def test_searches_that_cannot_be_done_say_why_in_plain_words(client: TestClient) -> None:
    early = client.get(f"{API}/records", params={"year_from": "99"})
    assert early.status_code == 422
    said = early.json()["message"]
    assert said.startswith("Invalid library query: the first year must be 1000 or later")
    assert "year_from" not in said

    typo = client.get(f"{API}/records", params={"q": "taurine", "publication_type": "Reveiw"})
    assert typo.status_code == 422
    assert "The types it holds: Review (1)" in typo.json()["message"]
    tag = client.get(f"{API}/facets", params={"tag": "include"})
    assert tag.status_code == 422
    assert tag.json()["message"] == "No record in your library has a tag, so none has “include”."


@pytest.mark.parametrize("name", ["reading-list.txt", "refs.xml", "notes"])
def test_an_unrecognised_file_is_named_once_with_the_formats_read(
    client: TestClient, name: str
) -> None:
    response = client.post(
        f"{API}/imports",
        files={"file": (name, b"Papers to read next week:\n- the taurine ones\n")},
        headers=ORIGIN,
    )
    assert response.status_code == 422
    message = response.json()["message"]
    assert message.startswith(f"{name} is in an unrecognised format")
    assert message.count(name) == 1
    assert "RIS (.ris, .txt)" in message and "PubMed XML (.xml)" in message
    # The formats by the names the Format list gives them, not by their ids.
    hint = response.json()["hint"]
    assert "choose its format: BibTeX, CSV, EndNote XML" in hint
    assert "MEDLINE / PubMed (.nbib)" in hint and "endnote-xml" not in hint
    assert client.get(f"{API}/records").json()["total"] == 10


def test_an_unknown_format_id_is_listed_with_each_formats_label(client: TestClient) -> None:
    response = client.get(f"{API}/export", params={"format": "word"})
    assert response.status_code == 422
    assert "bibtex (BibTeX)" in response.json()["hint"]
    assert "ris (RIS)" in response.json()["hint"]
