"""LLM payload and suggestion markers: parsed, validated, dropped with a warning when
broken, and never streamed to the user as text."""

from __future__ import annotations

import pytest

from scholarstream.chat.core import MarkerFilter, PayloadType, make_json_parser, parse_answer

PROPOSAL = PayloadType(
    name="marker_test_proposal",
    description="a test proposal",
    source="llm",
    parse_marker="PROPOSAL:",
    parser=make_json_parser("marker_test_proposal"),
    schema={
        "type": "object",
        "properties": {"query": {"type": "string", "minLength": 1}},
        "required": ["query"],
        "additionalProperties": False,
    },
)


def test_payload_and_suggestions_are_parsed_out_of_the_text() -> None:
    answer = parse_answer(
        "Here is a better query.\n"
        'PROPOSAL: {"query": "EGFR[MeSH] AND resistance"}\n'
        'SUGGESTED_VALUES: [{"label": "Yes", "value": "Yes, run it"}]\n'
        'SUGGESTED_ACTIONS: [{"label": "Library", "action": "open_library", "handler": "client"}]',
        [PROPOSAL],
        client_actions={"open_library"},
        server_actions=set(),
    )
    assert answer.text == "Here is a better query."
    assert [p.model_dump() for p in answer.payloads] == [
        {"type": "marker_test_proposal", "data": {"query": "EGFR[MeSH] AND resistance"}}
    ]
    assert [v.value for v in answer.suggested_values] == ["Yes, run it"]
    assert [a.action for a in answer.suggested_actions] == ["open_library"]
    assert answer.warnings == []


def test_fenced_json_and_text_after_the_block_are_handled() -> None:
    answer = parse_answer(
        'Try this:\nPROPOSAL: ```json\n{"query": "x"}\n```\nThen look at the results.',
        [PROPOSAL],
        client_actions=(),
        server_actions=(),
    )
    assert answer.payloads[0].data == {"query": "x"}
    assert answer.text == "Try this:\nThen look at the results."


@pytest.mark.parametrize(
    "dressed",
    [
        '### PROPOSAL\n```json\n{"query": "x"}\n```',
        '**PROPOSAL:**\n{"query": "x"}',
        '**PROPOSAL**: {"query": "x"}',
        '## PROPOSAL: {"query": "x"}',
        '- PROPOSAL: {"query": "x"}',
        '* **PROPOSAL:** {"query": "x"}',
    ],
)
def test_a_marker_dressed_as_a_heading_or_in_bold_is_the_marker(dressed: str) -> None:
    text = f"Try this:\n{dressed}\n\nThen look at the results."
    answer = parse_answer(text, [PROPOSAL], client_actions=(), server_actions=())
    assert answer.payloads[0].data == {"query": "x"}
    assert answer.text == "Try this:\n\nThen look at the results."
    stream = MarkerFilter(["PROPOSAL:"])
    shown = "".join(stream.feed(ch) for ch in text) + stream.flush()
    assert shown == "Try this:\n"


def test_prose_that_starts_like_a_marker_streams() -> None:
    stream = MarkerFilter(["PROPOSAL:"])
    text = "PROPOSALS are good.\n**Bold** and ### not a heading\n- a list item\n- PROPOSALS too"
    assert "".join(stream.feed(ch) for ch in text) + stream.flush() == text


@pytest.mark.parametrize(
    ("block", "why"),
    [
        ('PROPOSAL: {"query": "unterminated', "malformed"),
        ('PROPOSAL: {"query": ""}', "query"),
        ('PROPOSAL: {"query": "x", "extra": 1}', "Additional properties"),
    ],
)
def test_a_broken_payload_is_dropped_with_a_warning_and_the_text_kept(block: str, why: str) -> None:
    answer = parse_answer(
        f"The answer stays.\n{block}\n\nAnd so does this.",
        [PROPOSAL],
        client_actions=(),
        server_actions=(),
    )
    assert answer.payloads == []
    assert "The answer stays." in answer.text
    assert "And so does this." in answer.text
    assert "PROPOSAL" not in answer.text
    assert len(answer.warnings) == 1
    assert why in answer.warnings[0]


def test_unknown_actions_and_malformed_suggestions_are_dropped() -> None:
    answer = parse_answer(
        "Done.\n"
        'SUGGESTED_ACTIONS: [{"label": "Boom", "action": "format_disk", "handler": "server"},'
        ' {"label": "Search", "action": "run_search", "handler": "server"}]\n'
        'SUGGESTED_VALUES: [{"label": "no value"}]',
        [PROPOSAL],
        client_actions=(),
        server_actions={"run_search"},
    )
    assert [a.action for a in answer.suggested_actions] == ["run_search"]
    assert answer.suggested_values == []
    assert any("format_disk" in w for w in answer.warnings)
    assert any("SUGGESTED_VALUES" in w for w in answer.warnings)
    assert answer.text == "Done."


def test_a_marker_in_the_middle_of_a_line_is_prose() -> None:
    text = "Use the PROPOSAL: format only at a line start."
    answer = parse_answer(text, [PROPOSAL], client_actions=(), server_actions=())
    assert answer.text == text
    assert answer.payloads == []


def _streamed(text: str, step: int) -> str:
    marker_filter = MarkerFilter(["PROPOSAL:", "SUGGESTED_VALUES:"])
    shown = "".join(marker_filter.feed(text[i : i + step]) for i in range(0, len(text), step))
    return shown + marker_filter.flush()


@pytest.mark.parametrize("step", [1, 2, 3, 7, 1000])
def test_the_stream_shows_the_prose_and_holds_back_the_blocks(step: int) -> None:
    text = 'Line one.\nPROPOSALS are good.\nPROP\nPROPOSAL: {"query": "x"}\nSUGGESTED_VALUES: []'
    assert _streamed(text, step) == "Line one.\nPROPOSALS are good.\nPROP\n"


@pytest.mark.parametrize("step", [1, 4, 1000])
def test_text_without_markers_streams_whole(step: int) -> None:
    text = "PRO and con: a PROPOSAL: mid-line is prose.\nEnd PROP"
    assert _streamed(text, step) == text


def test_the_example_chip_a_model_copies_is_dropped() -> None:
    answer = parse_answer(
        'Here.\nSUGGESTED_VALUES: [{"label": "chip text", "value": "the message it sends"}, '
        '{"label": "Only RCTs", "value": "only randomised trials"}]',
        [],
        client_actions=(),
        server_actions=(),
    )
    assert [c.label for c in answer.suggested_values] == ["Only RCTs"]
    assert any("copies the example" in w for w in answer.warnings)
