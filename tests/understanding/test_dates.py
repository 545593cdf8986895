"""The one date parser: the phrases of a search question (``find_dates``) and the date
slot of a chat message (``date_phrases``), read into the same ``DateRange``."""

from __future__ import annotations

import datetime as dt

import pytest

from scholarstream.understanding import (
    MENTION_DATES,
    QUERY_DATES,
    DateRange,
    date_phrases,
    find_dates,
    years_before,
)

TODAY = dt.date(2025, 6, 15)
D = dt.date


@pytest.mark.parametrize(
    ("text", "rest", "dates"),
    [
        ("statins since 2020", "statins", DateRange(D(2020, 1, 1), None)),
        ("statins 2015-2019", "statins", DateRange(D(2015, 1, 1), D(2019, 12, 31))),
        (
            "statins in the past five years",
            "statins",
            DateRange(D(2020, 6, 15), TODAY),
        ),
        ("statins before 2015", "statins", DateRange(None, D(2014, 12, 31))),
        ("statins after 2015", "statins", DateRange(D(2016, 1, 1), None)),
        ("statins between 2010 and 2015", "statins", DateRange(D(2010, 1, 1), D(2015, 12, 31))),
        ("statins published in 2021", "statins", DateRange(D(2021, 1, 1), D(2021, 12, 31))),
        ("statins over the last decade", "statins", DateRange(D(2015, 6, 15), TODAY)),
        ("statins from 2010, until 2020", "statins ,", DateRange(D(2010, 1, 1), D(2020, 12, 31))),
        # Today's wording (a later issue improves it): "2010 until 2020" is the range read,
        # and "since" stays in the text.
        (
            "statins since 2010 until 2020",
            "statins since",
            DateRange(D(2010, 1, 1), D(2020, 12, 31)),
        ),
        ("statins 2019 to 2015", "statins", DateRange()),  # reversed: dropped
        ("statins and stroke", "statins and stroke", DateRange()),
    ],
)
def test_a_search_question_s_dates(text: str, rest: str, dates: DateRange) -> None:
    assert find_dates(text, TODAY) == (rest, dates)


def test_a_29th_of_february_counts_back_to_the_28th() -> None:
    assert years_before(D(2024, 2, 29), 1) == D(2023, 2, 28)
    assert find_dates("in the last year", D(2024, 2, 29))[1] == DateRange(
        D(2023, 2, 28), D(2024, 2, 29)
    )


@pytest.mark.parametrize(
    ("text", "phrase", "dates"),
    [
        ("only since 2020", "since 2020", DateRange(D(2020, 1, 1), None)),
        ("trials before 2015?", "before 2015", DateRange(None, D(2014, 12, 31))),
        (
            "from 2010 to 2015 please",
            "from 2010 to 2015",
            DateRange(D(2010, 1, 1), D(2015, 12, 31)),
        ),
        ("in the past 5 years", "past 5 years", DateRange(D(2020, 6, 15), TODAY)),
        ("What about in 2019", "in 2019", DateRange(D(2019, 1, 1), D(2019, 12, 31))),
    ],
)
def test_the_date_slot_of_a_message(text: str, phrase: str, dates: DateRange) -> None:
    [found] = date_phrases(text)
    assert found.text == phrase
    assert text[found.start : found.end] == phrase
    assert found.range(TODAY) == dates


def test_every_date_phrase_of_a_message_in_order() -> None:
    text = "between 2010 and 2015, or else since 2020"
    assert [p.text for p in date_phrases(text)] == ["between 2010 and 2015", "since 2020"]


def test_a_message_s_slot_keeps_the_narrower_wording_of_today() -> None:
    """Where the callers' grammars differ (a later issue makes them one), each keeps its
    results: a chat message's slot takes neither number words nor a bare year range."""
    assert date_phrases("in the past five years") == []
    assert date_phrases("2015-2019") == []
    [wide] = date_phrases("2015-2019", QUERY_DATES)
    assert wide.range(TODAY) == DateRange(D(2015, 1, 1), D(2019, 12, 31))
    assert find_dates("since 2020", TODAY, MENTION_DATES) == ("", DateRange(D(2020, 1, 1)))
