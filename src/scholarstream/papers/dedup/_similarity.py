"""How far two records agree on one field, from their ``RecordKeys``.

Each function answers for one field only; ``matching`` weighs the answers. ``None`` means
"cannot tell" (a value is missing), which is not the same as disagreeing.
"""

from __future__ import annotations

from functools import cache

from rapidfuzz import fuzz

from scholarstream.papers.dedup._normalize import RecordKeys, furniture_words


def title_similarity(a: RecordKeys, b: RecordKeys) -> float:
    """0-1; the best of the full titles, the titles without appended notes and those
    without stop words (some databases drop them)."""
    core = fuzz.ratio(a.core_title, b.core_title)
    if core < 100 and a.content_title and b.content_title:
        core = max(core, fuzz.ratio(a.content_title, b.content_title, score_cutoff=core))
    if core >= 100 or (a.title == a.core_title and b.title == b.core_title):
        return core / 100
    return max(core, fuzz.ratio(a.title, b.title)) / 100


def title_extends(a: RecordKeys, b: RecordKeys, min_length: int = 24) -> bool:
    """One title is the other cut short: a subtitle dropped ("Unilateral neglect in stroke"
    / "...: a comparative study") or a database's length limit."""
    short, long_ = sorted((a.core_title, b.core_title), key=len)
    return len(short) >= min_length and long_.startswith(short)


def subtitle_extends(a: RecordKeys, b: RecordKeys) -> bool:
    """One title is the other with a subtitle dropped (``title_extends``), and the dropped
    part has words of its own, not only furniture ("X: guest editor's introduction" is the
    introduction to a section X, "X - book review" a review of a book X)."""
    if not title_extends(a, b):
        return False
    short, long_ = sorted((a.core_title, b.core_title), key=len)
    return not furniture_words(long_[len(short) :])


def close_title_agrees(a: RecordKeys, b: RecordKeys) -> bool:
    """Two close titles differ in words of their own (a typo, a word dropped or joined),
    not in journal furniture ("Special issue on X" / "Special section on X" are two items)."""
    x, y = set(a.core_title.split()), set(b.core_title.split())
    return not any(furniture_words(word) for word in x ^ y)


def author_similarity(a: RecordKeys, b: RecordKeys) -> float | None:
    """0-1 over the authors' surname words, ``None`` if a record lists nobody. A subset
    scores 1: databases cut author lists ("et al.") at different lengths."""
    if not a.authors or not b.authors:
        return None
    if a.authors == b.authors:
        return 1.0
    return fuzz.token_set_ratio(" ".join(a.authors), " ".join(b.authors)) / 100


def years_apart(a: RecordKeys, b: RecordKeys) -> int | None:
    if a.year is None or b.year is None:
        return None
    return abs(a.year - b.year)


def same_value(x: str | None, y: str | None) -> bool | None:
    if not x or not y:
        return None
    return x == y


def _issue_numbers(issue: str) -> tuple[str, set[int]]:
    prefix = "s" if issue.startswith("s") else ""
    first, _, last = issue.removeprefix("s").partition("-")
    low = int(first)
    high = max(low, int(last)) if last else low
    return prefix, set(range(low, min(high, low + 12) + 1))


def issues_agree(a: RecordKeys, b: RecordKeys) -> bool | None:
    """Same issue number; a double issue ("3-4") agrees with either of its numbers. A
    supplement ("s2") against a plain number cannot tell (databases write a supplement's
    issue either way)."""
    if not a.issue or not b.issue:
        return None
    if a.issue == b.issue:
        return True
    (prefix_a, numbers_a), (prefix_b, numbers_b) = _issue_numbers(a.issue), _issue_numbers(b.issue)
    if prefix_a != prefix_b:
        return None
    return not numbers_a.isdisjoint(numbers_b)


def _page_number(page: str) -> tuple[str, int]:
    digits = page.lstrip("abcdefghijklmnopqrstuvwxyz")
    return page[: len(page) - len(digits)], int(digits)


def pages_agree(a: RecordKeys, b: RecordKeys) -> bool | None:
    """Same first page or overlapping ranges ("569" within "567-569"). An article number
    against a printed page ("e12724" / "1-6", BMJ "a1754" / "969-972") cannot tell, and a
    prefix only one copy writes ("S71" / "71") makes no difference; two different
    prefixes ("S334" / "A254") are two different supplements."""
    if not a.first_page or not b.first_page:
        return None
    (prefix_a, first_a), (prefix_b, first_b) = (
        _page_number(a.first_page),
        _page_number(b.first_page),
    )
    if prefix_a != prefix_b:
        if prefix_a and prefix_b:
            return False
        return True if first_a == first_b else None
    last_a = max(first_a, _page_number(a.last_page)[1]) if a.last_page else first_a
    last_b = max(first_b, _page_number(b.last_page)[1]) if b.last_page else first_b
    return max(first_a, first_b) <= min(last_a, last_b)


def _is_abbreviation(part: str, word: str) -> bool:
    """ "natl" for "national", "j" for "journal": same first letter, letters in order."""
    if not part or part[0] != word[0]:
        return False
    position = 0
    for letter in part[1:]:
        position = word.find(letter, position + 1)
        if position < 0:
            return False
    return True


def _is_acronym(word: str, words: tuple[str, ...]) -> bool:
    """ "cmaj" for "canadian medical association journal", "amcis" for "americas
    conference information systems": the word is the starts of the words, in order."""
    if not words:
        return not word
    if not word:
        return False
    head = words[0]
    return any(
        head.startswith(word[:size]) and _is_acronym(word[size:], words[1:])
        for size in range(min(len(word), len(head)), 0, -1)
    )


def _covers(short: tuple[str, ...], long_: tuple[str, ...]) -> bool:
    """Every word of the long venue is accounted for by the short one: abbreviated ("J
    Hypertens" / "journal hypertension"), joined ("Neuro Endocrinol Lett" /
    "neuroendocrinology letters") or as an acronym ("BMJ" / "british medical journal")."""

    @cache
    def match(si: int, li: int) -> bool:
        if si == len(short) or li == len(long_):
            return si == len(short) and li == len(long_)
        word = short[si]
        if _is_abbreviation(word, long_[li]) and match(si + 1, li + 1):
            return True
        for end in range(li + 2, len(long_) + 1):
            if len(word) >= end - li and _is_acronym(word, long_[li:end]) and match(si + 1, end):
                return True
        joined = word
        for next_si in range(si + 1, len(short)):
            joined += short[next_si]
            if _is_abbreviation(joined, long_[li]) and match(next_si + 1, li + 1):
                return True
        return False

    return match(0, 0)


def _words_agree(x: tuple[str, ...], y: tuple[str, ...]) -> bool:
    if x == y or "".join(x) == "".join(y):
        return True
    short, long_ = sorted((x, y), key=lambda words: (len(words), len("".join(words))))
    if len(long_) <= 12 and (_covers(short, long_) or _covers(long_, short)):
        return True
    if len(long_) >= 2 and any(  # "Amcis 2017 Proceedings" / "Americas Conference on ..."
        len(word) >= 3 and word.isalpha() and _is_acronym(word, long_) for word in short
    ):
        return True
    return fuzz.ratio(" ".join(x), " ".join(y)) >= 90


_PUBLISHERS = frozenset(
    {"acm", "ieee", "siam", "aaai", "usenix", "iet", "asme", "informs", "springer", "elsevier"}
)
"""Publishers and societies that some databases put before a journal's name ("ACM SIGMOD
Record" / "SIGMOD Record", "IEEE Transactions on ..." / "Transactions on ...")."""


def _forms(venue: tuple[str, ...], main: tuple[str, ...]) -> set[tuple[str, ...]]:
    forms = {venue, main}
    for words in (venue, main):
        start = 0
        while start < len(words) - 1 and words[start] in _PUBLISHERS:
            start += 1
        forms.add(words[start:])
    return {form for form in forms if form}


def venues_agree(a: RecordKeys, b: RecordKeys) -> bool | None:
    """Same venue, allowing abbreviations, acronyms, subtitles ("CMAJ: Canadian Medical
    Association Journal") and a publisher's name before the title ("ACM SIGMOD Record");
    ``None`` when either has none."""
    if not a.venue or not b.venue:
        return None
    forms_b = _forms(b.venue, b.venue_main)
    return any(_words_agree(x, y) for x in _forms(a.venue, a.venue_main) for y in forms_b)
