"""EndNote XML: Zotero's and Mendeley's real exports, EndNote's own style-wrapped markup
with record numbers, and broken markup."""

from __future__ import annotations

import datetime as dt
import io
import re

import pytest

from scholarstream.errors import InvalidInputError
from scholarstream.papers import Link, Paper
from scholarstream.papers.formats import RecordProblem, read_endnote_xml, read_file
from tests.conftest import SHARED_DATA

EXPORTS = SHARED_DATA / "exports" / "asysd_testthat"


def _read_bytes(data: bytes, name: str = "test.xml") -> tuple[list[Paper], list[RecordProblem]]:
    papers: list[Paper] = []
    problems: list[RecordProblem] = []
    for item in read_endnote_xml(io.BytesIO(data), name):
        if isinstance(item, RecordProblem):
            problems.append(item)
        else:
            assert isinstance(item, Paper)
            papers.append(item)
    return papers, problems


def test_zotero_endnote_xml() -> None:
    items = list(read_file(EXPORTS / "zotero_export.xml"))
    papers = [item for item in items if isinstance(item, Paper)]
    assert len(items) == len(papers) == 1233
    first = papers[0]
    assert first.title == "Myoclonus in older Cavalier King Charles Spaniels."
    assert [a.family for a in first.authors] == ["Rotter", "Whittaker", "Rusbridge"]
    assert first.venue == "Journal of veterinary internal medicine"
    assert (first.volume, first.issue, first.pages) == ("36", "3", "1032-1038")
    assert first.issn == "1939-1676; 0891-6640"
    assert first.ids.doi == "10.1111/jvim.16404"
    assert (first.year, first.published, first.language) == (2022, None, "eng")  # "2022 May"
    assert first.publication_types == ["Journal Article"]
    assert first.keywords[0] == "*Dog Diseases/diagnostic imaging"
    assert first.abstract is not None and first.abstract.startswith("BACKGROUND: Myoclonus")
    assert "  " not in first.abstract
    assert first.record_id is None  # Zotero writes no rec-number
    assert first.provenance[0].source == "endnote-xml"
    assert sum(1 for paper in papers if paper.published) == 293


def test_mendeley_accession_numbers_are_pmids_and_generic_is_no_type() -> None:
    papers = [
        item for item in read_file(EXPORTS / "mendeley_export.xml") if isinstance(item, Paper)
    ]
    assert len(papers) == 1233
    assert papers[0].ids.pmid == "35319117"
    assert all(paper.ids.pmid for paper in papers)
    generic = papers[2]
    assert generic.title == "Collapsing Clumber spaniels."
    assert generic.publication_types == []
    assert sum(1 for paper in papers if not paper.publication_types) == 100


STYLE = '<style face="normal" font="default" size="100%">{}</style>'


def _styled(text: str) -> str:
    """EndNote wraps every value in style runs."""
    return STYLE.format(text)


ENDNOTE = f"""<?xml version="1.0" encoding="UTF-8" ?><xml><records>
<record><database name="My.enl" path="My.enl">My.enl</database>
<source-app name="EndNote" version="20.0">EndNote</source-app>
<rec-number>42</rec-number>
<ref-type name="Journal Article">17</ref-type>
<contributors><authors>
<author>{_styled("Smith, J. A.")}</author>
<author>{_styled("M")}{_styled("üller, K.")}</author>
</authors></contributors>
<titles><title>{_styled("Effect of ")}<style face="italic">E. coli</style>{_styled(" on things")}
</title><secondary-title>{_styled("J Things")}</secondary-title></titles>
<periodical><full-title>{_styled("Journal of Things")}</full-title></periodical>
<pages>{_styled("e101-e109")}</pages>
<volume>{_styled("7")}</volume>
<number>{_styled("2")}</number>
<keywords><keyword>{_styled("alpha")}</keyword><keyword>{_styled("beta")}</keyword></keywords>
<dates><year>{_styled("2019")}</year><pub-dates><date>{_styled("Mar 12")}</date></pub-dates>
</dates>
<isbn>{_styled("1234-5678 (Print)")}</isbn>
<accession-num>{_styled("30850001")}</accession-num>
<electronic-resource-num>{_styled("10.1000/THINGS.7")}</electronic-resource-num>
<urls><related-urls><url>{_styled("https://example.org/things")}</url></related-urls>
<pdf-urls><url>internal-pdf://0001/things.pdf</url></pdf-urls></urls>
<custom2>{_styled("PMC6400001")}</custom2>
<remote-database-name>{_styled("PubMed")}</remote-database-name>
<language>{_styled("eng")}</language>
</record>
<record><rec-number>43</rec-number><ref-type name="Book">6</ref-type>
<titles><title>An Embase record</title></titles>
<accession-num>621234567</accession-num>
<remote-database-name>Embase</remote-database-name></record>
</records></xml>
"""


def test_endnote_style_wrapped_record_with_record_number() -> None:
    papers, problems = _read_bytes(ENDNOTE.encode())
    assert problems == []
    paper = papers[0]
    assert paper.record_id == "42"
    assert paper.provenance[0].source_id == "42"
    assert paper.title == "Effect of E. coli on things"
    assert [a.name for a in paper.authors] == ["Smith, J. A.", "Müller, K."]
    assert paper.venue == "J Things"  # secondary-title before periodical
    assert (paper.volume, paper.issue, paper.pages) == ("7", "2", "e101-e109")
    assert paper.published == dt.date(2019, 3, 12)  # "Mar 12" with year 2019
    assert paper.issn == "1234-5678"
    assert paper.ids.doi == "10.1000/things.7"
    assert (paper.ids.pmid, paper.ids.pmcid) == ("30850001", "PMC6400001")
    assert paper.links == [Link(url="https://example.org/things", kind="landing")]
    assert paper.keywords == ["alpha", "beta"]
    embase = papers[1]
    assert (embase.record_id, embase.ids.pmid, embase.publication_types) == ("43", None, ["Book"])


def _zotero_records(count: int) -> tuple[str, list[str], str]:
    text = (EXPORTS / "zotero_export.xml").read_text(encoding="utf-8")
    records = re.findall(r"<record>.*?</record>", text, flags=re.DOTALL)[:count]
    return '<?xml version="1.0" encoding="UTF-8"?>\n<xml><records>\n', records, "</records></xml>\n"


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_record_with_broken_markup_is_reported_and_the_others_read() -> None:
    head, records, tail = _zotero_records(3)
    records[1] = records[1].replace("</title>", " & <b</title>", 1)
    text = head + "\n".join(records) + "\n" + tail
    papers, problems = _read_bytes(text.encode(), "broken.xml")
    assert [paper.title for paper in papers] == [
        "Myoclonus in older Cavalier King Charles Spaniels.",
        "Collapsing Clumber spaniels.",
    ]
    assert len(problems) == 1
    assert (problems[0].file, problems[0].record_number) == ("broken.xml", 2)
    assert problems[0].line == _line_of(text, records[1])
    assert "broken" in problems[0].message


def test_record_without_title_is_reported() -> None:
    head, records, tail = _zotero_records(3)
    records[2] = re.sub(r"<title>.*?</title>", "", records[2], count=1)
    text = head + "\n".join(records) + "\n" + tail
    papers, problems = _read_bytes(text.encode())
    assert len(papers) == 2
    assert (problems[0].record_number, problems[0].line) == (3, _line_of(text, records[2]))
    assert "title" in problems[0].message


def test_file_cut_off_inside_a_record() -> None:
    head, records, _ = _zotero_records(3)
    text = head + "\n".join(records)[:-300]
    papers, problems = _read_bytes(text.encode())
    assert len(papers) == 2
    assert problems[0].record_number == 3


def test_not_endnote_xml_is_refused() -> None:
    with pytest.raises(InvalidInputError):
        _read_bytes(b"this is not xml at all", "notes.xml")
    with pytest.raises(InvalidInputError):
        _read_bytes(b"<?xml version='1.0'?><PubmedArticleSet></PubmedArticleSet>", "p.xml")
