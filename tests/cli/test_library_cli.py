"""``import``, ``library``, ``export`` and ``sources`` commands on real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from scholarstream.cli import app
from scholarstream.errors import InvalidInputError
from tests.conftest import SHARED_DATA

EXPORTS = SHARED_DATA / "exports" / "asysd_testthat"
runner = CliRunner()


def run(data_dir: Path, *args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, ["--data-dir", str(data_dir), *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_import_search_show_export_round_trip(data_dir: Path, tmp_path: Path) -> None:
    code, out, _ = run(data_dir, "import", EXPORTS / "scopus.ris", EXPORTS / "wos_test.ris")
    assert code == 0, out
    assert "scopus.ris" in out and "wos_test.ris" in out
    assert " 10 " in out and " 50 " in out  # imported counts in the summary table

    code, out, _ = run(data_dir, "import", EXPORTS / "scopus.ris")
    assert code == 0
    assert "already in library" in out

    code, out, _ = run(data_dir, "library", "search", "taurine", "--json")
    assert code == 0
    page = json.loads(out)
    assert page["total"] == 3
    (item,) = [i for i in page["items"] if i["record"]["ids"].get("doi") == "10.3390/ani15010003"]

    code, out, _ = run(data_dir, "library", "show", item["id"])
    assert code == 0 and json.loads(out)["record"]["authors"][0]["family"] == "Furlanello"

    target = tmp_path / "library.bib"
    code, _, err = run(data_dir, "export", "--format", "bibtex", "--out", target)
    assert code == 0, err
    assert "Exported 60 records" in err
    assert target.read_text(encoding="utf-8").count("\n@") + 1 >= 60

    code, out, _ = run(data_dir, "export", "--format", "json")
    assert code == 0 and len(json.loads(out)) == 60

    code, out, err = run(data_dir, "export", "--format", "json", "--query", "taurine")
    assert code == 0, err
    assert "Exported 3 records" in err
    assert "10.3390/ani15010003" in {record["ids"].get("doi") for record in json.loads(out)}


def test_records_are_named_by_the_identifiers_people_know(data_dir: Path) -> None:
    assert run(data_dir, "import", EXPORTS / "scopus.ris")[0] == 0
    code, out, _ = run(data_dir, "library", "search", "taurine")
    assert code == 0
    assert "10.3390/ani15010003" in out  # the DOI, not the library's internal id
    page = json.loads(run(data_dir, "library", "search", "taurine", "--json")[1])
    assert not any(str(item["id"]) in out for item in page["items"])

    code, out, _ = run(data_dir, "library", "show", "https://doi.org/10.3390/ANI15010003")
    assert code == 0 and json.loads(out)["record"]["ids"]["doi"] == "10.3390/ani15010003"

    cli = [sys.executable, "-m", "scholarstream", "--data-dir", str(data_dir)]
    missing = subprocess.run(
        [*cli, "library", "show", "10.9999/not-in-the-library"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode != 0
    said = " ".join(missing.stderr.split())
    assert "No record in your library has the identifier 10.9999/not-in-the-library" in said
    assert "library search" in said

    code, out, _ = run(data_dir, "library", "delete", "10.3390/ani15010003")
    assert code == 0 and "Deleted" in out and "taurine" in out.lower()
    assert run(data_dir, "library", "show", "10.3390/ani15010003")[0] != 0


def test_bad_input_says_what_to_do(data_dir: Path, tmp_path: Path) -> None:
    expected = {
        ("import", str(tmp_path / "missing.ris")): "Not a file",
        ("export", "--format", "docx"): "bibtex",  # the formats there are
        (
            "library",
            "search",
            "x",
            "--year-from",
            "2020",
            "--year-to",
            "2000",
        ): "first year (2020) is after the last (2000)",
    }
    for args, explanation in expected.items():
        result = subprocess.run(
            [sys.executable, "-m", "scholarstream", "--data-dir", str(data_dir), *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 2, result.stderr
        assert "Error:" in result.stderr and "What to do:" in result.stderr
        assert explanation in result.stderr

    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01\x02")
    code, out, err = run(data_dir, "import", junk, EXPORTS / "scopus.ris")
    assert code == 1
    assert "junk.bin" in err and "Cannot tell the format" in err
    assert "scopus.ris" in out  # the good file was still imported

    broken = tmp_path / "broken.ris"
    broken.write_text("TY  - JOUR\nAU  - Doe, J\nER  - \n", encoding="utf-8")
    code, out, err = run(data_dir, "import", broken)
    assert code == 0
    assert "record 1" in err


def test_sources_list_and_library_search(data_dir: Path) -> None:
    code, out, _ = run(data_dir, "sources", "list", "--json")
    assert code == 0
    infos = {info["name"]: info for info in json.loads(out)}
    assert infos["google_scholar"]["configured"] is False
    assert "SERPAPI" in (infos["google_scholar"]["api_key_setting"] or "")
    assert infos["library"]["configured"] is True

    run(data_dir, "import", EXPORTS / "scopus.ris")
    code, out, _ = run(data_dir, "sources", "search", "library", "taurine", "--json")
    assert code == 0 and json.loads(out)["total"] == 1

    result = runner.invoke(app, ["--data-dir", str(data_dir), "sources", "search", "nowhere", "x"])
    assert isinstance(result.exception, InvalidInputError)
    assert "pubmed" in (result.exception.hint or "")


def test_import_merges_duplicates_and_split_undoes_one(data_dir: Path, tmp_path: Path) -> None:
    from tests.library.copies import BIBTEX, RIS

    ris = tmp_path / "zotero.ris"
    ris.write_text(RIS, encoding="utf-8")
    bib = tmp_path / "zotero.bib"
    bib.write_text(BIBTEX, encoding="utf-8")
    code, out, err = run(data_dir, "import", ris, bib)
    assert code == 0, err
    assert "merged into existing" in out and "duplicates in file" in out
    assert "scholarstream library merges" in out
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if "zotero." in line}
    assert [cell.strip() for cell in rows["zotero.bib"].split("│")[3:8]] == [
        "0",
        "4",
        "0",
        "0",
        "0",
    ]

    code, out, _ = run(data_dir, "library", "merges", "--json")
    assert code == 0
    page = json.loads(out)
    assert page["total"] == 4
    merge = page["items"][0]
    code, out, _ = run(data_dir, "library", "merges")
    assert code == 0 and "merged duplicates" in out and "what matched" in out

    code, out, _ = run(data_dir, "library", "split", merge["id"])
    assert code == 0
    assert "its own record again" in out and "will not be merged again" in out
    again = runner.invoke(app, ["--data-dir", str(data_dir), "library", "split", merge["id"]])
    assert again.exit_code != 0 and "already split" in str(again.exception)
    wrong = runner.invoke(app, ["--data-dir", str(data_dir), "library", "split", "not-an-id"])
    assert isinstance(wrong.exception, InvalidInputError)
    assert "not a merge id" in str(wrong.exception)

    code, out, _ = run(data_dir, "library", "find-duplicates")
    assert code == 0 and "Compared 5 records: no duplicates found." in out
