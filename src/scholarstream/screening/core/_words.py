"""Screening's words for counts and its download names: "1 record" / "12 records" (as the
CLI's ``records`` helper says them), and a file named after the project
(``otitis-in-dogs-screening.csv``), safe in any file system and HTTP header."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

MAX_STEM_CHARS = 60
"""The project's part of a download name, at most (cut at a word)."""
FALLBACK_STEM = "project"
"""The stem of a name with no letter or digit to keep (in ASCII: a name in another script)."""


def counted(count: int, noun: str = "record", plural: str | None = None) -> str:
    """ "1 record", "12 records", "1,834 records"; ``plural`` when adding "s" is wrong."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def agrees(count: int, one: str, many: str) -> str:
    """The verb (or word) that agrees with ``count``: ``agrees(1, "is", "are")`` is "is"."""
    return one if count == 1 else many


_NOT_WORD = re.compile(r"[\W_]+")
_LATIN = str.maketrans({"ø": "o", "œ": "oe", "æ": "ae", "đ": "d", "ð": "d", "ł": "l", "þ": "th"})
"""Latin letters that do not decompose into an ASCII letter and a mark."""


def _stem(name: str, *, ascii_only: bool) -> str:
    text = unicodedata.normalize("NFKC", name).casefold()
    if ascii_only:
        decomposed = unicodedata.normalize("NFKD", text.translate(_LATIN))
        text = "".join(c for c in decomposed if not unicodedata.combining(c))
        text = text.encode("ascii", "ignore").decode()
    words = [w for w in _NOT_WORD.split(text) if w]
    stem = ""
    for word in words:
        longer = f"{stem}-{word}" if stem else word
        if len(longer) > MAX_STEM_CHARS:
            stem = stem or word[:MAX_STEM_CHARS]
            break
        stem = longer
    return stem


@dataclass(frozen=True)
class DownloadName:
    """A download's name: ``ascii`` for every client (``filename=``), ``unicode`` for those
    that read RFC 6266's ``filename*`` (the same name with the project's own letters)."""

    ascii: str
    unicode: str

    @property
    def needs_unicode(self) -> bool:
        return self.unicode != self.ascii


def download_name(project_name: str, what: str, extension: str) -> DownloadName:
    """The name of a project's download: its name in lower case, words joined by hyphens,
    then ``what`` and the extension: ``download_name("Otitis in dogs", "prisma", ".svg")``
    is ``otitis-in-dogs-prisma.svg``. Only letters, digits and hyphens: no quote, slash or
    control character can reach a header or a path."""
    extension = extension if extension.startswith(".") else f".{extension}"
    ascii_stem = _stem(project_name, ascii_only=True) or FALLBACK_STEM
    unicode_stem = _stem(project_name, ascii_only=False) or ascii_stem
    return DownloadName(
        ascii=f"{ascii_stem}-{what}{extension}", unicode=f"{unicode_stem}-{what}{extension}"
    )
