"""Each source of a stream has its own window (issue 20, point 17): a source that failed,
in a partial run too, is searched again from the same date next time, while the others
move on; PubMed is searched by Entrez date (when it added a record), a source that can
only filter by publication date from a look-back before its window. Sources answer from
the recorded responses of ``LiteratureWorld``; the requests they got are checked."""

from __future__ import annotations

import datetime as dt

from scholarstream.streams import RetrievalUpdate, StreamQueryUpdate, StreamStore, StreamUpdate
from scholarstream.streams.monitoring import (
    DEFAULT_WINDOW,
    PUBLICATION_LOOKBACK,
    ReportStore,
    StoredReport,
    run_stream_now,
)
from tests.search.world import LiteratureWorld
from tests.streams.conftest import Make
from tests.streams.runner import runner
from tests.streams.test_monitoring import NOW, new_stream

FIRST_RUN = NOW - DEFAULT_WINDOW
FIRST = FIRST_RUN.date()
WEEK = dt.timedelta(days=7)


def sent(world: LiteratureWorld, source: str) -> str:
    """The date filter of the source's (first) search request."""
    (request, *_) = [r for r in world.searched(source) if "efetch" not in r.url.path]
    params = request.url.params
    if source == "pubmed":
        return f"{params['datetype']}:{params['mindate']}"
    if source == "openalex":
        return params["filter"]
    if source == "semantic_scholar":
        return params["publicationDateOrYear"]
    return params["search_query"].rsplit(" AND ", 1)[1]  # arXiv


Window = tuple[dt.datetime | None, dt.date | None, str | None]


def windows(stored: StoredReport) -> dict[str, Window]:
    return {o.source: (o.since, o.date_from, o.dates) for o in stored.sources}


def day(date: dt.date, sep: str = "-") -> str:
    return date.strftime(f"%Y{sep}%m{sep}%d")


async def test_a_failed_source_keeps_its_window_while_the_others_move_on(make: Make) -> None:
    down = LiteratureWorld(failing=("openalex",))
    runtime = make(down)
    owner, stream = await new_stream(runtime)
    no_library = StreamUpdate(
        retrieval=RetrievalUpdate(queries={"library": StreamQueryUpdate(enabled=False)})
    )
    await StreamStore(runtime.database).update(owner.id, stream.id, no_library)

    first = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)

    assert first.status == "partial"
    back = FIRST - PUBLICATION_LOOKBACK
    assert windows(first) == {
        "arxiv": (FIRST_RUN, FIRST, "added"),
        "openalex": (FIRST_RUN, back, "published"),
        "pubmed": (FIRST_RUN, FIRST, "added"),
        "semantic_scholar": (FIRST_RUN, back, "published"),
    }
    assert sent(down, "pubmed") == f"edat:{day(FIRST, '/')}"

    healthy = LiteratureWorld()
    second = await run_stream_now(runner(make(healthy)), owner.id, stream.id, now=NOW + WEEK)

    assert second.status == "complete"
    today = NOW.date()
    assert windows(second) == {
        "arxiv": (NOW, today, "added"),
        # OpenAlex failed in the partial run: its window did not move.
        "openalex": (FIRST_RUN, back, "published"),
        "pubmed": (NOW, today, "added"),
        "semantic_scholar": (NOW, today - PUBLICATION_LOOKBACK, "published"),
    }
    assert second.since == NOW - DEFAULT_WINDOW  # the earliest window
    # What each source was asked: PubMed by Entrez date from the last run, OpenAlex from
    # before its first window, Semantic Scholar by publication date with the look-back.
    assert sent(healthy, "pubmed") == f"edat:{day(today, '/')}"
    assert f"from_publication_date:{day(back)}" in sent(healthy, "openalex")
    assert sent(healthy, "semantic_scholar").startswith(day(today - PUBLICATION_LOOKBACK))
    assert sent(healthy, "arxiv").startswith(f"submittedDate:[{day(today, '')}")

    # Once OpenAlex succeeded, its window moves too.
    recovered = runner(make(LiteratureWorld()))
    third = await run_stream_now(recovered, owner.id, stream.id, now=NOW + 2 * WEEK)
    assert {s: w[0] for s, w in windows(third).items()} == dict.fromkeys(
        ["arxiv", "openalex", "pubmed", "semantic_scholar"], NOW + WEEK
    )


async def test_a_run_resumed_after_a_crash_searches_the_same_windows(make: Make) -> None:
    runtime = make(LiteratureWorld(failing=("pubmed",)))
    owner, stream = await new_stream(runtime)
    await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    store = ReportStore(runtime.database)

    start = await store.begin(owner.id, stream.id, now=NOW + WEEK)
    again = await store.resume(owner.id, start.report_id)

    assert again is not None and again.windows == start.windows
    assert start.windows["pubmed"] == NOW - DEFAULT_WINDOW
    assert start.windows["openalex"] == NOW
    assert start.since == NOW - DEFAULT_WINDOW
