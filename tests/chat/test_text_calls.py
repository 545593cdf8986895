"""Tool calls written as text: which answers are calls, and what is streamed while the
model writes them (fed one character at a time, as the worst stream would)."""

from __future__ import annotations

import pytest

from scholarstream.chat.core import TextCall, TextCallFilter, repeats_message

KNOWN = {"search_library", "search_literature"}
CALL = '{"name": "search_library", "arguments": {"query": "EGFR resistance"}}'
RUN = TextCall("search_library", {"query": "EGFR resistance"})


def stream(text: str, *, step: int = 1) -> tuple[list[str], TextCallFilter]:
    """What the filter releases after each piece, and at the end."""
    calls = TextCallFilter(KNOWN)
    shown = [calls.feed(text[i : i + step]) for i in range(0, len(text), step)]
    return [*shown, calls.flush()], calls


@pytest.mark.parametrize(
    "answer",
    [
        CALL,
        f"  {CALL}\n",
        f"```json\n{CALL}\n```",
        f"```\n{CALL}\n```\n",
        f"<tool_call>\n{CALL}\n</tool_call>",
        '{"name": "search_library", "parameters": {"query": "EGFR resistance"}}',
        '{"name": "search_library", "arguments": "{\\"query\\": \\"EGFR resistance\\"}"}',
        '{"type": "function", "function": {"name": "search_library", '
        '"arguments": "{\\"query\\": \\"EGFR resistance\\"}"}}',
        f"[{CALL}]",
    ],
)
def test_an_answer_that_is_a_call_is_taken_out_and_nothing_of_it_streams(answer: str) -> None:
    shown, calls = stream(answer)
    assert "".join(shown).strip() == ""
    assert calls.calls == [RUN]


def test_prose_around_a_tagged_or_fenced_call_streams_and_the_call_does_not() -> None:
    for answer in (
        f"Let me look in your library.\n<tool_call>\n{CALL}\n</tool_call>\nOne moment.",
        f"Let me look in your library.\n```json\n{CALL}\n```\nOne moment.",
    ):
        shown, calls = stream(answer)
        assert "".join(shown) == "Let me look in your library.\n\nOne moment."
        assert calls.calls == [RUN]
        # The prose before the call went out before the call was complete.
        released_at = next(
            i for i, piece in enumerate(shown) if "library." in "".join(shown[: i + 1])
        )
        assert released_at < answer.index("search_library")


def test_several_calls_one_after_another() -> None:
    other = '{"name": "search_literature", "arguments": {"query": "osimertinib"}}'
    _, calls = stream(f"{CALL}\n{other}")
    assert [c.name for c in calls.calls] == ["search_library", "search_literature"]


def test_json_that_is_part_of_an_answer_is_text() -> None:
    for answer in (
        'Here is an example of a call:\n```json\n{"name": "get_weather", "arguments": '
        '{"city": "Paris"}}\n```\nThe model fills in the arguments.',
        '{"name": "Ada", "age": 36} is a JSON object with two keys.',
        '```json\n{"name": "get_weather", "arguments": {}}\n```\nThat is the shape of a call.',
        "```python\nprint('hello')\n```\nThat prints hello.",
        "[PubMed](https://pubmed.ncbi.nlm.nih.gov/) has it.",
        "Use a < b and `code`.",
    ):
        shown, calls = stream(answer)
        assert "".join(shown) == answer
        assert calls.calls == []


def test_a_code_block_or_a_link_at_the_start_streams_at_once() -> None:
    shown, _ = stream("```python\nprint('hello')\nprint('again')\n```\n")
    assert "".join(shown[:20]).startswith("```python\n")
    shown, _ = stream("[PubMed](https://pubmed.ncbi.nlm.nih.gov/) has it.")
    assert "".join(shown[:3]) == "[Pu"


def test_an_unknown_tool_is_a_call_only_when_it_is_the_whole_answer_or_tagged() -> None:
    unknown = '{"name": "search_papers", "arguments": {"query": "x"}}'
    for answer in (unknown, f"<tool_call>{unknown}</tool_call> Searching."):
        shown, calls = stream(answer)
        assert [c.name for c in calls.calls] == ["search_papers"]
        assert "search_papers" not in "".join(shown)


def test_an_unreadable_call_in_tags_is_still_hidden() -> None:
    shown, calls = stream(
        '<tool_call>{"name": "search_library", "arguments": {"query": </tool_call>'
    )
    assert "".join(shown) == ""
    assert calls.calls == [TextCall("search_library", None, problem="it is not readable JSON")]
    _, calls = stream('{"name": "search_library", "arguments": [1, 2]}')
    assert calls.calls == [
        TextCall("search_library", None, problem="its arguments are not a JSON object")
    ]


def test_text_streams_as_it_comes_when_nothing_could_be_a_call() -> None:
    shown, _ = stream("Osimertinib resistance arises through several mechanisms.", step=5)
    assert shown[0] == "Osime"
    assert all(piece for piece in shown[:-1])


OTHER = '{"name": "search_literature", "arguments": {"query": "EGFR", "sources": ["PubMed"]}}'


def until_round(text: str) -> tuple[int, TextCallFilter]:
    """How many characters the filter read before it found the round complete (the stream
    would be closed there), and the filter, flushed."""
    calls = TextCallFilter(KNOWN)
    for i, char in enumerate(text):
        assert calls.feed(char).strip() == ""
        if calls.round_complete():
            assert calls.flush().strip() == ""
            return i + 1, calls
    raise AssertionError("the round was never complete")


@pytest.mark.parametrize(
    "first_round",
    [
        f"[{CALL}, {OTHER}]",
        f"{CALL}\n{OTHER}\n{CALL}",
        f"```json\n[{CALL}, {OTHER}]\n```",
        f"```json\n{CALL}\n{OTHER}\n```",
    ],
)
def test_a_round_of_calls_written_again_and_again_is_complete_after_the_first(
    first_round: str,
) -> None:
    repeated = "\n".join([first_round] * 20)
    read, calls = until_round(repeated)
    assert read < 2 * len(first_round) + 2  # stopped at the start of the second round
    assert {(c.name, str(c.arguments)) for c in calls.calls} == {
        ("search_library", str({"query": "EGFR resistance"})),
        ("search_literature", str({"query": "EGFR", "sources": ["PubMed"]})),
    }


def test_tagged_calls_repeated_are_complete_at_the_first_repeat() -> None:
    tagged = f"<tool_call>\n{CALL}\n</tool_call>\n"
    read, calls = until_round(tagged * 10)
    assert read <= 2 * len(tagged)
    assert len(calls.calls) == 2  # the repeat is run once (the chat skips repeats)


@pytest.mark.parametrize(
    "answer",
    [
        CALL,
        f"{CALL}\nHere is what I found.",
        f"[{CALL}]",
        f"{CALL}\n{OTHER}",
        f"```json\n{CALL}\n```\nThen I will sum up what it finds.",
    ],
)
def test_calls_not_repeated_do_not_end_the_round(answer: str) -> None:
    calls = TextCallFilter(KNOWN)
    for char in answer:
        calls.feed(char)
        assert not calls.round_complete()


@pytest.mark.parametrize(
    "answer",
    [CALL[:40], f"[{CALL}, {OTHER[:30]}", f"```json\n{CALL[:50]}", f"{CALL}\n{OTHER[:25]}"],
)
def test_a_call_cut_off_is_hidden_as_a_call_that_cannot_run(answer: str) -> None:
    shown, calls = stream(answer)
    assert "".join(shown) == ""
    assert calls.calls[-1].arguments is None
    assert calls.calls[-1].problem == "its answer was cut off"


def test_json_that_ends_is_not_a_cut_call() -> None:
    answer = '{"name": "Ada", "age": 36}'
    shown, calls = stream(answer)
    assert "".join(shown) == answer
    assert calls.calls == []


REFUSAL = (
    "Invalid arguments for search_library: offset: None is not of type 'integer' "
    "The tool's input schema: {'type': 'object'}"
)


@pytest.mark.parametrize(
    "answer",
    [
        '{"error": "Invalid arguments for search_library: offset: None is not of type"}',
        "I got: invalid   arguments for SEARCH_LIBRARY: offset: None is not of\ntype 'integer'.",
    ],
)
def test_an_answer_repeating_a_message_is_recognised(answer: str) -> None:
    assert repeats_message(answer, [REFUSAL])


@pytest.mark.parametrize(
    "answer",
    [
        "I searched the library with search_library; offset is not of type text.",
        "Three papers match: see the list above.",
    ],
)
def test_an_answer_sharing_a_phrase_with_a_message_is_an_answer(answer: str) -> None:
    assert not repeats_message(answer, [REFUSAL])


def test_a_held_back_start_that_must_not_be_shown_is_withheld() -> None:
    calls = TextCallFilter(KNOWN, hidden=lambda text: repeats_message(text, [REFUSAL]))
    shown = calls.feed('{"error": "Invalid arguments for search_library: offset: None ')
    shown += calls.feed("is not of type 'integer'\"}")
    shown += calls.flush()
    assert shown == ""
    assert calls.withheld
    assert calls.calls == []
