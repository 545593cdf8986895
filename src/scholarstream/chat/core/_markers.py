"""Structured parts of the model's text answer: LLM payloads (``QUERY_SUGGESTION: {json}``)
and suggestions (``SUGGESTED_VALUES: [...]``, ``SUGGESTED_ACTIONS: [...]``). A marker counts
only at the start of a line. Whatever fails to parse or validate is dropped with a warning;
the prose around it is kept."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from pydantic import TypeAdapter, ValidationError

from scholarstream.chat.continuity import SuggestedValue
from scholarstream.chat.core._payloads import CustomPayload, PayloadError, PayloadType
from scholarstream.chat.core._response import SuggestedAction

SUGGESTED_VALUES = "SUGGESTED_VALUES:"
SUGGESTED_ACTIONS = "SUGGESTED_ACTIONS:"
SUGGESTION_MARKERS = (SUGGESTED_VALUES, SUGGESTED_ACTIONS)

_values_adapter = TypeAdapter(list[SuggestedValue])
_actions_adapter = TypeAdapter(list[SuggestedAction])


@dataclass
class ParsedAnswer:
    text: str
    payloads: list[CustomPayload] = field(default_factory=list)
    suggested_values: list[SuggestedValue] = field(default_factory=list)
    suggested_actions: list[SuggestedAction] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# A small model dresses a marker as a heading or in bold ("### QUERY_SUGGESTION",
# "**QUERY_SUGGESTION:**", "**QUERY_SUGGESTION**: {...}"): it is the marker all the same.
# A marker dressed as a heading, in bold or as a list item: "### X", "**X**:", "- X:".
_DRESSING = r"(?:[-*+•][ \t]+)?(?:#{1,6}[ \t]*|\*\*|__)?"
_CLOSING_DRESS = r"(?:\*\*|__)?"
# How much of a dressing may have arrived so far: "-", "- *", "- **", "##".
_DRESSING_SO_FAR = re.compile(r"^[ \t]*(?:[-*+•](?:[ \t]+|$))?(?:#{1,6}[ \t]*|\*{1,2}|_{1,2})?")
_CLOSING_SO_FAR = re.compile(r"(?:\*{1,2}|_{1,2})?[ \t]*")


def _marker_pattern(markers: Sequence[str], *, complete: bool = True) -> re.Pattern[str]:
    """A marker at a line's start, its name in group 1 (``_named`` gives the marker); the
    colon may be left out before the end of the line (of the text, when it is
    ``complete``: a streamed "PROPOSAL" may go on as "PROPOSALS are good")."""
    names = sorted({m.rstrip(":") for m in markers}, key=len, reverse=True)
    alternatives = "|".join(re.escape(n) for n in names)
    line_end = r"(?=\r?\n|$)" if complete else r"(?=\r?\n)"
    return re.compile(
        rf"^[ \t]*{_DRESSING}({alternatives}){_CLOSING_DRESS}[ \t]*"
        rf"(?::{_CLOSING_DRESS}|{line_end})",
        re.MULTILINE,
    )


def _named(markers: Sequence[str], name: str) -> str:
    return next(m for m in markers if m.rstrip(":") == name)


def _json_block(segment: str) -> tuple[object, str]:
    """The JSON value at the start of ``segment`` and the text after it. A fenced block
    (```json ... ```) is accepted; its fences are consumed."""
    body = segment.lstrip()
    fenced = body.startswith("```")
    if fenced:
        body = body.split("\n", 1)[1] if "\n" in body else ""
    value, end = json.JSONDecoder().raw_decode(body)
    rest = body[end:]
    if fenced:
        rest = rest.lstrip().removeprefix("```")
    return value, rest


def _drop_broken_block(segment: str) -> str:
    """After a malformed block: keep what follows its first blank line."""
    _, sep, after = segment.strip("\n").partition("\n\n")
    return after if sep else ""


def parse_answer(
    text: str,
    llm_payloads: Sequence[PayloadType],
    *,
    client_actions: Collection[str],
    server_actions: Collection[str],
) -> ParsedAnswer:
    by_marker = {p.parse_marker: p for p in llm_payloads if p.parse_marker}
    markers = [*by_marker, *SUGGESTION_MARKERS]
    matches = list(_marker_pattern(markers).finditer(text))
    if not matches:
        return ParsedAnswer(text=text.strip())
    answer = ParsedAnswer(text="")
    kept = [text[: matches[0].start()]]
    for number, match in enumerate(matches):
        end = matches[number + 1].start() if number + 1 < len(matches) else len(text)
        marker = _named(markers, match.group(1))
        segment = text[match.end() : end]
        payload_type = by_marker.get(marker)
        try:
            if payload_type is not None and payload_type.parser is not None:
                data = payload_type.parser(segment)
                answer.payloads.append(payload_type.payload(data))
                _, rest = _json_block(segment)
            else:
                value, rest = _json_block(segment)
                _add_suggestions(answer, marker, value, client_actions, server_actions)
        except (json.JSONDecodeError, PayloadError, ValidationError) as exc:
            answer.warnings.append(f"Dropped a malformed {marker.rstrip(':')} block: {_why(exc)}")
            rest = _drop_broken_block(segment)
        kept.append(rest)
    answer.text = _joined([part for part in kept if part.strip()])
    return answer


def _joined(parts: list[str]) -> str:
    """The text around the blocks, a paragraph break kept where the text after a block
    began with one."""
    text = ""
    for part in parts:
        if text:
            text += "\n\n" if part.lstrip(" ").startswith("\n\n") else "\n"
        text += part.strip("\n")
    return text.strip()


def _why(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON ({exc.msg})"
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'/'.join(str(p) for p in first['loc'])}: {first['msg']}"
    return str(exc)


# The example chip of the instructions, which small models copy as it stands.
_EXAMPLE_CHIP = re.compile(r"^\s*(?:short\s+)?chip text\s*$|^\s*the message it sends\s*$", re.I)


def _is_the_example(text: str) -> bool:
    return _EXAMPLE_CHIP.match(text) is not None


def _add_suggestions(
    answer: ParsedAnswer,
    marker: str,
    value: object,
    client_actions: Collection[str],
    server_actions: Collection[str],
) -> None:
    if marker == SUGGESTED_VALUES:
        for chip in _values_adapter.validate_python(value):
            if _is_the_example(chip.label) or _is_the_example(chip.value):
                answer.warnings.append(
                    f"Dropped the suggestion {chip.label!r}: it copies the example it was shown."
                )
            else:
                answer.suggested_values.append(chip)
        return
    for action in _actions_adapter.validate_python(value):
        known = client_actions if action.handler == "client" else server_actions
        if action.action in known:
            answer.suggested_actions.append(action)
        else:
            answer.warnings.append(
                f"Dropped the suggested {action.handler} action {action.action!r}: "
                "this page has no such action."
            )


class MarkerFilter:
    """Streams the model's text to the user while holding back the structured blocks: text
    from a line that starts with a marker on is not streamed (the finished answer carries
    it parsed), and a line that could still become a marker waits for its next characters."""

    def __init__(self, markers: Sequence[str]) -> None:
        self._markers = tuple(markers)
        self._pattern = _marker_pattern(self._markers, complete=False) if self._markers else None
        self._pending = ""
        self._at_line_start = True
        self._stopped = False

    def feed(self, delta: str) -> str:
        if self._stopped or self._pattern is None:
            return "" if self._stopped else delta
        text = self._pending + delta
        # The pattern anchors on line starts; a held-back tail that began mid-line must not
        # look like a line start, so it is matched with the character before it.
        prefix = "" if self._at_line_start else "x"
        match = self._pattern.search(prefix + text)
        if match is not None:
            self._stopped = True
            self._pending = ""
            return text[: match.start() - len(prefix)]
        line_start = text.rfind("\n") + 1
        tail = text[line_start:]
        if (line_start > 0 or self._at_line_start) and self._could_become_marker(tail):
            self._pending = tail
            out = text[:line_start]
        else:
            self._pending = ""
            out = text
        if out:
            self._at_line_start = out.endswith("\n")
        return out

    def _could_become_marker(self, tail: str) -> bool:
        # "*" may still become "**QUERY_SUGGESTION:", and "**QUERY_SUGGESTION*" too.
        undressed = _DRESSING_SO_FAR.sub("", tail)
        return any(
            m.startswith(undressed)
            or (
                undressed.startswith(m.rstrip(":"))
                and _CLOSING_SO_FAR.fullmatch(undressed[len(m.rstrip(":")) :]) is not None
            )
            for m in self._markers
        )

    def flush(self) -> str:
        """What is still held back once the text is complete (a line that never became one)."""
        out, self._pending = ("" if self._stopped else self._pending), ""
        return out
