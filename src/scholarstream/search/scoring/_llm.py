"""Model relevance: batches of numbered papers, a 0-1 score and a one-sentence reason for
each, cached between iterations; whatever the model fails to judge is scored offline."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, Field, create_model
from pydantic_ai import Agent

from scholarstream.papers import Paper, Record, paper_key
from scholarstream.papers.ranking import record_text
from scholarstream.search._bounds import Items, Text
from scholarstream.search._fallbacks import FALLBACK_ERRORS, FallbackLog
from scholarstream.search._llm import KnowsCapabilities, SkillLLM
from scholarstream.search.core import LabelledPaper, ParsedIntent, ScoredPaper
from scholarstream.search.scoring._cache import ScoreCache, cache_key
from scholarstream.search.scoring._lexical import LexicalRelevanceScorer
from scholarstream.search.scoring._ranking import OfflineScorer, Relevance, latest_labels, rank

FEATURE = "search.score"
LOCAL_BATCH_SIZE = 4
"""Papers per call for a local server (``compact_prompt``): on a CPU a batch of 9 took over
120 s unstreamed; smaller batches finish well within the deadline and fail alone."""
_MAX_TEXT = 1500  # characters of a paper shown to the model; the abstract's core fits


_PAPER = "The paper's number in the list."


class _PaperScore(BaseModel):
    paper: int = Field(description=_PAPER)
    # Bounds in the schema only: an answer slightly out of range is clamped, not sent back.
    score: float = Field(
        description="0 = unrelated to the question, 1 = exactly what it asks.",
        json_schema_extra={"minimum": 0, "maximum": 1},
    )
    reason: Annotated[str, Text(200)] = Field(description="One sentence: why this score.")


class _Scores(BaseModel):
    scores: list[_PaperScore] = Field(description="One entry per paper.")


_INSTRUCTIONS = (
    "You screen search results for a researcher. For every numbered paper, judge how "
    "relevant it is to the research question: a score from 0 (unrelated) to 1 (exactly "
    "what the question asks for), and one short sentence saying why, naming what the "
    "paper does or does not cover. Judge each paper on its own text. Use only the "
    "numbers given and score every paper."
)


@functools.cache
def _agent(papers: int) -> Agent[None, _Scores]:
    """The agent for a batch of ``papers``: its schema asks for exactly one score per
    paper, numbered 1 to ``papers`` (a local server's grammar then cannot answer with no
    scores or made-up numbers; validation stays as loose as ``_ask`` needs)."""
    score = create_model(
        "_PaperScore",
        __base__=_PaperScore,
        paper=(int, Field(description=_PAPER, json_schema_extra={"minimum": 1, "maximum": papers})),
    )
    scores = create_model(
        "_Scores",
        __base__=_Scores,
        scores=(
            Annotated[list[score], Items(papers, least=papers, cut=False)],
            Field(description="One entry per paper."),
        ),
    )
    return Agent(output_type=scores, instructions=_INSTRUCTIONS)


def _intent_text(intent: ParsedIntent) -> str:
    lines = [f"Research question: {intent.question}", f"Topic: {intent.topic}"]
    for concept in intent.concepts:
        also = f" (also: {', '.join(concept.synonyms)})" if concept.synonyms else ""
        lines.append(f"Concept: {concept.term}{also}")
    if intent.pico:
        lines += [f"{name.capitalize()}: {value}" for name, value in intent.pico.present().items()]
    if intent.study_types:
        lines.append(f"Study types wanted: {', '.join(intent.study_types)}")
    if intent.date_from or intent.date_to:
        lines.append(f"Published: {intent.date_from or '...'} to {intent.date_to or '...'}")
    if intent.exclude_terms:
        lines.append(f"Not wanted: {', '.join(intent.exclude_terms)}")
    return "\n".join(lines)


def _paper_text(number: int, record: Record) -> str:
    kind = ", ".join(record.publication_types[:2]) if isinstance(record, Paper) else "trial"
    heading = f"[{number}] ({record.year or 'n.d.'}; {kind or 'paper'})"
    text = " ".join(record_text(record).split())
    if len(text) > _MAX_TEXT:
        text = text[:_MAX_TEXT].rsplit(" ", 1)[0] + " ..."
    return f"{heading} {text}"


def _prompt(intent: ParsedIntent, records: Sequence[Record]) -> str:
    papers = "\n\n".join(_paper_text(n, r) for n, r in enumerate(records, start=1))
    return f"{_intent_text(intent)}\n\nPapers:\n\n{papers}"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


@dataclass(frozen=True)
class _Failure:
    index: int
    cause: str


class LLMRelevanceScorer:
    """The model ``RelevanceScorer``. Papers the user judged are not sent to the model;
    papers judged before for the same question come from ``cache``."""

    def __init__(
        self,
        llm: SkillLLM,
        *,
        batch_size: int = 10,
        cache: ScoreCache | None = None,
        fallback: OfflineScorer | None = None,
        max_concurrency: int = 3,
        role: str = "fast",
        feature: str = FEATURE,
        fallbacks: FallbackLog | None = None,
    ) -> None:
        self.llm = llm
        self.batch_size = max(1, batch_size)
        self.cache = cache if cache is not None else ScoreCache()
        self.fallback = fallback if fallback is not None else LexicalRelevanceScorer()
        self.max_concurrency = max(1, max_concurrency)
        self.role = role
        self.feature = feature  # the usage ledger's (and the fallback record's) name
        self.fallbacks = fallbacks if fallbacks is not None else FallbackLog()

    async def _ask(
        self,
        records: Sequence[Record],
        indices: Sequence[int],
        intent: ParsedIntent,
        limit: asyncio.Semaphore,
    ) -> dict[int, Relevance]:
        """The model's judgements by record index; numbers it made up are ignored, and
        a paper numbered twice keeps its first answer."""
        prompt = _prompt(intent, [records[i] for i in indices])
        async with limit:
            answer = await self.llm.structured(
                _agent(len(indices)), prompt, feature=self.feature, role=self.role
            )
        judged: dict[int, Relevance] = {}
        for item in answer.scores:
            if not 1 <= item.paper <= len(indices) or not math.isfinite(item.score):
                continue
            reason = " ".join(item.reason.split()) or "The model gave no reason."
            judged.setdefault(
                indices[item.paper - 1], Relevance(min(1.0, max(0.0, item.score)), reason)
            )
        return judged

    async def _batch_size(self) -> int:
        if isinstance(self.llm, KnowsCapabilities):
            capabilities = await self.llm.capabilities(self.role)
            if capabilities is not None and capabilities.compact_prompt:
                return min(self.batch_size, LOCAL_BATCH_SIZE)
        return self.batch_size

    async def _batch(
        self,
        records: Sequence[Record],
        batch: Sequence[int],
        intent: ParsedIntent,
        limit: asyncio.Semaphore,
    ) -> tuple[dict[int, Relevance], list[_Failure]]:
        try:
            judged = await self._ask(records, batch, intent, limit)
        except FALLBACK_ERRORS as exc:
            self.fallbacks.failed(self.feature, exc)
            return {}, [_Failure(i, "the model call failed") for i in batch]
        missing = [i for i in batch if i not in judged]
        if missing:  # asked once more, for those papers only
            # Papers still missing after that are scored offline.
            with contextlib.suppress(*FALLBACK_ERRORS):
                judged |= await self._ask(records, missing, intent, limit)
        failures = [_Failure(i, "the model gave no score") for i in batch if i not in judged]
        if failures:
            self.fallbacks.unusable(
                self.feature, f"no score for {len(failures)} of {len(batch)} papers"
            )
        return judged, failures

    async def relevance(
        self, records: Sequence[Record], intent: ParsedIntent, *, skip: frozenset[str] = frozenset()
    ) -> list[Relevance]:
        """Each record's relevance to the intent; records whose id is in ``skip`` are not
        judged (they get a neutral placeholder)."""
        records = list(records)
        ids = [paper_key(record) for record in records]
        keys = [
            cache_key(intent, paper_id, r.title) for paper_id, r in zip(ids, records, strict=True)
        ]
        found: dict[int, Relevance] = {}
        wanted: list[int] = []
        for i, key in enumerate(keys):
            if ids[i] in skip:
                found[i] = Relevance(0.5, "")
            elif (cached := self.cache.get(key)) is not None:
                found[i] = cached
            else:
                wanted.append(i)
        limit = asyncio.Semaphore(self.max_concurrency)
        size = await self._batch_size() if wanted else self.batch_size
        batches = [wanted[s : s + size] for s in range(0, len(wanted), size)]
        answers = await asyncio.gather(*(self._batch(records, b, intent, limit) for b in batches))
        failures: list[_Failure] = []
        for judged, failed in answers:
            for i, relevance in judged.items():
                self.cache.put(keys[i], relevance)
            found |= judged
            failures += failed
        if failures:
            offline = await self.fallback.relevance(records, intent)
            for failure in failures:
                lexical = offline[failure.index]
                reason = f"Scored offline because {failure.cause}; {_lower_first(lexical.reason)}"
                found[failure.index] = Relevance(lexical.score, reason, lexical.by_meaning)
        return [found[i] for i in range(len(records))]

    async def score(
        self,
        records: Sequence[Record],
        intent: ParsedIntent,
        *,
        labelled: Sequence[LabelledPaper] = (),
    ) -> list[ScoredPaper]:
        judged = frozenset(latest_labels(labelled))
        relevances = await self.relevance(records, intent, skip=judged)
        return await rank(records, relevances, labelled, embed=self.fallback.embed_documents)
