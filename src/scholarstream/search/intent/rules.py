"""``RuleIntentParser``: the offline intent parser. No model: patterns and a small
vocabulary read the question's dates, languages, study types and exclusions, split
the rest into concepts at connecting words ("in", "for", "with", "versus", verbs such
as "reduce"), add known synonyms, and find PICO elements in clinical questions."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scholarstream.errors import InvalidInputError
from scholarstream.search.core.models import Concept, ParsedIntent, PicoElements
from scholarstream.search.intent.dates import find_dates
from scholarstream.search.intent.restrictions import (
    find_exclusions,
    find_languages,
    find_study_types,
)
from scholarstream.search.intent.synonyms import (
    Abbreviations,
    find_abbreviations,
    group_of,
    is_abbreviation,
    known_phrases,
)

MAX_CONCEPTS = 6
EMPTY_HINT = (
    "Describe what you are looking for, e.g. 'Does metformin reduce mortality in adults "
    "with type 2 diabetes?' or 'machine learning for protein structure prediction'."
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that join two ideas: a concept ends where one of them stands.
_CONNECTORS = _words(
    """and or in for with versus vs v of on among amongst to by from at after during using
    via between about regarding within than as into through against under over across who
    that which whose when where while whether if compared comparing comparison relative
    rather only like such including"""
)
# Verbs of clinical and methods questions: they separate the ideas they relate.
_VERBS = _words(
    """reduce reduces reducing reduced improve improves improving improved increase
    increases increasing increased decrease decreases decreasing decreased lower lowers
    lowering lowered raise raises affect affects affecting affected prevent prevents
    preventing predict predicts predicting cause causes causing treat treats treating
    associated linked related correlated correlate correlates influence influences help
    helps lead leads work works detect detects detecting diagnose diagnosing identify
    identifying classify classifying estimate estimating compare delay delays slow slows
    protect protects worsen worsens modify modifies change changes alter alters"""
)
# Words that carry no concept of their own.
_STOP = _words(
    """a an the this these those any some all each its their our my your his her it they
    we you i me us them is are was were be been being do does did can could should would
    will may might must has have had what which how why where who whom find show give
    list search searching looking look need want get tell please papers paper articles
    article studies study research literature publications publication evidence data
    reports report works recent latest new current existing published there known best
    effect effects effectiveness efficacy impact impacts role roles influence association
    associations relationship relationships relation link links benefit benefits use
    usage used outcome outcomes methods method approaches approach techniques technique
    applications application overview summary state art what's whats really actually also
    just very more most less better worse superior inferior good patients patient people
    persons individuals subjects participants humans adults adult population populations"""
)
_PUNCTUATION = frozenset(",;:?!().")

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\u2019\-+/]*|[,;:?!().]")
_GROUP_WORDS = (
    r"patients?|adults?|children|child|adolescents?|teenagers?|infants?|neonates?|newborns?|"
    r"women|men|girls|boys|people|persons|individuals|subjects|participants|elderly|"
    r"veterans|students|workers|smokers|survivors|athletes|residents|mothers|nurses"
)
_GROUP_ADJECTIVES = (
    r"older|elderly|young|pregnant|postmenopausal|obese|overweight|critically\s+ill|"
    r"hospitali[sz]ed|male|female|healthy|adult|school-?aged|preterm|diabetic|ICU|"
    r"outpatient|inpatient"
)
_POPULATION = re.compile(
    rf"\b(?:in|among|amongst|for)\s+(?P<pop>(?:(?:{_GROUP_ADJECTIVES})\s+)*(?:{_GROUP_WORDS})"
    r"(?:\s+(?:with|who\s+have|having|undergoing|receiving|on|at\s+risk\s+(?:of|for)|after|"
    r"diagnosed\s+with|living\s+with)\s+[^,.;?!]+?)?)"
    r"(?=\s+(?:versus|vs\.?|compared|who|on|in|for|reduce|improve|lower|increase|and|or)\b"
    r"|\s*[,.;?!]|\s*$)",
    re.I,
)
_BARE_POPULATION = re.compile(
    rf"\b(?P<pop>(?:{_GROUP_WORDS})\s+(?:with|undergoing|receiving|diagnosed\s+with)"
    r"\s+[^,.;?!]+?)(?=\s+(?:versus|vs\.?|compared|on|in|for|and|or)\b|\s*[,.;?!]|\s*$)",
    re.I,
)
_COMPARISON = re.compile(
    r"(?P<left>[^,.;?!]+?)\s+(?:versus|vs\.?|v\.|compared\s+(?:with|to)|in\s+comparison\s+"
    r"(?:with|to)|relative\s+to|rather\s+than)\s+(?P<right>[^,.;?!]+)",
    re.I,
)
_OUTCOME_CUE = re.compile(
    r"\b(?:effects?|impact|influence)\s+on\s+(?P<a>[^,.;?!]+)|\b(?:reduce|reduces|lower|lowers|"
    r"improve|improves|increase|increases|decrease|decreases|prevent|prevents|affect|affects|"
    r"delay|delays|worsen|worsens)\s+(?P<b>[^,.;?!]+)",
    re.I,
)
OUTCOMES = (
    "all-cause mortality",
    "mortality",
    "survival",
    "death",
    "HbA1c",
    "glycated hemoglobin",
    "glycemic control",
    "glycaemic control",
    "blood pressure",
    "weight loss",
    "body weight",
    "quality of life",
    "hospitalization",
    "hospitalisation",
    "readmission",
    "length of stay",
    "pain",
    "adverse events",
    "side effects",
    "relapse",
    "remission",
    "recurrence",
    "incidence",
    "morbidity",
    "complications",
    "cardiovascular events",
    "cognitive decline",
    "cognitive function",
    "symptoms",
    "response rate",
    "disease progression",
    "fractures",
    "falls",
    "adherence",
)
_CLINICAL_STUDY_TYPES = frozenset(
    {"randomized controlled trial", "clinical trial", "cohort study", "case-control study"}
)
_QUESTION_OPENING = re.compile(
    r"^(?:(?:what|which|how|why|does|do|did|is|are|can|could|should|will|would|has|have|"
    r"find|show|search|get|give|list|tell)\b\s*(?:me\s+)?)+"
    r"(?:(?:is|are|was|were|the|there|any|evidence|known|about|effects?|impact|role|of|"
    r"that|for|on|papers|studies|articles|research|literature|regarding)\b\s*)*",
    re.I,
)
_STRAY_PUNCTUATION = re.compile(r"\s*([,;])(?:\s*[,;])*\s*(?=[,;?.!]|$)|\s+(?=[,;?.!])")
_PROTECTED = tuple(
    {p.lower(): None for p in (*known_phrases(), *(o for o in OUTCOMES if " " in o))}
)


@dataclass(frozen=True)
class _Token:
    text: str
    protected: bool = False

    @property
    def lower(self) -> str:
        return self.text.lower()


def _tokens(text: str, phrases: Sequence[str]) -> list[_Token]:
    """Words and punctuation, with known multi-word phrases kept as one token."""
    raw = _TOKEN.findall(text.replace("\u2019", "'"))
    lowered = [t.lower() for t in raw]
    split_phrases = [_TOKEN.findall(p) for p in phrases]
    tokens: list[_Token] = []
    i = 0
    while i < len(raw):
        for words in split_phrases:
            n = len(words)
            if n > 1 and lowered[i : i + n] == words:
                tokens.append(_Token(" ".join(raw[i : i + n]), protected=True))
                i += n
                break
        else:
            tokens.append(_Token(raw[i]))
            i += 1
    return tokens


def _is_separator(token: _Token) -> bool:
    return not token.protected and (
        token.text in _PUNCTUATION or token.lower in _CONNECTORS or token.lower in _VERBS
    )


def _chunks(tokens: Sequence[_Token]) -> list[list[str]]:
    """Concept phrases; phrases joined by "or" are alternatives of one concept."""
    groups: list[list[str]] = []
    words: list[str] = []
    joined_by_or = False

    def close() -> None:
        nonlocal joined_by_or
        phrase = " ".join(words)
        words.clear()
        if not phrase:
            return
        if joined_by_or and groups:
            groups[-1].append(phrase)
        else:
            groups.append([phrase])
        joined_by_or = False

    for index, token in enumerate(tokens):
        if _is_separator(token):
            had_words = bool(words)
            close()
            if token.lower == "or" and (had_words or (groups and index > 0)):
                joined_by_or = True
            continue
        if token.protected or token.lower not in _STOP:
            words.append(_word_case(token, first=index == 0))
    close()
    return groups


def _word_case(token: _Token, *, first: bool) -> str:
    """Lower case, except abbreviations and names the user capitalised mid-sentence."""
    text = token.text
    if token.protected:
        return text if any(c.isupper() for c in text[1:]) else text[0].lower() + text[1:]
    if any(c.isupper() for c in text[1:]) or any(c.isdigit() for c in text):
        return text
    if first or text[:1].islower():
        return text.lower()
    return text


def concept_phrases(text: str, phrases: Sequence[str] = ()) -> list[list[str]]:
    """The concept phrases of a piece of text (alternatives grouped)."""
    return _chunks(_tokens(text, [*(p.lower() for p in phrases), *_PROTECTED]))


def _concept(alternatives: Sequence[str], abbreviations: Abbreviations) -> Concept:
    term = alternatives[0]
    defined = abbreviations.long_for(term)
    if defined is not None:
        term = defined
    group = group_of(term)
    if group is not None and is_abbreviation(term):
        term = group.preferred
    synonyms = [*alternatives[1:]]
    short = abbreviations.short_for(term)
    if short is not None:
        synonyms.append(short)
    else:  # "glycated haemoglobin monitoring" -> also "HbA1c monitoring"
        for long_form, abbreviation in abbreviations.long_to_short.items():
            shortened = re.sub(rf"\b{re.escape(long_form)}\b", abbreviation, term, flags=re.I)
            if shortened != term:
                synonyms.append(shortened)
    if group is not None:
        synonyms.extend(m for m in group.members if m.lower() != term.lower())
    return Concept(term=term, synonyms=[s for s in synonyms if s.lower() != term.lower()])


def _merge(concepts: Iterable[Concept]) -> list[Concept]:
    merged: dict[str, Concept] = {}
    for concept in concepts:
        key = concept.term.lower()
        if key in merged:
            old = merged[key]
            merged[key] = Concept(term=old.term, synonyms=[*old.synonyms, *concept.synonyms])
        elif not any(key in (s.lower() for s in c.synonyms) for c in merged.values()):
            merged[key] = concept
    return list(merged.values())[:MAX_CONCEPTS]


def _last_phrase(text: str) -> str | None:
    groups = concept_phrases(text)
    return " or ".join(groups[-1]) if groups else None


def _first_phrase(text: str) -> str | None:
    groups = concept_phrases(text)
    return " or ".join(groups[0]) if groups else None


def find_pico(
    text: str, concepts: Sequence[Concept], study_types: Sequence[str]
) -> PicoElements | None:
    """PICO elements when the question reads as a clinical one, else ``None``."""
    population = None
    if (match := _POPULATION.search(text) or _BARE_POPULATION.search(text)) is not None:
        population = " ".join(match.group("pop").split())
    intervention = comparison = None
    if (match := _COMPARISON.search(text)) is not None:
        intervention = _last_phrase(match.group("left"))
        comparison = _first_phrase(match.group("right"))
    lowered = text.lower()
    outcome = next(
        (o for o in OUTCOMES if re.search(rf"\b{re.escape(o.lower())}\b", lowered)), None
    )
    if outcome is None and (match := _OUTCOME_CUE.search(text)) is not None:
        outcome = _first_phrase(match.group("a") or match.group("b"))
    clinical = bool(
        population
        or outcome
        or (comparison and intervention)
        or set(study_types) & _CLINICAL_STUDY_TYPES
    )
    if not clinical:
        return None
    if intervention is None:
        taken = " ".join(x for x in (population, outcome) if x).lower()
        intervention = next((c.term for c in concepts if c.term.lower() not in taken), None)
    pico = PicoElements(
        population=population, intervention=intervention, comparison=comparison, outcome=outcome
    )
    return pico if pico.present() else None


def topic_of(question: str) -> str:
    """The question as a short topic line: no question opening, no question mark."""
    question = _STRAY_PUNCTUATION.sub(r"\1", question)
    topic = _QUESTION_OPENING.sub("", question).strip(" ?.!,;")
    topic = topic or question.strip(" ?.!,;") or question
    if len(topic) > 150:
        topic = topic[:150].rsplit(" ", 1)[0] + "…"
    return topic[0].upper() + topic[1:]


class RuleIntentParser:
    """Deterministic intent parsing; ``today`` anchors "last 5 years" (tests fix it)."""

    def __init__(self, *, today: dt.date | None = None) -> None:
        self._today = today

    async def parse(self, user_input: str) -> ParsedIntent:
        return self.parse_now(user_input)

    def parse_now(self, user_input: str) -> ParsedIntent:
        question = " ".join(user_input.split())
        if not question:
            raise InvalidInputError("The question is empty.", hint=EMPTY_HINT)
        today = self._today or dt.date.today()
        text, abbreviations = find_abbreviations(question)
        text, dates = find_dates(text, today)
        text, languages = find_languages(text)
        topic = topic_of(text)
        text, study_types = find_study_types(text)
        text, excluded = find_exclusions(text)
        long_forms = list(abbreviations.long_to_short)
        concepts = _merge(
            _concept(alternatives, abbreviations)
            for alternatives in concept_phrases(text, long_forms)
        )
        if not concepts:
            raise InvalidInputError(
                f"There is nothing to search for in {question!r}.", hint=EMPTY_HINT
            )
        return ParsedIntent(
            question=user_input,
            topic=topic,
            concepts=concepts,
            pico=find_pico(text, concepts, study_types),
            date_from=dates.date_from,
            date_to=dates.date_to,
            study_types=study_types,
            languages=languages,
            exclude_terms=excluded,
        )
