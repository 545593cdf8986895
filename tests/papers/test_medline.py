"""MEDLINE / .nbib text: Biopython's real PubMed exports, a current-style record with
per-author affiliations, ORCIDs and a retraction, and broken records."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest

from scholarstream.errors import InvalidInputError
from scholarstream.papers import Paper
from scholarstream.papers.formats import RecordProblem, read_file, read_medline
from tests.conftest import SHARED_DATA

FIXTURES = SHARED_DATA / "api_fixtures" / "ncbi_eutils_biopython"


def _split(items: list[Paper | RecordProblem]) -> tuple[list[Paper], list[RecordProblem]]:
    papers = [item for item in items if isinstance(item, Paper)]
    problems = [item for item in items if isinstance(item, RecordProblem)]
    return papers, problems


def _read(path: Path) -> tuple[list[Paper], list[RecordProblem]]:
    items = [item for item in read_file(path) if isinstance(item, Paper | RecordProblem)]
    return _split(items)


def _read_text(text: str, name: str = "test.nbib") -> tuple[list[Paper], list[RecordProblem]]:
    items = read_medline(io.BytesIO(text.encode()), name)
    return _split([item for item in items if isinstance(item, Paper | RecordProblem)])


@pytest.mark.parametrize(
    ("name", "pmids"),
    [
        ("Medline__pubmed_result1.txt", ["12230038"]),
        ("Medline__pubmed_result2.txt", ["16403221", "16377612", "14871861", "14630660"]),
        ("Medline__pubmed_result3.txt", ["23039619"]),
    ],
)
def test_real_pubmed_exports_keep_their_pmids(name: str, pmids: list[str]) -> None:
    papers, problems = _read(FIXTURES / name)
    assert problems == []
    assert [paper.record_id for paper in papers] == pmids
    assert [paper.ids.pmid for paper in papers] == pmids
    assert all(paper.provenance[0].source == "medline" for paper in papers)


def test_fields_of_a_real_record() -> None:
    papers, _ = _read(FIXTURES / "Medline__pubmed_result2.txt")
    scop = papers[0]
    assert scop.title == "A high level interface to SCOP and ASTRAL implemented in python."
    assert scop.ids.doi == "10.1186/1471-2105-7-10"  # AID [doi], not the [pii]
    assert scop.ids.pmcid == "PMC1373603"
    assert [a.name for a in scop.authors] == [
        "Casbon, James A",
        "Crooks, Gavin E",
        "Saqi, Mansoor A S",
    ]
    # An AD before the authors (older records) belongs to the first author.
    assert scop.authors[0].affiliations[0].startswith("Bioinformatics, Institute of Cell")
    assert scop.authors[1].affiliations == []
    assert (scop.venue, scop.volume, scop.pages) == ("BMC bioinformatics", "7", "10")
    assert scop.issn == "1471-2105"
    assert (scop.year, scop.language) == (2006, "eng")
    # DP "2006" has no day; DEP 20060110 (same year) gives it.
    assert scop.published == dt.date(2006, 1, 10)
    assert scop.publication_types == ["Evaluation Studies", "Journal Article"]
    assert "Information Storage and Retrieval" in scop.mesh_terms  # "/*methods" dropped
    assert "Database Management Systems" in scop.mesh_terms  # "*" dropped
    assert scop.abstract is not None
    assert scop.abstract.startswith("BACKGROUND: Benchmarking algorithms in structural")
    assert "\n" not in scop.abstract  # wrapped lines are joined, not paragraphs

    genome = papers[1]
    assert genome.title == (
        "GenomeDiagram: a python package for the visualization of large-scale genomic data."
    )
    assert (genome.published, genome.issue, genome.pages) == (dt.date(2006, 3, 1), "5", "616-7")


def test_mesh_heading_continued_on_the_next_line() -> None:
    papers, _ = _read(FIXTURES / "Medline__pubmed_result3.txt")
    paper = papers[0]
    assert "High-Intensity Focused Ultrasound Ablation" in paper.mesh_terms
    assert paper.ids.doi == "10.1118/1.4748329"  # from LID as well as AID
    assert paper.authors[0].affiliations == [
        "School of Biomedical Engineering, Shanghai Jiao Tong University, Shanghai, "
        "People's Republic of China."
    ]
    assert paper.published is None and paper.year == 2012  # DP "2012 Oct"


CURRENT = """\
PMID- 31000001
OWN - NLM
STAT- MEDLINE
IS  - 1932-6203 (Electronic)
IS  - 1932-6203 (Linking)
VI  - 14
IP  - 4
DP  - 2019 Apr 12
TI  - A study of things that were later
      retracted.
LID - e0215000 [pii]
LID - 10.1371/journal.pone.0215000 [doi]
AB  - Background text.
FAU - Doe, Jane Q
AU  - Doe JQ
AUID- ORCID: https://orcid.org/0000-0002-1825-0097
AD  - Dept A, Uni X, City, Country.
AD  - Dept B, Uni Y, City, Country.
FAU - Roe, Richard
AU  - Roe R
AD  - Dept C, Uni Z, City, Country.
CN  - The Things Consortium
LA  - eng
PT  - Journal Article
PT  - Retracted Publication
TA  - PLoS One
JT  - PloS one
OT  - things
OT  - later
RIN - PLoS One. 2021 Jan 5;16(1):e0245000. doi: 10.1371/journal.pone.0245000. PMID: 33400001
PMC - PMC6460000
MH  - Humans
MH  - *Research Design/statistics & numerical data

PMID- 31000002
TI  - Second.
AU  - Solo H
"""


def test_current_record_with_orcids_affiliations_and_retraction() -> None:
    papers, problems = _read_text(CURRENT)
    assert problems == []
    paper = papers[0]
    assert paper.title == "A study of things that were later retracted."
    doe, roe, consortium = paper.authors
    assert (doe.family, doe.given, doe.orcid) == ("Doe", "Jane Q", "0000-0002-1825-0097")
    assert doe.affiliations == ["Dept A, Uni X, City, Country.", "Dept B, Uni Y, City, Country."]
    assert roe.affiliations == ["Dept C, Uni Z, City, Country."] and roe.orcid is None
    assert consortium.name == "The Things Consortium" and consortium.family is None
    assert paper.published == dt.date(2019, 4, 12)
    assert paper.ids.doi == "10.1371/journal.pone.0215000"
    assert paper.ids.pmcid == "PMC6460000"
    assert paper.keywords == ["things", "later"]
    assert paper.mesh_terms == ["Humans", "Research Design"]
    assert paper.venue == "PloS one"
    assert paper.retraction is not None
    assert paper.retraction.doi == "10.1371/journal.pone.0245000"
    assert paper.retraction.notice.startswith("Retraction in: PLoS One. 2021")
    # A record with only AU (initials) still splits the name.
    assert papers[1].authors[0].family == "Solo" and papers[1].authors[0].given == "H"


def test_record_without_title_is_reported_and_the_others_read() -> None:
    text = (FIXTURES / "Medline__pubmed_result2.txt").read_text()
    blocks = text.strip("\n").split("\n\n")
    assert len(blocks) == 4
    blocks[1] = "\n".join(
        line
        for line in blocks[1].splitlines()
        if not line.startswith("TI  -") and not line.startswith("      data.")
    )
    broken = "\n" + "\n\n".join(blocks) + "\n"
    papers, problems = _read_text(broken, "broken.nbib")
    assert [paper.ids.pmid for paper in papers] == ["16403221", "14871861", "14630660"]
    assert len(problems) == 1
    expected_line = broken.splitlines().index("PMID- 16377612") + 1
    assert (problems[0].file, problems[0].record_number) == ("broken.nbib", 2)
    assert problems[0].line == expected_line
    assert "title" in problems[0].message


def test_text_that_is_not_medline_is_refused() -> None:
    with pytest.raises(InvalidInputError) as caught:
        _read_text("Some notes\nabout papers\n", "notes.txt")
    assert "notes.txt" in caught.value.message
