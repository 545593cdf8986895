"""Deduplication outside biomedicine (issue 25): journal furniture with short, generic
titles, parts, series and conference versions must never merge; their copies written
differently must. Through the public API only; no network."""

from __future__ import annotations

from typing import Any

from scholarstream.papers import Author, Paper, Record
from scholarstream.papers.dedup import Verdict, compare, find_clusters, record_keys

EDITOR = "Rai, Arun"


def paper(title: str, **fields: Any) -> Paper:
    names = fields.pop("authors", EDITOR)
    ids = {k: fields.pop(k) for k in ("doi",) if k in fields}
    return Paper.model_validate(
        {
            "title": title,
            "authors": [Author.parse(name) for name in names.split(";")] if names else [],
            "ids": ids,
            **fields,
        }
    )


def verdict(a: Record, b: Record) -> Verdict:
    return compare(record_keys(a), record_keys(b)).verdict


MISQ = {"venue": "MIS Quarterly", "volume": "42", "year": 2018}


def comments(issue: str, pages: str, doi: str | None = None, **extra: Any) -> Paper:
    fields: dict[str, Any] = {**MISQ, "issue": issue, "pages": pages, **extra}
    if doi:
        fields["doi"] = doi
    return paper("Editor's Comments", **fields)


# -- generic titles: furniture words, possessives ------------------------------------------


def test_editorials_of_one_volume_in_other_issues_stay_apart() -> None:
    items = [comments(str(n), f"{n * 100 + 1}-{n * 100 + 3}") for n in range(1, 5)]
    assert verdict(items[0], items[1]) is Verdict.DISTINCT
    assert find_clusters(items) == [[0], [1], [2], [3]]


def test_editorials_on_page_one_of_each_issue_stay_apart() -> None:
    """Per-issue pagination: every issue's editorial starts on page 1."""
    first, second = comments("1", "1-2"), comments("2", "1-2")
    assert verdict(first, second) is Verdict.DISTINCT


def test_an_editorial_without_issue_does_not_join_two_issues() -> None:
    """A copy without issue or pages could join both; a cluster never holds both issues."""
    bare = paper("Editor's Comments", **MISQ)
    one, two = comments("1", "1-3"), comments("2", "4-6")
    assert find_clusters([one, bare, two]) == [[0], [1], [2]]
    copy = paper("Editor's comments", venue="MIS Q.", volume="42", pages="pp. 1-3", year=2018)
    clusters = find_clusters([one, copy, two])
    assert [0, 2] not in clusters and sorted(map(len, clusters)) in ([1, 1, 1], [1, 2])


def test_generic_titles_with_other_dois_stay_apart_even_on_the_same_page() -> None:
    a = comments("1", "1-2", doi="10.25300/MISQ/2018/42.1.01")
    b = comments("1", "1-2", doi="10.25300/MISQ/2018/42.1.02")
    assert verdict(a, b) is Verdict.DISTINCT


def test_book_reviews_in_one_issue_on_other_pages_stay_apart() -> None:
    a = paper("Book Review", authors="Lee, Allen S.", **MISQ, issue="3", pages="901-903")
    b = paper("Book Review", authors="Lee, Allen S.", **MISQ, issue="3", pages="904-906")
    c = paper("Book review", authors="Markus, M. Lynne", **MISQ, issue="3")
    assert find_clusters([a, b, c]) == [[0], [1], [2]]


def test_possessive_titles_are_generic() -> None:
    a = paper("Chair's Message", venue="SIGMOD Record", year=2000, authors="Snodgrass, R T")
    b = paper("Chair's Message", venue="ACM SIGMOD Record", year=2000, authors="Snodgrass, R T")
    assert verdict(a, b) is Verdict.DISTINCT


def test_copies_of_an_editorial_written_differently_merge() -> None:
    publisher = comments("1", "1-3", doi="10.25300/MISQ/2018/42.1.01")
    no_doi = paper(
        "EDITOR'S COMMENTS",
        authors="Rai, A.",
        venue="Management Information Systems Quarterly",
        volume="42",
        pages="pp. 1-3",
        year=2018,
    )
    doi_only = paper("Editor's comments", authors="", doi="10.25300/MISQ/2018/42.1.01")
    assert verdict(publisher, no_doi) is Verdict.DUPLICATE
    assert verdict(publisher, doi_only) is Verdict.DUPLICATE
    assert find_clusters([publisher, no_doi, doi_only]) == [[0, 1, 2]]


# -- issues and pages -------------------------------------------------------------------------


def test_a_specific_title_in_two_issues_is_a_paper_in_two_parts() -> None:
    title = "Platform ecosystems and complementor strategy: a research agenda"
    common = {"authors": "Benbya, Hind; Gregor, Shirley", **MISQ}
    first = paper(title, issue="2", pages="501-520", **common)
    second = paper(title, issue="3", pages="801-820", **common)
    no_pages = paper(title, issue="3", **common)
    assert verdict(first, second) is Verdict.DISTINCT
    assert verdict(first, no_pages) is Verdict.DISTINCT
    assert verdict(second, no_pages) is Verdict.DUPLICATE


def test_issue_numbers_are_compared_as_numbers() -> None:
    title = "Technical debt in large software systems: an empirical study"
    base = {"venue": "IEEE Transactions on Software Engineering", "volume": "44", "year": 2018}
    a = paper(title, issue="No. 3", pages="pp. 201-220", **base)
    b = paper(title, issue="3", pages="201-20", **{**base, "venue": "IEEE Trans. Softw. Eng."})
    double = paper(title, issue="3-4", pages="201", **base)
    assert verdict(a, b) is Verdict.DUPLICATE
    assert verdict(a, double) is Verdict.DUPLICATE
    article_number = paper(title, issue="791", pages="201-220", **base)  # not an issue
    assert verdict(b, article_number) is Verdict.DUPLICATE


def test_a_publisher_before_the_journal_name_is_the_same_journal() -> None:
    title = "UniSQL's next-generation object-relational database management system"
    a = paper(title, authors="D'Andrea, Albert; Janus, Phil", venue="SIGMOD Record", year=1996)
    b = paper(title, authors="Janus, Phil; D'Andrea, A", venue="ACM SIGMOD Record", year=1996)
    assert verdict(a, b) is Verdict.DUPLICATE


# -- series, conference versions, titles the input gives to several works --------------------


def test_parts_of_a_series_stay_apart() -> None:
    common = {"authors": "Hevner, Alan R.", **MISQ}
    one = paper("Design science research in information systems, Part 1", issue="2", **common)
    two = paper("Design science research in information systems, Part 2", issue="3", **common)
    assert verdict(one, two) is Verdict.DISTINCT


def test_a_conference_version_and_the_journal_article_stay_apart() -> None:
    title = "Lean construction scheduling under uncertainty in engineering practice"
    authors = "Leidner, Dorothy E.; Hevner, Alan R."
    article = paper(
        title,
        authors=authors,
        venue="Journal of Construction Engineering and Management",
        volume="144",
        issue="1",
        pages="25-49",
        year=2018,
    )
    conference = paper(
        title,
        authors=authors,
        venue="Proceedings of the International Conference on Construction Engineering",
        pages="1-15",
        year=2017,
    )
    same_year = conference.model_copy(update={"year": 2018})
    assert find_clusters([article, conference, same_year]) == [[0], [1], [2]]


def test_a_column_title_in_every_issue_is_shared_by_several_works() -> None:
    """ "Reminiscences on influential papers" is no furniture word, but the input has it
    in other years: bare records of it (no volume, pages or identifier) are not merged."""
    column = "Reminiscences on influential papers"
    records = [
        paper(column, authors="Ross, Kenneth A.", venue="SIGMOD Record", year=year)
        for year in (2000, 2000, 2001, 2001, 2002)
    ]
    assert find_clusters(records) == [[0], [1], [2], [3], [4]]


def test_three_bare_records_of_one_title_written_three_ways_stay_apart() -> None:
    title = "XPath processing in a nutshell"
    a = paper(title, authors="Gottlob, G; Koch, C; Pichler, R", venue="SIGMOD Record", year=2003)
    b = paper(title, authors="Pichler, R; Koch, C; Gottlob, G", venue="SIGMOD Record", year=2003)
    c = paper(
        title, authors="Gottlob, G; Koch, C; Pichler, R", venue="ACM SIGMOD Record", year=2003
    )
    assert find_clusters([a, c]) == [[0, 1]]
    assert find_clusters([a, b, c]) == [[0], [1], [2]]


def test_copies_of_a_shared_title_still_merge_by_volume() -> None:
    """A conference abstract and the later paper share a title: each one's copies merge by
    venue, volume and authors."""
    title = "Increased dipeptidyl peptidase-4 accelerates vascular aging in mice"
    authors = "Lei, Y; Yang, G; Cheng, X W"
    abstract = {"authors": authors, "venue": "Circulation", "volume": "136", "year": 2017}
    paper_ = {"authors": authors, "venue": "Int J Cardiol", "volume": "243", "year": 2017}
    records = [
        paper(title, **abstract),
        paper(title, **abstract, issue="Supplement 1"),
        paper(title, **paper_, pages="444-450"),
        paper(title, **paper_, pages="444-50"),
    ]
    assert find_clusters(records) == [[0, 1], [2, 3]]


# -- numbered events: "4th" and "fourth" ---------------------------------------------------


def test_a_numbered_workshop_report_matches_its_copy_with_the_ordinal_in_words() -> None:
    venue = {"venue": "SIGMOD Record", "year": 1999, "authors": "Etzion, Opher"}
    digits = paper("Report on NGITS'99: The 4th International Workshop on Next Generation", **venue)
    words = paper(
        "Report on NGITS'99: the fourth international workshop on next generation", **venue
    )
    assert verdict(digits, words) is Verdict.DUPLICATE


def test_reports_on_other_editions_of_a_workshop_stay_apart() -> None:
    venue = {"venue": "SIGMOD Record", "year": 1999, "authors": "Etzion, Opher"}
    fourth = paper("Report on the fourth international workshop on information systems", **venue)
    fifth = paper("Report on the fifth international workshop on information systems", **venue)
    assert verdict(fourth, fifth) is Verdict.DISTINCT
