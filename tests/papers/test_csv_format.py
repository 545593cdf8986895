"""CSV: Zotero's export, the deduplication and screening benchmark tables, other tools'
column names, delimiters and encodings, broken rows and our own header."""

from __future__ import annotations

import csv
import datetime as dt
import io
from pathlib import Path

import pytest

from scholarstream.errors import InvalidInputError
from scholarstream.papers import Author, Identifiers, Link, Paper, Trial
from scholarstream.papers.formats import CSV_COLUMNS, RecordProblem, read_csv, read_file, write_csv
from tests.conftest import SHARED_DATA

EXPORTS = SHARED_DATA / "exports" / "asysd_testthat"
DEDUP = SHARED_DATA / "dedup"
COHEN = SHARED_DATA / "screening" / "Cohen_2006"


def _split(items: list[object]) -> tuple[list[Paper], list[RecordProblem]]:
    papers = [item for item in items if isinstance(item, Paper)]
    problems = [item for item in items if isinstance(item, RecordProblem)]
    assert len(papers) + len(problems) == len(items)
    return papers, problems


def _read(path: Path) -> tuple[list[Paper], list[RecordProblem]]:
    return _split(list(read_file(path)))


def _read_bytes(data: bytes, name: str = "test.csv") -> tuple[list[Paper], list[RecordProblem]]:
    return _split(list(read_csv(io.BytesIO(data), name)))


def test_zotero_csv() -> None:
    papers, problems = _read(EXPORTS / "zotero_export.csv")
    assert problems == []
    assert len(papers) == 1233
    first = papers[0]
    assert first.record_id == "ACSRAG7N"  # "Key"
    assert first.title == "Myoclonus in older Cavalier King Charles Spaniels."
    assert [a.name for a in first.authors] == [
        "Rotter, Carina",
        "Whittaker, Danielle",
        "Rusbridge, Clare",
    ]
    assert first.venue == "Journal of veterinary internal medicine"  # "Publication Title"
    assert first.issn == "1939-1676; 0891-6640"
    assert first.ids.doi == "10.1111/jvim.16404"
    # Zotero keeps PMID and PMCID in "Extra".
    assert (first.ids.pmid, first.ids.pmcid) == ("35319117", "PMC9151451")
    assert first.publication_types == ["Journal Article"]  # "journalArticle"
    assert first.keywords[:2] == ["*Dog Diseases/diagnostic imaging", "*Myoclonus/veterinary"]
    assert (first.year, first.published) == (2022, None)  # Date "2022-05"
    assert papers[2].published == dt.date(1979, 10, 6)  # Date "1979-10-06"
    assert all(paper.ids.pmid for paper in papers)


@pytest.mark.parametrize(
    ("name", "count"), [("cytology_screening", 1856), ("stroke", 1292), ("special_cases", 12)]
)
def test_deduplication_benchmark_tables_keep_their_ids(name: str, count: int) -> None:
    papers, problems = _read(DEDUP / name / "records_pre_merged.csv")
    assert problems == []
    assert len(papers) == count
    assert papers[0].record_id == "id_0000001"
    assert papers[-1].record_id == f"id_{count:07d}"


def test_deduplication_table_fields() -> None:
    papers, _ = _read(DEDUP / "stroke" / "records_pre_merged.csv")
    first = papers[0]
    assert first.title == (
        "Efficacy observation of batroxobin for treatment of vascular cognitive impairment. "
        "[Chinese]"
    )
    assert [a.family for a in first.authors] == ["Zhai", "Yue", "Hong", "Xu", "Liu"]  # " and "
    assert (first.year, first.volume, first.issue, first.pages) == (2010, "7", "2", "73-76")
    assert first.venue == "Chinese Journal of Cerebrovascular Diseases"
    assert first.publication_types == ["Journal Article"]  # ENTRYTYPE "article"
    special, _ = _read(DEDUP / "special_cases" / "records_pre_merged.csv")
    assert special[0].publication_types == ["Conference Paper"]  # "inproceedings"
    assert special[0].venue == "Americas Conference on Information Systems"  # booktitle


def test_latin1_file_with_record_id_column() -> None:
    papers, problems = _read(DEDUP / "asysd_diabetes" / "labelled_test_set.csv")
    assert problems == []
    assert len(papers) == 1845
    first = papers[0]
    assert first.record_id == "1"
    assert first.ids.doi == "10.1097/mol.0b013e3282ffaf82"
    assert first.issn == "0957-9672"  # the "isbn" column holds ISSNs
    # Byte 0xA9 is not UTF-8: the file is read as a legacy encoding, where it is "©".
    assert sum(1 for paper in papers if "\u00a9" in (paper.abstract or "")) == 504
    assert any(
        (paper.abstract or "").endswith("\u00a9 2008 Lippincott Williams & Wilkins Inc.")
        for paper in papers
    )


def test_screening_table_rows_without_title_are_reported() -> None:
    papers, problems = _read(COHEN / "ADHD.csv")
    assert len(papers) + len(problems) == 851
    assert len(problems) == 24
    assert (problems[0].record_number, problems[0].line) == (45, 46)
    assert "title" in problems[0].message
    first = papers[0]
    assert (first.record_id, first.ids.pmid, first.year) == ("1", "10051933", 1999)  # "1999.0"
    assert (first.authors[0].family, first.authors[0].given) == ("Reimer", "E J")


def test_other_tools_column_names_and_delimiters() -> None:
    covidence = (
        "Covidence #\tStudy\tTitle\tAuthors\tAbstract\tPublished Year\tPublished Month\t"
        "Journal\tVolume\tIssue\tPages\tAccession Number\tDOI\tRef\tTags\n"
        "#12\tHarris 2019\tA trial of things\tHarris J, Smith KL, van Berg A\tText\t2019\tMar\t"
        "J Things\t4\t1\t1-9\t30000001\t10.1000/t1\t7\tinclude\n"
    )
    papers, problems = _read_bytes(covidence.encode("utf-8"))
    assert problems == []
    paper = papers[0]
    assert (paper.record_id, paper.title, paper.year) == ("#12", "A trial of things", 2019)
    assert [(a.family, a.given) for a in paper.authors] == [
        ("Harris", "J"),
        ("Smith", "KL"),
        ("van Berg", "A"),
    ]
    assert (paper.ids.pmid, paper.ids.doi, paper.pages) == ("30000001", "10.1000/t1", "1-9")
    assert paper.keywords == []  # Covidence "Tags" are screening tags

    rayyan = (
        "key;title;authors;journal;issn;volume;issue;pages;year;month;day;publisher;"
        "pmc_id;pubmed_id;url;abstract;notes;doi;keywords\n"
        "rayyan-1;Second thing;Doe, Jane and Roe, R;J Other;1111-2222;5;;3-4;2020;6;15;Pub;"
        "PMC77;31000002;https://x.org/1;Abs;a note;10.1000/t2;k1; k2\n"
    )
    paper = _read_bytes(rayyan.encode("utf-8"))[0][0]
    assert paper.record_id == "rayyan-1"
    assert [a.name for a in paper.authors] == ["Doe, Jane", "Roe, R"]
    assert paper.published == dt.date(2020, 6, 15)
    assert (paper.ids.pmid, paper.ids.pmcid) == ("31000002", "PMC77")
    assert paper.links == [Link(url="https://x.org/1", kind="landing")]
    assert paper.keywords == ["k1"]  # the semicolon delimiter splits "k1; k2" into cells


def test_rows_are_numbered_by_the_line_they_start_on() -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["ID", "title", "abstract"])
    starts = []
    for n, (title, abstract) in enumerate(
        [("One", "two\nline abstract"), ("", "no title\nhere\neither"), ("Three", "x")], 1
    ):
        starts.append(out.getvalue().count("\n") + 1)
        writer.writerow([f"r{n}", title, abstract])
    papers, problems = _read_bytes(out.getvalue().encode(), "rows.csv")
    assert [paper.record_id for paper in papers] == ["r1", "r3"]
    assert papers[0].abstract == "two\nline abstract"
    assert (problems[0].record_number, problems[0].line) == (2, starts[1]) == (2, 4)
    assert str(problems[0]).startswith("rows.csv, record 2 (line 4): ")


def test_file_without_title_column_is_refused_with_its_columns() -> None:
    with pytest.raises(InvalidInputError) as caught:
        _read(DEDUP / "stroke" / "merged_record_ids.csv")
    assert "merged_ids" in caught.value.message
    assert caught.value.hint is not None and "title" in caught.value.hint


def test_writer_header_reads_back_every_column() -> None:
    paper = Paper(
        record_id="r-1",
        ids=Identifiers(
            doi="10.1000/a",
            pmid="123",
            pmcid="PMC4",
            arxiv_id="1707.08567",
            openalex_id="W123",
            s2_id="0" * 40,
            nct_id="NCT01234567",
        ),
        title='A "quoted", title',
        abstract="Para one;\nPara two",
        authors=[Author(name="Smith, Ann", family="Smith", given="Ann")],
        venue="J, Things",
        volume="1",
        issue="2",
        pages="3-4",
        publisher="Pub",
        issn="1234-5678",
        language="English",
        published=dt.date(2020, 1, 2),
        publication_types=["Journal Article", "Review"],
        mesh_terms=["Humans", "Mice"],
        keywords=["k1", "k2"],
        links=[Link(url="https://x.org/a;b=1"), Link(url="https://x.org/c")],
        citation_count=7,
    )
    trial = Trial(title="A registered trial", ids=Identifiers(nct_id="NCT07654321"))
    out = io.StringIO()
    assert write_csv([paper, trial], out) == 2
    text = out.getvalue()
    assert text.startswith("\ufeff" + ",".join(CSV_COLUMNS) + "\n")
    papers, problems = _read_bytes(text.encode("utf-8"))
    assert problems == []
    back = papers[0]
    assert back.model_dump(exclude={"provenance"}) == paper.model_dump(exclude={"provenance"})
    assert (papers[1].ids.nct_id, papers[1].venue) == ("NCT07654321", "ClinicalTrials.gov")
