"""The words of a chat message, and its content words: what a search should get once
question, request and filler words and back-references are left out."""

from __future__ import annotations

import re

from scholarstream.understanding._stop_words import BACK_REFERENCES, stop_words

_FILLER = stop_words("continuity")
# Letters of any script; a dot before a digit stays ("NaV1.8", "B.1.1.7").
_WORD_RE = re.compile(r"[^\W_](?:[^\W_]|['\u2019\-]|\.(?=\d))*")


def words(text: str) -> list[str]:
    return _WORD_RE.findall(text)


def content_words(text: str, *, drop: list[str] | None = None) -> list[str]:
    """The words a search should get, in order: ``text`` without filler, back-references
    and the ``drop`` phrases."""
    for phrase in drop or []:
        text = re.sub(re.escape(phrase), " ", text, flags=re.IGNORECASE)
    kept = []
    for word in words(text):
        bare = word.lower().strip("'\u2019-")
        if bare in _FILLER or bare in BACK_REFERENCES or not bare:
            continue
        kept.append(word.strip("'\u2019-"))
    return kept
