"""Import, export, import again: every field the export format can hold comes back equal.

What each format holds is listed explicitly below; what it cannot hold is said next to it.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from scholarstream.papers import Author, Paper, Trial
from scholarstream.papers.formats import RecordProblem, get_format, read_file
from scholarstream.settings import LimitsSettings
from tests.conftest import SHARED_DATA

EXPORTS = SHARED_DATA / "exports" / "asysd_testthat"
OVID = SHARED_DATA / "exports" / "mckeown_mir_2021_ovid_ris"
DEDUP = SHARED_DATA / "dedup"
MEDLINE = SHARED_DATA / "api_fixtures" / "ncbi_eutils_biopython"

RIS_FIELDS = (
    "record_id",
    "title",
    "abstract",
    "authors",
    "venue",
    "volume",
    "issue",
    "pages",
    "publisher",
    "issn",
    "language",
    "year",
    "published",
    "publication_types",
    "keywords",
    "ids.doi",
    "ids.pmid",
    "ids.pmcid",
    "links",
)
"""RIS has no tag for arXiv/OpenAlex/S2/NCT ids, citation counts, retractions, ORCIDs or
per-author affiliations; MeSH terms are exported as keywords (KW)."""

BIBTEX_FIELDS = (
    "record_id",
    "title",
    "abstract",
    "authors",
    "venue",
    "volume",
    "issue",
    "pages",
    "publisher",
    "issn",
    "language",
    "year",
    "published",
    "publication_types",
    "keywords",
    "ids.doi",
    "ids.pmid",
    "ids.pmcid",
    "ids.arxiv_id",
    "first_url",
)
"""BibTeX holds one publication type (the entry type) and one url; no OpenAlex/S2/NCT ids,
citation counts, retractions, ORCIDs or affiliations; MeSH terms go into keywords."""

CSV_FIELDS = (
    "record_id",
    "title",
    "abstract",
    "authors",
    "venue",
    "volume",
    "issue",
    "pages",
    "publisher",
    "issn",
    "language",
    "year",
    "published",
    "publication_types",
    "keywords",
    "mesh_terms",
    "ids",
    "urls",
    "citation_count",
)
"""The CSV header holds every identifier; links keep their addresses but not their kinds,
and ORCIDs, affiliations and retractions have no column."""


def _value(paper: Paper, field: str) -> Any:
    if field == "authors":
        return [_person(author) for author in paper.authors]
    if field == "urls":
        return [link.url for link in paper.links]
    if field == "first_url":
        links = [link for link in paper.links if link.kind != "doi"] or paper.links
        return links[0].url if links else None
    value: Any = paper
    for part in field.split("."):
        value = getattr(value, part)
    return value


def _person(author: Author) -> tuple[str | None, ...]:
    """An author as the formats write one: "Family, Given" when split, else the name."""
    return (author.family, author.given) if author.family else (author.name,)


def _papers(items: Any) -> list[Paper]:
    records = list(items)
    problems = [item for item in records if isinstance(item, RecordProblem)]
    assert problems == [], problems[:3]
    return [item for item in records if isinstance(item, Paper)]


def _round_trip(papers: list[Paper], format_name: str) -> list[Paper]:
    file_format = get_format(format_name, for_export=True)
    assert file_format.write is not None and file_format.read is not None
    out = io.StringIO()
    assert file_format.write(papers, out) == len(papers)
    data = io.BytesIO(out.getvalue().encode("utf-8"))
    return _papers(
        file_format.read(data, f"export{file_format.export_extension}", LimitsSettings())
    )


def _assert_same(before: list[Paper], after: list[Paper], fields: tuple[str, ...]) -> None:
    assert len(after) == len(before)
    for index, (old, new) in enumerate(zip(before, after, strict=True)):
        for field in fields:
            assert _value(new, field) == _value(old, field), (index, field)


def _populated(papers: list[Paper], fields: tuple[str, ...]) -> set[str]:
    return {field for field in fields for paper in papers if _value(paper, field)}


@pytest.mark.parametrize(
    "path",
    [
        EXPORTS / "zotero_export.ris",
        EXPORTS / "ris_export.txt",
        EXPORTS / "scopus.ris",
        EXPORTS / "wos_test.ris",
        OVID / "0_Ovid_search_results_1_to_1000.ris",
        OVID / "0_Ovid_search_results_1001_to_2000.ris",
        OVID / "0_Ovid_search_results_3001_to_3130.ris",
    ],
    ids=lambda path: path.name,
)
def test_ris_round_trip(path: Path) -> None:
    papers = _papers(read_file(path))
    _assert_same(papers, _round_trip(papers, "ris"), RIS_FIELDS)


def test_ris_round_trip_exercises_every_listed_field() -> None:
    papers = [
        paper
        for path in (EXPORTS / "ris_export.txt", EXPORTS / "scopus.ris")
        for paper in _papers(read_file(path))
    ]
    assert _populated(papers, RIS_FIELDS) == set(RIS_FIELDS)


def test_bibtex_round_trip() -> None:
    papers = _papers(read_file(EXPORTS / "zotero_export.bib"))
    _assert_same(papers, _round_trip(papers, "bibtex"), BIBTEX_FIELDS)


def test_bibtex_round_trip_of_ris_records_with_links_and_pmids() -> None:
    """Records from RIS have no keys, several links and PMIDs: keys are generated, and the
    rest of what BibTeX holds (one type, one url) survives."""
    papers = _papers(read_file(EXPORTS / "ris_export.txt"))
    papers = [
        paper.model_copy(update={"publication_types": paper.publication_types[:1]})
        for paper in papers
    ]
    after = _round_trip(papers, "bibtex")
    fields = tuple(field for field in BIBTEX_FIELDS if field != "record_id")
    _assert_same(papers, after, fields)
    assert _populated(papers, fields) >= {"ids.pmid", "ids.pmcid", "first_url", "published"}


@pytest.mark.parametrize(
    "path",
    [
        EXPORTS / "zotero_export.csv",
        DEDUP / "asysd_diabetes" / "labelled_test_set.csv",
        DEDUP / "special_cases" / "records_pre_merged.csv",
        DEDUP / "stroke" / "records_pre_merged.csv",
        EXPORTS / "ris_export.txt",
        MEDLINE / "Medline__pubmed_result2.txt",
    ],
    ids=lambda path: path.name,
)
def test_csv_round_trip(path: Path) -> None:
    papers = _papers(read_file(path))
    _assert_same(papers, _round_trip(papers, "csv"), CSV_FIELDS)


@pytest.mark.parametrize(
    "path",
    [
        EXPORTS / "mendeley_export.xml",
        EXPORTS / "zotero_export.bib",
        EXPORTS / "ris_export.txt",
        MEDLINE / "Medline__pubmed_result2.txt",
        DEDUP / "asysd_diabetes" / "labelled_test_set.csv",
    ],
    ids=lambda path: path.name,
)
def test_json_round_trip_keeps_every_field(path: Path) -> None:
    papers = _papers(read_file(path))
    after = _round_trip(papers, "json")
    assert [paper.model_dump() for paper in after] == [paper.model_dump() for paper in papers]


def test_json_round_trip_of_trials() -> None:
    trial = Trial.model_validate(
        {
            "record_id": "NCT01234567",
            "ids": {"nct_id": "NCT01234567"},
            "title": "A trial",
            "phases": ["PHASE3"],
            "conditions": ["Asthma"],
            "interventions": [{"name": "Drug", "type": "DRUG"}],
            "start_date": "2018-01-01",
            "primary_outcomes": [{"measure": "FEV1"}],
            "has_results": True,
        }
    )
    out = io.StringIO()
    json_format = get_format("json", for_export=True)
    assert json_format.write is not None and json_format.read is not None
    json_format.write([trial], out)
    assert list(
        json_format.read(io.BytesIO(out.getvalue().encode()), "t.json", LimitsSettings())
    ) == [trial]
