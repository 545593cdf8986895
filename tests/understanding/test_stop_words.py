"""The one stop-word list, and the words each reader skips."""

from __future__ import annotations

from scholarstream.understanding import (
    BACK_REFERENCES,
    READERS,
    STOP_WORDS,
    content_words,
    is_stop_word,
    stop_words,
    words,
)


def test_the_words_no_reader_searches_for() -> None:
    for reader in READERS:
        assert {"the", "what", "please", "find"} <= stop_words(reader) <= STOP_WORDS
    assert is_stop_word("The", "streams")
    assert not is_stop_word("metformin", "search")


def test_each_reader_keeps_the_words_it_skipped_before_the_merge() -> None:
    assert is_stop_word("patients", "search")  # a search concept is not "patients"
    assert not is_stop_word("patients", "continuity")
    assert is_stop_word("forget", "continuity")  # "ok forget that": steering, not a topic
    assert not is_stop_word("forget", "search")
    assert is_stop_word("monitor", "streams")  # the stream's task, not its topic
    assert not is_stop_word("monitor", "continuity")
    assert stop_words("search") | stop_words("continuity") | stop_words("streams") == STOP_WORDS


def test_content_words_leave_out_stop_words_and_back_references() -> None:
    assert "its" in BACK_REFERENCES
    assert words("what are its side-effects?") == ["what", "are", "its", "side-effects"]
    assert content_words("what are its side effects in Texas?") == ["side", "effects", "Texas"]
    assert content_words("phase 3 trials in Texas", drop=["phase 3", "Texas"]) == ["trials"]
