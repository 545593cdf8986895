"""The review's keywords found in a text, as character spans for the page to mark.

A keyword matches whole words, case-insensitively, with a plural ``s``/``es``; a keyword
ending in ``*`` matches every word that starts with it (``random*``: randomised,
randomized, randomly), as in a database search. A phrase matches with any spacing."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from pydantic import BaseModel, ConfigDict


class Span(BaseModel):
    model_config = ConfigDict(extra="forbid")

    start: int
    end: int


def _pattern(keyword: str) -> str | None:
    truncated = keyword.endswith("*")
    words = re.findall(r"\w+", keyword.rstrip("*"))
    if not words:
        return None
    body = r"\W+".join(re.escape(word) for word in words)
    tail = r"\w*" if truncated else r"(?:e?s)?"
    return rf"(?<!\w){body}{tail}(?!\w)"


@lru_cache(maxsize=64)
def _compiled(keywords: tuple[str, ...]) -> re.Pattern[str] | None:
    patterns = [p for k in keywords if (p := _pattern(k))]
    if not patterns:
        return None
    # Longer keywords first, so a phrase wins over a word inside it.
    patterns.sort(key=len, reverse=True)
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


def keyword_spans(text: str, keywords: Sequence[str]) -> list[Span]:
    """Where ``keywords`` occur in ``text``, in order, never overlapping."""
    pattern = _compiled(tuple(keywords))
    if pattern is None or not text:
        return []
    return [
        Span(start=m.start(), end=m.end()) for m in pattern.finditer(text) if m.end() > m.start()
    ]


def keywords_found(text: str, keywords: Sequence[str]) -> list[str]:
    """The keywords that occur in ``text``, in the keywords' order."""
    return [k for k in keywords if keyword_spans(text, [k])]
