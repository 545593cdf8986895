"""Where the papers a search found in the library came from before (their origins), kept
apart from the sources of the search: "RIS file" is where a record came from, never a
source that returned it."""

from __future__ import annotations

from collections.abc import Iterable

from scholarstream.errors import InvalidInputError
from scholarstream.papers.formats import get_format
from scholarstream.sources import source_names


def origin_label(name: str) -> str | None:
    """How to name an origin that is a file format ("ris" -> "RIS file"); ``None`` for a
    source (it is named as the sources are: "pubmed" is PubMed, whether the record came
    from PubMed XML or was saved from a PubMed search)."""
    if name in source_names():
        return None
    try:
        file_format = get_format(name)
    except InvalidInputError:
        return None
    return f"{file_format.label} file"


def origin_labels(names: Iterable[str]) -> dict[str, str]:
    return {name: label for name in sorted(set(names)) if (label := origin_label(name))}
