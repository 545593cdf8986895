"""Screening through the HTTP API of a live server, on SQLite and PostgreSQL: a project
made of library records, screened with the review's own labels (the ranker brings the
relevant records forward), exclusions with reasons from the criteria, undo, progress and
the stopping aid, the full-text stage, the PRISMA 2020 counts, diagram (SVG, PNG) and CSV,
and the exports with every decision. Bad input gets a plain error and changes nothing."""

from __future__ import annotations

import csv
import io
import uuid
from dataclasses import replace

import rispy
from bibtexparser.entrypoint import parse_string

from scholarstream.settings import Settings
from tests.screening.api import (
    API,
    client_for,
    decide_as_review,
    import_review,
    new_project,
    refused,
)
from tests.screening.world import EXCLUSION, Review, svg_words, triptans

SCREENED = 20


def test_screen_a_library_project_to_prisma_and_exports(db_settings: Settings) -> None:
    with client_for(db_settings) as (_, client):
        review = import_review(client)
        project = new_project(client)
        pid = project["id"]
        assert project["record_count"] == 40 and project["your_role"] == "owner"
        assert project["origin"] == {
            "kind": "library",
            "reference": None,
            "label": "Library: every record",
        }
        assert project["identification"]["sources"] == [
            {"source": "Library: triptans.csv", "records": 40}
        ]
        assert [r["role"] for r in project["reviewers"]] == ["owner"]
        listed_response = client.get(API)
        assert listed_response.status_code == 200, listed_response.text
        listed = listed_response.json()["projects"]
        assert [(p["id"], p["record_count"]) for p in listed] == [(pid, 40)]

        step = client.get(f"{API}/{pid}/next").json()
        first = step["record"]
        assert step["basis"] == "keywords" and step["progress"]["screened"] == 0
        assert first["keywords_found"] and first["abstract_marks"]
        marked = [first["abstract"][m["start"] : m["end"]].lower() for m in first["abstract_marks"]]
        assert all(
            any(k.rstrip("*") in word for k in ("triptan", "sumatriptan", "migraine", "randomi"))
            for word in marked
        )

        # Bad decisions: refused plainly, nothing recorded.
        record_id = first["id"]
        refused(
            client.post(
                f"{API}/{pid}/decisions", json={"record_id": record_id, "decision": "exclude"}
            ),
            422,
            "needs a reason",
            EXCLUSION[0],
        )
        refused(
            client.post(
                f"{API}/{pid}/decisions",
                json={"record_id": record_id, "decision": "exclude", "reason": "Too long"},
            ),
            422,
            "not one of the project's exclusion criteria",
        )
        refused(
            client.post(f"{API}/{pid}/decisions", json={"record_id": record_id, "decision": "yes"}),
            422,
            "include, exclude, maybe",
        )
        refused(
            client.post(
                f"{API}/{pid}/decisions",
                json={"record_id": str(uuid.uuid4()), "decision": "include"},
            ),
            404,
            "not in this project",
        )
        assert client.get(f"{API}/{pid}/progress").json()["screened"] == 0

        # Screening as the review decided: the ranker takes over and brings the relevant forward.
        bases = []
        for _ in range(SCREENED):
            step = decide_as_review(client, pid, step, review)
            bases.append(step["basis"])
        assert "ranker" in bases
        progress = step["progress"]
        assert progress["screened"] == SCREENED
        # 12 of the 40 records are relevant: screening in file order finds 6 by now.
        assert progress["included"] >= 9, progress
        assert progress["series"][-1] == {"screened": SCREENED, "included": progress["included"]}
        assert progress["relevant_left"]["value"] is not None
        assert "records not screened" in progress["relevant_left"]["explanation"]
        assert client.get(f"{API}/{pid}/progress").json() == progress

        # Undo takes back the last decision and shows its record; deciding it again counts once.
        last_title = step["message"].split(": ", 1)[1].rstrip("…")
        undone = client.post(f"{API}/{pid}/undo").json()
        assert undone["message"].startswith("Undone: ")
        assert undone["record"]["title"].startswith(last_title)
        assert undone["progress"]["screened"] == SCREENED - 1
        again = decide_as_review(client, pid, undone, review)
        assert again["progress"]["screened"] == SCREENED

        # A criterion that exclusions give as their reason stays: PRISMA counts by it.
        used = client.get(f"{API}/{pid}/prisma").json()
        dropping = client.patch(f"{API}/{pid}", json={"exclusion_criteria": EXCLUSION[1:]})
        refused(dropping, 409, f"“{EXCLUSION[0]}” is the reason of", "add the new wording")
        assert client.get(f"{API}/{pid}").json()["exclusion_criteria"] == EXCLUSION
        assert client.get(f"{API}/{pid}/prisma").json() == used
        reordered = client.patch(
            f"{API}/{pid}", json={"exclusion_criteria": [*EXCLUSION[::-1], "Animals only"]}
        )
        assert reordered.status_code == 200, reordered.text
        client.patch(f"{API}/{pid}", json={"exclusion_criteria": EXCLUSION})

        # Records with your decisions (and, for the owner, the outcome).
        rows = client.get(f"{API}/{pid}/records").json()
        assert rows["total"] == 40
        decided = [r for r in rows["records"] if r["your_decision"]]
        assert len(decided) == SCREENED
        assert all(r["outcome"] == r["your_decision"] for r in decided)
        excluded = [r for r in decided if r["your_decision"] == "exclude"]
        assert all(r["your_reason"] == EXCLUSION[0] for r in excluded)

        # PRISMA counts from the decisions; what nobody recorded is null, not 0.
        counts = client.get(f"{API}/{pid}/prisma").json()
        included = again["progress"]["included"]
        # The library knows its merges: none here (the file held no copy).
        assert counts["identified_total"] == 40 and counts["duplicates_removed"] == 0
        assert counts["screened"] == SCREENED and counts["sought"] == included
        assert counts["excluded"] == SCREENED - included
        assert counts["excluded_reasons"] == [
            {"reason": EXCLUSION[0], "records": SCREENED - included}
        ]
        assert counts["undecided"] == {"unscreened": 40 - SCREENED}
        assert counts["assessed"] is None and counts["studies_included"] is None

        # The full-text stage: only records included on screening; decisions per record.
        items = client.get(f"{API}/{pid}/fulltext").json()["items"]
        assert len(items) == included and all(i["decision"] is None for i in items)
        ft = f"{API}/{pid}/fulltext"
        refused(
            client.put(f"{ft}/{items[0]['record_id']}", json={"decision": "exclude"}),
            422,
            "needs a reason",
        )
        for item, decision in zip(items[:3], ["include", "exclude", "not_retrieved"], strict=True):
            body = {
                "decision": decision,
                "reason": "Wrong outcome" if decision == "exclude" else None,
            }
            assert client.put(f"{ft}/{item['record_id']}", json=body).status_code == 200
        not_sought = excluded[0]["record_id"]
        refused(
            client.put(f"{ft}/{not_sought}", json={"decision": "include"}),
            409,
            "included on title and abstract",
        )
        entries = {
            "duplicates_removed": 7,
            "other_sources": [{"source": "ClinicalTrials.gov", "records": 3}],
            "studies_included": 1,
        }
        counts = client.put(f"{API}/{pid}/prisma/entries", json=entries).json()
        assert client.get(f"{API}/{pid}/prisma/entries").json()["duplicates_removed"] == 7
        assert counts["identified_total"] == 43 and counts["duplicates_removed"] == 7
        assert (counts["not_retrieved"], counts["assessed"], counts["fulltext_excluded"]) == (
            1,
            2,
            1,
        )
        assert counts["fulltext_reasons"] == [{"reason": "Wrong outcome", "records": 1}]
        assert counts["reports_included"] == 1 and counts["studies_included"] == 1
        assert counts["fulltext_pending"] == included - 3
        refused(
            client.put(f"{API}/{pid}/prisma/entries", json={"reports_not_retrieved": -2}),
            422,
            "reports_not_retrieved must be at least 0",
        )

        # The diagram as SVG and PNG, the counts as CSV.
        svg = client.get(f"{API}/{pid}/prisma/diagram", params={"format": "svg"})
        assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
        words = svg_words(svg.text)
        for text in (
            f"Records screened (n = {SCREENED})",
            f"Records excluded (n = {SCREENED - included})",
            f"{EXCLUSION[0]} (n = {SCREENED - included})",
            "Duplicate records removed (n = 7)",
            "ClinicalTrials.gov (n = 3)",
            "Reports not retrieved (n = 1)",
            "Wrong outcome (n = 1)",
            "Studies included in review (n = 1)",
            "Records marked as ineligible by automation tools (n = not recorded)",
        ):
            assert text in words, text
        png = client.get(
            f"{API}/{pid}/prisma/diagram", params={"format": "png", "download": "true"}
        )
        assert (
            png.headers["content-type"] == "image/png" and png.content[:8] == b"\x89PNG\r\n\x1a\n"
        )
        assert png.headers["content-disposition"].endswith('.png"')
        table = client.get(f"{API}/{pid}/prisma/diagram", params={"format": "csv"})
        rows_csv = list(csv.reader(io.StringIO(table.text.removeprefix("\ufeff"))))
        assert ["screening", "Records screened", str(SCREENED)] in rows_csv
        refused(client.get(f"{API}/{pid}/prisma/diagram", params={"format": "pdf"}), 422, "svg")

        # Exports: every record, with decision, reason, reviewer and score.
        ris = rispy.loads(client.get(f"{API}/{pid}/export", params={"format": "ris"}).text)
        assert len(ris) == 40
        notes = [" | ".join(entry.get("notes", [])) for entry in ris]
        assert sum("Screening decision: include" in n for n in notes) == included
        assert sum(f"Screening reason: {EXCLUSION[0]}" in n for n in notes) == SCREENED - included
        assert sum("Screening decision: unscreened" in n for n in notes) == 40 - SCREENED
        assert any("Screening score: 0." in n for n in notes)
        assert sum("Full-text decision: not_retrieved" in n for n in notes) == 1
        bib = parse_string(client.get(f"{API}/{pid}/export", params={"format": "bibtex"}).text)
        assert len(bib.entries) == 40
        decisions = [
            {f.key: f.value for f in e.fields}.get("screening_decision") for e in bib.entries
        ]
        assert decisions.count("include") == included
        exported = client.get(f"{API}/{pid}/export", params={"format": "csv"})
        assert exported.headers["content-disposition"].endswith('.csv"')
        table_rows = list(csv.DictReader(io.StringIO(exported.text.removeprefix("\ufeff"))))
        assert len(table_rows) == 40
        assert {r["decision"] for r in table_rows} == {"include", "exclude", "unscreened"}
        assert all(
            r["reviewer"].startswith("local: ") for r in table_rows if r["decision"] != "unscreened"
        )
        assert all(r["reason"] == EXCLUSION[0] for r in table_rows if r["decision"] == "exclude")
        refused(client.get(f"{API}/{pid}/export", params={"format": "docx"}), 422, "ris")


def test_projects_refuse_bad_input_plainly_and_change_only_what_is_sent(
    db_settings: Settings,
) -> None:
    with client_for(db_settings) as (_, client):
        import_review(client)
        refused(
            client.post(API, json={"name": " ", "source": {"kind": "library"}}), 422, "needs a name"
        )
        refused(client.post(API, json={"name": "x", "source": {"kind": "sheets"}}), 422, "source")
        refused(
            client.post(API, json={"name": "x", "source": {"kind": "library", "record_ids": []}}),
            422,
            "selection is empty",
        )
        refused(
            client.post(API, json={"name": "x", "source": {"kind": "library", "query": "zzzqqq"}}),
            422,
            "finds no records",
        )
        refused(
            client.post(
                API,
                json={"name": "x", "source": {"kind": "search_run", "run_id": str(uuid.uuid4())}},
            ),
            404,
            "search run was not found",
        )
        assert client.get(API).json() == {"projects": []}

        selection = client.get("/api/v1/library/records", params={"limit": 5}).json()["items"]
        project = new_project(
            client,
            source={"kind": "library", "record_ids": [item["id"] for item in selection]},
        )
        pid = project["id"]
        assert (
            project["record_count"] == 5
            and project["origin"]["label"] == "Library: 5 selected records"
        )
        searched = new_project(
            client, name="Sumatriptan", source={"kind": "library", "query": "sumatriptan"}
        )
        assert 0 < searched["record_count"] < 40
        assert searched["origin"]["label"] == "Library: the records with the words “sumatriptan”"

        made = client.post(
            "/api/v1/library/collections",
            json={"name": "Eletriptan", "search": {"q": "eletriptan"}},
        )
        assert made.status_code == 201, made.text
        collection = made.json()["collection"]
        from_collection = new_project(
            client, name="Eletriptan", source={"kind": "library", "collection_id": collection["id"]}
        )
        assert from_collection["record_count"] == collection["records"] > 0
        assert from_collection["origin"]["label"] == "Library collection: Eletriptan"
        refused(
            client.post(
                API,
                json={
                    "name": "x",
                    "source": {"kind": "library", "collection_id": str(uuid.uuid4())},
                },
            ),
            404,
        )

        changed = client.patch(f"{API}/{pid}", json={"exclusion_criteria": ["Animals only", " "]})
        assert changed.status_code == 200, changed.text
        assert changed.json()["exclusion_criteria"] == ["Animals only"]
        assert changed.json()["keywords"] == project["keywords"]
        refused(client.patch(f"{API}/{pid}", json={"name": ""}), 422, "needs a name")
        assert client.get(f"{API}/{pid}").json()["exclusion_criteria"] == ["Animals only"]

        refused(client.get(f"{API}/{uuid.uuid4()}"), 404, "was not found")
        refused(client.get(f"{API}/not-an-id/next"), 422)
        assert client.delete(f"{API}/{pid}").status_code == 204
        refused(client.get(f"{API}/{pid}/next"), 404, "was not found")
        assert [p["id"] for p in client.get(API).json()["projects"]] == [
            from_collection["id"],
            searched["id"],
        ]


def test_a_second_project_of_the_same_name_is_refused_case_and_spaces_aside(
    db_settings: Settings,
) -> None:
    name = "Triptans for acute migraine"
    taken = (f"You already have a screening project named “{name}”", "Choose another name")
    with client_for(db_settings) as (_, client):
        import_review(client)
        first = new_project(client, name=name)
        body = refused(
            client.post(
                API,
                json={"name": "  triptans FOR acute   migraine ", "source": {"kind": "library"}},
            ),
            409,
            *taken,
            f"open “{name}” from your screening projects",
        )
        assert body["code"] == "conflict"
        assert [p["id"] for p in client.get(API).json()["projects"]] == [first["id"]]

        # Renaming another project to it is refused too; a project keeps its own name in
        # another case, and any free name.
        other = new_project(client, name="Eletriptan only")
        refused(
            client.patch(f"{API}/{other['id']}", json={"name": "TRIPTANS for acute migraine"}),
            409,
            *taken,
        )
        assert client.get(f"{API}/{other['id']}").json()["name"] == "Eletriptan only"
        recased = client.patch(f"{API}/{first['id']}", json={"name": "Triptans for Acute Migraine"})
        assert recased.status_code == 200, recased.text
        assert recased.json()["name"] == "Triptans for Acute Migraine"
        renamed = client.patch(f"{API}/{other['id']}", json={"name": "Eletriptan, adults"})
        assert renamed.status_code == 200 and renamed.json()["name"] == "Eletriptan, adults"

        # A deleted project's name is free again.
        assert client.delete(f"{API}/{first['id']}").status_code == 204
        assert new_project(client, name=name)["name"] == name


def _with_file_ids(review: Review) -> tuple[Review, dict[str, str]]:
    """The review as a CSV with an ID column (T001, ...): the records' own ids in the file."""
    rows = list(csv.DictReader(io.StringIO(review.csv_bytes.decode())))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["ID", *rows[0]])
    writer.writeheader()
    ids = {}
    for n, row in enumerate(rows, start=1):
        ids[row["title"]] = f"T{n:03}"
        writer.writerow({"ID": ids[row["title"]], **row})
    return replace(review, csv_bytes=out.getvalue().encode()), ids


def test_record_ids_mean_the_same_in_the_list_the_routes_and_every_export(
    db_settings: Settings,
) -> None:
    with client_for(db_settings) as (_, client):
        review, file_ids = _with_file_ids(triptans())
        import_review(client, review)
        pid = new_project(client)["id"]
        listed = client.get(f"{API}/{pid}/records").json()["records"]
        # Two ids with two names: the project's (every route takes it), the file's own.
        by_id = {r["record_id"]: r for r in listed}
        assert {r["source_record_id"] for r in listed} == set(file_ids.values())
        assert all(file_ids[r["title"]] == r["source_record_id"] for r in listed)

        table = client.get(f"{API}/{pid}/export", params={"format": "csv"}).text
        exported = list(csv.DictReader(io.StringIO(table.removeprefix("\ufeff"))))
        assert list(exported[0])[:3] == ["record_id", "source_record_id", "title"]
        assert {(r["record_id"], r["source_record_id"]) for r in exported} == {
            (r["record_id"], r["source_record_id"]) for r in listed
        }
        # The export's record_id finds the record again, and takes a decision on it.
        row = exported[0]
        shown = client.get(f"{API}/{pid}/records/{row['record_id']}")
        assert shown.status_code == 200, shown.text
        assert shown.json()["record"]["title"] == row["title"] == by_id[row["record_id"]]["title"]
        decided = client.post(
            f"{API}/{pid}/decisions", json={"record_id": row["record_id"], "decision": "maybe"}
        )
        assert decided.status_code == 200, decided.text
        again = client.get(f"{API}/{pid}/export", params={"format": "csv"}).text
        assert [
            r["decision"]
            for r in csv.DictReader(io.StringIO(again.removeprefix("\ufeff")))
            if r["record_id"] == row["record_id"]
        ] == ["maybe"]

        # RIS keeps the file's id as ID and names the project's; so does BibTeX.
        ris = rispy.loads(client.get(f"{API}/{pid}/export", params={"format": "ris"}).text)
        assert {
            (
                next(n for n in e["notes"] if n.startswith("Screening record id: ")).split(": ")[1],
                e["id"],
            )
            for e in ris
        } == {(r["record_id"], r["source_record_id"]) for r in listed}
        bib = parse_string(client.get(f"{API}/{pid}/export", params={"format": "bibtex"}).text)
        assert {
            {f.key: f.value for f in e.fields}["screening_record_id"] for e in bib.entries
        } == set(by_id)
