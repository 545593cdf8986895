"""The rule-based reading of a search question. No model: patterns and a small
vocabulary read the question's dates, languages, study types and exclusions, split
the rest into concepts at connecting words ("in", "for", "with", "versus", verbs such
as "reduce"), add known synonyms, and find PICO elements in clinical questions."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scholarstream.understanding import _lexicon as lex
from scholarstream.understanding._dates import DateRange, find_dates
from scholarstream.understanding._mesh_kinds import drugs_as_meant, kind_of_match, mesh_spelled
from scholarstream.understanding._restrictions import (
    find_exclusions,
    find_languages,
    find_study_types,
)
from scholarstream.understanding._slot_kind import SlotKind
from scholarstream.understanding._stop_words import GENERIC_CONCEPT_WORDS, stop_words
from scholarstream.understanding._synonyms import (
    Abbreviations,
    find_abbreviations,
    group_of,
    is_abbreviation,
    known_phrases,
)

MAX_CONCEPTS = 6
# No concept's name is longer: "sodium glucose cotransporter 2 inhibitor therapy".
MAX_PHRASE_WORDS = 6


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that join two ideas: a concept ends where one of them stands.
_CONNECTORS = _words(
    """and or in for with versus vs v of on among amongst to by from at after during using
    via between about regarding within than as into through against under over across who
    that which whose whom when where while whether if compared comparing comparison relative
    rather only like such including following due not"""
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
    protect protects worsen worsens modify modifies change changes alter alters reverse
    reverses reversing reversed cure cures curing boost boosts enhance enhances restore
    restores trigger triggers induce induces promote promotes suppress suppresses halt halts
    stop stops benefit benefits assess assesses assessing assessed evaluate evaluates
    evaluating evaluated screen screens exclude excludes excluding excluded confirm confirms
    confirming rule ruling presenting considered consider considering accompany accompanies
    undergo undergoes measure measures measuring monitor monitors monitoring"""
)
# Words that carry no concept of their own (the search row of the one stop-word list).
_STOP = stop_words("search")
_PUNCTUATION = frozenset(",;:?!().")

# Letters and digits of any script: "âgées" is one word, never "g es".
_TOKEN = re.compile(r"[^\W_](?:[^\W_]|['\u2019\-+/]|\.(?=[^\W_]))*|[,;:?!().]")
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
    raw = _TOKEN.findall(lex.GENUS_ABBREVIATION.sub(r"\1.\2", text.replace("\u2019", "'")))
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
            size = _heading_with_a_split_word(lowered, i)
            if size:  # "climate change", "screen time": headings, not a verb between ideas
                tokens.append(_Token(" ".join(raw[i : i + size]), protected=True))
                i += size
                continue
            if lowered[i] == "use" and i and _is_content_word(lowered[i - 1]) and tokens:
                # "cannabis use", "land use": the use is the concept, not a filler
                tokens[-1] = _Token(f"{tokens[-1].text} {raw[i]}", protected=True)
                i += 1
                continue
            tokens.append(_Token(raw[i]))
            i += 1
    return tokens


# The longest heading looked for where a verb or a stop word would split it.
_HEADING_SPAN = 3


def _heading_with_a_split_word(lowered: Sequence[str], at: int) -> int:
    """How many words from ``at`` make a MeSH heading that a verb or a stop word inside
    it would otherwise split ("screen time", "climate change"); 0 when none do."""
    for size in range(_HEADING_SPAN, 1, -1):
        words = lowered[at : at + size]
        if len(words) < size or not all(_is_content_word(w) or _splits(w) for w in words):
            continue
        if _splits(words[0]) and _splits(words[-1]):
            continue
        if any(_splits(w) for w in words) and mesh_spelled(" ".join(words)) is not None:
            return size
    return 0


def _splits(word: str) -> bool:
    """A verb or a stop word that would split a heading; not a word for the people asked
    about ("patients"), which the search leaves to the population's own concept."""
    return word in _VERBS or (word in _STOP and word not in GENERIC_CONCEPT_WORDS)


def _is_content_word(word: str) -> bool:
    return (
        word[:1].isalnum() and word not in _CONNECTORS and word not in _VERBS and word not in _STOP
    )


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
        # A run longer than any concept's name (pasted text, a list with no commas) is
        # read as phrases of at most MAX_PHRASE_WORDS words, each once.
        pieces = [
            " ".join(words[at : at + MAX_PHRASE_WORDS])
            for at in range(0, len(words), MAX_PHRASE_WORDS)
        ]
        words.clear()
        if not pieces:
            return
        if joined_by_or and groups:
            groups[-1].append(pieces[0])
            pieces = pieces[1:]
        seen = {p.lower() for g in groups for p in g}
        for piece in pieces:
            if piece.lower() not in seen:
                seen.add(piece.lower())
                groups.append([piece])
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
    tokens = _tokens(text, [*(p.lower() for p in phrases), *_PROTECTED])
    groups = _distributed(_chunks(tokens), tokens)
    return [part for group in groups for part in _split_by_kind(group)]


def _split_by_kind(group: list[str]) -> list[list[str]]:
    """A phrase MeSH does not know whole that is headings side by side is as many
    concepts: "aspirin stroke" is Aspirin AND Stroke, and "SGLT2 inhibitors heart failure
    hospitalisation type 2 diabetes" four concepts, not one phrase. Otherwise, two
    headings of different kinds at either end split it in two."""
    if len(group) != 1:
        return [group]
    words = group[0].split()
    if len(words) < 2 or mesh_spelled(group[0]) is not None:
        return [group]
    spans = _headings_side_by_side(words)
    if len(spans) >= 2:
        return [[span] for span in spans]
    for at in range(1, len(words)):
        left, right = " ".join(words[:at]), " ".join(words[at:])
        kinds = _whole_kind(left), _whole_kind(right)
        if None not in kinds and kinds[0] != kinds[1]:
            return [[left], [right]]
    return [group]


# The longest run of words looked up as one heading.
_SPAN_WORDS = 5


def _headings_side_by_side(words: list[str]) -> list[str]:
    """The phrase as consecutive runs each naming a heading, the longest first from the
    left; none when a word is left over."""
    spans: list[str] = []
    at = 0
    while at < len(words):
        for end in range(min(len(words), at + _SPAN_WORDS), at, -1):
            span = " ".join(words[at:end])
            if _whole_kind(span) is not None:
                spans.append(span)
                at = end
                break
        else:
            return []
    return spans


def _whole_kind(text: str) -> SlotKind | None:
    match = mesh_spelled(text)
    return kind_of_match(match) if match is not None else None


def _clean_terms(values: Iterable[str]) -> tuple[str, ...]:
    """Strip, drop empties and case-insensitive repeats, keep order."""
    seen: set[str] = set()
    cleaned = []
    for value in values:
        value = " ".join(value.split())
        if value and value.lower() not in seen:
            seen.add(value.lower())
            cleaned.append(value)
    return tuple(cleaned)


@dataclass(frozen=True)
class ConceptReading:
    """One idea of the question, with the other words authors use for it (cleaned: no
    empty or repeated synonym)."""

    term: str
    synonyms: tuple[str, ...] = ()

    @classmethod
    def of(cls, term: str, synonyms: Iterable[str]) -> ConceptReading:
        return cls(term=term, synonyms=_clean_terms(synonyms))


@dataclass(frozen=True)
class PicoReading:
    """Population, Intervention, Comparison, Outcome of a clinical question."""

    population: str | None = None
    intervention: str | None = None
    comparison: str | None = None
    outcome: str | None = None

    def present(self) -> dict[str, str]:
        values = {
            "population": self.population,
            "intervention": self.intervention,
            "comparison": self.comparison,
            "outcome": self.outcome,
        }
        return {name: value for name, value in values.items() if value}


@dataclass(frozen=True)
class QuestionReading:
    """What the rules read in a question. ``concepts`` is empty when nothing is left to
    search for once dates, languages, study types and exclusions are taken out."""

    topic: str
    concepts: tuple[ConceptReading, ...]
    pico: PicoReading | None
    dates: DateRange
    study_types: tuple[str, ...]
    languages: tuple[str, ...]
    exclusions: tuple[str, ...]


def _concept(alternatives: Sequence[str], abbreviations: Abbreviations) -> ConceptReading:
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
        said = alternatives[0].lower()
        synonyms.extend(
            m
            for m in group.members
            if m.lower() != term.lower() and (m.lower() == said or not _ambiguous(m))
        )
    else:  # a member ("CAR-T cell therapy") is not spelled out again inside itself
        synonyms.extend(_spelled_out(term))
    return ConceptReading.of(term, [s for s in synonyms if s.lower() != term.lower()])


# Letters of an abbreviation too short to search for unless the question uses it: "HF"
# is heart failure, hydrofluoric acid and high frequency.
_AMBIGUOUS_LETTERS = 2


def _ambiguous(member: str) -> bool:
    return is_abbreviation(member) and len(re.sub(r"[\W_]", "", member)) <= _AMBIGUOUS_LETTERS


def _spelled_out(term: str) -> list[str]:
    """A phrase with a known abbreviation in it, spelled out: "HF readmissions" ->
    "heart failure readmissions"."""
    words = term.split()
    if len(words) < 2:
        return []
    spelled = []
    for word in words:
        group = group_of(word) if is_abbreviation(word) else None
        if group is not None and group.preferred.lower() != word.lower():
            spelled.append(re.sub(rf"(?<![\w-]){re.escape(word)}(?![\w-])", group.preferred, term))
    return spelled


_MODIFIER = re.compile(r"^[a-z][a-z\-]*(?:ic|al|ar|ary|ous|ine|ive|eal|ial)$")


def _distributed(groups: list[list[str]], tokens: Sequence[_Token]) -> list[list[str]]:
    """ "pancreatic and periampullary cancer": a lone modifier joined by "and" or "or" to
    a phrase that starts with a modifier shares that phrase's head ("pancreatic cancer"),
    and the two are alternatives of one concept."""
    joined = " ".join(t.lower for t in tokens)
    merged: list[list[str]] = []
    for group in groups:
        previous = merged[-1] if merged else None
        words = group[0].split()
        if (
            previous is not None
            and len(previous) == 1
            and len(previous[0].split()) == 1
            and _MODIFIER.match(previous[0].lower())
            and len(words) >= 2
            and _MODIFIER.match(words[0].lower())
            and re.search(
                rf"\b{re.escape(previous[0].lower())} (?:and|or) {re.escape(words[0].lower())}\b",
                joined,
            )
        ):
            merged[-1] = [" ".join([previous[0], *words[1:]]), *group]
            continue
        merged.append(group)
    return merged


def _generic(concept: ConceptReading) -> bool:
    """Made of words that name no topic alone ("diagnostic accuracy", "detection")."""
    words = re.findall(r"[a-z0-9]+", concept.term.lower())
    return bool(words) and all(w in GENERIC_CONCEPT_WORDS or w.isdigit() for w in words)


# Words that qualify how sure or which a concept is, not what it is ("other dementias",
# "suspected dementia"), and words that end a phrase without adding to it ("community
# setting", "blood CEA levels").
_LEADING_QUALIFIERS = frozenset(
    [
        "other",
        "others",
        "suspected",
        "potential",
        "apparently",
        "clinically",
        "presumed",
        "possible",
        "various",
        "different",
        "several",
    ]
)
_TRAILING_QUALIFIERS = frozenset(["setting", "settings", "level", "levels"])


def _trimmed(term: str) -> str:
    words = term.split()
    while len(words) > 1 and words[0].lower() in _LEADING_QUALIFIERS:
        words = words[1:]
    while len(words) > 1 and words[-1].lower() in _TRAILING_QUALIFIERS:
        words = words[:-1]
    return " ".join(words)


def _topical(concepts: list[ConceptReading]) -> list[ConceptReading]:
    """The concepts without the generic ones, unless the question is about nothing else;
    qualifiers trimmed ("other dementias" -> "dementias")."""
    trimmed = [
        ConceptReading.of(_trimmed(c.term), c.synonyms) if _trimmed(c.term) != c.term else c
        for c in concepts
    ]
    kept = [c for c in trimmed if not _generic(c)]
    return kept or trimmed


def _merge(concepts: Iterable[ConceptReading]) -> list[ConceptReading]:
    merged: dict[str, ConceptReading] = {}
    for concept in concepts:
        key = concept.term.lower()
        if key in merged:
            old = merged[key]
            merged[key] = ConceptReading.of(old.term, [*old.synonyms, *concept.synonyms])
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
    text: str, concepts: Sequence[ConceptReading], study_types: Sequence[str]
) -> PicoReading | None:
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
    pico = PicoReading(
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


# Both sexes named together limit nothing: "boys and girls" are children, "men and
# women" anyone.
_BOTH_SEXES = re.compile(
    r"\b(boys|girls|men|women|males|females)\s+(?:and|or|&)\s+"
    r"(?:boys|girls|men|women|males|females)\b",
    re.I,
)
_BOTH_SEXES_MEAN = {"boys": "children", "girls": "children"}


def read_question(question: str, today: dt.date) -> QuestionReading:
    """The rule-based reading of a search question; ``today`` anchors "last 5 years"."""
    question = " ".join(question.split())
    text, abbreviations = find_abbreviations(question)
    text = drugs_as_meant(text)
    text, dates = find_dates(text, today)
    text, languages = find_languages(text)
    topic = topic_of(text)
    text, study_types = find_study_types(text)
    text, excluded = find_exclusions(text)
    text = _BOTH_SEXES.sub(lambda m: _BOTH_SEXES_MEAN.get(m.group(1).lower(), " "), text)
    long_forms = list(abbreviations.long_to_short)
    concepts = _merge(
        _topical(
            [
                _concept(alternatives, abbreviations)
                for alternatives in concept_phrases(text, long_forms)
            ]
        )
    )
    return QuestionReading(
        topic=topic,
        concepts=tuple(concepts),
        pico=find_pico(text, concepts, study_types) if concepts else None,
        dates=dates,
        study_types=tuple(study_types),
        languages=tuple(languages),
        exclusions=tuple(excluded),
    )
