"""The audit of an answer: every citation gets a verdict, invalid keys are removed and
flagged, references the model wrote itself are marked unverified, never shown as citations."""

from __future__ import annotations

import re

from scholarstream.grounding import (
    CitationAudit,
    EvidencePack,
    ModelJudgement,
    SupportScore,
    Verdict,
    audit_answer,
)
from scholarstream.grounding.core import INVALID_NOTE, UNVERIFIED_NOTE, Thresholds
from scholarstream.papers import Paper

PACK = EvidencePack.of(
    "Do statins prevent heart attacks?",
    [(Paper(title=f"Record {n}", abstract="Text."), "library", 1.0) for n in range(1, 4)],
)


def score(value: float) -> SupportScore:
    return SupportScore(score=value, coverage=value, similarity=None, quote="Quoted.")


def audit(text: str, scores: dict[tuple[int, int], float], **kwargs: object) -> CitationAudit:
    return audit_answer(text, PACK, {k: score(v) for k, v in scores.items()}, **kwargs)  # type: ignore[arg-type]


def test_each_citation_gets_the_verdict_of_its_score() -> None:
    result = audit("A holds [1]. B holds [2, 3].", {(0, 1): 0.9, (1, 2): 0.5, (1, 3): 0.1})
    assert [(c.key, c.verdict) for c in result.checks] == [
        (1, Verdict.SUPPORTED),
        (2, Verdict.WEAK),
        (3, Verdict.UNSUPPORTED),
    ]
    assert result.annotated == "A holds [1✓]. B holds [2~, 3✗]."
    assert result.summary() == "3 citations: 1 supported, 1 weak, 1 unsupported, 0 invalid"
    assert result.cited_keys == [1, 2, 3]


def test_a_key_outside_the_pack_is_invalid_removed_and_flagged() -> None:
    result = audit("A holds [1, 9]. B holds [12].", {(0, 1): 0.9})
    assert [(c.key, c.verdict) for c in result.checks] == [
        (1, Verdict.SUPPORTED),
        (9, Verdict.INVALID),
        (12, Verdict.INVALID),
    ]
    assert result.annotated == f"A holds [1✓] {INVALID_NOTE}. B holds {INVALID_NOTE}."
    assert not re.search(r"\b(9|12)\b", result.annotated)
    assert result.cited_keys == [1]


def test_an_invented_doi_is_marked_unverified() -> None:
    result = audit("Shown before (doi:10.1234/fake.99).", {})
    assert [r.text for r in result.unverified] == ["10.1234/fake.99"]
    assert result.annotated == f"Shown before (doi:10.1234/fake.99{UNVERIFIED_NOTE})."
    assert result.summary().endswith("; 1 unverified reference")


def test_a_model_judgement_decides_over_the_score() -> None:
    judged = {(0, 1): ModelJudgement(verdict="contradict", quote="It did not.")}
    result = audit("A holds [1].", {(0, 1): 0.9}, judgements=judged)
    check = result.checks[0]
    assert (check.verdict, check.quote, check.judged_by) == (
        Verdict.CONTRADICTED,
        "It did not.",
        "model",
    )
    assert result.annotated == "A holds [1≠]."
    assert "1 contradicted" in result.summary()


def test_thresholds_are_settable() -> None:
    strict = Thresholds(supported=0.95, weak=0.8)
    result = audit("A holds [1].", {(0, 1): 0.9}, thresholds=strict)
    assert result.checks[0].verdict is Verdict.WEAK


def test_sentences_without_citations_are_counted() -> None:
    result = audit("Intro. A holds [1]. Outro.", {(1, 1): 0.9})
    assert (result.sentences, result.cited_sentences) == (3, 1)


def test_a_reference_line_has_one_full_stop_between_its_parts() -> None:
    from scholarstream.grounding import reference_line
    from scholarstream.papers import Author, Identifiers

    paper = Paper(
        title="A trial.",
        authors=[Author(name=n, family=n) for n in ("Ames", "Bo", "Cruz", "Diaz")],
        venue="Lancet",
        year=2020,
        ids=Identifiers(doi="10.1016/S0140-6736(20)30000-1", pmid="32000000"),
    )
    item = EvidencePack.of("q", [(paper, "pubmed", 1.0)]).items[0]
    assert reference_line(item) == (
        "[1] Ames, Bo, Cruz, et al. A trial. Lancet. 2020. "
        "doi:10.1016/s0140-6736(20)30000-1. PMID 32000000."
    )
