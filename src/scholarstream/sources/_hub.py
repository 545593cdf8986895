"""The live sources of one process, and searching several of them at once."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, Field

from scholarstream.errors import ScholarStreamError
from scholarstream.papers import Provenance, Record
from scholarstream.settings import SourceSettings
from scholarstream.sources._base import (
    LiteratureSource,
    SearchPage,
    SearchQuery,
    SourceContext,
    SourceInfo,
    build_source,
    source_names,
)
from scholarstream.sources._connectivity import (
    OFFLINE_NO_LIBRARY_NOTICE,
    OFFLINE_NOTICE,
    SourceUnreachableError,
    connectivity_scope,
)
from scholarstream.sources._failures import FailureCause, SourceFailedError
from scholarstream.sources._http import SourceHttp

logger = logging.getLogger(__name__)


class SourceStatus(BaseModel):
    """How one source fared in a multi-source search; a failed source is never hidden."""

    source: str
    ok: bool
    total: int | None = None
    returned: int = 0
    next_page_token: str | None = None
    elapsed_ms: int
    error_code: str | None = None
    error: str | None = None
    hint: str | None = None
    cause: FailureCause | None = Field(
        default=None,
        description="Why the source could not be searched, when it could not answer at all: "
        "unreachable, insecure, timeout, dropped, rate_limited or server_error.",
    )
    unreachable: bool = Field(
        default=False,
        description="The source could not be reached at all while no other source had "
        "answered: the machine appears to be offline.",
    )


class MultiSearchResult(BaseModel):
    records: list[Record] = Field(description="Records of every source that worked, in order.")
    statuses: list[SourceStatus]
    offline: bool = Field(
        default=False,
        description="Every remote source searched was unreachable: the machine appears to "
        "be offline (local sources such as the library still answered).",
    )
    notice: str | None = Field(
        default=None, description="One plain sentence for the user, e.g. that they are offline."
    )

    @property
    def failed(self) -> list[SourceStatus]:
        return [status for status in self.statuses if not status.ok]


class SourceHub:
    """Builds each registered source once, with the shared HTTP layer."""

    def __init__(self, settings: SourceSettings, http: SourceHttp) -> None:
        self.http = http
        self._context = SourceContext(settings=settings, http=http)
        self._sources: dict[str, LiteratureSource] = {}

    def names(self) -> list[str]:
        return source_names()

    def get(self, name: str) -> LiteratureSource:
        source = self._sources.get(name)
        if source is None:
            source = build_source(name, self._context)
            self._sources[name] = source
        return source

    def infos(self) -> list[SourceInfo]:
        return [self.get(name).info for name in self.names()]

    def resolve(
        self, name: str, local: Mapping[str, LiteratureSource] | None = None
    ) -> LiteratureSource:
        """A live source by name, or one of ``local`` (per-user sources such as the library)."""
        if local and name in local:
            return local[name]
        return self.get(name)

    async def search(
        self,
        names: Sequence[str],
        query: SearchQuery,
        *,
        local: Mapping[str, LiteratureSource] | None = None,
    ) -> MultiSearchResult:
        """The same query against several sources at once."""
        return await self.search_each([(name, query) for name in dict.fromkeys(names)], local=local)

    async def search_each(
        self,
        searches: Sequence[tuple[str, SearchQuery]],
        *,
        local: Mapping[str, LiteratureSource] | None = None,
        on_done: Callable[[SourceStatus], None] | None = None,
        when_offline: Sequence[tuple[str, SearchQuery]] = (),
    ) -> MultiSearchResult:
        """Each source with its own query, concurrently; a source that fails (or is not
        known) gets a failed status and the others go on. ``on_done`` hears of each source
        as it finishes.

        The searches share one view of the network (``connectivity_scope``): when the
        machine appears offline, no remote source is retried, each is reported
        ``unreachable``, ``offline`` is set, the searches of ``when_offline`` (e.g. the
        library, when it was not asked for) are run, and ``notice`` says so once.
        """

        async def run(name: str, query: SearchQuery) -> tuple[SearchPage | None, SourceStatus]:
            outcome = await _timed_search(name, lambda: self.resolve(name, local), query)
            if on_done is not None:
                on_done(outcome[1])
            return outcome

        with connectivity_scope() as connectivity:
            outcomes = await asyncio.gather(*(run(name, query) for name, query in searches))
            remote = [s for _, s in outcomes if not (local and s.source in local)]
            # Sources that failed without a network call (a missing key) do not count.
            offline = connectivity.probably_offline and not any(s.ok for s in remote)
            if offline:
                searched = {name for name, _ in searches}
                extra = [(n, q) for n, q in when_offline if n not in searched]
                outcomes += await asyncio.gather(*(run(name, query) for name, query in extra))
        records: list[Record] = []
        for page, status in outcomes:
            if page is not None:
                records.extend(_found_by(status.source, record) for record in page.records)
        notice: str | None = None
        if offline:
            local_ok = any(s.ok for _, s in outcomes if local and s.source in local)
            notice = OFFLINE_NOTICE if local_ok else OFFLINE_NO_LIBRARY_NOTICE
        return MultiSearchResult(
            records=records,
            statuses=[status for _, status in outcomes],
            offline=offline,
            notice=notice,
        )


def _found_by(source: str, record: Record) -> Record:
    """The record as ``source`` returned it in this search: ``source`` is its one source,
    and whatever else its provenance names is an origin, kept apart. A library record
    imported from a RIS file (``ris``), or from PubMed XML (``pubmed``), was found in the
    library, not at PubMed: those entries become origins, and the library its source."""
    entries = [
        p if p.origin or p.source == source else p.model_copy(update={"origin": True})
        for p in record.provenance
    ]
    if not any(p.source == source and not p.origin for p in entries):
        entries.append(Provenance(source=source))
    if entries == record.provenance:
        return record
    return record.model_copy(update={"provenance": entries})


def _label(source: Callable[[], LiteratureSource]) -> str:
    """The source's name as people write it, for a message about it."""
    try:
        return source().info.label
    except Exception:  # the fault may be in building the source itself
        return "The source"


async def _timed_search(
    name: str, source: Callable[[], LiteratureSource], query: SearchQuery
) -> tuple[SearchPage | None, SourceStatus]:
    started = time.perf_counter()
    try:
        page = await source().search(query)
    except ScholarStreamError as exc:
        # A fan-out tolerates a failed source, and reports it.
        elapsed = int((time.perf_counter() - started) * 1000)
        return None, SourceStatus(
            source=name,
            ok=False,
            elapsed_ms=elapsed,
            error_code=exc.code,
            error=exc.message,
            hint=exc.hint,
            cause=exc.cause if isinstance(exc, SourceFailedError) else None,
            unreachable=isinstance(exc, SourceUnreachableError),
        )
    except Exception:
        # A source should only fail with a SourceError; anything else is our bug. It is
        # logged with its traceback and reported as this source's failure, so it neither
        # hides nor costs the other sources their records.
        logger.exception("%s: the search failed unexpectedly", name)
        elapsed = int((time.perf_counter() - started) * 1000)
        return None, SourceStatus(
            source=name,
            ok=False,
            elapsed_ms=elapsed,
            error_code=ScholarStreamError.code,
            error=f"{_label(source)} could not be searched because of a fault in ScholarStream.",
            hint="The fault is ours, not the source's: please report it with the server log. "
            "The other sources' results are unaffected.",
        )
    elapsed = int((time.perf_counter() - started) * 1000)
    return page, SourceStatus(
        source=name,
        ok=True,
        total=page.total,
        returned=len(page.records),
        next_page_token=page.next_page_token,
        elapsed_ms=elapsed,
    )
