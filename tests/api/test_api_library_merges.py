"""Merged duplicates over HTTP: the import report's counts, the merges with their evidence,
split (and its refusals), find duplicates."""

from __future__ import annotations

import uuid

from fastapi.testclient import TestClient

from tests.api.test_api_library import upload
from tests.library.copies import BIBTEX, CSV, RIS

ORIGIN = {"Origin": "http://127.0.0.1"}


def test_import_reports_merges_and_split_restores(client: TestClient) -> None:
    first = upload(client, "zotero.ris", RIS.encode()).json()
    assert (first["imported"], first["merged"], first["already_present"]) == (4, 0, 0)
    second = upload(client, "zotero.bib", BIBTEX.encode()).json()
    assert (second["imported"], second["merged"], second["in_file_duplicates"]) == (0, 4, 0)
    assert second["duplicates"] == 4
    third = upload(client, "covidence.csv", CSV.encode()).json()
    assert (third["imported"], third["merged"]) == (1, 2)
    assert client.get("/api/v1/library/records").json()["total"] == 5

    merges = client.get("/api/v1/library/merges").json()
    assert merges["total"] == 6
    merge = next(m for m in merges["items"] if m["absorbed"]["source_file"] == "covidence.csv")
    assert merge["evidence"] == "same DOI"
    assert merge["kept"]["identifiers"]["doi"] == merge["absorbed"]["identifiers"]["doi"]
    assert merge["kept"]["title"] and merge["absorbed"]["title"]

    split = client.post(f"/api/v1/library/merges/{merge['id']}/split", headers=ORIGIN)
    assert split.status_code == 200, split.text
    body = split.json()
    assert body["restored"]["id"] == merge["absorbed"]["id"]
    assert body["restored"]["source_file"] == "covidence.csv"
    assert "covidence.csv" not in body["kept"]["merged_from"]
    assert client.get("/api/v1/library/records").json()["total"] == 6
    assert client.get("/api/v1/library/merges").json()["total"] == 5

    again = client.post(f"/api/v1/library/merges/{merge['id']}/split", headers=ORIGIN)
    assert again.status_code == 409
    assert "already split" in again.json()["message"]
    missing = client.post(f"/api/v1/library/merges/{uuid.uuid4()}/split", headers=ORIGIN)
    assert missing.status_code == 404

    scan = client.post("/api/v1/library/find-duplicates", headers=ORIGIN)
    assert scan.status_code == 200, scan.text
    assert scan.json() | {"merges": []} == {
        "checked": 6,
        "groups": 0,
        "merged": 0,
        "merges": [],
        "candidates": [],
        "dry_run": False,
    }


def test_in_file_copies_are_not_called_already_in_library(client: TestClient) -> None:
    records = RIS.split("ER  -")
    text = "ER  -".join([records[0], records[1], records[0]]) + "ER  -\n"
    report = upload(client, "twice.ris", text.encode()).json()
    assert (report["imported"], report["in_file_duplicates"], report["already_present"]) == (
        2,
        1,
        0,
    )
