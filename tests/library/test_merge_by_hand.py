"""Merging by hand the records of one work that the rules keep apart (the same conference
paper from Zotero's RIS and BibTeX exports, its venue written as the proceedings in one
and as the publisher in the other): the copy goes into the record kept, with its file,
the merge is listed with the others and can be split, and a request that cannot be done
says why and changes nothing. A screening project of the library counts the copies merged
into its records as PRISMA's duplicates removed."""

from __future__ import annotations

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

ORIGIN = {"Origin": "http://127.0.0.1"}
ZOTERO = SHARED_DATA / "exports" / "asysd_testthat"
API = "/api/v1/library"
TITLE = "Population-based incidence of mammary tumours in some dog breeds"


@pytest.fixture
def client(data_dir: Path) -> Iterator[TestClient]:
    settings = load_settings(data_dir=data_dir)
    upgrade(settings.app_database_url)
    with TestClient(create_app(make_runtime(settings)), base_url="http://127.0.0.1") as client:
        for name in ("zotero_export.ris", "zotero_export.bib"):
            sent = client.post(
                f"{API}/imports",
                files={"file": (name, (ZOTERO / name).read_bytes())},
                headers=ORIGIN,
            )
            assert sent.status_code == 201, sent.text
        yield client


def titled(client: TestClient) -> list[dict[str, Any]]:
    page = client.get(f"{API}/records", params={"q": "mammary tumours dog breeds", "limit": 50})
    return [item for item in page.json()["items"] if item["record"]["title"] == TITLE]


def test_two_records_of_one_work_are_merged_by_hand_and_split_again(client: TestClient) -> None:
    pair = titled(client)
    assert len(pair) == 2  # the rules keep them apart: the venues differ
    kept, copy = pair
    total = client.get(f"{API}/records").json()["total"]

    merged = client.post(
        f"{API}/merges", json={"kept": kept["id"], "copies": [copy["id"]]}, headers=ORIGIN
    )
    assert merged.status_code == 201, merged.text
    (merge,) = merged.json()
    assert (merge["origin"], merge["evidence"]) == ("hand", "merged by hand")
    assert {merge["kept"]["source_file"], merge["absorbed"]["source_file"]} == {
        "zotero_export.ris",
        "zotero_export.bib",
    }
    assert [item["id"] for item in titled(client)] == [kept["id"]]
    assert client.get(f"{API}/records").json()["total"] == total - 1
    listed = client.get(f"{API}/merges").json()["items"]
    assert listed[0]["id"] == merge["id"]

    split = client.post(f"{API}/merges/{merge['id']}/split", headers=ORIGIN)
    assert split.status_code == 200, split.text
    assert sorted(item["id"] for item in titled(client)) == sorted([kept["id"], copy["id"]])


def test_a_merge_that_cannot_be_done_says_why_and_changes_nothing(client: TestClient) -> None:
    kept, copy = titled(client)
    total = client.get(f"{API}/records").json()["total"]

    def refused(body: dict[str, Any], status: int) -> str:
        answer = client.post(f"{API}/merges", json=body, headers=ORIGIN)
        assert answer.status_code == status, answer.text
        message: str = answer.json()["message"]
        return message

    itself = refused({"kept": kept["id"], "copies": [kept["id"]]}, 422)
    assert "cannot be merged into itself" in itself
    gone = "00000000-0000-0000-0000-000000000001"
    unknown = refused({"kept": kept["id"], "copies": [copy["id"], gone]}, 404)
    assert unknown.startswith("1 of the 2 copies is not in your library")
    assert "nothing was merged" in unknown
    assert "copies" in refused({"kept": kept["id"], "copies": []}, 422)
    assert len(titled(client)) == 2
    assert client.get(f"{API}/records").json()["total"] == total
    assert client.get(f"{API}/merges").json()["total"] > 0  # the imports' merges, untouched


def test_a_screening_project_counts_the_merged_copies_as_duplicates_removed(
    client: TestClient,
) -> None:
    merges = client.get(f"{API}/merges", params={"limit": 1}).json()["total"]
    assert merges > 900  # the BibTeX export repeats the RIS one
    made = client.post(
        "/api/v1/screening/projects",
        json={"name": "Dog tumours", "source": {"kind": "library"}},
        headers=ORIGIN,
    )
    assert made.status_code == 201, made.text
    project = made.json()
    records = project["record_count"]
    identification = project["identification"]
    assert identification["duplicates_removed"] == merges
    by_file = {s["source"]: s["records"] for s in identification["sources"]}
    assert set(by_file) == {"Library: zotero_export.ris", "Library: zotero_export.bib"}
    assert sum(by_file.values()) == records + merges  # identified, before the copies went
    counts = client.get(f"/api/v1/screening/projects/{project['id']}/prisma").json()
    assert (counts["identified_total"], counts["duplicates_removed"]) == (
        records + merges,
        merges,
    )


PREPRINT_AND_ARTICLE = """TY  - UNPB
TI  - Pair programming in introductory courses: a randomised trial with extended follow-up
AU  - Lee, Ann
AU  - Novak, Petr
AU  - Ito, Ken
PY  - 2023
DO  - 10.48550/arxiv.2301.00001
AB  - We randomised 400 students to pairs or to working alone.
KW  - pair programming
ER  -

TY  - JOUR
TI  - Pair programming in introductory courses
AU  - Lee, Ann
AU  - Novak, Petr
PY  - 2024
T2  - Computer Science Education
DO  - 10.1080/08993408.2024.0001
KW  - education
ER  -
"""


def test_a_merge_by_hand_keeps_the_record_chosen_and_fills_only_its_gaps(
    client: TestClient,
) -> None:
    sent = client.post(
        f"{API}/imports",
        files={"file": ("versions.ris", PREPRINT_AND_ARTICLE.encode())},
        headers=ORIGIN,
    )
    assert sent.status_code == 201 and sent.json()["imported"] == 2, sent.text
    page = client.get(f"{API}/records", params={"q": "pair programming introductory"}).json()
    by_doi = {item["record"]["ids"]["doi"]: item for item in page["items"]}
    article = by_doi["10.1080/08993408.2024.0001"]
    preprint = by_doi["10.48550/arxiv.2301.00001"]

    merged = client.post(
        f"{API}/merges", json={"kept": article["id"], "copies": [preprint["id"]]}, headers=ORIGIN
    )
    assert merged.status_code == 201, merged.text
    kept = client.get(f"{API}/records/{article['id']}").json()["record"]
    # What the person chose stays: the published title, its authors, DOI, year and type.
    assert kept["title"] == "Pair programming in introductory courses"
    assert [a["family"] for a in kept["authors"]] == ["Lee", "Novak"]
    assert (kept["ids"]["doi"], kept["year"]) == ("10.1080/08993408.2024.0001", 2024)
    assert kept["publication_types"] == article["record"]["publication_types"]
    # What it lacked comes from the copy; lists are united.
    assert kept["abstract"] == "We randomised 400 students to pairs or to working alone."
    assert set(kept["keywords"]) == {"education", "pair programming"}
