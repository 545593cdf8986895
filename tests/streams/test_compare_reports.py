"""``compare_reports`` on the report page, through ``execute_tool``: a stream run twice with
recorded sources (openalex failing the first time) compares counts, source outcomes, new
items, groups and the timeline; unknown ids, a first report, another stream's report and
another user's report are clear errors."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest

import scholarstream.chat  # noqa: F401  (registers the built-ins)
from scholarstream.chat.core import ChatContext
from scholarstream.chat.pages import resolve
from scholarstream.chat.tools import ToolContext, execute_tool, get_tool
from scholarstream.db.tables import User
from scholarstream.errors import InvalidInputError, NotFoundError
from scholarstream.runtime import Runtime
from scholarstream.streams import StreamStore
from scholarstream.streams.monitoring import StoredReport, run_stream_now
from tests.chat.services import tool_services
from tests.helpers import new_user
from tests.search.world import LiteratureWorld
from tests.streams.conftest import Make
from tests.streams.runner import runner
from tests.streams.test_monitoring import NOW, new_stream, nlp_stream


async def compare(runtime: Runtime, owner: User, stored: StoredReport, **arguments: Any) -> str:
    context = ToolContext(
        services=tool_services(runtime),
        owner_id=owner.id,
        chat=ChatContext(
            current_page="stream_report",
            stream_id=str(stored.stream_id),
            report_id=str(stored.id),
        ),
    )
    result = await execute_tool(get_tool("compare_reports"), arguments, context, lambda _: None)
    assert result.payload is None
    return result.text


async def two_runs(make: Make) -> tuple[Runtime, User, StoredReport, StoredReport]:
    runtime = make(LiteratureWorld(failing=("openalex",)))
    owner, stream = await new_stream(runtime)
    first = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    healthy = make(LiteratureWorld())
    second = await run_stream_now(
        runner(healthy), owner.id, stream.id, now=NOW + dt.timedelta(days=1)
    )
    assert first.status == "partial" and second.status == "complete"
    return healthy, owner, first, second


def test_the_tool_is_offered_on_the_report_page_only() -> None:
    on_page = resolve(ChatContext(current_page="stream_report"))
    assert "compare_reports" in {tool.name for tool in on_page.tools}
    elsewhere = resolve(ChatContext(current_page="stream"))
    assert "compare_reports" not in {tool.name for tool in elsewhere.tools}


async def test_compares_with_the_previous_report_by_default(make: Make) -> None:
    runtime, owner, first, second = await two_runs(make)
    assert first.report is not None and second.report is not None

    text = await compare(runtime, owner, second)

    assert f"Comparing report {second.id}" in text and f"with report {first.id}" in text
    a, b = second.report.counts, first.report.counts
    assert f"- new: {a.new} | {b.new} ({a.new - b.new:+d})" in text
    assert f"- found by openalex: {a.by_source['openalex']} | 0 (+" in text
    (openalex,) = [line for line in text.splitlines() if line.startswith("- openalex:")]
    assert "ok, " in openalex and "| FAILED (" in openalex and "[OUTCOME CHANGED]" in openalex
    (pubmed,) = [line for line in text.splitlines() if line.startswith("- pubmed:")]
    assert "CHANGED" not in pubmed
    # Reports never repeat an item, so every item of each is in it alone.
    assert f"Items in this report, not in the other: {len(second.report.items)}" in text
    assert f"Items in the other report, not in this one: {len(first.report.items)}" in text
    assert second.report.items[0].record.title in text
    assert "- focus area 'sentiment analysis': " in text
    assert "- organisation 'ChatGPT': " in text
    assert "Publication timeline, years that differ" in text

    # Named explicitly, the other way round.
    reverse = await compare(runtime, owner, first, other_report_id=str(second.id))
    assert f"Comparing report {first.id}" in reverse
    (openalex,) = [line for line in reverse.splitlines() if line.startswith("- openalex:")]
    assert openalex.startswith("- openalex: FAILED (")


async def test_errors_are_clear(make: Make) -> None:
    runtime, owner, first, second = await two_runs(make)

    with pytest.raises(InvalidInputError, match="no previous report") as error:
        await compare(runtime, owner, first)
    assert error.value.hint and "other_report_id" in error.value.hint
    with pytest.raises(NotFoundError, match="was not found"):
        await compare(runtime, owner, second, other_report_id=str(uuid.uuid4()))
    with pytest.raises(InvalidInputError, match="not a report id"):
        await compare(runtime, owner, second, other_report_id="yesterday")
    with pytest.raises(InvalidInputError, match="itself"):
        await compare(runtime, owner, second, other_report_id=str(second.id))

    # A report of another stream of the same owner.
    other_stream = await StreamStore(runtime.database).create(owner.id, nlp_stream())
    elsewhere = await run_stream_now(runner(runtime), owner.id, other_stream.id, now=NOW)
    with pytest.raises(NotFoundError, match=f"reports of stream {second.stream_id}"):
        await compare(runtime, owner, second, other_report_id=str(elsewhere.id))


async def test_another_users_report_is_not_found(make: Make) -> None:
    runtime, _owner, first, second = await two_runs(make)
    stranger = await new_user(runtime)

    with pytest.raises(NotFoundError):
        await compare(runtime, stranger, second)
    with pytest.raises(NotFoundError):
        await compare(runtime, stranger, second, other_report_id=str(first.id))
