"""Publication-date phrases of a question: "since 2015", "2010-2020", "between 2010 and
2015", "before 2000", "in 2021", "last 5 years" (relative to an injected today)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

YEAR = r"((?:19|20)\d{2})"
_NUMBER_WORDS = {
    "a": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "fifteen": 15,
    "twenty": 20,
}
_COUNT = r"(\d{1,3}|" + "|".join(_NUMBER_WORDS) + r")"


@dataclass(frozen=True)
class DateRange:
    date_from: dt.date | None = None
    date_to: dt.date | None = None


def years_before(day: dt.date, years: int) -> dt.date:
    """The same calendar day ``years`` earlier (28 February for a 29th)."""
    try:
        return day.replace(year=day.year - years)
    except ValueError:
        return day.replace(year=day.year - years, day=28)


def _first(year: str) -> dt.date:
    return dt.date(int(year), 1, 1)


def _last(year: str) -> dt.date:
    return dt.date(int(year), 12, 31)


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS[word.lower()]


Reader = Callable[[re.Match[str], dt.date], DateRange]

# First match wins; ranges come before their single-year parts.
_PATTERNS: tuple[tuple[re.Pattern[str], Reader], ...] = (
    (
        re.compile(rf"\b(?:between|from)\s+{YEAR}\s+(?:and|to|until|through)\s+{YEAR}\b", re.I),
        lambda m, _: DateRange(_first(m.group(1)), _last(m.group(2))),
    ),
    (
        re.compile(
            rf"\b(?:published\s+)?(?:in\s+)?{YEAR}\s*(?:-|\u2013|\u2014|to|until)\s*{YEAR}\b", re.I
        ),
        lambda m, _: DateRange(_first(m.group(1)), _last(m.group(2))),
    ),
    (
        re.compile(
            rf"\b(?:in|over|during|within|from)?\s*(?:the\s+)?(?:last|past|previous)\s+{_COUNT}\s+years?\b",
            re.I,
        ),
        lambda m, today: DateRange(years_before(today, _count(m.group(1))), today),
    ),
    (
        re.compile(r"\b(?:in|over|during)?\s*(?:the\s+)?(?:last|past|previous)\s+decade\b", re.I),
        lambda _, today: DateRange(years_before(today, 10), today),
    ),
    (
        re.compile(r"\b(?:in|over|during)?\s*(?:the\s+)?(?:last|past|previous)\s+year\b", re.I),
        lambda _, today: DateRange(years_before(today, 1), today),
    ),
    (
        re.compile(rf"\b(?:since|from|in\s+or\s+after|starting(?:\s+in)?)\s+{YEAR}\b", re.I),
        lambda m, _: DateRange(_first(m.group(1)), None),
    ),
    (
        re.compile(rf"\b(?:after)\s+{YEAR}\b", re.I),
        lambda m, _: DateRange(dt.date(int(m.group(1)) + 1, 1, 1), None),
    ),
    (
        re.compile(rf"\b(?:before|prior\s+to)\s+{YEAR}\b", re.I),
        lambda m, _: DateRange(None, dt.date(int(m.group(1)) - 1, 12, 31)),
    ),
    (
        re.compile(rf"\b(?:until|through|up\s+to|by)\s+{YEAR}\b", re.I),
        lambda m, _: DateRange(None, _last(m.group(1))),
    ),
    (
        re.compile(rf"\b(?:published\s+)?in\s+{YEAR}\b", re.I),
        lambda m, _: DateRange(_first(m.group(1)), _last(m.group(1))),
    ),
)


def find_dates(text: str, today: dt.date) -> tuple[str, DateRange]:
    """The text without its date phrases, and the range they give. Two phrases (e.g.
    "since 2010" and "until 2020") combine; a range whose ends are reversed is dropped."""
    found = DateRange()
    for pattern, read in _PATTERNS:
        match = pattern.search(text)
        if match is None:
            continue
        span = read(match, today)
        found = DateRange(
            found.date_from or span.date_from,
            found.date_to or span.date_to,
        )
        text = text[: match.start()] + " " + text[match.end() :]
        if found.date_from and found.date_to:
            break
    if found.date_from and found.date_to and found.date_from > found.date_to:
        found = DateRange()
    return " ".join(text.split()), found
