"""Damaged files through the real import paths: ``scholarstream import`` and
``POST /api/v1/library/imports``. What survives is imported, what was skipped is
reported with the reason, a file that cannot be read at all is refused with what to do
(exit 1 / HTTP 422, never a crash or a 500), and the records saved before stay."""

from __future__ import annotations

import codecs
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from scholarstream.bootstrap import create_app
from scholarstream.cli import app
from scholarstream.db import upgrade
from scholarstream.settings import load_settings
from tests.helpers import make_runtime
from tests.papers.damage import EXPORTS, gzipped_efetch, read, record_start, replace, samples

runner = CliRunner()


def damaged_ris() -> tuple[bytes, int]:
    """20 Web of Science records: record 3's TY line damaged, a NUL for the 4th letter of
    record 5's title, and the file cut in the middle of record 8. Returns the bytes and
    how many records survive."""
    wos = samples()["wos_test.ris"]
    cut = (record_start(wos, 7) + wos.ends[7]) // 2
    data = replace(wos.data[:cut], record_start(wos, 2), b"X")  # "TY  - " -> "XY  - "
    title = data.index(b"\nTI  - ", record_start(wos, 4)) + len(b"\nTI  - ")
    return replace(data, title + 3, b"\x00"), 6


def test_the_damaged_ris_file_keeps_what_it_should() -> None:
    data, surviving = damaged_ris()
    wos = samples()["wos_test.ris"]
    kept = [wos.titles[index] for index in (0, 1, 3, 4, 5, 6)]
    kept[3] = kept[3][:3] + "\ufffd" + kept[3][4:]  # the NUL, shown as damage

    outcome = read(data, "damaged.ris", None)

    assert outcome.titles == kept and len(kept) == surviving
    assert [p.record_number for p in outcome.problems] == [3, 8]


# -- CLI ----------------------------------------------------------------------------------


def cli(data_dir: Path, *args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, ["--data-dir", str(data_dir), *map(str, args)])
    # A crash shows as an exception other than the exit the command chose.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def table_rows(out: str) -> list[list[str]]:
    """The cells of the rows of the summary table Rich drew."""
    return [
        [cell.strip() for cell in line.strip().strip("│").split("│")]
        for line in out.splitlines()
        if line.count("│") >= 5
    ]


def library_titles(data_dir: Path) -> list[str]:
    code, out, err = cli(data_dir, "export", "--format", "json")
    assert code == 0, err
    return [record["title"] for record in json.loads(out)]


def test_cli_imports_what_survives_and_refuses_what_cannot_be_read(
    data_dir: Path, tmp_path: Path
) -> None:
    code, out, _ = cli(data_dir, "import", EXPORTS / "scopus.ris")
    assert code == 0 and " 10 " in out
    before = library_titles(data_dir)

    ris_bytes, surviving = damaged_ris()
    files: dict[str, bytes] = {
        "damaged.ris": ris_bytes,
        "efetch.xml.gz": gzipped_efetch()[:9000],  # cut off in transfer
        "empty.ris": b"",
        "notes[b]x.csv": b"id,[/b] not a title\n1,x\n",  # Rich markup in a name and a message
        "references.xlsx": b"PK\x03\x04" + bytes(range(256)) * 4,
        "utf16.ris": codecs.BOM_UTF16_LE
        + samples()["scopus.ris"].data.decode("utf-8-sig").encode("utf-16-le"),
    }
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)

    code, out, err = cli(data_dir, "import", *(tmp_path / name for name in files))

    assert code == 1  # some files could not be read at all
    err = " ".join(err.split())  # Rich wraps long lines
    assert "damaged.ris (record 3, line" in err and "does not start with a 'TY - ' line" in err
    assert "damaged.ris (record 8, line" in err and "unterminated" in err
    assert "efetch.xml.gz" in err and "compressed (.gz) file is cut off" in err
    assert "empty.ris is empty" in err and "empty.ris: empty.ris" not in err  # named once
    assert "notes[b]x.csv" in err and "[/b] not a title" in err  # printed as text
    assert "references.xlsx" in err and "not a text file" in err
    assert "Check that this is the file you meant" in err  # what to do, for the empty one
    assert "save a spreadsheet as CSV first" in err
    rows = {cells[0]: cells[1:] for cells in table_rows(out)}
    # format, added, merged into existing, duplicates in file, already in library, skipped
    assert rows["damaged.ris"] == ["RIS", str(surviving), "0", "0", "0", "2"]
    assert rows["utf16.ris"] == ["RIS", "0", "0", "0", "10", "0"]  # the records of scopus.ris
    assert rows["efetch.xml.gz"][0] == "PubMed XML" and rows["efetch.xml.gz"][5] == "2"

    after = library_titles(data_dir)
    assert set(before) <= set(after)  # nothing saved before is lost
    assert len(after) == len(before) + surviving + int(rows["efetch.xml.gz"][1])


# -- HTTP ---------------------------------------------------------------------------------


@pytest.fixture
def client(data_dir: Path) -> Iterator[TestClient]:
    settings = load_settings(data_dir=data_dir)
    upgrade(settings.app_database_url)
    with TestClient(create_app(make_runtime(settings)), base_url="http://127.0.0.1") as client:
        yield client


def upload(client: TestClient, name: str, content: bytes, **form: str) -> Any:
    return client.post(
        "/api/v1/library/imports",
        files={"file": (name, content)},
        data=form,
        headers={"Origin": "http://127.0.0.1"},
    )


def total(client: TestClient) -> int:
    count: int = client.get("/api/v1/library/records").json()["total"]
    return count


def test_http_import_reports_skipped_records_and_refuses_unreadable_files(
    client: TestClient,
) -> None:
    assert upload(client, "scopus.ris", (EXPORTS / "scopus.ris").read_bytes()).status_code == 201
    assert total(client) == 10

    ris_bytes, surviving = damaged_ris()
    damaged = upload(client, "damaged.ris", ris_bytes)
    assert damaged.status_code == 201, damaged.text
    report = damaged.json()
    assert (report["format"], report["imported"], report["skipped"]) == ("ris", surviving, 2)
    assert [(p["record_number"], "skipped" in p["message"]) for p in report["problems"]] == [
        (3, True),
        (8, True),
    ]

    archive = upload(client, "efetch.xml.gz", gzipped_efetch()[:9000])
    assert archive.status_code == 201, archive.text
    cut_off = archive.json()
    assert cut_off["format"] == "pubmed-xml"
    assert "compressed (.gz) file is cut off" in cut_off["problems"][-1]["message"]

    refused = {
        "empty.ris": (b"", "empty"),
        "blank.ris": (b"\n\n   \r\n", "empty"),
        "references.xlsx": (b"PK\x03\x04" + bytes(range(256)) * 4, "not a text file"),
        "broken.gz": (b"\x1f\x8b\x07" + b"\x00" * 40, "cannot be unpacked"),
        "notes.csv": (b"id,heading\n1,x\n", "no title column"),
        "words.bib": (b"just some words\n", "not a BibTeX file"),
    }
    for name, (content, reason) in refused.items():
        response = upload(client, name, content)
        assert response.status_code == 422, (name, response.text)
        body = response.json()
        assert body["code"] == "invalid_input" and reason in body["message"], name
        assert body["hint"], name

    unicode = upload(
        client,
        "scopus16.ris",
        codecs.BOM_UTF16_LE
        + (EXPORTS / "scopus.ris").read_text(encoding="utf-8-sig").encode("utf-16-le"),
    )
    assert unicode.status_code == 201
    assert (unicode.json()["imported"], unicode.json()["duplicates"]) == (0, 10)

    # Nothing saved before was lost; the damaged files added what survived of them.
    assert total(client) == 10 + surviving + cut_off["imported"]
    found = client.get("/api/v1/library/records", params={"q": "taurine"}).json()
    assert found["total"] == 1


def test_http_import_of_a_gzip_with_junk_after_it_keeps_every_record(client: TestClient) -> None:
    whole = gzip.compress((EXPORTS / "scopus.ris").read_bytes(), mtime=0)
    response = upload(client, "scopus.ris.gz", whole + b"\x00\x00trailing junk")
    assert response.status_code == 201
    report = response.json()
    assert (report["imported"], report["skipped"]) == (10, 1)
    assert "junk follows its end" in report["problems"][0]["message"]
