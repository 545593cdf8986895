"""Citation checking on SciFact's training claims: does the offline support score tell a cited
abstract that addresses the claim from one that does not? And can a fabricating model get an
invalid citation past the verifier?

Every (claim, cited abstract) pair of ``claims_train.csv`` is scored by the product's
``SupportScorer``, by words alone and with the shipped embedding model; a pair "addresses the
claim" when SciFact labels the abstract SUPPORT or CONTRADICT for it. Printed: AUROC, and
precision / recall of "addresses" at the product's two thresholds (supported, weak).

Then the verifier runs end to end (``CitationVerifier``):
- model path: a scripted model answers support / contradict / not addressed from SciFact's
  labels, fails some calls and invents some quotes; printed: how many failed calls and
  unquoted verdicts fell back to the offline score, how many invented quotes were shown,
  and the agreement of the judged ones with the labels (a check of the plumbing: the
  script answers from those labels, so it is no measure of a model's accuracy);
- fabrication: scripted answers whose packs hold each claim's cited abstracts plus unrelated
  ones, citing the right key, an unrelated key, a key outside the pack, and an invented DOI;
  printed: invalid keys and invented references shown as a citation (target 0) and the share
  of unrelated citations marked supported.

    python bench/citations.py --data ../shared/data/retrieval/scifact [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import random
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from _measures import auroc
from scholarstream.embeddings import shipped_embedder
from scholarstream.errors import LLMError
from scholarstream.grounding import (
    CitationVerifier,
    EvidencePack,
    ModelJudgement,
    SupportScorer,
    Thresholds,
    Verdict,
)
from scholarstream.grounding.core import UNVERIFIED_NOTE
from scholarstream.papers import Paper

OutputT = TypeVar("OutputT")
_LABELS = {"SUPPORT": "support", "CONTRADICT": "contradict", "": "not_addressed"}


@dataclass(frozen=True)
class Pair:
    claim: str
    doc: str
    label: str  # support / contradict / not_addressed

    @property
    def addresses(self) -> bool:
        return self.label != "not_addressed"


def read_corpus(path: Path) -> dict[str, Paper]:
    papers = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            papers[row["_id"]] = Paper(title=row["title"] or "(untitled)", abstract=row["text"])
    return papers


def read_pairs(path: Path, corpus: dict[str, Paper]) -> list[Pair]:
    """One pair per (claim, cited abstract), labelled by the claim's evidence for it."""
    claims: dict[str, str] = {}
    cited: dict[str, set[str]] = defaultdict(set)
    evidence: dict[tuple[str, str], str] = {}
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            claims[row["id"]] = row["claim"]
            cited[row["id"]] |= set(re.findall(r"\d+", row["cited_doc_ids"]))
            if row["evidence_doc_id"]:
                evidence[(row["id"], row["evidence_doc_id"])] = row["evidence_label"]
    return [
        Pair(claims[cid], doc, _LABELS[evidence.get((cid, doc), "")])
        for cid in claims
        for doc in sorted(cited[cid])
        if doc in corpus
    ]


def at_threshold(
    scores: npt.NDArray[np.float64], positive: npt.NDArray[np.bool_], threshold: float
) -> tuple[float, float]:
    """(precision, recall) of "addresses" for scores at or above ``threshold``."""
    chosen = scores >= threshold
    hits = int((chosen & positive).sum())
    return hits / max(1, int(chosen.sum())), hits / max(1, int(positive.sum()))


def score_table(pairs: list[Pair], corpus: dict[str, Paper]) -> dict[str, Any]:
    positive = np.array([p.addresses for p in pairs])
    thresholds = Thresholds()
    out: dict[str, Any] = {}
    for name, scorer in (
        ("words", SupportScorer()),
        ("words + meaning", SupportScorer(shipped_embedder())),
    ):
        started = time.perf_counter()
        scores = np.array(
            [s.score for s in scorer.score([(p.claim, corpus[p.doc]) for p in pairs])]
        )
        seconds = time.perf_counter() - started
        supported = at_threshold(scores, positive, thresholds.supported)
        weak = at_threshold(scores, positive, thresholds.weak)
        out[name] = {
            "auroc": auroc(scores, positive),
            "precision_supported": supported[0],
            "recall_supported": supported[1],
            "precision_weak_or_better": weak[0],
            "recall_weak_or_better": weak[1],
            "pairs_per_second": len(pairs) / seconds,
        }
    return out


class ScriptedJudge:
    """A model that answers from SciFact's labels: every ``fail_every``-th call fails, and
    every ``invent_every``-th answer quotes a sentence that is not in the record."""

    def __init__(self, labels: dict[tuple[str, str], str], fail_every: int, invent_every: int):
        self.labels = labels
        self.fail_every = fail_every
        self.invent_every = invent_every
        self.calls = 0
        self.failed = 0
        self.invented = 0

    async def structured(
        self, agent: Any, prompt: str, *, feature: str, role: str = "default"
    ) -> Any:
        self.calls += 1
        if self.calls % self.fail_every == 0:
            self.failed += 1
            raise LLMError("scripted failure")
        sentence = prompt.split("\n", 1)[0].removeprefix("Sentence: ")
        title = prompt.split("```", 1)[1].strip().split("\n", 1)[0]
        verdict = next(
            label
            for (claim, cited), label in self.labels.items()
            if cited == title and sentence in " ".join(claim.split())
        )
        quote = None
        if verdict != "not_addressed":
            quote = prompt.split("```")[1].strip().split("\n")[-1].split(". ")[0]
        if self.calls % self.invent_every == 0:
            self.invented += 1
            quote = "This trial proved the claim beyond doubt."
        return ModelJudgement(verdict=verdict, quote=quote)


async def model_path(pairs: list[Pair], corpus: dict[str, Paper]) -> dict[str, Any]:
    labels = {(p.claim, corpus[p.doc].title): p.label for p in pairs}
    judge = ScriptedJudge(labels, fail_every=7, invent_every=5)
    verifier = CitationVerifier(SupportScorer(), llm=judge, max_judged=1000)
    agree = fell_back = invented_shown = 0
    for pair in pairs:
        pack = EvidencePack.of(pair.claim, [(corpus[pair.doc], "bench", 1.0)])
        audit = await verifier.verify(f"{pair.claim} [1]", pack)
        check = audit.checks[0]
        if check.judged_by != "model":
            fell_back += 1
            continue
        expected = {"support": Verdict.SUPPORTED, "contradict": Verdict.CONTRADICTED}
        agree += check.verdict == expected.get(pair.label, Verdict.UNSUPPORTED)
        invented_shown += check.quote == "This trial proved the claim beyond doubt."
    return {
        "pairs": len(pairs),
        "model_calls": judge.calls,
        "calls_failed": judge.failed,
        "fell_back_to_offline": fell_back,
        "three_way_agreement_of_judged": agree / max(1, len(pairs) - fell_back),
        "invented_quotes": judge.invented,
        "invented_quotes_shown": invented_shown,
    }


async def fabrication(pairs: list[Pair], corpus: dict[str, Paper], seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    docs = sorted(corpus)
    verifier = CitationVerifier(SupportScorer(shipped_embedder()))
    shown: Counter[str] = Counter()
    for pair in (p for p in pairs if p.addresses):
        unrelated = [corpus[d] for d in rng.sample(docs, 4) if d != pair.doc][:3]
        pack = EvidencePack.of(
            pair.claim, [(p, "bench", 0.0) for p in [corpus[pair.doc], *unrelated]]
        )
        outside = len(pack.items) + rng.randint(1, 40)
        invented_doi = f"10.{rng.randint(1000, 9999)}/fake.{rng.randint(1, 99999)}"
        # Well-formed markers, and the forms a model also writes: a marker on a line of
        # its own, a chained range, an invented DOI as a link.
        answer = (
            f"{pair.claim} [1]. {pair.claim} [2]. {pair.claim} [{outside}].\n[{outside}]\n"
            f"Trials agree [2-{outside}-3]. A later trial confirmed it (doi:{invented_doi}), "
            f"see [the review](https://doi.org/{invented_doi})."
        )
        audit = await verifier.verify(answer, pack)
        verdicts = {c.key: c.verdict for c in audit.checks}
        shown["answers"] += 1
        shown["right_key_supported"] += verdicts[1] is Verdict.SUPPORTED
        shown["unrelated_key_supported"] += verdicts[2] is Verdict.SUPPORTED
        shown["unrelated_key_supported_or_weak"] += verdicts[2] in (Verdict.SUPPORTED, Verdict.WEAK)
        shown["outside_key_flagged_invalid"] += verdicts[outside] is Verdict.INVALID
        shown["outside_key_shown_as_citation"] += bool(
            re.search(rf"\[(?:[^\]]*, )?{outside}\D", audit.annotated)
        )
        shown["invented_doi_flagged"] += sum(r.kind == "doi" for r in audit.unverified) == 2
        after_doi = audit.annotated[audit.annotated.find("doi:10.") :]
        shown["invented_doi_unflagged"] += UNVERIFIED_NOTE not in after_doi
    return dict(shown)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/retrieval/scifact"))
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    corpus = read_corpus(args.data / "corpus.jsonl")
    pairs = read_pairs(args.data / "claims_train.csv", corpus)
    counts = Counter(p.label for p in pairs)
    print(f"{len(pairs)} (claim, cited abstract) pairs: {dict(counts)}")
    figures: dict[str, Any] = {"scores": score_table(pairs, corpus)}
    thresholds = Thresholds()
    print(
        f"\nOffline support score (thresholds: supported >= {thresholds.supported}, "
        f"weak >= {thresholds.weak})"
    )
    print(
        f"{'scorer':<18}{'AUROC':>7}{'P@sup':>7}{'R@sup':>7}{'P@weak':>8}{'R@weak':>8}{'pairs/s':>9}"
    )
    for name, row in figures["scores"].items():
        print(
            f"{name:<18}{row['auroc']:>7.3f}{row['precision_supported']:>7.3f}"
            f"{row['recall_supported']:>7.3f}{row['precision_weak_or_better']:>8.3f}"
            f"{row['recall_weak_or_better']:>8.3f}{row['pairs_per_second']:>9.1f}"
        )
    figures["model_path"] = asyncio.run(model_path(pairs, corpus))
    print("\nModel path (scripted judge):", json.dumps(figures["model_path"], indent=1))
    figures["fabrication"] = asyncio.run(fabrication(pairs, corpus, args.seed))
    print("\nFabrication:", json.dumps(figures["fabrication"], indent=1))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
