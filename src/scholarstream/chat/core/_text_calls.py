"""Tool calls a model writes as text. A small model behind a local server (Qwen2.5 on
llama.cpp) often answers with the call itself instead of a structured tool call:

- bare JSON, the whole answer: ``{"name": "search_library", "arguments": {...}}``;
- in a code fence: ```` ```json {"name": ..., "arguments": ...} ``` ````;
- in tags: ``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` (Hermes / Qwen).

``"parameters"`` may stand for ``"arguments"``, the arguments may be a JSON string, and
several calls may come as a list or one after another. Only an answer that *is* a call
counts: tags always; a leading bare or fenced call when it names a known tool, or is the
whole answer; a fence later in the answer when it names a known tool. JSON that is part of
an answer (the user asked for an example) stays text.

``TextCallFilter`` streams one response's text while holding back whatever could still be
such a call, so raw tool JSON never reaches the user; ``calls`` are the calls it took out.
A held-back start that is no call is shown, unless ``hidden`` says it must not be (it
repeats what the product told the model); ``withheld`` then tells so."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

OPEN_TAG = "<tool_call>"
CLOSE_TAG = "</tool_call>"
FENCE = "```"
_CALL_KEYS = frozenset({"name", "arguments", "parameters", "id", "type"})
_FENCE_LINE = re.compile(r"^[ \t]*```", re.MULTILINE)
_CANDIDATE = re.compile(rf"{re.escape(OPEN_TAG)}|^[ \t]*```", re.MULTILINE)


@dataclass(frozen=True)
class TextCall:
    """One call found in the text. ``arguments`` is ``None`` when they could not be read;
    ``problem`` then says why, in words for the user."""

    name: str
    arguments: dict[str, Any] | None
    problem: str | None = None


def _arguments(value: object) -> tuple[dict[str, Any] | None, str | None]:
    if value is None:
        return {}, None
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            return None, "its arguments are not valid JSON"
    if isinstance(value, dict):
        return value, None
    return None, "its arguments are not a JSON object"


def _call(value: object, *, tagged: bool) -> TextCall | None:
    """``value`` as a call, or None when it does not have a call's shape."""
    if not isinstance(value, dict):
        return None
    function = value.get("function")
    if isinstance(function, dict) and set(value) <= {"function", "id", "type"}:
        value = function  # the OpenAI wire shape, {"type": "function", "function": {...}}
    name = value.get("name")
    if not isinstance(name, str) or not name or not set(value) <= _CALL_KEYS:
        return None
    has_arguments = "arguments" in value or "parameters" in value
    if not has_arguments and not tagged:
        return None
    arguments, problem = _arguments(value.get("arguments", value.get("parameters")))
    return TextCall(name=name, arguments=arguments, problem=problem)


def calls_in(value: object, *, tagged: bool = False) -> list[TextCall] | None:
    """The calls a JSON value is (one call, or a list of them), or None."""
    values = value if isinstance(value, list) and value else [value]
    calls = [_call(v, tagged=tagged) for v in values]
    if any(c is None for c in calls):
        return None
    return [c for c in calls if c is not None]


def _json_values(text: str) -> tuple[list[object], int]:
    """The JSON objects and arrays at the start of ``text``, one after another, and where
    they end."""
    decoder = json.JSONDecoder()
    values: list[object] = []
    position = 0
    while True:
        start = len(text) - len(text[position:].lstrip())
        if start >= len(text) or text[start] not in "{[":
            return values, position
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            return values, position
        values.append(value)
        position = end


def _decode_calls(text: str, *, tagged: bool = False) -> tuple[list[TextCall] | None, int]:
    values, end = _json_values(text)
    if not values:
        return None, 0
    calls: list[TextCall] = []
    for value in values:
        found = calls_in(value, tagged=tagged)
        if found is None:
            return None, 0
        calls.extend(found)
    return calls, end


def _fence_body(block: str) -> tuple[str, int | None]:
    """The content of a fenced block that starts at ``block[0]`` (its opening line
    skipped), and where the block ends after its closing fence line (None: not closed)."""
    first_newline = block.find("\n")
    if first_newline < 0:
        return "", None
    body_start = first_newline + 1
    closing = _FENCE_LINE.search(block, body_start)
    if closing is None:
        return block[body_start:], None
    line_end = block.find("\n", closing.end())
    return block[body_start : closing.start()], len(block) if line_end < 0 else line_end + 1


def _tagged(content: str) -> list[TextCall]:
    """The calls inside ``<tool_call>`` tags (a fence inside them is tolerated); tags are
    a call whatever is in them, so unreadable content is a call that cannot run."""
    body = content.strip()
    if body.startswith(FENCE):
        body, _ = _fence_body(body + "\n")
    calls, end = _decode_calls(body, tagged=True)
    if calls and not body[end:].strip():
        return calls
    name = re.search(r'"name"\s*:\s*"([^"]+)"', body)
    return [
        TextCall(
            name=name.group(1) if name else "",
            arguments=None,
            problem="it is not readable JSON",
        )
    ]


def call_key(name: str, arguments: object) -> str:
    """What makes two calls the same call: the tool and its arguments, in any key order."""
    return f"{name}:{json.dumps(arguments, sort_keys=True, default=str)}"


def _repeats(calls: list[TextCall]) -> bool:
    keys = [call_key(c.name, c.arguments) for c in calls]
    return len(set(keys)) < len(keys)


_CALL_START = re.compile(r'^\[?\s*\{\s*"name"(?:\s*:\s*"([^"]*)")?')


def _cut_call(body: str) -> TextCall | None:
    """The call an answer that starts like one but does not end (it was cut off) was
    going to be, or None when it does not start like a call."""
    start = _CALL_START.match(body)
    if start is None:
        return None
    try:
        json.JSONDecoder().raw_decode(body)
    except json.JSONDecodeError:
        pass
    else:
        return None  # it ends: not cut off, just not a call
    return TextCall(name=start.group(1) or "", arguments=None, problem="its answer was cut off")


def _never(_: str) -> bool:
    return False


@dataclass
class TextCallFilter:
    """One response's text in, the text to show out. ``known``: the tools of this turn."""

    known: Collection[str]
    hidden: Callable[[str], bool] = _never
    calls: list[TextCall] = field(default_factory=list)
    withheld: bool = False
    _raw: str = ""
    _cursor: int = 0
    _lead: bool = True
    _in_plain_fence: bool = False

    def feed(self, delta: str) -> str:
        self._raw += delta
        return self._advance(final=False)

    def flush(self) -> str:
        """The rest, once the response is complete."""
        return self._advance(final=True)

    def round_complete(self) -> bool:
        """Whether the response has written a whole round of calls and goes on writing only
        more of them (a small model repeats its list of calls until its answer budget runs
        out): a list of calls, a fenced block of calls, or a call it already wrote, followed
        by the start of another. The text is then cut after the round, so ``flush`` takes
        out exactly those calls and the stream can be closed."""
        if not self._lead:
            if not _repeats(self.calls):
                return False
            self._raw = self._raw[: self._cursor]
            return True
        rest = self._raw[self._cursor :]
        body = rest.lstrip()
        if body.startswith(FENCE):
            content, end = _fence_body(body)
            if end is None:
                return False
            values, used = _json_values(content)
            if content[used:].strip():
                return False
            one_round = True
        else:
            values, end = _json_values(body)
            one_round = any(isinstance(v, list) for v in values)
        after = body[end:].lstrip()
        if not values or not after or not after.startswith(("{", "[", FENCE[0], OPEN_TAG[0])):
            return False
        calls: list[TextCall] = []
        for value in values:
            found = calls_in(value)
            if found is None:
                return False
            calls.extend(found)
        if not self._names_known(calls) or not (one_round or _repeats(calls)):
            return False
        self._raw = self._raw[: self._cursor + len(rest) - len(body) + end]
        return True

    def _names_known(self, calls: list[TextCall]) -> bool:
        return any(c.name in self.known for c in calls)

    def _advance(self, *, final: bool) -> str:
        out: list[str] = []
        while self._cursor < len(self._raw):
            rest = self._raw[self._cursor :]
            if self._lead:
                done = self._lead_block(rest, final, out)
            elif self._in_plain_fence:
                done = self._plain_fence(rest, final, out)
            else:
                done = self._scan(rest, final, out)
            if done:
                break
        return "".join(out)

    def _release(self, text: str, out: list[str]) -> None:
        out.append(text)
        self._cursor += len(text)

    def _drop(self, length: int) -> None:
        self._cursor += length

    def _lead_block(self, rest: str, final: bool, out: list[str]) -> bool:
        """The start of the answer: a bare or fenced call there is the call the whole
        answer is, so such a start is held back until the response ends."""
        body = rest.lstrip()
        if not body:
            if final:
                self._release(rest, out)
            return True
        if not final and (FENCE.startswith(body) or OPEN_TAG.startswith(body)):
            return True  # too short to tell
        if not final and not self._may_be_lead_call(body):
            self._lead = False
            return False
        if body[0] in "{[" or body.startswith(FENCE):
            if not final:
                return True
            skipped = len(rest) - len(body)
            content = body
            if body.startswith(FENCE):
                content, end = _fence_body(body)
                calls, used = _decode_calls(content)
                leftover = content[used:] if calls else ""
                end = len(body) if end is None else end
            else:
                calls, end = _decode_calls(body)
                leftover = ""
            after = body[end:]
            whole = bool(calls) and not leftover.strip()
            if calls and whole and (self._names_known(calls) or not after.strip()):
                self.calls.extend(calls)
                self._drop(skipped + end)
                unfinished = after
            elif calls is None and self.hidden(body):
                self.withheld = True
                self._cursor = len(self._raw)
                self._lead = False
                return False
            else:
                unfinished = content if calls is None else ""
            # A call the answer budget or the deadline cut off: hidden, never shown.
            cut = _cut_call(unfinished.lstrip())
            if cut is not None:
                self.calls.append(cut)
                self._cursor = len(self._raw)
        self._lead = False
        return False

    @staticmethod
    def _may_be_lead_call(body: str) -> bool:
        """Whether an answer starting with ``body`` may still turn out to be a call: JSON
        whose first key is coming, or a fence whose content may be JSON. An answer that
        starts with a link (``[text](...)``) or a code block of another kind streams at once."""
        if body.startswith(FENCE):
            content, _ = _fence_body(body)
            first = content.lstrip()[:1]
            return "\n" not in body or not first or first in "{["
        if body[0] not in "{[":
            return False
        after = body[1:].lstrip()[:1]
        return not after or after == ('"' if body[0] == "{" else "{")

    def _plain_fence(self, rest: str, final: bool, out: list[str]) -> bool:
        """Inside a code block that is not a call: shown as it is, up to its closing line."""
        prefix = "" if self._at_line_start() else "x"
        found = _FENCE_LINE.search(prefix + rest)
        shift = len(prefix)
        closing = None if found is None else (found.start() - shift, found.end() - shift)
        if closing is not None:
            line_end = rest.find("\n", closing[1])
            if line_end < 0 and not final:
                self._release(rest[: closing[0]], out)
                return True
            self._release(rest if line_end < 0 else rest[: line_end + 1], out)
            self._in_plain_fence = False
            return False
        self._release(rest[: len(rest) - self._fence_tail(rest, final)], out)
        return True

    def _at_line_start(self) -> bool:
        return self._cursor == 0 or self._raw[self._cursor - 1] == "\n"

    def _scan(self, rest: str, final: bool, out: list[str]) -> bool:
        prefix = "" if self._at_line_start() else "x"  # the pattern anchors on line starts
        match = _CANDIDATE.search(prefix + rest)
        if match is None:
            hold = 0 if final else max(self._tag_tail(rest), self._fence_tail(rest, final))
            self._release(rest[: len(rest) - hold], out)
            return True
        start = match.start() - len(prefix)
        self._release(rest[:start], out)
        block = rest[start:]
        if block.startswith(OPEN_TAG):
            close = block.find(CLOSE_TAG)
            if close < 0 and not final:
                return True
            end = len(block) if close < 0 else close + len(CLOSE_TAG)
            self.calls.extend(_tagged(block[len(OPEN_TAG) : close if close >= 0 else None]))
            self._drop(end)
            return False
        return self._fence(block, final, out)

    def _fence(self, block: str, final: bool, out: list[str]) -> bool:
        content, end = _fence_body(block)
        opened = "\n" in block
        first = content.lstrip()[:1]
        if not final and (not opened or not first):
            return True  # not yet known what the block holds
        if first not in ("{", "["):
            line_end = block.find("\n")
            self._release(block if line_end < 0 else block[: line_end + 1], out)
            self._in_plain_fence = line_end >= 0
            return False
        if end is None and not final:
            return True
        calls, used = _decode_calls(content)
        if calls and not content[used:].strip() and self._names_known(calls):
            self.calls.extend(calls)
            self._drop(len(block) if end is None else end)
        else:
            self._release(block if end is None else block[:end], out)
        return False

    @staticmethod
    def _tag_tail(text: str) -> int:
        """Length of the end of ``text`` that could still become ``<tool_call>``."""
        start = text.rfind("<")
        if start < 0:
            return 0
        tail = text[start:]
        return len(tail) if OPEN_TAG.startswith(tail) and len(tail) < len(OPEN_TAG) else 0

    def _fence_tail(self, text: str, final: bool) -> int:
        """Length of an unfinished last line that could still become a fence line."""
        if final:
            return 0
        line_start = text.rfind("\n") + 1
        if line_start == 0 and not self._at_line_start():
            return 0
        tail = text[line_start:]
        stripped = tail.lstrip(" \t")
        return len(tail) if FENCE.startswith(stripped) and len(stripped) < len(FENCE) else 0
