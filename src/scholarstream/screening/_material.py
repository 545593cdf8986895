"""What ranking a project's records needs, kept in the process between requests: the
records and their texts (a project's records never change), the relevance of each to the
keywords and question, and the active-learning ranker built over the texts and the
titles' meaning (their embeddings, when an embedding model runs here).

Building the ranker's features reads every text once and embeds every title (seconds to
half a minute for a few thousand records), so it is built in a background thread when
first wanted; until it is ready the keyword order stands in. Fitting and ranking run in
a worker thread, one at a time per project (the ranker is not safe to share between
threads)."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from scholarstream.embeddings import Embedder
from scholarstream.papers.ranking import FeedbackModel, feedback_model
from scholarstream.screening.core import (
    Choice,
    ScreeningRecord,
    rank_unscreened,
    relevance_scores,
    screening_text,
)

_KEPT_PROJECTS = 8
_BUILDER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="screening-ranker")


def build_ranker(
    texts: Sequence[str], titles: Sequence[str], embedder: Embedder | None
) -> FeedbackModel:
    """The ranker over ``texts``, reading the titles' meaning when ``embedder`` runs."""
    return feedback_model(texts, titles, embedder.embed_documents if embedder else None)


@dataclass
class Material:
    project_id: uuid.UUID
    records: list[ScreeningRecord]
    texts: list[str]
    index: dict[uuid.UUID, int]
    embedder: Embedder | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _model: Future[FeedbackModel] | None = None
    _relevance: dict[tuple[tuple[str, ...], str], list[float]] = field(default_factory=dict)
    last_scores: dict[uuid.UUID, dict[uuid.UUID, float]] = field(default_factory=dict)
    """Reviewer -> record -> the score the record had when last ranked for them."""
    learned: dict[uuid.UUID, bool] = field(default_factory=dict)
    """Reviewer -> whether their last ranking was the ranker's (its scores are
    probabilities), not the keyword order's."""

    @classmethod
    def of(
        cls,
        project_id: uuid.UUID,
        records: Sequence[ScreeningRecord],
        embedder: Embedder | None = None,
    ) -> Material:
        return cls(
            project_id=project_id,
            records=list(records),
            texts=[screening_text(r.record) for r in records],
            index={r.id: i for i, r in enumerate(records)},
            embedder=embedder,
        )

    def relevance(self, keywords: Sequence[str], question: str) -> list[float]:
        key = (tuple(keywords), question)
        with self._lock:
            found = self._relevance.get(key)
        if found is None:
            found = relevance_scores(self.texts, keywords, question)
            with self._lock:
                self._relevance = {key: found}  # criteria change rarely: keep the latest
        return found

    def prepare(self) -> Future[FeedbackModel]:
        """Starts building the ranker in the background (once)."""
        with self._lock:
            if self._model is None:
                titles = [r.record.title for r in self.records]
                self._model = _BUILDER.submit(build_ranker, self.texts, titles, self.embedder)
            return self._model

    async def ranker(self, wait: float) -> FeedbackModel | None:
        """The ranker, waiting at most ``wait`` seconds for it to be built (it goes on
        being built after that); None if it is not ready by then."""
        future = self.prepare()
        if future.done():
            return future.result()
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), wait)
        except TimeoutError:
            return None

    async def rank(
        self,
        unscreened: Sequence[int],
        labels: Mapping[int, bool],
        relevance: Sequence[float],
        model: FeedbackModel | None,
    ) -> list[Choice]:
        def work() -> list[Choice]:
            with self._lock:
                return rank_unscreened(unscreened, labels, relevance, model)

        return await asyncio.to_thread(work)


class MaterialCache:
    """The latest few projects' material, shared by the whole process."""

    def __init__(self, size: int = _KEPT_PROJECTS) -> None:
        self.size = size
        self._items: OrderedDict[uuid.UUID, Material] = OrderedDict()
        self._lock = threading.Lock()

    async def get(
        self,
        project_id: uuid.UUID,
        load: Callable[[], Awaitable[list[ScreeningRecord]]],
        embedder: Embedder | None = None,
    ) -> Material:
        with self._lock:
            found = self._items.get(project_id)
            if found is not None:
                self._items.move_to_end(project_id)
                return found
        records = await load()
        material = await asyncio.to_thread(Material.of, project_id, records, embedder)
        with self._lock:
            found = self._items.setdefault(project_id, material)
            self._items.move_to_end(project_id)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
            return found

    def forget(self, project_id: uuid.UUID) -> None:
        with self._lock:
            self._items.pop(project_id, None)


MATERIALS = MaterialCache()
"""The process's cache (the API's requests and the CLI share it)."""
