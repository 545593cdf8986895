"""Feedback never narrows beyond what the user said.

``review_strategy`` compares a new strategy, from any builder (rules or model), with the
one the user last saw, change by change: the date range, each source's filters, and each
top-level clause of each query (a concept, a study-type or language limit, a humans
limit, an exclusion, a title-only field). Each change is kept only when a phrase of the
feedback asks for it, and is listed with that phrase; the others are undone and listed
as not made. A limit the feedback asks for that the builder did not write (humans, dates)
is added where the source supports it. Then every paper the user marked relevant is
checked against the kept changes, offline, on its title, abstract, year, types, language
and MeSH headings: a change that would leave one out is undone, and the review says so.

``review_edit`` checks a strategy the user wrote against the same papers: the user's query
is kept, with a plain warning naming the papers it would leave out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from scholarstream.papers import Record
from scholarstream.search.core import (
    ChangeKind,
    ScoredPaper,
    SearchStrategy,
    SourceQuery,
    StrategyChange,
)
from scholarstream.search.query._clauses import (
    CONCEPT_KEYS,
    DATE_KEYS,
    HUMANS_CLAUSE,
    HUMANS_PRESENT,
    LANGUAGE_KEYS,
    STUDY_KEYS,
    Clause,
    animal_only,
    has,
    in_language,
    join_clauses,
    kind_of,
    matches,
    split_clauses,
    typed_as,
)
from scholarstream.search.query._feedback import FeedbackReading

# --- the review -----------------------------------------------------------------------

Excludes = Callable[[Record], bool]
Undo = Callable[["_Draft"], None]


@dataclass
class _Draft:
    """The new strategy while changes are undone on it."""

    date_from: object
    date_to: object
    queries: dict[str, SourceQuery]
    clauses: dict[str, list[Clause]]
    rebuilt: set[str] = field(default_factory=set)

    def strategy(self, base: SearchStrategy) -> SearchStrategy:
        queries = []
        for source, query in self.queries.items():
            if source in self.rebuilt:
                not_word = "ANDNOT" if "ANDNOT" in query.query else "NOT"
                text = join_clauses(self.clauses[source], not_word=not_word)
                query = query.model_copy(update={"query": text or query.query})
            queries.append(query)
        return base.model_copy(
            update={"queries": queries, "date_from": self.date_from, "date_to": self.date_to}
        )


@dataclass
class _Found:
    change: StrategyChange
    narrowing: bool
    undo: Undo
    excludes: Excludes | None = None
    terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class StrategyReview:
    strategy: SearchStrategy
    changes: list[StrategyChange]
    not_made: list[StrategyChange]
    warnings: list[str]


def _year(value: object) -> int | None:
    return getattr(value, "year", None)


def _before(year: int | None) -> Excludes:
    return lambda record: bool(year and record.year and record.year < year)


def _after(year: int | None) -> Excludes:
    return lambda record: bool(year and record.year and record.year > year)


def _date_changes(previous: SearchStrategy, new: SearchStrategy) -> list[_Found]:
    found: list[_Found] = []
    old_from, new_from = previous.date_from, new.date_from
    if old_from != new_from:
        narrowing = new_from is not None and (old_from is None or new_from > old_from)
        what = (
            f"limited to {new_from.year} onwards"
            if new_from is not None
            else "removed the start of the date range"
        )
        if new_from is not None and not narrowing:
            what = f"widened the date range to {new_from.year} onwards"

        def undo_from(draft: _Draft, value: object = old_from) -> None:
            draft.date_from = value

        start = new_from.year if new_from else None
        found.append(
            _Found(
                StrategyChange(kind="dates", description=what),
                narrowing,
                undo_from,
                _before(start) if narrowing else None,
            )
        )
    old_to, new_to = previous.date_to, new.date_to
    if old_to != new_to:
        narrowing = new_to is not None and (old_to is None or new_to < old_to)
        what = (
            f"limited to {new_to.year} and before"
            if new_to is not None
            else "removed the end of the date range"
        )

        def undo_to(draft: _Draft, value: object = old_to) -> None:
            draft.date_to = value

        end = new_to.year if new_to else None
        found.append(
            _Found(
                StrategyChange(kind="dates", description=what),
                narrowing,
                undo_to,
                _after(end) if narrowing else None,
            )
        )
    return found


def _filter_kind(key: str, value: str | None) -> ChangeKind:
    if key in STUDY_KEYS:
        return "study_types"
    if key in LANGUAGE_KEYS:
        return "languages"
    if key in DATE_KEYS:
        return "dates"
    if key == "mesh" and value and value.strip().lower() == "humans":
        return "humans"
    if key in CONCEPT_KEYS:
        return "concepts"
    return "filters"


def _filter_changes(source: str, old: SourceQuery, new: SourceQuery) -> list[_Found]:
    found: list[_Found] = []
    for key in sorted(set(old.filters) | set(new.filters)):
        before, after = old.filters.get(key), new.filters.get(key)
        if before == after:
            continue
        kind = _filter_kind(key, after or before)
        narrowing = after is not None and before is None
        if after is None:
            what = f"removed the {source} filter {key}={before}"
        elif before is None:
            what = f"added the {source} filter {key}={after}"
        else:
            what = f"changed the {source} filter {key} from {before} to {after}"
            narrowing = True

        def undo(draft: _Draft, key: str = key, before: str | None = before) -> None:
            filters = dict(draft.queries[source].filters)
            if before is None:
                filters.pop(key, None)
            else:
                filters[key] = before
            draft.queries[source] = draft.queries[source].model_copy(update={"filters": filters})

        excludes: Excludes | None = None
        if narrowing and after is not None:
            wanted = [v.strip() for v in re.split(r"[|,;]", after) if v.strip()]
            if kind == "study_types":
                excludes = lambda r, w=wanted: typed_as(r, w) is False  # noqa: E731
            elif kind == "languages":
                codes = [w.removeprefix("lang_") for w in wanted]
                excludes = lambda r, w=codes: in_language(r, w) is False  # noqa: E731
            elif kind == "humans":
                excludes = animal_only
            elif kind == "concepts":
                excludes = lambda r, w=wanted: not matches(r, w)  # noqa: E731
        found.append(
            _Found(
                StrategyChange(kind=kind, description=what, sources=[source]),
                narrowing,
                undo,
                excludes,
                tuple(v.lower() for v in re.split(r"[|,;]", after or "") if v.strip()),
            )
        )
    return found


def _describe(clause: Clause, kind: ChangeKind, source: str, *, added: bool) -> str:
    terms = ", ".join(clause.terms[:4]) or clause.text
    if kind == "exclusions":
        return f"{'excluded' if added else 'no longer excludes'} {terms} in {source}"
    if kind == "study_types":
        return f"{'limited' if added else 'lifted the limit'} to study types {terms} in {source}"
    if kind == "languages":
        return f"{'limited' if added else 'lifted the limit'} to languages {terms} in {source}"
    if kind == "humans":
        return f"{'limited' if added else 'lifted the limit'} to studies in humans in {source}"
    if kind == "dates":
        return f"{'added' if added else 'removed'} a date clause in {source}"
    return f"{'required' if added else 'dropped'} the concept ({terms}) in {source}"


def _clause_excludes(clause: Clause, kind: ChangeKind) -> Excludes | None:
    terms = clause.terms
    if kind == "exclusions":
        return lambda r: matches(r, terms)
    if kind == "study_types":
        return lambda r: typed_as(r, terms) is False
    if kind == "languages":
        return lambda r: in_language(r, terms) is False
    if kind == "humans":
        return animal_only
    if kind == "concepts":
        return lambda r: not matches(r, terms)
    return None


def _clause_changes(source: str, old: SourceQuery, new: SourceQuery) -> list[_Found]:
    before, after = split_clauses(old.query), split_clauses(new.query)
    unmatched_old = list(range(len(before)))
    found: list[_Found] = []
    modified: list[tuple[int, int]] = []
    added: list[int] = []
    for index, clause in enumerate(after):
        same = next((i for i in unmatched_old if before[i].key == clause.key), None)
        if same is not None:
            unmatched_old.remove(same)
            continue
        added.append(index)
    for index in list(added):
        clause = after[index]
        same_field = next(
            (i for i in unmatched_old if before[i].field_key == clause.field_key), None
        )
        if same_field is None:
            continue
        unmatched_old.remove(same_field)
        added.remove(index)
        modified.append((same_field, index))
    for index in list(added):
        clause = after[index]
        shared = next(
            (
                i
                for i in unmatched_old
                if before[i].negated == clause.negated
                and kind_of(before[i]) == kind_of(clause)
                and set(before[i].terms) & set(clause.terms)
            ),
            None,
        )
        if shared is None:
            continue
        unmatched_old.remove(shared)
        added.remove(index)
        modified.append((shared, index))

    def replace_at(position: int, clause: Clause | None) -> Undo:
        def undo(draft: _Draft) -> None:
            current = draft.clauses[source]
            if clause is None:
                current[position] = Clause("", False)
            else:
                current[position] = clause
            draft.clauses[source] = current
            draft.rebuilt.add(source)

        return undo

    for old_index, new_index in modified:
        was, now = before[old_index], after[new_index]
        if was.field_key == now.field_key:
            title = now.in_title and not was.in_title
            kind: ChangeKind = "title" if title else "fields"
            what = (
                f"required {', '.join(now.terms[:3])} in the title in {source}"
                if title
                else f"searched other fields for {', '.join(now.terms[:3])} in {source}"
            )
            excludes = (
                (lambda r, t=now.terms: not matches(r, t, title_only=True)) if title else None
            )
            found.append(
                _Found(
                    StrategyChange(kind=kind, description=what, sources=[source]),
                    title,
                    replace_at(new_index, was),
                    excludes,
                )
            )
            continue
        gained = [t for t in now.terms if t not in was.terms]
        lost = [t for t in was.terms if t not in now.terms]
        parts = []
        if gained:
            parts.append(f"added {', '.join(gained[:4])}")
        if lost:
            parts.append(f"left out {', '.join(lost[:4])}")
        what = f"{' and '.join(parts) or 'rewrote a clause'} in {source}"
        kind = kind_of(now)
        narrowing = bool(lost) and not now.negated

        def drops(record: Record, was: Clause = was, now: Clause = now) -> bool:
            if now.negated:
                return matches(record, now.terms) and not matches(record, was.terms)
            return matches(record, was.terms) and not matches(record, now.terms)

        found.append(
            _Found(
                StrategyChange(
                    kind="terms" if kind == "concepts" else kind, description=what, sources=[source]
                ),
                narrowing or (now.negated and bool(gained)),
                replace_at(new_index, was),
                drops,
                tuple(gained),
            )
        )
    for index in added:
        clause = after[index]
        kind = kind_of(clause)
        found.append(
            _Found(
                StrategyChange(
                    kind=kind,
                    description=_describe(clause, kind, source, added=True),
                    sources=[source],
                ),
                True,
                replace_at(index, None),
                _clause_excludes(clause, kind),
                tuple(clause.terms),
            )
        )
    for old_index in unmatched_old:
        clause = before[old_index]
        kind = kind_of(clause)

        def restore(draft: _Draft, clause: Clause = clause) -> None:
            draft.clauses[source].append(clause)
            draft.rebuilt.add(source)

        found.append(
            _Found(
                StrategyChange(
                    kind=kind,
                    description=_describe(clause, kind, source, added=False),
                    sources=[source],
                ),
                False,
                restore,
                None,
                tuple(clause.terms),
            )
        )
    return found


def _source_changes(previous: SearchStrategy, new: SearchStrategy) -> list[_Found]:
    found: list[_Found] = []
    for query in new.queries:
        if previous.query_for(query.source) is None:

            def drop(draft: _Draft, source: str = query.source) -> None:
                draft.queries.pop(source, None)

            found.append(
                _Found(
                    StrategyChange(
                        kind="filters",
                        description=f"added the source {query.source}",
                        sources=[query.source],
                    ),
                    False,
                    drop,
                )
            )
    for query in previous.queries:
        if new.query_for(query.source) is None:

            def add(draft: _Draft, query: SourceQuery = query) -> None:
                draft.queries[query.source] = query
                draft.clauses[query.source] = split_clauses(query.query)

            found.append(
                _Found(
                    StrategyChange(
                        kind="filters",
                        description=f"left out the source {query.source}",
                        sources=[query.source],
                    ),
                    True,
                    add,
                )
            )
    return found


def strategy_changes(previous: SearchStrategy, new: SearchStrategy) -> list[_Found]:
    found = _date_changes(previous, new)
    for query in new.queries:
        old = previous.query_for(query.source)
        if old is None:
            continue
        found += _filter_changes(query.source, old, query)
        if " ".join(old.query.split()) != " ".join(query.query.split()):
            found += _clause_changes(query.source, old, query)
    return found + _source_changes(previous, new)


def _feedback_words(reading: FeedbackReading, text: str) -> str:
    return " ".join([text, *reading.add_terms, *reading.required, *reading.exclude_terms]).lower()


def _phrase(found: _Found, reading: FeedbackReading, text: str) -> str | None:
    """The user's words behind a change, or None."""
    kind = found.change.kind
    words = _feedback_words(reading, text)
    direction = reading.phrase("direction")
    if (
        kind in ("concepts", "terms")
        and found.terms
        and any(has(words, t) or any(has(t, w) for w in reading.required) for t in found.terms)
    ):
        return reading.phrase("concepts") or reading.phrase("terms") or found.terms[0]
    if kind == "exclusions" and found.terms:
        if all(has(words, t) for t in found.terms):
            return reading.phrase("exclusions") or found.terms[0]
        return None
    if kind in ("dates", "study_types", "languages", "humans", "title") and reading.phrase(kind):
        return reading.phrase(kind)
    if direction is None:
        return None
    if found.narrowing and reading.direction == "narrow":
        return direction if kind in ("dates", "study_types", "title", "terms", "fields") else None
    if not found.narrowing and reading.direction == "broaden":
        return direction if kind not in ("humans", "languages", "exclusions") else None
    return None


def _titles(records: Sequence[Record]) -> str:
    return "; ".join(f"'{r.title}'" for r in records)


def _draft_of(strategy: SearchStrategy) -> _Draft:
    return _Draft(
        date_from=strategy.date_from,
        date_to=strategy.date_to,
        queries={q.source: q for q in strategy.queries},
        clauses={q.source: split_clauses(q.query) for q in strategy.queries},
    )


def _finish(draft: _Draft, base: SearchStrategy) -> SearchStrategy:
    for source in draft.rebuilt:
        draft.clauses[source] = [c for c in draft.clauses[source] if c.text]
    return draft.strategy(base)


def _add_humans(
    draft: _Draft, reading: FeedbackReading, relevant: Sequence[Record]
) -> tuple[list[StrategyChange], list[StrategyChange]]:
    if not reading.humans:
        return [], []
    phrase = reading.phrase("humans")
    pubmed = draft.queries.get("pubmed")
    others = [s for s in draft.queries if s not in ("pubmed", "clinicaltrials", "library")]
    unable = f" ({', '.join(others)} cannot limit by species and are unchanged)" if others else ""
    if pubmed is None:
        return [], [
            StrategyChange(
                kind="humans",
                description="limit to studies in humans",
                phrase=phrase,
                reason="none of the chosen sources can limit to studies in humans; add PubMed",
            )
        ]
    if HUMANS_PRESENT.search(pubmed.query) or pubmed.filters.get("mesh", "").lower() == "humans":
        return [], []
    left_out = [r for r in relevant if animal_only(r)]
    change = StrategyChange(
        kind="humans",
        description="limited PubMed to studies in humans (NOT animal-only studies, which "
        f"keeps records not yet indexed){unable}",
        phrase=phrase,
        sources=["pubmed"],
    )
    if left_out:
        reason = f"it would leave out {_titles(left_out)}, which you marked relevant"
        return [], [change.model_copy(update={"reason": reason})]
    draft.clauses["pubmed"].append(Clause(HUMANS_CLAUSE, negated=True))
    draft.rebuilt.add("pubmed")
    return [change], []


def _add_dates(draft: _Draft, reading: FeedbackReading) -> list[StrategyChange]:
    changes = []
    phrase = reading.phrase("dates")
    if reading.date_from and draft.date_from != reading.date_from:
        draft.date_from = reading.date_from
        changes.append(
            StrategyChange(
                kind="dates",
                description=f"limited to {reading.date_from.year} onwards",
                phrase=phrase,
            )
        )
    if reading.date_to and draft.date_to != reading.date_to:
        draft.date_to = reading.date_to
        changes.append(
            StrategyChange(
                kind="dates",
                description=f"limited to {reading.date_to.year} and before",
                phrase=phrase,
            )
        )
    return changes


def review_strategy(
    previous: SearchStrategy,
    proposed: SearchStrategy,
    reading: FeedbackReading,
    *,
    feedback_text: str = "",
    relevant: Sequence[ScoredPaper] = (),
) -> StrategyReview:
    """``proposed`` with only the changes the feedback asks for, none that would leave out
    a paper marked relevant, and the limits it asks for that the builder left out."""
    records = [p.record for p in relevant]
    found = strategy_changes(previous, proposed)
    wordless = not reading.said
    draft = _draft_of(proposed)
    kept: list[StrategyChange] = []
    not_made: list[StrategyChange] = []
    # Undo from the last clause back, so positions stay valid.
    for item in reversed(found):
        phrase = None if wordless else _phrase(item, reading, feedback_text)
        change = item.change.model_copy(update={"phrase": phrase})
        if phrase is None and not wordless:
            item.undo(draft)
            not_made.append(
                change.model_copy(update={"reason": "your feedback does not ask for it"})
            )
            continue
        left_out = [r for r in records if item.excludes is not None and item.excludes(r)]
        if item.narrowing and left_out:
            item.undo(draft)
            reason = f"it would leave out {_titles(left_out)}, which you marked relevant"
            not_made.append(change.model_copy(update={"reason": reason}))
            continue
        kept.append(change)
    kept.reverse()
    not_made.reverse()
    if not wordless:
        kept += _add_dates(draft, reading)
    humans_made, humans_not = _add_humans(draft, reading, records)
    kept += humans_made
    not_made += humans_not
    strategy = _finish(draft, proposed)
    rationale = _rationale(
        proposed, strategy, kept, not_made, rebuilt=bool(not_made), wordless=wordless
    )
    return StrategyReview(
        strategy=strategy.model_copy(update={"rationale": rationale}),
        changes=kept,
        not_made=not_made,
        warnings=[],
    )


def _rationale(
    proposed: SearchStrategy,
    strategy: SearchStrategy,
    kept: Sequence[StrategyChange],
    not_made: Sequence[StrategyChange],
    *,
    rebuilt: bool,
    wordless: bool,
) -> str:
    if rebuilt or not proposed.rationale:
        concepts = " AND ".join(f"'{b.concept}'" for b in strategy.concepts)
        parts = [f"Searches {concepts + ' ' if concepts else ''}in {', '.join(strategy.sources)}."]
    else:
        parts = [proposed.rationale]
    if kept:
        listed = "; ".join(
            f'{c.description} (you said: "{c.phrase}")' if c.phrase else c.description for c in kept
        )
        said = (
            "Changes (you gave no words, so the builder chose them)"
            if wordless
            else "Changes from your feedback"
        )
        parts.append(f"{said}: {listed}.")
    if not_made:
        listed = "; ".join(f"{c.description} ({c.reason})" for c in not_made)
        parts.append(f"Not made: {listed}.")
    if rebuilt and (strategy.date_from or strategy.date_to):
        start = strategy.date_from.isoformat() if strategy.date_from else "any date"
        end = strategy.date_to.isoformat() if strategy.date_to else "now"
        parts.append(f"Published {start} to {end}.")
    return " ".join(parts)


def review_edit(
    proposed: SearchStrategy, edited: SearchStrategy, relevant: Sequence[ScoredPaper]
) -> list[str]:
    """Plain warnings about a strategy the user wrote: the papers marked relevant that its
    changes would leave out. The user's strategy is kept as written."""
    records = [p.record for p in relevant]
    left_out: dict[str, Record] = {}
    for item in strategy_changes(proposed, edited):
        if item.narrowing and item.excludes is not None:
            for record in records:
                if item.excludes(record):
                    left_out.setdefault(record.title, record)
    if not left_out:
        return []
    count = len(left_out)
    papers = "1 paper" if count == 1 else f"{count} papers"
    return [
        f"Your query would leave out {papers} you marked relevant: "
        f"{_titles(list(left_out.values()))}."
    ]
