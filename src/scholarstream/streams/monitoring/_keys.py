"""Every key a record is known by, in ``search.keys.paper_key``'s format: its main key
(the most stable identifier), the key of each other identifier it carries, and its
title key. A work first reported through its PMID and found again with a DOI as well is
still recognised as reported.

The title key (title and year) alone would also "recognise" another work with the same
title: a "Correction" or an "Editorial" reported once would hide every later one. So a
record's title key names the kinds of conflicting identifiers it carries (DOI, PMID,
PMCID, arXiv id: ``search.dedup.CONFLICTING_IDS``, the list the within-run deduplicator
keeps records apart by), as ``title:<hash>|doi+pmid``; a record without any keeps the
bare ``title:<hash>``. A later record matches a reported one by title only when the
reported one held none of the kinds it holds itself (it would otherwise share that
identifier, and match by it, or carry a different one: another work)."""

from __future__ import annotations

from collections.abc import Collection
from itertools import combinations

from scholarstream.papers import Identifiers, Record, paper_key
from scholarstream.papers.dedup import CONFLICTING_IDS

MAX_KEY_LENGTH = 300  # the stored column's width


def _identifier_keys(record: Record) -> list[str]:
    keys = []
    for name, value in record.ids.present().items():
        alone = record.model_copy(update={"ids": Identifiers.model_validate({name: value})})
        keys.append(paper_key(alone))
    return keys


def _title_key(record: Record, kinds: Collection[str]) -> str:
    bare = paper_key(record.model_copy(update={"ids": Identifiers()}))
    named = [name for name in CONFLICTING_IDS if name in kinds]
    return f"{bare}|{'+'.join(named)}" if named else bare


def _held(record: Record) -> set[str]:
    """The kinds of conflicting identifiers the record carries."""
    return {name for name in CONFLICTING_IDS if getattr(record.ids, name)}


def item_keys(record: Record) -> list[str]:
    """The keys to store for a reported record: the main key first, then the others; no
    duplicates."""
    keys = [paper_key(record), *_identifier_keys(record), _title_key(record, _held(record))]
    return list(dict.fromkeys(key[:MAX_KEY_LENGTH] for key in keys))


def lookup_keys(record: Record) -> list[str]:
    """The stored keys that mean ``record`` was already reported: any of its identifiers,
    or its title key as stored for a record with none of the identifier kinds it has."""
    free = [name for name in CONFLICTING_IDS if name not in _held(record)]
    titles = [
        _title_key(record, kinds)
        for size in range(len(free) + 1)
        for kinds in combinations(free, size)
    ]
    keys = [paper_key(record), *_identifier_keys(record), *titles]
    return list(dict.fromkeys(key[:MAX_KEY_LENGTH] for key in keys))


def already_reported(record: Record, reported: Collection[str]) -> bool:
    """Was ``record`` (or a copy of it) reported under one of the ``reported`` keys?"""
    return any(key in reported for key in lookup_keys(record))
