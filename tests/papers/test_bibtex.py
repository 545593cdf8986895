"""BibTeX: Zotero's real export, LaTeX decoding and encoding, macros, broken entries and
the writer's keys."""

from __future__ import annotations

import datetime as dt
import io

import pytest

from scholarstream.errors import InvalidInputError
from scholarstream.papers import Author, Identifiers, Link, Paper
from scholarstream.papers.formats import (
    RecordProblem,
    latex_to_text,
    read_bibtex,
    read_file,
    text_to_latex,
    write_bibtex,
)
from tests.conftest import SHARED_DATA

ZOTERO_BIB = SHARED_DATA / "exports" / "asysd_testthat" / "zotero_export.bib"


def _read_text(text: str, name: str = "test.bib") -> tuple[list[Paper], list[RecordProblem]]:
    papers: list[Paper] = []
    problems: list[RecordProblem] = []
    for item in read_bibtex(io.BytesIO(text.encode()), name):
        if isinstance(item, RecordProblem):
            problems.append(item)
        else:
            assert isinstance(item, Paper)
            papers.append(item)
    return papers, problems


def _zotero() -> dict[str, Paper]:
    papers = [item for item in read_file(ZOTERO_BIB) if isinstance(item, Paper)]
    return {paper.record_id or "": paper for paper in papers}


def test_zotero_export_reads_every_entry_with_its_key() -> None:
    items = list(read_file(ZOTERO_BIB))
    assert not [item for item in items if isinstance(item, RecordProblem)]
    assert len(items) == 1000
    keys = [item.record_id for item in items if isinstance(item, Paper)]
    assert keys[:3] == [
        "larsen_microangiography_1999",
        "wasielewska_molecular_2019",
        "gomes_generalized_2013",
    ]
    assert len(set(keys)) == 1000


def test_zotero_entry_fields() -> None:
    papers = _zotero()
    larsen = papers["larsen_microangiography_1999"]
    # Case-protecting braces ({Cocker}) are gone.
    assert larsen.title == (
        "Microangiography of the humeral condyle in Cocker Spaniel and non-Cocker Spaniel dogs"
    )
    assert [a.name for a in larsen.authors] == [
        "Larsen, LJ",
        "Roush, JK",
        "McLaughlin, RM",
        "Cash, WC",
    ]
    assert larsen.venue == "VETERINARY AND COMPARATIVE ORTHOPAEDICS AND TRAUMATOLOGY"
    assert (larsen.volume, larsen.issue, larsen.pages) == ("12", "3", "134-137")
    assert (larsen.year, larsen.published) == (1999, None)  # month = aug, no day
    assert (larsen.issn, larsen.language) == ("0932-0814", "English")
    assert larsen.keywords == [
        "blood supply",
        "Cocker Spaniels",
        "FRACTURES",
        "humeral condylar fractures",
        "microangiography",
    ]
    assert larsen.publication_types == ["Journal Article"]
    assert papers["wasielewska_molecular_2019"].ids.doi == "10.21521/mw.6330"


def test_zotero_latex_is_decoded() -> None:
    papers = _zotero()
    kaimio = papers["kaimio_survey_2017"].abstract or ""
    assert "early onset (< 1 year)" in kaimio  # {\textless}
    assert "31.8%, [95% confidence interval" in kaimio  # \%
    assert "\\" not in kaimio and "{" not in kaimio
    assert papers["butjels_cerebellar_2006"].keywords[-1] == "~"  # {\textasciitilde}
    # A braced name is one name, not "given family".
    assert papers["pennington_primary_2018"].authors[-1] == Author(
        name="Ben Walton", family="Ben Walton"
    )
    hardy = papers["hardy_chronic_1993"]
    assert hardy.publication_types == ["Conference Paper"]
    assert hardy.venue == "University of Minnesota System"  # booktitle
    assert hardy.title == "CHRONIC HEPATITIS IN COCKER-SPANIELS - ANOTHER SYNDROME"


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        (r"Schr{\"o}dinger and Erd\H{o}s", "Schrödinger and Erdős"),
        (r"{\'E}cole Polytechnique F{\'e}d{\'e}rale", "École Polytechnique Fédérale"),
        (r"Ni{\~n}o, Gar\c{c}on, \v{C}apek, {\aa}ngstr{\"o}m", "Niño, Garçon, Čapek, ångström"),
        (r"Stra{\ss}e {\o}re {\L}{\'o}d{\'z}", "Straße øre Łódź"),
        (r"p {\textless} 0.05 \& 10\% of \$5", "p < 0.05 & 10% of $5"),
        (r"\textit{in vivo} and \emph{E.~coli}", "in vivo and E. coli"),
        (r"$\beta$-cell 1990--2000---today", "\u03b2-cell 1990\u20132000\u2014today"),
        (r"H$_2$O and $^{13}$C", "H2O and 13C"),
        (r"{\'\i}ndice", "índice"),
    ],
)
def test_latex_decoding(latex: str, text: str) -> None:
    assert latex_to_text(latex) == text


@pytest.mark.parametrize(
    "text",
    [
        "50% & more_than #1 costs $5",
        "braces { and } alone, a \\backslash and ~tilde^caret",
        "double -- dash and triple --- dash stay as typed",
        "accents stay UTF-8: Schrödinger, Łódź",
        "\\'e is not an accent here",
    ],
)
def test_encoding_reads_back_unchanged(text: str) -> None:
    encoded = text_to_latex(text)
    assert encoded.count("{") == encoded.count("}")  # BibTeX needs balanced braces
    assert latex_to_text(encoded) == text


def test_macros_concatenation_comments_and_month_names() -> None:
    papers, problems = _read_text(
        """% a comment line
@comment{ignored, this is not an entry}
@string{jmb = "Journal of Molecular Biology"}
@preamble{"\\newcommand{\\noop}[1]{}"}
@Article{key1,
  title = "Quoted {Title}",
  journal = jmb # " (Part A)",
  year = 2001,
  month = mar,
  day = {7},
  author = {von Neumann, John and {Smith and Sons Ltd}},
  keywords = {alpha; {beta, gamma}; delta},
  eprint = {1707.08567v2},
  archiveprefix = {arXiv},
  pmid = {123456},
}
"""
    )
    assert problems == []
    paper = papers[0]
    assert paper.title == "Quoted Title"
    assert paper.venue == "Journal of Molecular Biology (Part A)"
    assert (paper.year, paper.published) == (2001, dt.date(2001, 3, 7))
    assert [a.name for a in paper.authors] == ["von Neumann, John", "Smith and Sons Ltd"]
    assert paper.keywords == ["alpha", "beta, gamma", "delta"]
    assert (paper.ids.arxiv_id, paper.ids.pmid) == ("1707.08567", "123456")


# -- broken entries -----------------------------------------------------------------------


def _zotero_entries(count: int) -> list[str]:
    chunks = [
        chunk for chunk in ZOTERO_BIB.read_text(encoding="utf-8").split("\n@") if chunk.strip()
    ]
    return ["@" + chunk.strip() + "\n" for chunk in chunks[:count]]


def _start_lines(text: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), 1) if line.startswith("@")]


def test_entry_with_unclosed_brace_is_reported_and_the_others_read() -> None:
    entries = _zotero_entries(3)
    entries[1] = entries[1].replace("spaniel dogs},", "spaniel dogs,", 1)
    assert entries[1] != _zotero_entries(3)[1]
    text = "\n".join(entries)
    papers, problems = _read_text(text, "broken.bib")
    assert [paper.record_id for paper in papers] == [
        "larsen_microangiography_1999",
        "gomes_generalized_2013",
    ]
    assert len(problems) == 1
    assert (problems[0].file, problems[0].record_number) == ("broken.bib", 2)
    assert problems[0].line == _start_lines(text)[1]


def test_entry_with_missing_comma_is_reported() -> None:
    entries = _zotero_entries(3)
    entries[2] = entries[2].replace("\tvolume = {43},", "\tvolume = 43", 1)
    assert "volume = 43\n" in entries[2]
    text = "\n".join(entries)
    papers, problems = _read_text(text)
    assert len(papers) == 2
    assert (problems[0].record_number, problems[0].line) == (3, _start_lines(text)[2])
    assert "volume" in problems[0].message


def test_entry_without_title_is_reported() -> None:
    entries = _zotero_entries(2)
    entries[0] = "\n".join(
        line for line in entries[0].splitlines() if not line.strip().startswith("title")
    )
    papers, problems = _read_text("\n".join(entries))
    assert [paper.record_id for paper in papers] == ["wasielewska_molecular_2019"]
    assert (problems[0].record_number, problems[0].line) == (1, 1)
    assert "title" in problems[0].message


def test_text_that_is_not_bibtex_is_refused() -> None:
    with pytest.raises(InvalidInputError):
        _read_text("just some words\n", "words.bib")


# -- writing ------------------------------------------------------------------------------


def _paper(**values: object) -> Paper:
    return Paper.model_validate({"title": "A Study of Things", **values})


def test_writer_keys_are_record_ids_or_generated_and_unique() -> None:
    records = [
        _paper(record_id="my key, with {bad} chars"),
        _paper(authors=[{"name": "Müller, Jörg", "family": "Müller", "given": "Jörg"}], year=2020),
        _paper(authors=[{"name": "Müller, Jörg", "family": "Müller", "given": "Jörg"}], year=2020),
        _paper(record_id="mueller2020study"),
    ]
    out = io.StringIO()
    assert write_bibtex(records, out) == 4
    papers, problems = _read_text(out.getvalue())
    assert problems == []
    assert [paper.record_id for paper in papers] == [
        "my_key_with_bad_chars",
        "muller2020study",
        "muller2020studya",
        "mueller2020study",
    ]


def test_writer_entry_types_escaping_and_fields() -> None:
    paper = _paper(
        title="50% of {braced} & under_scored -- text",
        authors=[Author(name="World Health Organization")],
        venue="Proc. of Things",
        pages="10-19",
        publication_types=["Conference Paper"],
        published=dt.date(2019, 3, 12),
        ids=Identifiers(doi="10.1000/x", arxiv_id="1707.08567"),
        keywords=["one, two", "three"],
        links=[Link(url="https://doi.org/10.1000/x", kind="doi"), Link(url="https://x.org/p")],
    )
    out = io.StringIO()
    write_bibtex([paper], out)
    text = out.getvalue()
    assert text.startswith("@inproceedings{")
    assert "  booktitle = {Proc. of Things},\n" in text
    assert "  pages = {10--19},\n" in text
    assert "  author = {{World Health Organization}},\n" in text
    assert "  month = mar,\n" in text and "  date = {2019-03-12},\n" in text
    assert "  url = {https://x.org/p},\n" in text
    assert r"\%" in text and r"\&" in text and r"\_" in text
    back = _read_text(text)[0][0]
    assert back.title == paper.title
    assert back.authors[0].name == "World Health Organization"
    assert (back.published, back.pages) == (paper.published, "10-19")
    assert back.keywords == ["one, two", "three"]
    assert (back.ids.doi, back.ids.arxiv_id) == ("10.1000/x", "1707.08567")
    assert back.publication_types == ["Conference Paper"]
