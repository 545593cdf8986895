"""RIS: real exports from Zotero, EndNote, Scopus, Web of Science and Ovid, broken records,
the writer, and reading a large file in bounded memory."""

from __future__ import annotations

import datetime as dt
import io
import re
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from scholarstream.errors import InvalidInputError
from scholarstream.papers import Author, Identifiers, Link, Paper
from scholarstream.papers.formats import RecordProblem, read_file, read_ris, write_ris
from tests.conftest import SHARED_DATA

EXPORTS = SHARED_DATA / "exports" / "asysd_testthat"
OVID = SHARED_DATA / "exports" / "mckeown_mir_2021_ovid_ris"


def _read(path: Path) -> tuple[list[Paper], list[RecordProblem]]:
    papers: list[Paper] = []
    problems: list[RecordProblem] = []
    for item in read_file(path):
        if isinstance(item, RecordProblem):
            problems.append(item)
        else:
            assert isinstance(item, Paper)
            papers.append(item)
    return papers, problems


def _read_bytes(data: bytes, name: str = "test.ris") -> tuple[list[Paper], list[RecordProblem]]:
    papers: list[Paper] = []
    problems: list[RecordProblem] = []
    for item in read_ris(io.BytesIO(data), name):
        if isinstance(item, RecordProblem):
            problems.append(item)
        else:
            assert isinstance(item, Paper)
            papers.append(item)
    return papers, problems


# The SOURCE notes count 68/9/49 for the last three: a grep for '^TY' misses the first
# record of each, whose TY line follows a byte-order mark. The files hold 69/10/50.
@pytest.mark.parametrize(
    ("path", "count"),
    [
        (EXPORTS / "zotero_export.ris", 1000),
        (EXPORTS / "ris_export.txt", 69),
        (EXPORTS / "scopus.ris", 10),
        (EXPORTS / "wos_test.ris", 50),
        (OVID / "0_Ovid_search_results_1_to_1000.ris", 1000),
        (OVID / "0_Ovid_search_results_1001_to_2000.ris", 1000),
        (OVID / "0_Ovid_search_results_3001_to_3130.ris", 130),
    ],
    ids=lambda value: value.name if isinstance(value, Path) else str(value),
)
def test_every_record_of_real_exports_is_read(path: Path, count: int) -> None:
    papers, problems = _read(path)
    assert problems == []
    assert len(papers) == count
    assert all(paper.provenance[0].source == "ris" for paper in papers)


def test_web_of_science_record_with_wrapped_abstract() -> None:
    papers, _ = _read(EXPORTS / "wos_test.ris")
    first = papers[0]
    assert first.title == (
        "Microangiography of the humeral condyle in Cocker Spaniel and non-Cocker Spaniel dogs"
    )
    assert [a.family for a in first.authors] == ["Larsen", "Roush", "McLaughlin", "Cash"]
    assert first.authors[0].given == "LJ"
    assert first.venue == "VETERINARY AND COMPARATIVE ORTHOPAEDICS AND TRAUMATOLOGY"
    assert (first.volume, first.issue, first.pages) == ("12", "3", "134-137")
    assert (first.year, first.published, first.language) == (1999, None, "English")
    assert first.issn == "0932-0814"
    assert first.publication_types == ["Journal Article"]
    assert first.keywords[:2] == ["humeral condylar fractures", "microangiography"]
    # The second paragraph is on an untagged line indented three spaces.
    paragraphs = (first.abstract or "").split("\n")
    assert len(paragraphs) == 2
    assert paragraphs[1].startswith("Microangiography was performed on four Cocker Spaniel")
    assert first.ids.present() == {}


def test_scopus_pmid_from_c2_issn_normalised_and_keywords_deduplicated() -> None:
    papers, _ = _read(EXPORTS / "scopus.ris")
    first, last = papers[0], papers[-1]
    assert first.ids.doi == "10.3390/ani15010003"
    assert first.issn == "2076-2615"  # "20762615 (ISSN)"
    assert first.authors[5].family == "Sanchez del Pulgar"
    assert first.keywords.count("taurine") == 1
    assert first.publisher == "Multidisciplinary Digital Publishing Institute (MDPI)"
    assert last.ids.pmid == "39243807"
    assert last.ids.doi == "10.1016/j.tvjl.2024.106241"
    assert last.publication_types == ["Journal Article", "Review"]
    assert sum(1 for paper in papers if paper.ids.pmid) == 5


def test_endnote_ris_keeps_ids_pmid_pmcid_and_one_keyword_per_line() -> None:
    papers, _ = _read(EXPORTS / "ris_export.txt")
    assert papers[0].record_id == "57530"
    assert papers[0].pages == "1535-41"
    assert papers[-1].record_id == "915"
    assert papers[-1].published == dt.date(2006, 7, 3)
    huang = next(paper for paper in papers if paper.record_id == "374")
    assert huang.ids.pmid == "22424230"  # AN with DP - NLM
    assert huang.ids.pmcid == "PMC3319071"  # C2
    assert huang.published == dt.date(2012, 3, 16)  # DA "Mar 16" with PY 2012
    assert huang.keywords[:3] == [
        "Alzheimer Disease/*drug therapy/genetics/*metabolism/physiopathology",
        "Amyloid beta-Protein Precursor/metabolism",
        "Animals",
    ]
    # Zotero/EndNote "internal-pdf://" attachments are not links anyone can open.
    assert not any(link.url.startswith("internal-pdf") for p in papers for link in p.links)


def test_ovid_medline_ids_are_pmids_and_journal_comes_from_jf() -> None:
    papers, _ = _read(OVID / "0_Ovid_search_results_1_to_1000.ris")
    first = papers[0]
    assert first.record_id == "30439442"
    assert first.ids.pmid == "30439442"
    assert first.ids.doi == "10.1016/j.toxicon.2018.11.007"
    assert first.venue == "Toxicon : official journal of the International Society on Toxinology"
    assert first.authors[0] == Author(name="White, Julian", family="White", given="Julian")
    assert first.year == 2018
    assert sum(1 for paper in papers if paper.ids.pmid) == 895
    # T2 holds the original-language title in Ovid MEDLINE, not the journal.
    norwegian = next(p for p in papers if p.title.startswith("Psychedelic drugs in the treatment"))
    assert norwegian.venue is not None and norwegian.venue.startswith("Tidsskrift for den Norske")


def test_ovid_embase_and_central_accessions_are_not_pmids() -> None:
    papers, _ = _read(OVID / "0_Ovid_search_results_1001_to_2000.ris")
    assert papers[0].record_id == "CN-01291099"
    assert papers[-1].record_id == "14235655"
    assert not any(paper.ids.pmid for paper in papers)
    # CENTRAL gives all authors on one A1 line as a Vancouver list.
    assert [a.family for a in papers[1].authors][:3] == ["Griffiths", "Johnson", "Carducci"]


def test_ovid_psycinfo_classification_is_not_a_type_and_doi_is_unescaped() -> None:
    papers, _ = _read(OVID / "0_Ovid_search_results_3001_to_3130.ris")
    assert papers[0].publication_types == ["Journal Article"]  # M3 "... [3233]" left out
    assert papers[1].ids.doi == "10.1016/0376-8716(76)90010-7"  # "%2876%2990010-7"
    assert papers[1].title == "Liberty Caps: Recreational hallucinogenic mushrooms."


def test_a_doi_or_a_number_in_m3_is_no_publication_type() -> None:
    # EndNote exports often put the DOI in M3 (here with no DO tag).
    papers, _ = _read(SHARED_DATA / "exports" / "asysd_testthat" / "ris_export.txt")
    synaptic = next(p for p in papers if p.title == "Alzheimer's Disease Is a Synaptic Failure")
    assert synaptic.ids.doi == "10.1126/science.1074069"
    assert synaptic.publication_types == ["Journal Article"]
    lines = (
        "TY  - JOUR\nTI  - A title\nDO  - 10.1000/kept\nM3  - 10.2000/other\nM3  - 12345\nER  - \n"
    )
    papers, problems = _read_bytes(lines.encode())
    assert problems == []
    assert (papers[0].ids.doi, papers[0].publication_types) == ("10.1000/kept", ["Journal Article"])


def test_bare_cr_line_endings_separate_tags() -> None:
    papers, problems = _read_bytes(b"TY  - JOUR\rTI  - A title\rDO  - 10.1000/XYZ\rER  - \r")
    assert problems == []
    assert (papers[0].title, papers[0].ids.doi) == ("A title", "10.1000/xyz")


# -- broken records -------------------------------------------------------------------------


def _scopus_records(count: int) -> list[list[str]]:
    """The first records of scopus.ris, each as its lines (ending with its ER line)."""
    text = (EXPORTS / "scopus.ris").read_text(encoding="utf-8-sig")
    records: list[list[str]] = [[]]
    for line in text.splitlines():
        if not line.strip() and not records[-1]:
            continue
        records[-1].append(line)
        if line.startswith("ER  -"):
            records.append([])
    return records[:count]


def _file(records: list[list[str]]) -> tuple[bytes, list[int]]:
    """The records joined by blank lines, and the line each record starts on."""
    lines: list[str] = []
    starts = []
    for record in records:
        starts.append(len(lines) + 1)
        lines.extend([*record, ""])
    return "\n".join(lines).encode(), starts


def test_record_without_title_is_reported_and_the_others_read() -> None:
    records = _scopus_records(3)
    records[1] = [line for line in records[1] if not line.startswith("TI  -")]
    data, starts = _file(records)
    papers, problems = _read_bytes(data, "broken.ris")
    assert [paper.title[:30] for paper in papers] == [
        "Development and Validation of ",
        "Assessing the Association Betw",
    ]
    assert len(problems) == 1
    assert (problems[0].file, problems[0].record_number) == ("broken.ris", 2)
    assert problems[0].line == starts[1]
    assert "title" in problems[0].message


def test_unterminated_record_is_reported_and_the_next_one_read() -> None:
    records = _scopus_records(3)
    records[1] = [line for line in records[1] if not line.startswith("ER  -")]
    data, starts = _file(records)
    papers, problems = _read_bytes(data)
    assert len(papers) == 2
    assert (problems[0].record_number, problems[0].line) == (2, starts[1])
    assert "unterminated" in problems[0].message


def test_record_that_lost_its_ty_line_is_reported() -> None:
    records = _scopus_records(3)
    records[1] = records[1][1:]
    data, starts = _file(records)
    papers, problems = _read_bytes(data)
    assert len(papers) == 2
    assert (problems[0].record_number, problems[0].line) == (2, starts[1])
    assert "TY" in problems[0].message


def test_file_cut_off_inside_the_last_record() -> None:
    records = _scopus_records(3)
    records[2] = records[2][:5]
    data, starts = _file(records)
    papers, problems = _read_bytes(data)
    assert len(papers) == 2
    assert (problems[0].record_number, problems[0].line) == (3, starts[2])


def test_text_that_is_not_ris_is_refused() -> None:
    with pytest.raises(InvalidInputError) as caught:
        _read_bytes(b"Dear colleague,\nplease find attached\n", "letter.ris")
    assert "letter.ris" in caught.value.message and caught.value.hint


# -- writing ------------------------------------------------------------------------------


def test_writer_emits_every_field_ris_holds() -> None:
    paper = Paper(
        record_id="rec-1",
        ids=Identifiers(doi="10.1000/ABC", pmid="12345", pmcid="PMC99"),
        title="A title",
        abstract="First paragraph.\nTI - looks like a tag",
        authors=[Author(name="Smith, Ann", family="Smith", given="Ann"), Author(name="WHO")],
        venue="Journal of Things",
        volume="3",
        issue="2",
        pages="10-19",
        publisher="Pub",
        issn="1234-5678; 8765-4321",
        language="English",
        published=dt.date(2019, 3, 12),
        publication_types=["Journal Article", "Review"],
        keywords=["alpha", "beta"],
        mesh_terms=["Humans"],
        links=[Link(url="https://x.org/a.pdf", kind="pdf"), Link(url="https://x.org/a")],
    )
    out = io.StringIO()
    assert write_ris([paper], out) == 1
    text = out.getvalue()
    for line in [
        "TY  - JOUR",
        "ID  - rec-1",
        "AU  - Smith, Ann",
        "AU  - WHO",
        "PY  - 2019",
        "DA  - 2019/03/12",
        "T2  - Journal of Things",
        "SP  - 10",
        "EP  - 19",
        "SN  - 1234-5678",
        "SN  - 8765-4321",
        "AN  - 12345",
        "DB  - PubMed",
        "C2  - PMC99",
        "KW  - Humans",
        "M3  - Review",
        "L1  - https://x.org/a.pdf",
        "UR  - https://x.org/a",
        " TI - looks like a tag",
        "ER  - ",
    ]:
        assert line in text.splitlines(), line
    again, problems = _read_bytes(text.encode())
    assert problems == []
    back = again[0]
    assert back.abstract == paper.abstract
    assert back.ids == paper.ids
    assert (back.published, back.pages, back.issn) == (paper.published, "10-19", paper.issn)
    assert back.keywords == ["alpha", "beta", "Humans"]
    assert back.links == paper.links


# -- streaming ----------------------------------------------------------------------------

RECORD = (
    "TY  - JOUR\nID  - {n}\nTI  - Synthetic record number {n} about streaming parsers\n"
    "AU  - Doe, Jane\nPY  - 2020\nT2  - Journal of Tests\nDO  - 10.1000/test.{n}\n"
    "AB  - {abstract}\nER  - \n\n"
)


def _large_file(path: Path, count: int) -> None:
    """Records with long abstracts: a file well past the memory bound that still reads in
    seconds under tracemalloc (which slows allocation-heavy code tenfold)."""
    abstract = "An abstract sentence repeated to give each record some weight. " * 160
    with path.open("w", encoding="utf-8") as out:
        for n in range(1, count + 1):
            out.write(RECORD.format(n=n, abstract=abstract))


def _consume(items: Iterator[object]) -> tuple[int, int]:
    papers = problems = 0
    for item in items:
        if isinstance(item, RecordProblem):
            problems += 1
        else:
            papers += 1
    return papers, problems


def test_large_file_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "large.ris"
    _large_file(path, 5_000)
    assert path.stat().st_size > 45_000_000
    tracemalloc.start()
    try:
        counts = _consume(read_file(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert counts == (5_000, 0)
    assert peak < 20 * 1024 * 1024, f"peak {peak / 1e6:.1f} MB"


def test_record_lines_numbered_like_an_editor_shows_them() -> None:
    data = b"\xef\xbb\xbf1.\r\nTY  - JOUR\r\nAU  - Doe, J\r\nER  - \r\n"
    _, problems = _read_bytes(data)
    assert problems[0].line == 2
    assert re.search(r"record 1 \(line 2\)", str(problems[0]))
