"""Every key a record is known by, in ``search.keys.paper_key``'s format: its main key
(the most stable identifier), the key of each other identifier it carries, and its
title key. A work first reported through its PMID and found again with a DOI as well is
still recognised as reported."""

from __future__ import annotations

from scholarstream.papers import Record
from scholarstream.papers.model import Identifiers
from scholarstream.search.keys import paper_key

MAX_KEY_LENGTH = 300  # the stored column's width


def item_keys(record: Record) -> list[str]:
    """The main key first, then the others; no duplicates."""
    keys = [paper_key(record)]
    for name, value in record.ids.present().items():
        alone = record.model_copy(update={"ids": Identifiers.model_validate({name: value})})
        keys.append(paper_key(alone))
    keys.append(paper_key(record.model_copy(update={"ids": Identifiers()})))
    return list(dict.fromkeys(key[:MAX_KEY_LENGTH] for key in keys))
