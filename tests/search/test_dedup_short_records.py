"""Deduplication of short records (issue 25, part 2): one database lists a work with
title, authors, venue and year only and drops stop words, the year, the venue, a subtitle
or a note; another lists it in full. Each rule merges such copies and keeps a near pair of
two works apart. Through the public API only; no network."""

from __future__ import annotations

from typing import Any

from scholarstream.papers import Author, Paper, Record
from scholarstream.papers.dedup import Verdict, compare, find_clusters, record_keys

AUTHORS = "Klein, Hans-Joachim; Weske, Mathias"


def paper(title: str, **fields: Any) -> Paper:
    names = fields.pop("authors", AUTHORS)
    return Paper.model_validate(
        {
            "title": title,
            "authors": [Author.parse(name) for name in names.split(";")] if names else [],
            **fields,
        }
    )


def verdict(a: Record, b: Record) -> Verdict:
    return compare(record_keys(a), record_keys(b)).verdict


SIGMOD = {"venue": "SIGMOD Record", "year": 1994}
ACM_SIGMOD = {"venue": "ACM SIGMOD Record", "year": 1994}


# -- stop words dropped ------------------------------------------------------------------------


def test_a_title_without_its_stop_words_is_the_same_title() -> None:
    full = paper("How to modify SQL queries in order to guarantee sure answers", **ACM_SIGMOD)
    terse = paper("How Modify SQL Queries Order Guarantee Sure Answers", **SIGMOD)
    assert verdict(full, terse) is Verdict.DUPLICATE


def test_a_title_that_differs_in_more_than_stop_words_stays_apart() -> None:
    full = paper("How to modify SQL queries in order to guarantee sure answers", **ACM_SIGMOD)
    other = paper("How Modify SQL Views Order Guarantee Fast Answers", **SIGMOD)
    assert verdict(full, other) is Verdict.DISTINCT


# -- a year missing on one side ---------------------------------------------------------------


def test_a_copy_without_year_merges_with_the_same_title_authors_and_venue() -> None:
    dated = paper("Efficient checking of temporal integrity constraints", **ACM_SIGMOD)
    undated = paper("Efficient Checking of Temporal Integrity Constraints", venue="SIGMOD Record")
    assert verdict(dated, undated) is Verdict.DUPLICATE


def test_a_copy_without_year_in_another_venue_stays_apart() -> None:
    dated = paper("Efficient checking of temporal integrity constraints", **ACM_SIGMOD)
    elsewhere = paper("Efficient checking of temporal integrity constraints", venue="VLDB Journal")
    assert verdict(dated, elsewhere) is not Verdict.DUPLICATE


# -- a venue missing on one side --------------------------------------------------------------


def test_a_copy_without_venue_merges_with_the_same_title_authors_and_year() -> None:
    full = paper("Generating spatiotemporal datasets on the WWW", **ACM_SIGMOD)
    short = paper("Generating Spatiotemporal Datasets on the WWW", year=1994)
    assert verdict(full, short) is Verdict.DUPLICATE


def test_a_copy_without_venue_needs_the_year_and_both_author_lists() -> None:
    full = paper("Generating spatiotemporal datasets on the WWW", **ACM_SIGMOD)
    later = paper("Generating Spatiotemporal Datasets on the WWW", year=1995)
    nobody = paper("Generating Spatiotemporal Datasets on the WWW", year=1994, authors="")
    assert verdict(full, later) is not Verdict.DUPLICATE
    assert verdict(full, nobody) is not Verdict.DUPLICATE


def test_a_copy_without_venue_but_with_its_own_pages_stays_apart() -> None:
    """Pages without a venue are not a short record: the copy may be another printing."""
    full = paper("Generating spatiotemporal datasets on the WWW", **ACM_SIGMOD)
    paged = paper("Generating spatiotemporal datasets on the WWW", year=1994, pages="1-10")
    assert verdict(full, paged) is not Verdict.DUPLICATE


# -- a subtitle or a note dropped ----------------------------------------------------------------


def test_a_title_without_its_subtitle_merges_in_the_same_venue_and_year() -> None:
    full = paper(
        "Constructing the next 100 database management systems: like the handyman or like "
        "the engineer?",
        **ACM_SIGMOD,
    )
    cut = paper("Constructing the Next 100 Database Management Systems", **SIGMOD)
    short_title = paper("Unix RDBMS: the next generation", **SIGMOD)
    long_title = paper(
        "Unix RDBMS: the next generation what are the Unix relational-database vendors doing "
        "to survive in the next generation of client/server environments",
        **ACM_SIGMOD,
    )
    assert verdict(full, cut) is Verdict.DUPLICATE
    assert verdict(short_title, long_title) is Verdict.DUPLICATE


def test_a_title_extended_by_furniture_is_another_item() -> None:
    """ "X: guest editor's introduction" introduces the section X, another item."""
    section = paper("Data management issues in electronic commerce", **ACM_SIGMOD)
    introduction = paper(
        "Data management issues in electronic commerce: guest editor's introduction", **ACM_SIGMOD
    )
    assert verdict(section, introduction) is not Verdict.DUPLICATE


def test_notes_a_database_appends_are_not_part_of_the_title() -> None:
    for note in (" - Book Review", " (Extended Abstract)", " (Panel Summary)", " (short version)"):
        noted = paper("An aspect of query optimization in multidatabase systems" + note, **SIGMOD)
        plain = paper("An aspect of query optimization in multidatabase systems", **ACM_SIGMOD)
        assert verdict(noted, plain) is Verdict.DUPLICATE, note


def test_a_review_note_does_not_merge_the_review_with_the_book() -> None:
    review = paper("Introduction to constraint databases - Book Review", **SIGMOD)
    book = paper("Introduction to constraint databases", authors="Revesz, Peter", **ACM_SIGMOD)
    assert verdict(review, book) is Verdict.DISTINCT


# -- close titles --------------------------------------------------------------------------------


def test_a_close_title_merges_in_the_same_venue_and_year() -> None:
    one = paper(
        "VideoAnywhere: A System for Searching and Managing Distributed Video Assets", **SIGMOD
    )
    two = paper(
        "Video anywhere: a system for searching and managing distributed heterogeneous video "
        "assets",
        **ACM_SIGMOD,
    )
    assert verdict(one, two) is Verdict.DUPLICATE


def test_close_titles_that_differ_in_furniture_words_stay_apart() -> None:
    issue = paper("Special issue on data mining for intrusion detection", **ACM_SIGMOD)
    section = paper("Special section on data mining for intrusion detection", **ACM_SIGMOD)
    assert verdict(issue, section) is not Verdict.DUPLICATE
    assert find_clusters([issue, section]) == [[0], [1]]


# -- short titles ---------------------------------------------------------------------------------


def test_a_short_specific_title_merges_when_everything_else_agrees() -> None:
    one = paper("Magic Conditions", **SIGMOD)
    two = paper("Magic conditions", **ACM_SIGMOD)
    undated = paper("Magic conditions", venue="SIGMOD Record")
    assert verdict(one, two) is Verdict.DUPLICATE
    assert verdict(undated, two) is Verdict.DUPLICATE


def test_a_short_title_needs_venue_authors_and_year() -> None:
    one = paper("Magic Conditions", **SIGMOD)
    assert verdict(one, paper("Magic conditions", venue="SIGMOD Record", year=1996)) is (
        Verdict.DISTINCT
    )
    assert verdict(one, paper("Magic conditions", year=1994)) is Verdict.DISTINCT
    assert verdict(one, paper("Magic conditions", authors="Mumick, I", **SIGMOD)) is (
        Verdict.DISTINCT
    )


def test_short_furniture_titles_never_merge_on_authors_venue_and_year() -> None:
    for title in ("Editorial", "Treasurer's message", "A TSQL2 tutorial", "Chair's Message"):
        assert verdict(paper(title, **SIGMOD), paper(title, **ACM_SIGMOD)) is Verdict.DISTINCT
