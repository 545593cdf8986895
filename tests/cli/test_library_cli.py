"""``import``, ``library``, ``export`` and ``sources`` commands on real files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scholarstream.cli import app
from scholarstream.cli.context import console, err_console
from scholarstream.errors import InvalidInputError, NotFoundError, ScholarStreamError
from tests.conftest import SHARED_DATA

EXPORTS = SHARED_DATA / "exports" / "asysd_testthat"
runner = CliRunner()


@pytest.fixture(autouse=True)
def eighty_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the commands print is checked at 80 columns, a terminal's default."""
    for printer in (console, err_console):
        monkeypatch.setattr(printer, "width", 80)


def run(data_dir: Path, *args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, ["--data-dir", str(data_dir), *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def failure(data_dir: Path, *args: str | Path) -> ScholarStreamError:
    """The error a command ends with (the command line prints its message and hint)."""
    result = runner.invoke(app, ["--data-dir", str(data_dir), *map(str, args)])
    assert result.exit_code != 0 and isinstance(result.exception, ScholarStreamError), result
    return result.exception


def printed(data_dir: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """The command run as a person runs it: its exit code and what it printed."""
    return subprocess.run(
        [sys.executable, "-m", "scholarstream", "--data-dir", str(data_dir), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "COLUMNS": "80"},
    )


def summary_rows(out: str) -> dict[str, list[str]]:
    """The import summary's rows by file name (a long name wraps over several lines)."""
    rows: dict[str, list[str]] = {}
    name = ""
    for line in out.splitlines():
        if line.count("│") < 5:
            continue
        cells = [cell.strip() for cell in line.split("│")]
        if cells[1]:  # a new row (a wrapped name continues with empty cells)
            name = cells[0]
            rows[name] = cells[1:]
        else:
            rows[name + cells[0]] = rows.pop(name)
            name += cells[0]
    return rows


def test_import_search_show_export_round_trip(data_dir: Path, tmp_path: Path) -> None:
    code, out, _ = run(data_dir, "import", EXPORTS / "scopus.ris", EXPORTS / "wos_test.ris")
    assert code == 0, out
    rows = summary_rows(out)
    assert rows["scopus.ris"] == ["RIS", "10", "0", "0", "0", "0"]
    assert rows["wos_test.ris"] == ["RIS", "50", "0", "0", "0", "0"]

    code, out, _ = run(data_dir, "import", EXPORTS / "scopus.ris")
    assert code == 0
    assert summary_rows(out)["scopus.ris"] == ["RIS", "0", "0", "0", "10", "0"]

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

    code, out, err = run(data_dir, "export", "--format", "ris", "--type", "Review")
    assert code == 0, err
    assert "Exported 1 record as RIS." in err  # one record, not "1 records"


def test_search_words_need_no_quotes(data_dir: Path) -> None:
    assert run(data_dir, "import", EXPORTS / "scopus.ris")[0] == 0
    code, out, _ = run(data_dir, "library", "search", "taurine", "deficiency")
    assert code == 0
    # Ranked by any of the words, and said so.
    assert "have one or more of the words “taurine deficiency”, best first" in out
    quoted = json.loads(run(data_dir, "library", "search", "taurine deficiency", "--json")[1])
    code, out, _ = run(data_dir, "library", "search", "taurine", "deficiency", "--json")
    assert code == 0
    assert json.loads(out) == quoted and quoted["total"] > 0


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
        ("library", "search", "x", "--year-from", "99"): "The first year must be 1000 or later",
        ("export", "--format", "ris", "--year-to", "3000"): "The last year must be 2999 or earlier",
    }
    for args, explanation in expected.items():
        result = subprocess.run(
            [sys.executable, "-m", "scholarstream", "--data-dir", str(data_dir), *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 2, result.stderr
        said = " ".join(result.stderr.split())
        assert "Error:" in said and "What to do:" in said
        assert explanation in said
        assert "year_from" not in said and "year_to" not in said  # no internal names

    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01\x02")
    notes = tmp_path / "reading-list.txt"
    notes.write_text("Papers to read next week\n- the taurine ones\n", encoding="utf-8")
    code, out, err = run(data_dir, "import", junk, notes, EXPORTS / "scopus.ris")
    assert code == 1
    said = " ".join(err.split())
    for name in ("junk.bin", "reading-list.txt"):
        # Named once, not "junk.bin: junk.bin ..."; the formats read are listed.
        assert said.count(name) == 1 and f"{name} is in an unrecognised format" in said
    assert "MEDLINE (.nbib) file" not in said
    assert "RIS (.ris, .txt)" in said and "BibTeX (.bib, .bibtex)" in said
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
    assert "scholarstream library merges" in " ".join(out.split())
    assert summary_rows(out)["zotero.bib"] == ["BibTeX", "0", "4", "0", "0", "0"]

    code, out, _ = run(data_dir, "library", "merges", "--json")
    assert code == 0
    page = json.loads(out)
    assert page["total"] == 4
    merge = next(m for m in page["items"] if m["kept"]["title"].startswith("Canagliflozin"))
    short = merge["id"].replace("-", "")[:8]
    code, out, _ = run(data_dir, "library", "merges")
    assert code == 0 and "4 merged duplicates, newest first" in out
    # At 80 columns: a short id, no UUID; each side's file, and what only one side has.
    assert all(len(line) <= 80 for line in out.splitlines())
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", out)
    block = out[out.index(short) :].split("\n\n")[0]
    said = " ".join(block.split())
    assert "matched on: same DOI" in said
    assert "kept: from zotero.ris · DOI 10.1056/nejmoa1611925" in said
    assert "copy: from zotero.bib · PMID 28605608" in said

    code, out, _ = run(data_dir, "library", "split", short[:6])  # any unique start
    assert code == 0
    said = " ".join(out.split())
    assert "its own record again (from zotero.bib" in said and "will not be merged again" in said
    assert "already split" in str(failure(data_dir, "library", "split", short))
    wrong = failure(data_dir, "library", "split", "not-an-id")
    assert isinstance(wrong, InvalidInputError) and "is not a merge id" in wrong.message
    empty = failure(data_dir, "library", "split", "")
    assert empty.message == "No merge id given."
    assert isinstance(failure(data_dir, "library", "split", "ffffffff"), NotFoundError)

    code, out, _ = run(data_dir, "library", "find-duplicates")
    assert code == 0 and "Compared 5 records: no duplicates found." in out


def test_an_export_that_finds_nothing_writes_nothing_and_fails(
    data_dir: Path, tmp_path: Path
) -> None:
    assert run(data_dir, "import", EXPORTS / "scopus.ris")[0] == 0
    kept = tmp_path / "mine.ris"
    kept.write_text("TY  - JOUR\nTI  - My earlier export\nER  - \n", encoding="utf-8")

    result = printed(data_dir, "export", "--format", "ris", "--query", "zebrafish", "--out", kept)

    assert result.returncode == 1
    said = " ".join(result.stderr.split())
    assert "Nothing matched the words “zebrafish”: nothing was exported." in said
    assert "Try fewer or other words" in said and "scholarstream library search" in said
    assert kept.read_text(encoding="utf-8") == "TY  - JOUR\nTI  - My earlier export\nER  - \n"
    assert not list(tmp_path.glob("*.partial"))
    error = failure(data_dir, "export", "--format", "ris", "--year-from", "2030")
    assert isinstance(error, NotFoundError)
    assert error.message == "Nothing matched the records of 2030 or later: nothing was exported."


def test_search_says_what_it_found_and_what_to_try(data_dir: Path) -> None:
    assert run(data_dir, "import", EXPORTS / "scopus.ris")[0] == 0

    code, out, _ = run(data_dir, "library", "search", "zebrafish")
    assert code == 0
    assert " ".join(out.split()) == (
        "No record matches the words “zebrafish”. Try fewer or other words."
    )
    assert "┏" not in out  # no empty table

    code, out, _ = run(data_dir, "library", "search", "taurine")
    assert out.splitlines()[0] == "1 record has “taurine”"
    assert all(len(line) <= 80 for line in out.splitlines())

    error = failure(data_dir, "library", "search", "taurine", "--type", "Reveiw")
    assert isinstance(error, InvalidInputError)
    assert error.message.startswith(
        "No record in your library has the publication type “Reveiw”. The types it holds: "
    )
    assert "Review (1)" in error.message and "Article (" in error.message
    assert error.hint == "Give one of these (case does not matter), or leave the type out."


def test_find_duplicates_dry_run_lists_the_groups_and_merges_nothing(
    data_dir: Path, tmp_path: Path
) -> None:
    from tests.library.copies import RIS

    ris = tmp_path / "zotero.ris"
    ris.write_text(RIS, encoding="utf-8")
    assert run(data_dir, "import", ris)[0] == 0
    # A copy with the PMID only, then a record with both: the first stays apart on import...
    bare = tmp_path / "pubmed.ris"
    bare.write_text(
        "TY  - JOUR\nAU  - Marso, Steven P.\nTI  - Liraglutide and cardiovascular outcomes in "
        "type 2 diabetes.\nPY  - 2016\nAN  - 27295427\nDB  - MEDLINE\nER  -\n",
        encoding="utf-8",
    )
    both = tmp_path / "embase.ris"
    both.write_text(
        "TY  - JOUR\nAU  - Marso, S. P.\nTI  - Liraglutide and Cardiovascular Outcomes in Type "
        "2 Diabetes\nT2  - N Engl J Med\nPY  - 2016\nVL  - 375\nSP  - 311\n"
        "DO  - 10.1056/NEJMoa1603827\nAN  - 27295427\nDB  - MEDLINE\nER  -\n",
        encoding="utf-8",
    )
    assert run(data_dir, "import", bare)[0] == 0
    assert run(data_dir, "import", both)[0] == 0

    code, out, _ = run(data_dir, "library", "find-duplicates", "--dry-run")
    assert code == 0
    said = " ".join(out.split())
    assert "Compared 5 records: 1 copy of 1 work would be merged (nothing was merged)." in said
    assert "matched on: same PMID" in said and "copy: from pubmed.ris" in said
    scan = json.loads(run(data_dir, "library", "find-duplicates", "--dry-run", "--json")[1])
    assert (scan["dry_run"], scan["merged"], len(scan["candidates"])) == (True, 0, 1)
    assert json.loads(run(data_dir, "library", "search", "--json")[1])["total"] == 5

    code, out, _ = run(data_dir, "library", "find-duplicates")
    assert "merged 1 duplicate of 1 work" in " ".join(out.split())
    assert json.loads(run(data_dir, "library", "search", "--json")[1])["total"] == 4


def test_long_file_names_are_shown_whole_at_80_columns(data_dir: Path, tmp_path: Path) -> None:
    name = "zotero-export-of-the-canine-cardiology-review-2024.ris"
    long = tmp_path / name
    long.write_bytes((EXPORTS / "scopus.ris").read_bytes())
    code, out, _ = run(data_dir, "import", long)
    assert code == 0
    assert summary_rows(out)[name] == ["RIS", "10", "0", "0", "0", "0"]
    assert all(len(line) <= 80 for line in out.splitlines())


def test_collections_tags_and_notes_from_the_terminal(data_dir: Path, tmp_path: Path) -> None:
    assert run(data_dir, "import", EXPORTS / "scopus.ris", EXPORTS / "wos_test.ris")[0] == 0

    code, out, _ = run(data_dir, "library", "collection", "add", "Taurine", "--query", "taurine")
    assert code == 0 and " ".join(out.split()) == (
        "Made the collection “Taurine”: added 3 records; it holds 3 records."
    )
    code, out, _ = run(
        data_dir, "library", "collection", "add", "taurine", "10.3390/ani15010003", "PMID:99999999"
    )
    assert code != 0  # an identifier the library does not have: nothing added
    code, out, _ = run(data_dir, "library", "collection", "add", "taurine", "10.3390/ani15010003")
    assert "added 0 records (1 was in it already); it holds 3 records" in " ".join(out.split())

    code, out, _ = run(data_dir, "library", "collections")
    assert code == 0 and "Taurine" in out and " 3 " in out

    code, out, _ = run(data_dir, "library", "tag", "add", "include, DCM", "--collection", "taurine")
    assert "Tagged 3 records (6 tags added)." in out
    code, out, _ = run(data_dir, "library", "tag", "remove", "dcm", "10.3390/ani15010003")
    assert "Removed 1 tag from 1 record." in out
    code, out, _ = run(data_dir, "library", "tags")
    assert out.splitlines() == ["include (3 records)", "DCM (2 records)"]

    code, out, _ = run(data_dir, "library", "note", "10.3390/ani15010003", "Reference intervals.")
    assert code == 0 and out.startswith("Saved the note of")
    code, out, _ = run(data_dir, "library", "note", "10.3390/ani15010003")
    assert "Reference intervals." in out

    page = json.loads(
        run(data_dir, "library", "search", "--collection", "TAURINE", "--has-note", "--json")[1]
    )
    assert [item["note"] for item in page["items"]] == ["Reference intervals."]
    code, out, _ = run(data_dir, "library", "search", "--tag", "dcm", "--collection", "Taurine")
    assert out.splitlines()[0] == "2 records in the collection “Taurine” and tagged “dcm”"

    target = tmp_path / "taurine.bib"
    code, _, err = run(
        data_dir, "export", "--format", "bibtex", "--collection", "taurine", "--out", target
    )
    assert code == 0 and "Exported 3 records as BibTeX" in err
    assert target.read_text(encoding="utf-8").count("@") == 3

    missing = failure(data_dir, "library", "search", "--collection", "Nope")
    assert isinstance(missing, NotFoundError)
    assert missing.message == "You have no collection named “Nope”. Your collections: “Taurine”."

    code, out, _ = run(data_dir, "library", "collection", "rename", "taurine", "Included")
    assert "Renamed to “Included” (3 records)." in out
    code, out, _ = run(data_dir, "library", "collection", "delete", "included")
    assert "its 3 records stay in your library" in " ".join(out.split())
    assert json.loads(run(data_dir, "library", "search", "--json")[1])["total"] == 60


def test_import_without_waiting_for_the_semantic_index_says_when_it_is_built(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCHOLARSTREAM_SEMANTIC__ENABLED", "true")
    code, out, err = run(data_dir, "import", "--no-index", EXPORTS / "scopus.ris")
    assert code == 0, err
    assert "scopus.ris" in out
    assert "Search by meaning covers the new records once they are embedded" in err
    # Waiting (the default) says nothing of the kind: the index is built before it returns.
    code, out, err = run(data_dir, "import", EXPORTS / "wos_test.ris")
    assert code == 0 and "once they are embedded" not in err


def test_library_merge_joins_two_records_the_rules_keep_apart(data_dir: Path) -> None:
    for name in ("zotero_export.ris", "zotero_export.bib"):
        assert run(data_dir, "import", EXPORTS / name)[0] == 0
    code, out, _ = run(data_dir, "library", "search", "mammary", "tumours", "dog", "breeds")
    assert code == 0
    pair = re.findall(r"Moe · 2001 · (\S+)", out)
    assert len(pair) == 2, out
    code, out, err = run(data_dir, "library", "merge", *pair)
    assert code == 0, err
    assert "Merged 1 copy into the record you keep" in out and "merged by hand" in out
    merge_id = re.search(r"^([0-9a-f]{8}) ", out, flags=re.MULTILINE)
    assert merge_id is not None, out
    code, out, _ = run(data_dir, "library", "search", "mammary", "tumours", "dog", "breeds")
    assert len(re.findall(r"Moe · 2001 · ", out)) == 1
    assert run(data_dir, "library", "split", merge_id.group(1))[0] == 0
    itself = failure(data_dir, "library", "merge", pair[0], pair[0])
    assert "cannot be merged into itself" in itself.message
