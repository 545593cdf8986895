"""Whether an answer repeats what the product told the model. A small model that was sent
an error (its tool arguments were refused, its call was skipped) sometimes answers with that
message, often as JSON, instead of answering the user: such text is the product's own words
to the model, not an answer, and is never shown as one."""

from __future__ import annotations

import re
from collections.abc import Iterable

ECHO_WINDOW = 40
"""Characters of one message that, found in the answer, make it a repetition: longer than
a phrase an answer shares with a message by chance (a tool's name, "is not of type")."""

_SPACE = re.compile(r"\s+")


def _normalised(text: str) -> str:
    # JSON escapes quotes and newlines; a model re-wraps and re-quotes what it repeats.
    return _SPACE.sub(" ", text.replace('\\"', '"').replace("\\n", " ")).strip().casefold()


def repeats_message(answer: str, messages: Iterable[str], window: int = ECHO_WINDOW) -> bool:
    """Whether ``answer`` contains a passage of ``window`` characters of any of
    ``messages`` (compared without case and spacing)."""
    text = _normalised(answer)
    if len(text) < window:
        return False
    for message in messages:
        sent = _normalised(message)
        if len(sent) < window:
            continue
        step = max(1, window // 2)
        # Windows every half window: a repeated passage of 1.5 windows contains one whole.
        if any(sent[i : i + window] in text for i in range(0, len(sent) - window + 1, step)):
            return True
    return False
