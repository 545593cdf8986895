"""A conversation read message by message, for the tests of follow-ups."""

from __future__ import annotations

import datetime as dt

from scholarstream.understanding import TopicReading, follow, read_message

TODAY = dt.date(2026, 11, 27)


def chain(*messages: str) -> list[tuple[str, TopicReading]]:
    """Each message's reading and the topic after it."""
    topic: TopicReading | None = None
    steps: list[tuple[str, TopicReading]] = []
    for message in messages:
        step = follow(topic, read_message(message, TODAY))
        topic = step.topic
        steps.append((step.reading, topic))
    return steps


def kinds_of(text: str) -> list[tuple[str, str]]:
    """Each value of ``text`` as (kind, words)."""
    return [(v.kind, v.text) for v in read_message(text, TODAY).values]
