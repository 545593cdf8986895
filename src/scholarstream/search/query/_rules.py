"""``RuleQueryBuilder``: the offline query builder.

The intent's concepts become blocks (the concept, its synonyms, the user's added terms,
its MeSH headings); the feedback picks a rung of the ladder (``ladder``) relative to
the previous strategy; every source gets the plan in its own syntax (``syntax``). A
strategy whose fingerprint was rejected is never returned: the builder climbs further
along the ladder and, when the ladder is used up, varies one synonym or the date range.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from rapidfuzz import fuzz

from scholarstream.errors import ConflictError, InvalidInputError
from scholarstream.search._mesh import (
    ConceptMapping,
    MeshVocabulary,
    QuestionMesh,
    map_concept,
    map_question,
)
from scholarstream.search.core import (
    Concept,
    ConceptBlock,
    ParsedIntent,
    QueryBuilderInput,
    SearchStrategy,
    SourceQuery,
)
from scholarstream.search.query._feedback import FeedbackReading, read_feedback
from scholarstream.search.query._ladder import (
    BROADEN,
    NARROW,
    DraftConcept,
    Role,
    Rung,
    Shape,
    rung,
)
from scholarstream.search.query._plan import QueryPlan
from scholarstream.search.query._syntax import render
from scholarstream.sources import SourceInfo
from scholarstream.understanding import group_of, years_before

MAX_MESH_PER_CONCEPT = 3
TRIAL_REGISTRIES = frozenset({"clinicaltrials"})
_CLINICAL_STUDY_TYPES = frozenset({"randomized controlled trial", "clinical trial"})
_CONDITION_SPLIT = re.compile(
    r"\s+(?:with|who\s+have|having|undergoing|receiving|diagnosed\s+with|living\s+with|"
    r"at\s+risk\s+(?:of|for)|after|on)\s+",
    re.I,
)
# Years back from today tried, as a last resort, to make a strategy that differs.
_WINDOWS = (5, 10, 15, 20, 30, 3, 7, 25, 40, 50, *range(1, 101))


@dataclass(frozen=True)
class _Candidate:
    strategy: SearchStrategy
    rung: Rung
    variant: str | None = None


def _mentions(text: str | None, concept: Concept) -> bool:
    if not text:
        return False
    lowered = text.lower()
    return any(t.lower() in lowered or lowered in t.lower() for t in concept.all_terms)


def _role(concept: Concept, intent: ParsedIntent) -> Role:
    pico = intent.pico
    if pico is None:
        return "other"
    if _mentions(pico.intervention, concept):
        return "intervention"
    if _mentions(pico.comparison, concept):
        return "comparison"
    if _mentions(pico.outcome, concept):
        return "outcome"
    if pico.population:
        people, *condition = _CONDITION_SPLIT.split(pico.population, maxsplit=1)
        if condition and _mentions(condition[0], concept):
            return "condition"
        if _mentions(people, concept):
            return "population"
    return "other"


def _related(concept: Concept) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for term in concept.all_terms:
        group = group_of(term)
        if group is not None:
            found.update(dict.fromkeys(group.related))
    known = {t.lower() for t in concept.all_terms}
    return tuple(r for r in found if r.lower() not in known)


def _best_concept(term: str, concepts: Sequence[DraftConcept]) -> int:
    """The concept an added term most likely belongs to (its synonym group, else the
    closest wording); the main concept when nothing is close."""
    group = group_of(term)
    best, best_score = 0, 0.0
    for index, concept in enumerate(concepts):
        terms = [concept.term, *concept.synonyms]
        if group is not None and any(group_of(t) is group for t in terms):
            return index
        score = max(fuzz.token_set_ratio(term.lower(), t.lower()) for t in terms)
        if score > best_score:
            best, best_score = index, score
    return best if best_score >= 80 else 0


class RuleQueryBuilder:
    """Deterministic strategies from the intent and the user's feedback.

    ``source_infos`` (name -> ``SourceInfo``, e.g. from ``SourceHub.infos()``) lets
    the builder keep only filters each source accepts; ``today`` anchors date steps.
    """

    def __init__(
        self,
        *,
        sources: Sequence[str],
        mesh: MeshVocabulary,
        source_infos: Mapping[str, SourceInfo] | None = None,
        results_per_source: int = 50,
        today: dt.date | None = None,
    ) -> None:
        if not sources:
            raise InvalidInputError(
                "No source was chosen to search.", hint="Name at least one source."
            )
        self.sources = list(dict.fromkeys(sources))
        self.mesh = mesh
        self.source_infos = dict(source_infos or {})
        self.results_per_source = results_per_source
        self._today = today
        self._mesh_cache: dict[str, ConceptMapping] = {}
        self._question_cache: dict[str, QuestionMesh] = {}
        self._mapped: dict[str, ConceptMapping] = {}

    async def build(self, data: QueryBuilderInput) -> SearchStrategy:
        return self.build_now(data)

    def build_now(self, data: QueryBuilderInput) -> SearchStrategy:
        today = self._today or dt.date.today()
        reading = read_feedback(data.user_feedback)
        intent = data.intent
        start, exclude = self._start(intent, reading)
        base, base_exclude = self._start(intent, FeedbackReading())
        last = data.previous_strategies[-1] if data.previous_strategies else None
        previous_level = self._level_of(last, base, base_exclude, today) if last else 0
        rejected = {s.fingerprint() for s in data.rejected_strategies}
        avoid = set(rejected)
        if last is not None and reading.direction is not None:
            avoid.add(last.fingerprint())  # asked for a change: the same search is no answer
        skipped = 0
        for candidate in self._candidates(start, exclude, previous_level, reading, today):
            if candidate.strategy.fingerprint() in avoid:
                skipped += 1
                continue
            rationale = self._rationale(candidate, reading, skipped, last is not None)
            rationale = " ".join(filter(None, (rationale, self.mesh_note(candidate.strategy))))
            return candidate.strategy.model_copy(update={"rationale": rationale})
        raise ConflictError(
            "Every strategy the offline builder can write for this question was rejected.",
            hint="Edit the strategy by hand, or rephrase the question.",
        )

    # --- the starting shape ------------------------------------------------------------

    def mapping(self, concept: Concept, *, alone: bool = False) -> ConceptMapping:
        """The concept's MeSH headings and how each was found; ``alone``: the question's
        only concept, which may map to a generic heading (a question about diagnosis)."""
        key = "\n".join([*concept.all_terms, str(alone)]).lower()
        if key not in self._mesh_cache:
            self._mesh_cache[key] = map_concept(
                self.mesh,
                concept.term,
                concept.synonyms,
                limit=MAX_MESH_PER_CONCEPT,
                allow_generic=alone,
            )
        mapping = self._mesh_cache[key]
        self._mapped[concept.term.lower()] = mapping
        return mapping

    def question_mesh(self, intent: ParsedIntent) -> QuestionMesh:
        """The MeSH of the question: its concepts' headings, the narrower headings its
        words name, and what it says beside its concepts that searchers give a heading
        (diagnostic accuracy, a cancer's stage, the people it is about)."""
        concepts = intent.concepts or [Concept(term=intent.topic)]
        pairs = [(c.term, tuple(c.synonyms)) for c in concepts]
        key = repr((intent.question, pairs))
        if key not in self._question_cache:
            self._question_cache[key] = map_question(
                self.mesh, intent.question, pairs, limit=MAX_MESH_PER_CONCEPT
            )
        found = self._question_cache[key]
        for mapping in found.mappings:
            self._mapped[mapping.concept.lower()] = mapping
        return found

    def _draft(
        self,
        concept: Concept,
        intent: ParsedIntent | None,
        *,
        alone: bool,
        mapping: ConceptMapping | None = None,
    ) -> DraftConcept:
        mapping = mapping or self.mapping(concept, alone=alone)
        known = {t.lower() for t in concept.all_terms}
        added = tuple(s for s in mapping.synonyms if s.lower() not in known)
        return DraftConcept(
            term=concept.term,
            synonyms=(*concept.synonyms, *added),
            related=_related(concept),
            mesh=tuple(mapping.headings),
            role=_role(concept, intent) if intent is not None else "other",
            mesh_together=mapping.parts_together,
            mesh_unexploded=tuple(mapping.unexploded),
        )

    def mappings(self, intent: ParsedIntent) -> list[ConceptMapping]:
        """Every concept's MeSH mapping, in the intent's order, then the question's own
        (what the rationale shows)."""
        return self.question_mesh(intent).mappings

    def _start(
        self, intent: ParsedIntent, reading: FeedbackReading
    ) -> tuple[Shape, tuple[str, ...]]:
        concepts = intent.concepts or [Concept(term=intent.topic)]
        found = self.question_mesh(intent)
        drafts = [
            self._draft(c, intent, alone=len(concepts) == 1, mapping=m)
            for c, m in zip(concepts, found.concepts, strict=True)
        ]
        drafts += [
            DraftConcept(
                term=q.term, synonyms=q.synonyms, mesh=tuple(q.mapping.headings), role=q.role
            )
            for q in found.extra
        ]
        for term in reading.add_terms:
            index = _best_concept(term, drafts)
            target = drafts[index]
            if term.lower() not in (t.lower() for t in (target.term, *target.synonyms)):
                drafts[index] = replace(target, synonyms=(*target.synonyms, term))
        for term in reading.required:
            drafts = self._require(drafts, term)
        in_use = {t.lower() for d in drafts for t in (d.term, *d.synonyms)}
        exclude = tuple(
            dict.fromkeys(
                t
                for t in (*intent.exclude_terms, *reading.exclude_terms)
                if t.lower() not in in_use
            )
        )
        study_types = tuple(dict.fromkeys((*intent.study_types, *reading.study_types)))
        shape = Shape(
            concepts=tuple(drafts),
            study_types=study_types,
            languages=tuple(dict.fromkeys((*intent.languages, *reading.languages))),
            date_from=intent.date_from,
            date_to=intent.date_to,
            clinical=intent.is_clinical or bool(set(study_types) & _CLINICAL_STUDY_TYPES),
        )
        return shape, exclude

    def _require(self, drafts: list[DraftConcept], term: str) -> list[DraftConcept]:
        for index, draft in enumerate(drafts):
            if term.lower() in (t.lower() for t in (draft.term, *draft.synonyms)):
                drafts[index] = replace(draft, required=True)
                return drafts
        group = group_of(term)
        concept = Concept(
            term=term,
            synonyms=[m for m in group.members if m.lower() != term.lower()] if group else [],
        )
        return [*drafts, replace(self._draft(concept, None, alone=False), required=True)]

    # --- rendering ---------------------------------------------------------------------

    def _sources_for(self, shape: Shape) -> list[str]:
        """Trial registries only for clinical questions; every chosen source otherwise."""
        suited = [s for s in self.sources if shape.clinical or s not in TRIAL_REGISTRIES]
        return suited or self.sources

    def plan(self, shape: Shape, exclude: Sequence[str]) -> QueryPlan:
        blocks = tuple(
            ConceptBlock(
                concept=c.term,
                terms=c.terms(shape),
                mesh_headings=list(c.mesh),
                mesh_together=c.mesh_together,
                mesh_unexploded=list(c.mesh_unexploded),
            )
            for c in shape.concepts
        )
        roles = [c.role for c in shape.concepts]
        return QueryPlan(
            blocks=blocks,
            exclude=tuple(exclude),
            study_types=shape.study_types,
            languages=shape.languages,
            title_blocks=shape.title_blocks,
            condition_block=roles.index("condition") if "condition" in roles else None,
            intervention_block=roles.index("intervention") if "intervention" in roles else None,
            all_fields=shape.all_fields,
            limit=self.results_per_source,
        )

    def _accepted(self, query: SourceQuery) -> SourceQuery:
        info = self.source_infos.get(query.source)
        if info is None:
            return query
        filters = {k: v for k, v in query.filters.items() if k in info.filters}
        return query.model_copy(update={"filters": filters})

    def strategy(self, shape: Shape, exclude: Sequence[str]) -> SearchStrategy:
        plan = self.plan(shape, exclude)
        return SearchStrategy(
            queries=[self._accepted(render(s, plan)) for s in self._sources_for(shape)],
            date_from=shape.date_from,
            date_to=shape.date_to,
            concepts=list(plan.blocks),
        )

    # --- choosing the rung ---------------------------------------------------------------

    def _level_of(
        self, last: SearchStrategy, base: Shape, exclude: Sequence[str], today: dt.date
    ) -> int:
        """The rung the previous strategy stood on, when it was one of this builder's
        (0 when it was not: an edited or model-written strategy)."""
        target = last.fingerprint()
        for level in range(-len(NARROW), len(BROADEN) + 1):
            found = rung(base, level, today)
            if found is not None and self.strategy(found.shape, exclude).fingerprint() == target:
                return level
        return 0

    def _candidates(
        self,
        start: Shape,
        exclude: Sequence[str],
        previous_level: int,
        reading: FeedbackReading,
        today: dt.date,
    ) -> Iterator[_Candidate]:
        """Strategies in order of preference: the requested rung, further rungs in the
        requested direction (or, with no direction, alternately either way), then
        one-change variants."""
        step = {"broaden": 1, "narrow": -1, None: 0}[reading.direction]
        first = previous_level + step
        levels: list[int] = []
        if step:
            level = first
            while rung(start, level, today) is not None:
                levels.append(level)
                level += step
        else:
            levels.append(first)
            for distance in range(1, len(BROADEN) + len(NARROW) + 1):
                levels.extend((first + distance, first - distance))
        anchor: Rung | None = None
        for level in levels:
            found = rung(start, level, today)
            if found is None:
                continue
            anchor = anchor or found
            yield _Candidate(self.strategy(found.shape, exclude), found)
        anchor = anchor or Rung(start, 0, ())
        yield from self._variants(anchor, exclude, today)

    def _variants(
        self, anchor: Rung, exclude: Sequence[str], today: dt.date
    ) -> Iterator[_Candidate]:
        """Minimal changes once the ladder is used up: leave out one synonym, or search a
        different window of years."""
        shape = anchor.shape
        for index in range(len(shape.concepts) - 1, -1, -1):
            concept = shape.concepts[index]
            for synonym in reversed(concept.synonyms):
                reduced = replace(
                    concept, synonyms=tuple(s for s in concept.synonyms if s != synonym)
                )
                concepts = (*shape.concepts[:index], reduced, *shape.concepts[index + 1 :])
                varied = replace(shape, concepts=concepts)
                yield _Candidate(
                    self.strategy(varied, exclude),
                    anchor,
                    f"left out the synonym '{synonym}' of '{concept.term}'",
                )
        for years in dict.fromkeys(_WINDOWS):
            varied = replace(shape, date_from=years_before(today, years), date_to=None)
            yield _Candidate(
                self.strategy(varied, exclude), anchor, f"searched the last {years} years only"
            )

    # --- explaining --------------------------------------------------------------------

    def mesh_note(self, strategy: SearchStrategy) -> str:
        """How each concept of the strategy maps to MeSH, for its rationale."""
        if not self.mesh:
            return ""
        found: list[str] = []
        missing: list[str] = []
        for block in strategy.concepts:
            mapping = self._mapped.get(block.concept.lower())
            if mapping is None:
                continue
            if mapping.mappings:
                found.extend(m.describe() for m in mapping.mappings)
            else:
                missing.append(f"'{block.concept}'")
        parts = []
        if found:
            parts.append(f"MeSH: {'; '.join(found)}.")
        if missing:
            parts.append(f"No MeSH heading for {', '.join(missing)}: searched as words.")
        return " ".join(parts)

    def _rationale(
        self, candidate: _Candidate, reading: FeedbackReading, skipped: int, iterating: bool
    ) -> str:
        strategy = candidate.strategy
        concepts = " AND ".join(f"'{b.concept}'" for b in strategy.concepts)
        where = ", ".join(
            info.label if (info := self.source_infos.get(name)) else name
            for name in strategy.sources
        )
        parts = [f"Searches {concepts} in {where}."]
        level, steps = candidate.rung.level, candidate.rung.steps
        if steps:
            how = "Broadened" if level > 0 else "Narrowed"
            why = ", as the feedback asked" if reading.direction else ""
            parts.append(f"{how} from the question as asked{why}: {'; '.join(steps)}.")
        if reading.add_terms:
            parts.append(f"Added terms: {', '.join(reading.add_terms)}.")
        if reading.required:
            parts.append(f"Required: {', '.join(reading.required)}.")
        if reading.exclude_terms:
            parts.append(f"Excluded: {', '.join(reading.exclude_terms)}.")
        if reading.study_types or reading.languages:
            limits = [*reading.study_types, *reading.languages]
            parts.append(f"Limited to: {', '.join(limits)}.")
        if skipped:
            what = "a rejected strategy" if not iterating else "a rejected or the previous strategy"
            parts.append(
                f"{skipped} closer candidate(s) repeated {what}, so this one goes further."
            )
        if candidate.variant:
            parts.append(
                f"Every further rung of the broaden/narrow ladder had been rejected, so this "
                f"variant "
                f"{candidate.variant}."
            )
        if strategy.date_from or strategy.date_to:
            start = strategy.date_from.isoformat() if strategy.date_from else "any date"
            end = strategy.date_to.isoformat() if strategy.date_to else "now"
            parts.append(f"Published {start} to {end}.")
        return " ".join(parts)
