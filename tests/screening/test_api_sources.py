"""Where a project's records come from, checked once in the source itself, over the HTTP
API of a live server on SQLite and PostgreSQL: a library search the library would refuse
(years out of order or out of range) is a 422 in the API's error shape with the library's
own words, never a server error; a library source that names its records two ways (a
search and a collection, a selection and filters) is refused, never half taken; a
selection with records that are not in the library says how many, in agreement."""

from __future__ import annotations

import re
import uuid
from typing import Any

from scholarstream.settings import Settings
from tests.screening.api import API, client_for, import_review, new_project, refused

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def _create(source: dict[str, Any], name: str = "yrs2") -> dict[str, Any]:
    return {"name": name, "source": {"kind": "library", **source}}


def test_a_library_source_is_checked_before_anything_is_made(db_settings: Settings) -> None:
    with client_for(db_settings) as (_, client):
        import_review(client)

        # Years the library search refuses: the library's words, in the API's error shape.
        library = refused(
            client.get("/api/v1/library/records", params={"year_from": 2030, "year_to": 2000}),
            422,
        )
        body = refused(
            client.post(
                API, json=_create({"query": "cataract", "year_from": 2030, "year_to": 2000})
            ),
            422,
            "the first year (2030) is after the last (2000): give the earlier year first",
        )
        assert body["code"] == "validation_error"
        assert [f["field"] for f in body["fields"]] == ["source"]
        assert "the first year (2030) is after the last (2000)" in library["message"]
        for years, said in (
            ({"year_from": 99}, "the first year must be 1000 or later (you gave 99)"),
            ({"year_to": 30000}, "the last year must be 2999 or earlier (you gave 30000)"),
        ):
            refused(client.post(API, json=_create({"query": "triptan", **years})), 422, said)
        refused(
            client.post(API, json=_create({"year_from": "twenty"})),
            422,
            "year_from must be a whole number",
        )

        # A source that names its records two ways: refused, whichever two.
        made = client.post(
            "/api/v1/library/collections",
            json={"name": "Eletriptan", "search": {"q": "eletriptan"}},
        )
        assert made.status_code == 201, made.text
        collection = made.json()["collection"]["id"]
        some = [
            item["id"]
            for item in client.get("/api/v1/library/records", params={"limit": 3}).json()["items"]
        ]
        for source, gave in (
            ({"query": "cataract", "collection_id": collection}, "query and collection_id"),
            ({"tag": "include", "collection_id": collection}, "tag and collection_id"),
            ({"year_from": 2000, "record_ids": some}, "year_from and record_ids"),
            ({"collection_id": collection, "record_ids": some}, "collection_id and record_ids"),
        ):
            body = refused(
                client.post(API, json=_create(source)),
                422,
                "name the library records one way",
                f"you gave {gave}",
            )
            assert not re.search(UUID, body["message"])
        assert client.get(API).json() == {"projects": []}

        # Each way alone still makes a project (empty words and filters are no search).
        assert (
            new_project(
                client,
                name="The collection",
                source={
                    "kind": "library",
                    "collection_id": collection,
                    "query": " ",
                    "publication_type": None,
                },
            )["origin"]["label"]
            == "Library collection: Eletriptan"
        )
        one = new_project(
            client, name="One record", source={"kind": "library", "record_ids": some[:1]}
        )
        assert one["origin"]["label"] == "Library: 1 selected record"

        # A selection with records the library does not hold: how many, in agreement.
        gone = str(uuid.uuid4())
        refused(
            client.post(API, json=_create({"record_ids": [some[0], gone]}, "Gone")),
            422,
            "1 record of the selection is not in your library",
        )
        refused(
            client.post(API, json=_create({"record_ids": [gone, str(uuid.uuid4())]}, "Gone")),
            422,
            "2 records of the selection are not in your library",
        )
