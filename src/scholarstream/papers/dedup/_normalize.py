"""Per-record comparison keys: each field in the form two copies of one work agree on.

Databases write the same article differently: "Drugs & Aging" and "Drugs and Aging", "J
Hypertens" and "Journal of Hypertension", "288-97" and "288-297", a MEDLINE title in
``[brackets]`` with "[Chinese]" appended, authors as "Kang, Si Hyun" or "Kang, S. H.",
pages that a spreadsheet turned into dates ("Oct-17"). ``record_keys`` computes every key
once per record so the pairwise comparison (``matching``) only compares short strings.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from scholarstream.papers import Paper, Record

# -- text ----------------------------------------------------------------------------------

_GREEK = {
    "\u03b1": "alpha",
    "\u03b2": "beta",
    "\u03b3": "gamma",
    "\u03b4": "delta",
    "\u03b5": "epsilon",
    "\u03ba": "kappa",
    "\u03bb": "lambda",
    "\u03bc": "mu",
    "\u03c9": "omega",
    "\u03c4": "tau",
}
_GREEK_RE = re.compile("|".join(_GREEK))
"""Greek letters by name ("interferon-\u03b3" and "interferon-gamma" are one word)."""
_TAGS = re.compile(r"</?[a-z][^>]*>", re.IGNORECASE)
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def fold(text: str) -> str:
    """Lower case ASCII words separated by single spaces: accents, Greek letters, markup and
    punctuation do not tell two copies apart."""
    text = text.lower()
    if "<" in text:
        text = _TAGS.sub(" ", text)
    if not text.isascii():
        text = _GREEK_RE.sub(lambda m: f" {_GREEK[m.group(0)]} ", text)
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return _NON_ALNUM.sub(" ", text).strip()


# -- titles --------------------------------------------------------------------------------

_TRAILING_NOTE = re.compile(
    r"\s*(?:\[(?:[^\[\]]|\[[^\[\]]*\]?)*(?:\]|$)|\((?:author'?s'? transl|provisional abstract|"
    r"structured abstract|extended abstract|abstract|review|short version|panel(?: summary)?)\)|"
    r"\s-+\s*book review|\.{2,})\s*\.?\s*$",
    re.IGNORECASE,
)
"""One bracketed note databases append ("[Chinese]", "[45 refs]", "[Erratum appears in
...]", a note cut off at "["), a similar parenthesised note ("(Extended Abstract)",
"(Panel Summary)"), or DBLP's " - Book Review" after a reviewed book's title."""
_WRAPPED = re.compile(r"^\s*\[([^\[\]]+)\]\s*\.?\s*$")

_END = r"(?:[:.\-\u2013\u2014]\s*|\"\s*)"
"""A notice word at the end counts only after punctuation ("...": Correction), not as the
last word of a sentence ("... the immune response")."""
_NOTICES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "erratum",
        re.compile(
            r"^(?:errat(?:um|a)\b|corrigend(?:um|a)\b|corrections?\b(?!\s+(?:of|for|in)\b)|"
            r"notice of correction|publisher'?s note|authors?'? correction)"
            rf"|{_END}(?:errat(?:um|a)|corrigendum|correction)$"
        ),
    ),
    (
        "retraction",
        re.compile(
            r"^(?:retraction\b(?!\s+(?:of|in)\s+(?!(?:the|an?|article|paper)\b))|retracted\b|"
            r"notice of retraction|withdrawn\b|expression of concern)"
            rf"|{_END}(?:retraction|retracted|withdrawn)$"
        ),
    ),
    (
        "reply",
        re.compile(
            r"^(?:repl(?:y|ies)\b|in reply\b|in response\b|rebuttal\b|"
            r"(?:the )?authors?'? (?:reply|response)\b|response$|response:|"
            r"response (?:to|from) (?:the |a )?(?:letters?|comments?|commentary|editor|"
            r"correspondence|critique|criticism|drs?\b|authors?|reviewers?)\b)"
            rf"|{_END}(?:(?:the )?authors?'? )?(?:reply|response|rebuttal)$"
        ),
    ),
    (
        "comment",
        re.compile(
            r"^(?:comments? (?:on|to)\b|commentary (?:on|to)\b|comments?:|commentary:|re:|"
            r"letter to the editor|"
            r"letter:|editorial comment|invited comment)"
            rf"|{_END}(?:comment|commentary|a comment|editorial comment)$"
        ),
    ),
)
"""Notices about another article: they repeat its title, but are other works."""

_ROMAN = {
    "i": "1",
    "ii": "2",
    "iii": "3",
    "iv": "4",
    "v": "5",
    "vi": "6",
    "vii": "7",
    "viii": "8",
    "ix": "9",
    "x": "10",
}
_NUMBER_WORDS = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "first": "1",
    "second": "2",
    "third": "3",
    "fourth": "4",
}
_ORDINALS = {
    "first": "1",
    "second": "2",
    "third": "3",
    "fourth": "4",
    "fifth": "5",
    "sixth": "6",
    "seventh": "7",
    "eighth": "8",
    "ninth": "9",
    "tenth": "10",
}
_NUMBERED_EVENTS = frozenset(
    {
        "international",
        "annual",
        "national",
        "world",
        "european",
        "workshop",
        "conference",
        "symposium",
        "congress",
        "meeting",
        "edition",
    }
)
"""Before these words an ordinal numbers a series of events: "the fourth international
workshop" is the "4th" one in another copy."""
_DIGITS = re.compile(r"\d+")
_THOUSANDS = re.compile(r"(?<!\d)(\d{1,3}) (\d{3})(?!\d)")
"""Digit groups ("10 000", "50,159" once folded) are one number."""
_SEQUENCE_WORDS = frozenset(
    {"part", "phase", "type", "stage", "grade", "series", "study", "trial", "section", "volume"}
)
"""After these words a roman numeral or number word is a number ("Part II", "phase two")."""


def strip_notes(title: str) -> str:
    """The title without appended notes and translation brackets."""
    while True:
        wrapped = _WRAPPED.match(title)
        if wrapped:  # MEDLINE's translated titles: "[Title in English]."
            return wrapped.group(1).strip(" .")
        shorter = _TRAILING_NOTE.sub("", title, count=1)
        if shorter == title or not any(c.isalnum() for c in shorter):
            return title.strip(" .")
        title = shorter


def notice_kind(title: str) -> str | None:
    """``erratum``, ``retraction``, ``reply`` or ``comment`` when the title (notes
    stripped) announces a notice about another article, else ``None``."""
    text = " ".join(title.lower().split()).strip(" .")
    for kind, pattern in _NOTICES:
        if pattern.search(text):
            return kind
    return None


def title_numbers(folded_title: str) -> tuple[str, ...]:
    """The numbers a title states, sorted ("Part II" and "part 2" both give ``("2",)``,
    "CO2" and "CO 2" both ``("2",)``): titles that differ only in them are parts, phases or
    updates of a series."""
    words = folded_title.split()
    joined = _THOUSANDS.sub(r"\1\2", folded_title)
    numbers = [digits.lstrip("0") or "0" for digits in _DIGITS.findall(joined)]
    for index, word in enumerate(words):
        if index and words[index - 1] in _SEQUENCE_WORDS:
            number = _ROMAN.get(word) or _NUMBER_WORDS.get(word)
            if number:
                numbers.append(number)
        elif (
            word in _ORDINALS
            and words[index + 1 : index + 2]
            and words[index + 1] in _NUMBERED_EVENTS
        ):
            numbers.append(_ORDINALS[word])
        elif word in _ROMAN and word not in ("i", "v", "x"):
            numbers.append(_ROMAN[word])
    return tuple(sorted(numbers))


_GENERIC_STOP = frozenset(
    {"a", "an", "the", "of", "on", "in", "to", "for", "and", "from", "with", "by", "at", "s"}
)
_GENRE_WORDS = frozenset(
    {
        "editor",
        "editors",
        "editorial",
        "editorials",
        "guest",
        "chair",
        "chairs",
        "president",
        "presidents",
        "comment",
        "comments",
        "commentary",
        "note",
        "notes",
        "message",
        "messages",
        "introduction",
        "introductions",
        "preface",
        "foreword",
        "prologue",
        "epilogue",
        "overview",
        "special",
        "issue",
        "issues",
        "section",
        "column",
        "forum",
        "book",
        "books",
        "review",
        "reviews",
        "reviewer",
        "reviewers",
        "reply",
        "replies",
        "response",
        "rejoinder",
        "letter",
        "letters",
        "call",
        "calls",
        "paper",
        "papers",
        "announcement",
        "announcements",
        "news",
        "report",
        "reports",
        "index",
        "contents",
        "acknowledgment",
        "acknowledgments",
        "acknowledgement",
        "acknowledgements",
        "erratum",
        "errata",
        "correction",
        "corrigendum",
        "obituary",
        "memoriam",
        "welcome",
        "abstract",
        "abstracts",
        "proceedings",
        "conference",
        "meeting",
        "symposium",
        "workshop",
        "keynote",
        "panel",
        "tutorial",
        "correspondence",
        "miscellany",
        "masthead",
        "board",
        "list",
        "year",
        "volume",
        "thanks",
        "desk",
        "corner",
        "perspective",
        "perspectives",
        "viewpoint",
        "opinion",
        "interview",
        "statement",
        "information",
        "instructions",
        "authors",
        "author",
        "readers",
        "reader",
        "new",
        "recent",
        "upcoming",
        "selected",
        "publications",
        "bibliography",
        "digest",
    }
)
"""Words of a journal's furniture ("Editor's comments", "Introduction to the special
issue", "Book review", "Call for papers", "Reviewers for volume 12"): a title made of them
and of at most one other word names a kind of item, not a work."""


def title_key(folded_title: str) -> tuple[str, ...]:
    """The title's words without stop words: the records of one title, written with "on"
    or without it."""
    return tuple(w for w in folded_title.split() if w not in _GENERIC_STOP)


def generic_title(folded_title: str) -> bool:
    """Does the title fail to identify one work? True for titles of fewer than three words
    ("Editorial", "Stroke rehabilitation"; a possessive's "s" is no word) and for titles
    with fewer than two words beyond journal furniture ("Editor's comments", "Chair's
    message", "Guest editors' introduction", "Book review column", "Reply to Smith")."""
    words = [w for w in folded_title.split() if len(w) > 1 or w.isdigit()]
    if len(words) < 3:
        return True
    content = [w for w in words if w not in _GENERIC_STOP and w not in _GENRE_WORDS]
    return len(content) < 2


def furniture_title(folded_title: str) -> bool:
    """A title of journal furniture ("Editor's comments", "Book review column", "A TSQL2
    tutorial"): fewer than two words beyond furniture words. A short title that is not
    furniture ("Magic conditions", "Diluting ACID") is generic only for its length."""
    words = [w for w in folded_title.split() if len(w) > 1 or w.isdigit()]
    content = [w for w in words if w not in _GENERIC_STOP and w not in _GENRE_WORDS]
    return len(content) < 2


def furniture_words(folded_words: str) -> bool:
    """Only journal furniture and stop words ("guest editor's introduction", "book
    review"): a title extended by them names an item about the shorter title's subject
    (its introduction, a review of it), not necessarily the same item."""
    return all(w in _GENERIC_STOP or w in _GENRE_WORDS or len(w) < 2 for w in folded_words.split())


# -- people --------------------------------------------------------------------------------

_PARTICLES = frozenset(
    {"van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "la", "le", "dos", "ten"}
)


def _family_words(text: str) -> list[str]:
    """Surname-like words: two letters or more and not a particle, so "De Joode, E. A." and
    "Joode, E. A." agree, and initials ("K", "GF") do not count as names."""
    return [w for w in fold(text).split() if len(w) > 1 and w not in _PARTICLES and w != "null"]


_COLLECTIVE = re.compile(
    r"\b(?:group|study|trial|consortium|collaborat\w*|investigators|committee|society|"
    r"network|association|team|panel|organi[sz]ation|working party|corp|corporation|inc|"
    r"ltd|corporate)\b",
    re.IGNORECASE,
)
"""Collective authors ("ASCUS-LSIL Triage Study Group") cannot be compared with people: one
database lists the group, another its writers."""


def _author_words(record: Record) -> tuple[tuple[str, ...], str | None]:
    """Every author's surname words in order, and the first author's (first word)."""
    if not isinstance(record, Paper):
        return (), None
    words: list[str] = []
    first: str | None = None
    for author in record.authors:
        if _COLLECTIVE.search(author.name):
            continue
        names = _family_words(author.family or author.name)
        if not names and author.given:
            names = _family_words(author.given)
        if first is None and names:
            first = names[0]
        words.extend(names)
    return tuple(words), first


# -- venues --------------------------------------------------------------------------------

_VENUE_STOP = frozenset({"the", "of", "and", "for", "in", "on", "de", "la", "et", "und", "fur"})
_VENUE_CUT = re.compile(
    r"(?:[.:;]\s*|\s+-\s+)(?:conference|meeting|congress|symposium)\b.*$|\(.*?\)",
    re.IGNORECASE,
)
_VENUE_SUBTITLE = re.compile(r"\s*[:=\[].*$")


def venue_words(venue: str | None) -> tuple[str, ...]:
    """Significant venue words: "The Journal of Hypertension" -> ``("journal",
    "hypertension")``; conference notes and parenthesised places dropped."""
    if not venue:
        return ()
    text = _VENUE_CUT.sub(" ", venue.replace("&", " and "))
    return tuple(w for w in fold(text).split() if w not in _VENUE_STOP)


def venue_main_words(venue: str | None) -> tuple[str, ...]:
    """The venue's name before a subtitle or translation ("CMAJ : Canadian Medical ..." ->
    ``("cmaj",)``, "Zhongguo zhen jiu [Chinese acupuncture]" -> "zhongguo zhen jiu")."""
    if not venue:
        return ()
    return venue_words(_VENUE_SUBTITLE.sub("", venue)) or venue_words(venue)


# -- volumes and pages ---------------------------------------------------------------------

_VOLUME = re.compile(r"^\s*(?:vol\.?\s*)?(\d+)(?![\d)])", re.IGNORECASE)
_MONTH_NUMBERS = {
    m: str(i)
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}
_EXCEL_MONTH = re.compile(r"\b(" + "|".join(_MONTH_NUMBERS) + r")[a-z]*\b", re.IGNORECASE)
_PAGE_LABEL = re.compile(r"^\s*(?:pp?\s*\.?|pages?\s*:?|s\.)\s*(?=\w*\d)", re.IGNORECASE)
"""A "pp." / "p." / "pages" / German "S." label before the numbers."""
_PAGE_RANGE = re.compile(
    r"^\s*([a-z]{0,3})(\d+)\s*[-\u2013\u2014]+\s*([a-z]{0,3})(\d+)", re.IGNORECASE
)
_FIRST_PAGE = re.compile(r"^\s*([a-z]{0,3})(\d+)", re.IGNORECASE)


def volume_key(volume: str | None) -> str | None:
    """The volume's number; "1)" (a supplement number cut off) and "NA" are no volume."""
    match = _VOLUME.match(volume or "")
    return match.group(1).lstrip("0") or None if match else None


_ISSUE = re.compile(
    r"^\s*(?:(?:no|nr|num|number|issue|heft|iss)\b\.?\s*)?"
    r"(s(?:upp?l?(?:ement)?)?\.?\s*)?(\d+)(?:\s*[-/\u2013&]\s*(\d+))?\s*$",
    re.IGNORECASE,
)


MAX_ISSUE = 60
"""No journal prints more issues a volume (weeklies: 52); a larger number is an article
number ("791") in the issue field."""


def issue_key(issue: str | None) -> str | None:
    """The issue's number: "3", "No. 3" and "Issue 3" -> "3"; a double issue "3-4" or
    "3/4" -> "3-4"; a supplement "Suppl 2" or "S2" -> "s2". Anything else (a month, a
    season, "Supplement") is no issue number: it cannot be compared."""
    match = _ISSUE.match(issue or "")
    if not match:
        return None
    supplement, first, last = match.groups()
    if int(first) > MAX_ISSUE:
        return None  # an article or page number written into the issue field
    number = first.lstrip("0") or "0"
    if last and last.lstrip("0") != number:
        number = f"{number}-{last.lstrip('0') or '0'}"
    return f"s{number}" if supplement else number


def page_keys(pages: str | None) -> tuple[str | None, str | None]:
    """``(first, last)`` page: "288-97" -> ("288", "297"), "S71-S73" -> ("s71", "s73"),
    "Oct-17" (a spreadsheet's date for "10-17") -> ("10", "17")."""
    if not pages:
        return None, None
    text = _EXCEL_MONTH.sub(lambda m: _MONTH_NUMBERS[m.group(1).lower()[:3]], pages)
    text = _PAGE_LABEL.sub("", text, count=1)
    match = _PAGE_RANGE.match(text)
    if match:
        prefix, start, end_prefix, end = match.groups()
        start, end = start.lstrip("0") or "0", end.lstrip("0") or "0"
        if len(end) < len(start) and int(end) != 0:
            end = start[: len(start) - len(end)] + end
        first = (prefix + start).lower()
        return first, ((end_prefix or prefix) + end).lower()
    match = _FIRST_PAGE.match(text)
    if match:
        return (match.group(1) + (match.group(2).lstrip("0") or "0")).lower(), None
    return None, None


# -- the keys ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordKeys:
    """What matching compares, computed once per record."""

    kind: str
    title: str
    """Folded full title."""
    core_title: str
    """Folded title without appended notes ("[Chinese]", "[Review] [45 refs]")."""
    numbers: tuple[str, ...]
    notice: str | None
    generic: bool
    """The title cannot identify a work on its own (``generic_title``: "Editor's comments")."""
    authors: tuple[str, ...]
    first_author: str | None
    year: int | None
    venue: tuple[str, ...]
    venue_main: tuple[str, ...]
    volume: str | None
    issue: str | None
    first_page: str | None
    last_page: str | None
    doi: str | None
    pmid: str | None
    pmcid: str | None
    arxiv_id: str | None
    openalex_id: str | None
    s2_id: str | None
    nct_id: str | None
    identifiers: frozenset[tuple[str, str]]
    """Every identifier above as ``(name, value)``, for a quick "any in common?"."""
    comparable: bool = True
    """``False`` for an input that cannot be compared with anything: a record read without a
    title (``record_keys(None)``) or whose title has no words ("." "[ ]"). Every rule needs
    the title, so such a record is its own cluster: never a candidate, never merged."""
    shared: bool = False
    """The input gives this title to several works (``matching.mark_shared_titles``)."""
    content_title: str = ""
    """``core_title`` without stop words: some databases drop them ("How modify SQL queries
    order guarantee sure answers" / "How to modify SQL queries in order to ...")."""


IDENTIFIER_FIELDS = ("doi", "pmid", "pmcid", "arxiv_id", "openalex_id", "s2_id", "nct_id")


UNCOMPARABLE = RecordKeys(
    kind="",
    title="",
    core_title="",
    numbers=(),
    notice=None,
    generic=True,
    authors=(),
    first_author=None,
    year=None,
    venue=(),
    venue_main=(),
    volume=None,
    issue=None,
    first_page=None,
    last_page=None,
    doi=None,
    pmid=None,
    pmcid=None,
    arxiv_id=None,
    openalex_id=None,
    s2_id=None,
    nct_id=None,
    identifiers=frozenset(),
    comparable=False,
)
"""The keys of an input record that could not be read into a ``Record`` (no title)."""


def record_keys(record: Record | None) -> RecordKeys:
    """The keys of one record (papers and trial registrations alike); ``None`` stands for
    an input record that could not be read into one (``UNCOMPARABLE``)."""
    if record is None:
        return UNCOMPARABLE
    core_raw = strip_notes(record.title)
    core = fold(core_raw)
    title = fold(record.title)
    authors, first = _author_words(record)
    if isinstance(record, Paper):
        venue, volume, issue, pages = record.venue, record.volume, record.issue, record.pages
    else:
        venue = volume = issue = pages = None
    first_page, last_page = page_keys(pages)
    ids = {name: value for name, value in record.ids.present().items() if name in IDENTIFIER_FIELDS}
    if record.kind != "trial":
        ids.pop("nct_id", None)  # papers cite the trial they report: not their own id
    return RecordKeys(
        kind=record.kind,
        title=title,
        core_title=core or title,
        numbers=title_numbers(core or title),
        notice=notice_kind(core_raw or record.title),
        generic=generic_title(core or title),
        authors=authors,
        first_author=first,
        year=record.year,
        venue=venue_words(venue),
        venue_main=venue_main_words(venue),
        volume=volume_key(volume),
        issue=issue_key(issue),
        first_page=first_page,
        last_page=last_page,
        doi=ids.get("doi"),
        pmid=ids.get("pmid"),
        pmcid=ids.get("pmcid"),
        arxiv_id=ids.get("arxiv_id"),
        openalex_id=ids.get("openalex_id"),
        s2_id=ids.get("s2_id"),
        nct_id=ids.get("nct_id"),
        identifiers=frozenset(ids.items()),
        comparable=bool(core or title),
        content_title=" ".join(title_key(core or title)),
    )
