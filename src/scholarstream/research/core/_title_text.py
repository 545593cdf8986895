"""A title cut from a research's prompt (seed 001's fallback title): used when the user
wrote none and no model wrote one, and to say where a research's title came from."""

from __future__ import annotations

import re

__all__ = ["TITLE_MAX_LENGTH", "UNTITLED", "fallback_title"]

TITLE_MAX_LENGTH = 80
UNTITLED = "Untitled research"

_LINE_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+>]\s+|\d+[.)]\s+)+")
_EMPHASIS = re.compile(r"\*\*|__|`+")
_WRAPPING = "\"'*_ "
_TRAILING = " ,;:-([\u2013\u2014"  # and en/em dashes


def fallback_title(prompt: str, *, max_length: int = TITLE_MAX_LENGTH) -> str:
    """A title cut from the prompt: its first non-empty line without Markdown markup,
    whitespace collapsed, cut at a word boundary with an ellipsis when too long."""
    lines = (_EMPHASIS.sub("", _LINE_MARKUP.sub("", line)) for line in prompt.splitlines())
    first = next((line for line in lines if line.strip(_WRAPPING)), "")
    text = " ".join(first.split()).strip(_WRAPPING)
    if not text:
        return UNTITLED
    if len(text) <= max_length:
        return text
    window = text[: max_length - 1]
    space = window.rfind(" ")
    # A cut far back would leave too little; a word that long is cut in the middle.
    if space >= max_length // 2:
        window = window[:space]
    return window.rstrip(_TRAILING) + "…"
