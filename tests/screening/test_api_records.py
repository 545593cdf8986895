"""The project's records list pages and filters like the API's other lists, and the
downloads are named after the project, over the HTTP API of a live server on SQLite and
PostgreSQL: ``limit`` and ``offset`` (bounded, as the library's records list takes them)
give the records in the project's order with the total the filter lists; ``decision``
lists the records you decided so, or those you have not; a bad value is refused in
words. Exports and the PRISMA diagram carry a Content-Disposition with the project's
name (RFC 6266, ``filename*`` for a name in other letters than ASCII)."""

from __future__ import annotations

from urllib.parse import quote

from scholarstream.screening import MAX_RECORDS_PAGE, RECORDS_PAGE
from scholarstream.settings import Settings
from tests.screening.api import (
    API,
    client_for,
    decide_as_review,
    import_review,
    new_project,
    refused,
)


def test_the_records_list_pages_and_filters_by_your_decision(db_settings: Settings) -> None:
    with client_for(db_settings) as (_, client):
        review = import_review(client)
        pid = new_project(client)["id"]
        records = f"{API}/{pid}/records"

        first = client.get(records).json()
        assert (first["total"], first["offset"], first["limit"]) == (40, 0, RECORDS_PAGE)
        assert first["decision"] is None
        assert [r["position"] for r in first["records"]] == list(range(1, 41))

        # Pages: in the project's order, the last one short, past the end empty.
        pages = [
            client.get(records, params={"limit": 15, "offset": offset}).json()
            for offset in (0, 15, 30, 45)
        ]
        assert [len(p["records"]) for p in pages] == [15, 15, 10, 0]
        assert all(p["total"] == 40 and p["limit"] == 15 for p in pages)
        assert [r["record_id"] for p in pages for r in p["records"]] == [
            r["record_id"] for r in first["records"]
        ]

        # Decide a few, as the review did; maybe one more.
        step = client.get(f"{API}/{pid}/next").json()
        for _ in range(6):
            step = decide_as_review(client, pid, step, review)
        maybe = client.post(
            f"{API}/{pid}/decisions", json={"record_id": step["record"]["id"], "decision": "maybe"}
        )
        assert maybe.status_code == 200, maybe.text
        progress = maybe.json()["progress"]

        counted = {}
        for decision in ("include", "exclude", "maybe", "unscreened"):
            page = client.get(records, params={"decision": decision, "limit": 500}).json()
            assert page["decision"] == decision and page["total"] == len(page["records"])
            counted[decision] = page["total"]
            expected = None if decision == "unscreened" else decision
            assert all(r["your_decision"] == expected for r in page["records"])
            positions = [r["position"] for r in page["records"]]
            assert positions == sorted(positions)
        assert counted == {
            "include": progress["included"],
            "exclude": progress["excluded"],
            "maybe": 1,
            "unscreened": 40 - 7,
        }
        paged = client.get(records, params={"decision": "unscreened", "limit": 5, "offset": 30})
        assert paged.json()["total"] == 33 and len(paged.json()["records"]) == 3

        # Bad values: refused in words, naming the parameter and what it takes.
        for params, said in (
            ({"decision": "undecided"}, "decision must be one of: include, exclude, maybe"),
            ({"limit": 0}, "limit must be at least 1"),
            ({"limit": MAX_RECORDS_PAGE + 1}, f"limit must be at most {MAX_RECORDS_PAGE}"),
            ({"offset": -1}, "offset must be at least 0"),
            ({"limit": "ten"}, "limit must be a whole number"),
        ):
            body = refused(client.get(records, params=params), 422, said)
            assert body["code"] == "validation_error"


def test_downloads_are_named_after_the_project(db_settings: Settings) -> None:
    with client_for(db_settings) as (_, client):
        import_review(client)
        pid = new_project(client, name="Otitis in dogs")["id"]
        for fmt, name in (
            ("csv", "otitis-in-dogs-screening.csv"),
            ("ris", "otitis-in-dogs-screening.ris"),
            ("bibtex", "otitis-in-dogs-screening.bib"),
        ):
            exported = client.get(f"{API}/{pid}/export", params={"format": fmt})
            assert exported.status_code == 200, exported.text
            assert exported.headers["content-disposition"] == f'attachment; filename="{name}"'
        for fmt in ("svg", "png", "csv"):
            saved = client.get(
                f"{API}/{pid}/prisma/diagram", params={"format": fmt, "download": "true"}
            )
            assert saved.headers["content-disposition"] == (
                f'attachment; filename="otitis-in-dogs-prisma.{fmt}"'
            )
        shown = client.get(f"{API}/{pid}/prisma/diagram", params={"format": "svg"})
        assert (
            shown.headers["content-disposition"] == 'inline; filename="otitis-in-dogs-prisma.svg"'
        )

        # A name in other letters: an ASCII name for every client, the name itself as filename*.
        accented = new_project(client, name="Otite du chien : études")["id"]
        exported = client.get(f"{API}/{accented}/export", params={"format": "csv"})
        assert exported.headers["content-disposition"] == (
            'attachment; filename="otite-du-chien-etudes-screening.csv"; '
            f"filename*=UTF-8''{quote('otite-du-chien-études-screening.csv')}"
        )
        diagram = client.get(
            f"{API}/{accented}/prisma/diagram", params={"format": "png", "download": "true"}
        )
        assert diagram.headers["content-disposition"].endswith(
            f"filename*=UTF-8''{quote('otite-du-chien-études-prisma.png')}"
        )
        assert accented not in exported.headers["content-disposition"]
