"""The one date parser: publication-date phrases of a question or a message ("since 2015",
"2010-2020", "between 2010 and 2015", "before 2000", "in 2021", "last 5 years") and the
range each gives (relative to an injected today).

A ``DateGrammar`` is the ordered list of phrase forms a caller reads; every form has one
reader that turns its match into a ``DateRange``. Two grammars exist, so that merging the
parsers (issue 21) changed no caller's results:

- ``QUERY_DATES`` (search): wide wording ("in the past five years", "prior to 2015",
  "2015-2019", "through 2020"), read by ``find_dates``, which cuts the phrases out of the
  question and combines a start and an end ("since 2010 ... until 2020").
- ``MENTION_DATES`` (chat continuity): the phrases a follow-up names as a scope slot
  ("since 2020", "from 2010 to 2015", "last 5 years": digits only), found by
  ``date_phrases`` in order of appearance.
"""

from __future__ import annotations

import datetime as dt
import functools
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
    "couple of": 2,
    "couple": 2,
    "few": 3,
}
_COUNT = r"(\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"


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


# The readers: one per kind of phrase, shared by every grammar.
def _between(m: re.Match[str], _: dt.date) -> DateRange:
    return DateRange(_first(m.group(1)), _last(m.group(2)))


def _last_years(m: re.Match[str], today: dt.date) -> DateRange:
    return DateRange(years_before(today, _count(m.group(1))), today)


def _last_decade(_: re.Match[str], today: dt.date) -> DateRange:
    return DateRange(years_before(today, 10), today)


def _last_year(_: re.Match[str], today: dt.date) -> DateRange:
    return DateRange(years_before(today, 1), today)


def _this_year(_: re.Match[str], today: dt.date) -> DateRange:
    return DateRange(dt.date(today.year, 1, 1), today)


def _previous_year(_: re.Match[str], today: dt.date) -> DateRange:
    return DateRange(dt.date(today.year - 1, 1, 1), dt.date(today.year - 1, 12, 31))


def _this_decade(_: re.Match[str], today: dt.date) -> DateRange:
    return DateRange(dt.date(today.year - today.year % 10, 1, 1), today)


def _since(m: re.Match[str], _: dt.date) -> DateRange:
    return DateRange(_first(m.group(1)), None)


def _decade(m: re.Match[str], _: dt.date) -> DateRange:
    start = int(m.group(1))
    return DateRange(dt.date(start, 1, 1), dt.date(start + 9, 12, 31))


def _after(m: re.Match[str], _: dt.date) -> DateRange:
    return DateRange(dt.date(int(m.group(1)) + 1, 1, 1), None)


def _before(m: re.Match[str], _: dt.date) -> DateRange:
    return DateRange(None, dt.date(int(m.group(1)) - 1, 12, 31))


def _until(m: re.Match[str], _: dt.date) -> DateRange:
    return DateRange(None, _last(m.group(1)))


def _in_year(m: re.Match[str], _: dt.date) -> DateRange:
    return DateRange(_first(m.group(1)), _last(m.group(1)))


@dataclass(frozen=True)
class DateForm:
    """One way of writing a date phrase, and how it reads."""

    pattern: re.Pattern[str]
    read: Reader


@dataclass(frozen=True)
class DateGrammar:
    """The date phrases a caller reads, in order: the first form that matches wins."""

    name: str
    forms: tuple[DateForm, ...]

    @functools.cached_property
    def alternation(self) -> re.Pattern[str]:
        """Any of the forms, tried in order at each position."""
        alternatives = (f"(?P<f{i}>{f.pattern.pattern})" for i, f in enumerate(self.forms))
        return re.compile("|".join(alternatives), re.I)


def _form(pattern: str, read: Reader) -> DateForm:
    return DateForm(re.compile(pattern, re.I), read)


# A phrase that shuts out the years on one side: "nothing", "exclude anything published".
_NOTHING = (
    r"\b(?:nothing|none|no\s+(?:studies|papers|trials|articles|data)|"
    r"not(?:\s+interested\s+in)?(?:\s+anything)?|"
    r"(?:exclud(?:e|ing)|drop(?:ping)?|skip(?:ping)?|leave\s+out|remove|without)"
    r"(?:\s+(?:anything|everything|all|studies|papers|trials|articles|work|data))?)"
    r"(?:\s+(?:published|from|dated|done|run))?\s+"
)
# First match wins; ranges come before their single-year parts.
QUERY_DATES = DateGrammar(
    "query",
    (
        _form(rf"\b(?:between|from)\s+{YEAR}\s+(?:and|to|until|through)\s+{YEAR}\b", _between),
        _form(
            rf"\b(?:published\s+)?(?:in\s+)?{YEAR}\s*(?:-|\u2013|\u2014|to|until)\s*{YEAR}\b",
            _between,
        ),
        # "2024 and 2025 only": both years.
        _form(rf"\b(?:published\s+)?(?:in\s+)?{YEAR}\s+(?:and|&)\s+{YEAR}\b", _between),
        _form(
            rf"\b(?:in|over|during|within|from)?\s*(?:the\s+)?(?:last|past|previous)\s+{_COUNT}"
            r"\s+(?:years?|yrs?)\b",
            _last_years,
        ),
        _form(
            r"\b(?:in|over|during)?\s*(?:the\s+)?(?:last|past|previous)\s+decade\b", _last_decade
        ),
        # "from last year" is the calendar year; "in the last year" the twelve months.
        _form(
            r"\b(?:from|in|during)\s+last\s+year\b|^\W*(?:only\s+)?last\s+year\b"
            r"|\blast\s+year(?:'s|\s+only)\b",
            _previous_year,
        ),
        _form(r"\b(?:in|over|during)?\s*(?:the\s+)?(?:last|past|previous)\s+year\b", _last_year),
        _form(r"\bthis\s+year\b", _this_year),
        _form(r"\b(?:in\s+|during\s+)?(?:this|the\s+current)\s+decade\b", _this_decade),
        _form(
            rf"\b(?:since|from|in\s+or\s+after|starting(?:\s+in)?)\s+(?:the\s+)?{YEAR}\b",
            _since,
        ),
        # "since approval in 2013", "since the label change in 2019"
        _form(
            r"\bsince\s+(?:(?!(?:before|after|until|were|was|is|are|most|many)\b)[a-z]+\s+){1,4}?"
            rf"in\s+{YEAR}\b",
            _since,
        ),
        _form(r"\b(?:(?:in|from|during)\s+)?(?:the\s+)?((?:19|20)\d0)'?s\b", _decade),
        _form(rf"\b(?:nothing|none|no|not)\s+(?:older|earlier)\s+than\s+{YEAR}\b", _since),
        _form(rf"{_NOTHING}(?:older|earlier)\s+than\s+{YEAR}\b", _since),
        # "nothing before 2019", "exclude anything pre-2015": what is left starts then.
        _form(rf"{_NOTHING}(?:before|prior\s+to|pre)[\s-]+{YEAR}\b", _since),
        _form(rf"{_NOTHING}(?:after|later\s+than|newer\s+than|post)[\s-]+{YEAR}\b", _until),
        _form(rf"\b(?:newer|more\s+recent|later)\s+than\s+{YEAR}\b", _after),
        _form(rf"\b(?:after)\s+{YEAR}\b", _after),
        _form(rf"\b{YEAR}\s*(?:onwards?|or\s+later|and\s+later|or\s+after|\+)", _since),
        _form(
            rf"\b{YEAR}\s+(?:to|until|through)\s+(?:the\s+)?(?:present|now|date|today)\b", _since
        ),
        _form(rf"\b(?:before|prior\s+to|pre)[\s-]+{YEAR}\b", _before),
        _form(rf"\b(?:until|through|up\s+to|by)\s+{YEAR}\b", _until),
        _form(rf"\b(?:published\s+)?in\s+{YEAR}\b", _in_year),
    ),
)

MENTION_DATES = DateGrammar(
    "mention",
    (
        _form(rf"\bbetween\s+{YEAR}\s+and\s+{YEAR}\b", _between),
        _form(rf"\bfrom\s+{YEAR}\s+(?:to|until)\s+{YEAR}\b", _between),
        _form(rf"\b(?:since|from)\s+{YEAR}\b", _since),
        _form(rf"\bafter\s+{YEAR}\b", _after),
        _form(rf"\bbefore\s+{YEAR}\b", _before),
        _form(rf"\bin\s+{YEAR}\b", _in_year),
        _form(rf"\buntil\s+{YEAR}\b", _until),
        _form(r"\b(?:last|past)\s+(\d+)\s+years?\b", _last_years),
    ),
)


# Phrases that lift a date limit instead of setting one: "forget the date limit", "any
# year is fine", "remove the 2020 filter", "include older studies too", "no date
# restriction". They name no range: the filter is cleared.
_DATE_NOUN = r"(?:publication\s+)?(?:dates?|years?|time|recency|(?:19|20)\d{2})"
_LIMIT_NOUN = (
    r"(?:limits?|limitations?|filters?|restrictions?|ranges?|cut-?offs?|constraints?|"
    r"windows?|bounds?|boundar(?:y|ies)|criteri(?:on|a)|frames?)"
)
_LIFTING_VERB = (
    r"(?:forget(?:\s+about)?|drop|remove|lift|ignore|clear|scrap|skip|undo|reset|relax|"
    r"get\s+rid\s+of|take\s+(?:off|out|away)|(?:don'?t|do\s+not)\s+(?:need|want|use|apply)|"
    r"no\s+need\s+for|without|never\s+mind|lose|kill)"
)
_DETERMINER = r"(?:(?:the|that|this|my|any|those|these|all|our)\s+)?"
_FINE = (
    r"(?:\s+(?:is|are|would\s+be|will\s+do|works?)\s+"
    r"(?:fine|ok(?:ay)?|good|great|acceptable|allowed|welcome)\b)?"
)
_OLDER_WORK = (
    r"(?:older|earlier|old)\s+(?:ones|studies|papers|work|research|"
    r"articles|trials|literature|publications|evidence|reports|stuff)"
)
UNDATED = re.compile(
    r"\b(?:"
    rf"{_LIFTING_VERB}\s+{_DETERMINER}{_DATE_NOUN}(?:\s+{_LIMIT_NOUN})?"
    rf"|{_LIFTING_VERB}\s+{_DETERMINER}{_LIMIT_NOUN}\s+(?:on|for|by)\s+{_DETERMINER}{_DATE_NOUN}"
    rf"|(?:no|without(?:\s+a(?:ny)?)?)\s+{_DATE_NOUN}\s+{_LIMIT_NOUN}"
    r"|(?:from\s+|of\s+|in\s+)?any\s+(?:publication\s+)?(?:years?|dates?|time\s+period)"
    r"|(?:from\s+|of\s+)?(?:all|every)\s+(?:publication\s+)?(?:years|dates|time)"
    r"|(?:regardless|irrespective)\s+of\s+(?:the\s+)?(?:publication\s+)?(?:years?|dates?)"
    r"|(?:no\s+matter|whatever)\s+(?:the|what)\s+(?:publication\s+)?(?:years?|dates?)"
    r"|(?:don'?t|do\s+not|doesn'?t|does\s+not|needn'?t|need\s+not)\s+"
    r"(?:(?:have|need)\s+to\s+be\s+|be\s+)?(?:limit(?:ed)?|restrict(?:ed)?|recent)"
    r"(?:\s+(?:it|them|by|to|on)){0,2}(?:\s+(?:dates?|years?|recent\s+\w+))?"
    r"|not\s+(?:just|only)\s+(?:the\s+)?recent(?:\s+(?:ones|studies|papers|work|years))?"
    rf"|(?:include|including|with|plus|add)?\s*(?:the\s+)?{_OLDER_WORK}"
    rf"(?:\s+(?:too|as\s+well|also))?"
    rf"){_FINE}",
    re.I,
)


def undated_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` lifts a date limit (see ``UNDATED``), in order."""
    return [(m.start(), m.end()) for m in UNDATED.finditer(text)]


@dataclass(frozen=True)
class DatePhrase:
    """A date phrase as written ("since 2020"), where it stands, and its form."""

    text: str
    start: int
    end: int
    form: DateForm

    def range(self, today: dt.date) -> DateRange:
        """The publication dates the phrase stands for."""
        match = self.form.pattern.search(self.text)
        if match is None:  # pragma: no cover - the phrase is a match of its own form
            return DateRange()
        return self.form.read(match, today)


def date_phrases(text: str, grammar: DateGrammar = MENTION_DATES) -> list[DatePhrase]:
    """Every date phrase of ``text`` in order of appearance (no two overlap)."""
    phrases = []
    for match in grammar.alternation.finditer(text):
        form = grammar.forms[int(str(match.lastgroup)[1:])]
        phrases.append(DatePhrase(match.group(0), match.start(), match.end(), form))
    return phrases


def find_dates(
    text: str, today: dt.date, grammar: DateGrammar = QUERY_DATES
) -> tuple[str, DateRange]:
    """The text without its date phrases, and the range they give. Forms are tried in
    order, each once; two phrases (e.g. "since 2010" and "until 2020") combine; a range
    whose ends are reversed is dropped. A phrase lifting a limit ("any year") is cut too:
    it names no range."""
    for start, end in reversed(undated_spans(text)):
        text = text[:start] + " " + text[end:]
    found = DateRange()
    for form in grammar.forms:
        match = form.pattern.search(text)
        if match is None:
            continue
        span = form.read(match, today)
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
