"""The audit of an answer's citations: a verdict for every (sentence, key) it cites, the
references it wrote itself, and the answer rewritten with each citation marked."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from scholarstream.grounding.core._citations import (
    CitedSentence,
    ForeignReference,
    Marker,
    foreign_references,
    read_markers,
)
from scholarstream.grounding.core._pack import EvidencePack
from scholarstream.grounding.core._support import SupportScore


class Verdict(StrEnum):
    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    WEAK = "weak"
    UNSUPPORTED = "unsupported"
    INVALID = "invalid"


MARKS: dict[Verdict, str] = {
    Verdict.SUPPORTED: "✓",
    Verdict.CONTRADICTED: "≠",
    Verdict.WEAK: "~",
    Verdict.UNSUPPORTED: "✗",
}
MARK_LEGEND = (
    "Citations are marked: ✓ supported by the cited record, ≠ contradicted, ~ weakly "
    "supported, ✗ not addressed by it."
)
VERDICT_WORDS: dict[Verdict, str] = {
    Verdict.SUPPORTED: "supported by the cited record",
    Verdict.CONTRADICTED: "contradicted by the cited record",
    Verdict.WEAK: "weakly supported: the cited record only partly addresses it",
    Verdict.UNSUPPORTED: "not addressed by the cited record",
    Verdict.INVALID: "cites a key that is not in the evidence pack",
}
INVALID_NOTE = "[citation removed: not in the evidence pack]"
UNVERIFIED_NOTE = " [unverified: not in the evidence pack]"


class ModelJudgement(BaseModel):
    """A model's reading of one citation, with the record's sentence that says so."""

    model_config = ConfigDict(extra="forbid")

    verdict: Literal["support", "contradict", "not_addressed"]
    quote: str | None = None


_FROM_MODEL = {
    "support": Verdict.SUPPORTED,
    "contradict": Verdict.CONTRADICTED,
    "not_addressed": Verdict.UNSUPPORTED,
}


@dataclass(frozen=True)
class Thresholds:
    """Offline support scores at or above ``supported`` count as supported, at or above
    ``weak`` as weak; chosen on SciFact's training claims (bench/citations.py)."""

    supported: float = 0.55
    weak: float = 0.45

    def verdict(self, score: float) -> Verdict:
        if score >= self.supported:
            return Verdict.SUPPORTED
        return Verdict.WEAK if score >= self.weak else Verdict.UNSUPPORTED


class CitationCheck(BaseModel):
    """One citation of one sentence, checked."""

    model_config = ConfigDict(extra="forbid")

    sentence: int
    text: str
    key: int
    verdict: Verdict
    score: float | None = None
    quote: str | None = None
    judged_by: Literal["overlap", "model", "pack"] = "overlap"


class CitationAudit(BaseModel):
    """Every citation of an answer checked, the references it wrote itself, and the answer
    with each citation marked (``annotated``)."""

    model_config = ConfigDict(extra="forbid")

    checks: list[CitationCheck] = Field(default_factory=list)
    unverified: list[ForeignReference] = Field(default_factory=list)
    sentences: int = 0
    cited_sentences: int = 0
    annotated: str = ""

    @property
    def counts(self) -> dict[Verdict, int]:
        counted = Counter(check.verdict for check in self.checks)
        return {verdict: counted.get(verdict, 0) for verdict in Verdict}

    @property
    def cited_keys(self) -> list[int]:
        """The valid keys cited, in order of first citation."""
        valid = (c.key for c in self.checks if c.verdict is not Verdict.INVALID)
        return list(dict.fromkeys(valid))

    def summary(self) -> str:
        """``"12 citations: 9 supported, 2 weak, 1 unsupported, 0 invalid"``, plus the
        references the answer wrote itself."""
        counts = self.counts
        shown = [Verdict.SUPPORTED, Verdict.WEAK, Verdict.UNSUPPORTED, Verdict.INVALID]
        if counts[Verdict.CONTRADICTED]:
            shown.insert(1, Verdict.CONTRADICTED)
        total = len(self.checks)
        text = f"{total} citation{'' if total == 1 else 's'}: " + ", ".join(
            f"{counts[v]} {v.value}" for v in shown
        )
        if self.unverified:
            text += f"; {len(self.unverified)} unverified reference"
            text += "" if len(self.unverified) == 1 else "s"
        return text


Key = tuple[int, int]


def cited_pairs(text: str, pack: EvidencePack) -> list[tuple[CitedSentence, int]]:
    """The (sentence, key) pairs of ``text`` whose key is in the pack: what is scored."""
    sentences, _ = read_markers(text)
    keys = pack.keys
    return [(s, key) for s in sentences for key in s.keys if key in keys]


def audit_answer(
    text: str,
    pack: EvidencePack,
    scores: Mapping[Key, SupportScore],
    judgements: Mapping[Key, ModelJudgement] | None = None,
    thresholds: Thresholds = Thresholds(),
) -> CitationAudit:
    """The audit of ``text``: ``scores`` and ``judgements`` are keyed by (sentence index,
    pack key); a model's judgement, where there is one, decides over the offline score."""
    sentences, markers = read_markers(text)
    judgements = judgements or {}
    checks: list[CitationCheck] = []
    for sentence in sentences:
        for key in sentence.keys:
            checks.append(_check(sentence, key, pack, scores, judgements, thresholds))
    unverified = foreign_references(text, pack)
    verdicts = {(c.sentence, c.key): c.verdict for c in checks}
    return CitationAudit(
        checks=checks,
        unverified=unverified,
        sentences=len(sentences),
        cited_sentences=sum(1 for s in sentences if s.keys),
        annotated=_annotate(text, markers, verdicts, unverified),
    )


def _check(
    sentence: CitedSentence,
    key: int,
    pack: EvidencePack,
    scores: Mapping[Key, SupportScore],
    judgements: Mapping[Key, ModelJudgement],
    thresholds: Thresholds,
) -> CitationCheck:
    base = {"sentence": sentence.index, "text": sentence.text, "key": key}
    if pack.item(key) is None:
        return CitationCheck(**base, verdict=Verdict.INVALID, judged_by="pack")
    score = scores.get((sentence.index, key))
    judgement = judgements.get((sentence.index, key))
    if judgement is not None:
        return CitationCheck(
            **base,
            verdict=_FROM_MODEL[judgement.verdict],
            score=score.score if score else None,
            quote=judgement.quote,
            judged_by="model",
        )
    if score is None:
        return CitationCheck(**base, verdict=Verdict.UNSUPPORTED)
    return CitationCheck(
        **base, verdict=thresholds.verdict(score.score), score=score.score, quote=score.quote
    )


_LINK_TARGET = re.compile(r"\]\([^\s)]*$")


def _note_at(text: str, ref: ForeignReference) -> int:
    """Where a reference's note goes: right after it, or after the Markdown link whose
    address it is ("[review](https://doi.org/10.1/x)"), so that the link still works."""
    if _LINK_TARGET.search(text[: ref.start]):
        close = text.find(")", ref.end)
        return close + 1 if close != -1 else ref.end
    return ref.end


def _annotate(
    text: str,
    markers: list[Marker],
    verdicts: Mapping[Key, Verdict],
    unverified: list[ForeignReference],
) -> str:
    edits: list[tuple[int, int, str]] = []
    for marker in markers:
        marked = [
            f"{key}{MARKS[verdicts[(marker.sentence, key)]]}"
            for key in marker.keys
            if verdicts.get((marker.sentence, key), Verdict.INVALID) is not Verdict.INVALID
        ]
        dropped = any(verdicts.get((marker.sentence, k)) is Verdict.INVALID for k in marker.keys)
        replacement = f"[{', '.join(marked)}]" if marked else ""
        if dropped:
            replacement = f"{replacement} {INVALID_NOTE}".strip()
        edits.append((marker.start, marker.end, replacement))
    edits.extend((_note_at(text, ref), _note_at(text, ref), UNVERIFIED_NOTE) for ref in unverified)
    out = text
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        out = out[:start] + replacement + out[end:]
    return out
