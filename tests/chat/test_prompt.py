"""The system prompt: context builder output, then the page's payload instructions, then
the stream's chat instructions when the context names a stream."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from scholarstream.chat import (
    ChatContext,
    build_system_prompt,
    resolve,
    set_stream_instructions_loader,
    stream_instructions,
)
from scholarstream.db import Database
from tests.chat.world import MARKER, PAGE


@pytest.fixture
def oncology_loader() -> Iterator[list[str]]:
    asked: list[str] = []

    async def load(database: Database, owner_id: uuid.UUID, stream_id: str) -> str | None:
        asked.append(stream_id)
        return "Focus on trial methodology." if stream_id == "42" else None

    set_stream_instructions_loader(load)
    yield asked
    set_stream_instructions_loader(None)


def test_the_prompt_is_context_then_payload_instructions_then_stream_instructions() -> None:
    context = ChatContext(current_page=PAGE, search_form={"q": "EGFR"})
    prompt = build_system_prompt(
        resolve(context),
        context,
        server_actions=[("run_search", "Runs a search.")],
        stream_instructions="Focus on trial methodology.",
    )
    page = prompt.index("The test page. Form: {'q': 'EGFR'}.")
    payload = prompt.index(f'{MARKER} {{"query": "..."}} proposes a query.')
    stream = prompt.index("## Instructions for this research stream\nFocus on trial methodology.")
    assert page < payload < stream
    assert '"open_thing" (handler "client"): Opens the thing.' in prompt
    assert '"run_search" (handler "server"): Runs a search.' in prompt


def test_a_page_without_a_builder_describes_the_raw_context() -> None:
    context = ChatContext(current_page=PAGE)
    prompt = build_system_prompt(resolve(context), context)
    assert "## Instructions for this research stream" not in prompt


async def test_stream_instructions_are_loaded_only_for_a_stream(
    oncology_loader: list[str],
) -> None:
    database = object.__new__(Database)
    owner = uuid.uuid4()
    assert await stream_instructions(database, owner, None) is None
    assert await stream_instructions(database, owner, "42") == "Focus on trial methodology."
    assert await stream_instructions(database, owner, "7") is None
    assert oncology_loader == ["42", "7"]
