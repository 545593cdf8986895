"""A second opinion on borderline pairs: a model reads both citations and says whether
they are the same work.

Only pairs the rules could not settle get here (close titles, nothing against them, not
enough for them), in batches, each pair numbered. The model answers with structured
output; answers about numbers that were not asked are ignored, and a batch whose call
fails keeps its pairs apart: a missed duplicate costs a reader a second look, a false
merge silently loses a record.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import BaseModel, Field
from pydantic_ai import Agent

from scholarstream.papers import Paper, Record
from scholarstream.search._fallbacks import FALLBACK_ERRORS, FallbackLog
from scholarstream.search._llm import SkillLLM

logger = logging.getLogger(__name__)

FEATURE = "search.dedup"

BATCH_SIZE = 10
MAX_PAIRS = 200
"""Beyond this many borderline pairs the rest stay separate (cost bound per run)."""
_ABSTRACT_CHARS = 300


class PairJudgement(BaseModel):
    pair: int = Field(description="The number of the pair, as given.")
    same_work: bool = Field(
        description="True only if both citations describe the same publication (the same "
        "article, abstract or report, possibly formatted differently)."
    )


class PairJudgements(BaseModel):
    judgements: list[PairJudgement]


_AGENT: Agent[None, PairJudgements] = Agent(
    output_type=PairJudgements,
    instructions=(
        "You check a bibliography for duplicate records. Each numbered pair holds two "
        "citations. Answer for every pair whether both describe the same publication. "
        "Different publications include: a conference abstract and the later journal "
        "article, an erratum or reply and the article it concerns, different parts or "
        "phases of a study, an updated version of a review, the same title by other "
        "authors. Citation details may be abbreviated or formatted differently; that alone "
        "does not make them different. When unsure, answer false."
    ),
)


def describe(record: Record) -> str:
    """A compact citation for the prompt."""
    parts = [f"title: {record.title}"]
    if isinstance(record, Paper):
        if record.authors:
            names = "; ".join(author.name for author in record.authors[:6])
            parts.append(f"authors: {names}{' et al.' if len(record.authors) > 6 else ''}")
        where = ", ".join(
            f"{label} {value}"
            for label, value in (
                ("", record.venue),
                ("vol.", record.volume),
                ("issue", record.issue),
                ("pp.", record.pages),
            )
            if value
        ).strip()
        if where:
            parts.append(f"published in: {where}")
        if record.publication_types:
            parts.append(f"type: {', '.join(record.publication_types[:3])}")
        if record.abstract:
            parts.append(f"abstract: {record.abstract[:_ABSTRACT_CHARS]}")
    parts.append(f"year: {record.year or 'unknown'}")
    parts.extend(f"{name}: {value}" for name, value in record.ids.present().items())
    return "; ".join(parts)


def prompt_for(pairs: Sequence[tuple[Record, Record]]) -> str:
    return "\n\n".join(
        f"Pair {number}:\n  A. {describe(a)}\n  B. {describe(b)}"
        for number, (a, b) in enumerate(pairs, start=1)
    )


class LLMPairAdjudicator:
    """Asks the model about borderline pairs, ``batch_size`` pairs per call."""

    def __init__(
        self,
        llm: SkillLLM,
        *,
        batch_size: int = BATCH_SIZE,
        max_pairs: int = MAX_PAIRS,
        fallbacks: FallbackLog | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.llm = llm
        self.fallbacks = fallbacks if fallbacks is not None else FallbackLog()
        self.batch_size = batch_size
        self.max_pairs = max_pairs

    async def same_work(self, pairs: Sequence[tuple[Record, Record]]) -> list[bool]:
        answers = [False] * len(pairs)
        asked = min(len(pairs), self.max_pairs)
        for start in range(0, asked, self.batch_size):
            batch = pairs[start : min(start + self.batch_size, asked)]
            try:
                result = await self.llm.structured(_AGENT, prompt_for(batch), feature=FEATURE)
            except FALLBACK_ERRORS as exc:
                logger.warning(
                    "Duplicate adjudication failed; %d pairs kept apart: %s", len(batch), exc
                )
                self.fallbacks.failed(FEATURE, exc)
                continue
            for judgement in result.judgements:
                if 1 <= judgement.pair <= len(batch):
                    answers[start + judgement.pair - 1] = judgement.same_work
        return answers
