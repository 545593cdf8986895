"""Candidate pairs: only records that share a blocking key are compared.

Comparing every pair is quadratic (100,000 records would be 5 billion pairs). Copies of one
work share at least one of several cheap keys (an identifier, the start or end of the
title, the first author and year, the volume and first page, the title's longest words),
so each key groups records into blocks and only pairs inside a block are compared. Several
keys make up for one another's misses: a typo early in the title breaks the prefix key
but not the suffix key.

A block larger than ``max_block`` (a common surname and year, a supplement's DOI) is not
compared all against all: its records are sorted by title and each is compared with its
``window`` next neighbours (sorted neighbourhood), which keeps near-identical titles
together and the work linear.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence

from scholarstream.papers.dedup._normalize import RecordKeys

MAX_BLOCK = 48
WINDOW = 12
_TITLE_KEY_CHARS = 24
_MIN_TITLE_CHARS = 12

Blocker = Callable[[RecordKeys], Iterable[Hashable]]


def _identifiers(keys: RecordKeys) -> Iterator[Hashable]:
    yield from keys.identifiers


def _title_ends(keys: RecordKeys) -> Iterator[Hashable]:
    compact = keys.core_title.replace(" ", "")
    if len(compact) >= _MIN_TITLE_CHARS:
        yield "start", compact[:_TITLE_KEY_CHARS]
        yield "end", compact[-_TITLE_KEY_CHARS:]


def _author_year(keys: RecordKeys) -> Iterator[Hashable]:
    if keys.first_author and keys.year:
        yield keys.first_author, keys.year


def _volume_page(keys: RecordKeys) -> Iterator[Hashable]:
    if keys.volume and keys.first_page:
        yield keys.volume, keys.first_page


def _title_words(keys: RecordKeys) -> Iterator[Hashable]:
    """The four longest title words, in alphabetical order: survives reordered words,
    changed punctuation and a typo in a short word."""
    words = sorted({w for w in keys.core_title.split() if len(w) > 3}, key=lambda w: (-len(w), w))
    if len(words) >= 3:
        yield tuple(sorted(words[:4]))


BLOCKERS: dict[str, Blocker] = {
    "identifier": _identifiers,
    "title_ends": _title_ends,
    "author_year": _author_year,
    "volume_page": _volume_page,
    "title_words": _title_words,
}


def blocks(keys: Sequence[RecordKeys]) -> Iterator[list[int]]:
    """Every block with at least two records, as indices into ``keys``; a record that
    cannot be compared (``RecordKeys.comparable``) is in none."""
    for blocker in BLOCKERS.values():
        groups: defaultdict[Hashable, list[int]] = defaultdict(list)
        for index, record in enumerate(keys):
            if not record.comparable:
                continue
            for key in blocker(record):
                groups[key].append(index)
        yield from (members for members in groups.values() if len(members) > 1)


def candidate_pairs(
    keys: Sequence[RecordKeys], *, max_block: int = MAX_BLOCK, window: int = WINDOW
) -> Iterator[tuple[int, int]]:
    """Pairs ``(i, j)`` with ``i < j`` to compare; a pair may come from several blocks."""
    for members in blocks(keys):
        if len(members) <= max_block:
            for position, i in enumerate(members):
                for j in members[position + 1 :]:
                    yield i, j
            continue
        ordered = sorted(members, key=lambda index: keys[index].core_title)
        for position, i in enumerate(ordered):
            for j in ordered[position + 1 : position + 1 + window]:
                yield (i, j) if i < j else (j, i)
