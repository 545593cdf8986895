"""What a request's prompt says about the structured answer it asks for, read the way a
capable model reads it, from the schema's names and values alone (nothing of any one
product prompt):

- **offered values**: where the prose lists some of a choice's values side by side ("Valid
  next steps: a, b or c", ``"x" or "y"``), the answer picks from that list; a list of every
  value restricts nothing, and values inside JSON documents (a schema's ``enum``, data) are
  not offers;
- **given values**: the JSON documents in the prompt (a state or record it shows) give
  values by property name; an object of optional values echoes those and makes up none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

_SEPARATORS = frozenset({",", "/", "|", "or", "and", ", or", ", and"})
"""What may stand between two values of one list ("a, b", "a or b", "a, and b")."""
_QUOTES_AND_SPACE = re.compile(r"[\s\"'`\u2018\u2019\u201c\u201d]+")


class PromptHints:
    def __init__(self, prompt: str) -> None:
        self.documents, self.prose = _documents(prompt)

    def offered(self, values: Sequence[Any]) -> list[str]:
        """The values the prose offers for a choice of ``values``: the first list of two or
        more of them side by side that leaves some out (the instructions come before the
        user's message); empty when there is none."""
        choices = {v for v in values if isinstance(v, str) and v.strip()}
        if len(choices) < 3:
            return []
        alternation = "|".join(re.escape(v) for v in sorted(choices, key=len, reverse=True))
        found = re.finditer(rf"(?<![\w-])(?:{alternation})(?![\w-])", self.prose)
        lists: list[list[str]] = []
        current: list[str] = []
        end = 0
        for match in found:
            between = _QUOTES_AND_SPACE.sub(" ", self.prose[end : match.start()]).strip()
            if current and between in _SEPARATORS:
                current.append(match.group())
            else:
                lists.append(current)
                current = [match.group()]
            end = match.end()
        lists.append(current)
        restricting = [
            list(dict.fromkeys(run)) for run in lists if len(set(run)) >= 2 and set(run) < choices
        ]
        return restricting[0] if restricting else []

    def given(self, name: str) -> list[Any]:
        """The values the prompt's JSON documents give for a property ``name``, the latest
        first."""
        return [value for key, value in reversed(list(self._pairs())) if key == name]

    def _pairs(self) -> Iterator[tuple[str, Any]]:
        for document in self.documents:
            yield from _walk(document)


def _walk(node: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(node, Mapping):
        if _is_schema(node):
            return  # a JSON schema in the prompt (prompted output) gives no values
        for key, value in node.items():
            yield str(key), value
            yield from _walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item)


def _is_schema(node: Mapping[str, Any]) -> bool:
    return "properties" in node and ("type" in node or "required" in node)


def _documents(prompt: str) -> tuple[list[Any], str]:
    """The JSON objects written in ``prompt``, and the prompt with them blanked out (the
    prose, where offers are read)."""
    decoder = json.JSONDecoder()
    documents: list[Any] = []
    prose: list[str] = []
    at = 0
    start = prompt.find("{")
    while start != -1:
        try:
            document, end = decoder.raw_decode(prompt, start)
        except json.JSONDecodeError:
            start = prompt.find("{", start + 1)
            continue
        documents.append(document)
        prose.append(prompt[at:start])
        prose.append(" \n ")
        at = end
        start = prompt.find("{", end)
    prose.append(prompt[at:])
    return documents, "".join(prose)
