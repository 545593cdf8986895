"""Checks every citation of an answer against the pack: offline by the support score, and
with a model configured, by the model's judgement of each (sentence, record) pair. A call
the model fails or answers unusably leaves that citation to the offline score."""

from __future__ import annotations

import asyncio
import re
import uuid
from dataclasses import dataclass, field

from pydantic_ai import Agent

from scholarstream.grounding.core import (
    CitationAudit,
    CitedSentence,
    EvidencePack,
    Key,
    ModelJudgement,
    SupportScore,
    SupportScorer,
    Thresholds,
    audit_answer,
    cited_pairs,
)
from scholarstream.papers import Paper
from scholarstream.prompt_fences import fenced_data
from scholarstream.runtime import Runtime
from scholarstream.search import FALLBACK_ERRORS, GatewaySkillLLM, KnowsCapabilities, SkillLLM

FEATURE = "grounding.verify"
_INSTRUCTIONS = (
    "You check a citation. Given a sentence from an answer and the record it cites, say "
    "whether the record supports the sentence ('support'), contradicts it ('contradict'), "
    "or does not address it ('not_addressed'), judging only by the record's own text. "
    "Give as quote the one sentence of the record that says so, copied exactly; no quote "
    "when it does not address the sentence. A verdict of support or contradiction without "
    "such a quote is not used."
)
_AGENT: Agent[None, ModelJudgement] = Agent(output_type=ModelJudgement, instructions=_INSTRUCTIONS)


# A quote shorter than this proves nothing ("the", ".").
_SHORTEST_QUOTE = 20


def _squash(text: str) -> str:
    return re.sub(r"\W+", " ", text).strip().lower()


def _quoted_from(quote: str | None, record: str) -> bool:
    """Whether ``quote`` is a real passage of ``record`` (words, case and punctuation aside)."""
    if quote is None:
        return False
    squashed = _squash(quote)
    return len(squashed) >= _SHORTEST_QUOTE and squashed in _squash(record)


@dataclass
class CitationVerifier:
    """Audits answers against their pack. ``llm`` is optional: without it (or when it
    fails) every citation is judged by ``scorer`` and ``thresholds``."""

    scorer: SupportScorer = field(default_factory=SupportScorer)
    llm: SkillLLM | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)
    role: str = "fast"
    max_judged: int = 40
    concurrency: int = 3

    async def verify(self, text: str, pack: EvidencePack) -> CitationAudit:
        pairs = cited_pairs(text, pack)
        papers = [(s.text, self._paper(pack, key)) for s, key in pairs]
        # Embedding is CPU work: off the event loop.
        scored = await asyncio.to_thread(self.scorer.score, papers)
        scores: dict[Key, SupportScore] = {
            (s.index, key): score for (s, key), score in zip(pairs, scored, strict=True)
        }
        judgements: dict[Key, ModelJudgement] = {}
        if self.llm is not None and pairs and await self._has_model(self.llm):
            judgements = await self._judge(self.llm, pairs[: self.max_judged], pack)
        return audit_answer(text, pack, scores, judgements, self.thresholds)

    async def _has_model(self, llm: SkillLLM) -> bool:
        """Whether a judge can answer: a role with no usable model is not asked forty times."""
        if isinstance(llm, KnowsCapabilities):
            return await llm.capabilities(self.role) is not None
        return True

    @staticmethod
    def _paper(pack: EvidencePack, key: int) -> Paper:
        item = pack.item(key)
        assert item is not None  # cited_pairs keeps only the pack's keys
        return item.paper

    async def _judge(
        self, llm: SkillLLM, pairs: list[tuple[CitedSentence, int]], pack: EvidencePack
    ) -> dict[Key, ModelJudgement]:
        gate = asyncio.Semaphore(max(1, self.concurrency))

        async def one(
            sentence_index: int, sentence: str, key: int
        ) -> tuple[Key, ModelJudgement | None]:
            paper = self._paper(pack, key)
            record = f"{paper.title}\n\n{paper.abstract or '(no abstract)'}"
            prompt = f"Sentence: {sentence}\n\n" + fenced_data("The cited record", record)
            async with gate:
                try:
                    judgement = await llm.structured(
                        _AGENT, prompt, feature=FEATURE, role=self.role
                    )
                except FALLBACK_ERRORS:
                    return (sentence_index, key), None
            if judgement.verdict == "not_addressed":
                return (sentence_index, key), judgement.model_copy(update={"quote": None})
            if not _quoted_from(judgement.quote, record):
                # Support or contradiction the record's own words do not show is the
                # model's word alone: the offline score decides instead.
                return (sentence_index, key), None
            return (sentence_index, key), judgement

        results = await asyncio.gather(*(one(s.index, s.text, key) for s, key in pairs))
        return {key: judgement for key, judgement in results if judgement is not None}


def runtime_verifier(runtime: Runtime, owner_id: uuid.UUID) -> CitationVerifier:
    """The verifier a user's answers get: the library's embedding model when semantic
    search is on, and the user's ``fast`` model as judge when the settings ask for one."""
    settings = runtime.settings.grounding
    semantic = runtime.library.semantic
    embedder = semantic.embedder if semantic.available else None
    llm = (
        GatewaySkillLLM(runtime.llm, runtime.database, owner_id)
        if settings.judge_with_model
        else None
    )
    return CitationVerifier(
        SupportScorer(embedder), llm=llm, max_judged=settings.max_judged_citations
    )
