"""A typed reading of a question or a chat message: its slot values (intervention,
comparator, condition, population, aspect, place, organisation, study type, language,
source, trial phase, other topic words) and its publication-year range, plus the cues of a
conversation (an addition, a comparison, a closing, a change of subject, an ellipsis).

A ``TopicReading`` is what a conversation is about; a retrieval query is rendered from it
(``query``), bounded, never accumulated from earlier queries.
"""

from __future__ import annotations

import datetime as dt
import difflib
import functools
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, Field

from scholarstream.understanding import _lexicon as lex
from scholarstream.understanding._dates import QUERY_DATES, date_phrases, undated_spans
from scholarstream.understanding._mesh_kinds import (
    drugs_as_meant,
    is_mesh_word,
    is_occupation,
    kind_of_match,
    mesh_kind,
    mesh_match,
)
from scholarstream.understanding._phrase_kinds import (
    is_condition_word,
    is_intervention_word,
    is_name,
    is_procedure,
    named_parts,
)
from scholarstream.understanding._restrictions import (
    HUMANS_ONLY,
    LANGUAGE_PHRASES,
    STUDY_TYPES,
    codes_in,
)
from scholarstream.understanding._slot_kind import SlotKind
from scholarstream.understanding._slots import read_slots, trial_phase_of
from scholarstream.understanding._stop_words import BACK_REFERENCES, stop_words

# The order a query names the slots in; the kinds at the end are the first dropped.
QUERY_ORDER: tuple[SlotKind, ...] = (
    "intervention",
    "comparator",
    "condition",
    "topic",
    "population",
    "place",
    "organisation",
    "phase",
    "aspect",
    "study_type",
)
# Kinds that say what the conversation is about, rather than where or how it is scoped.
SUBJECT_KINDS: frozenset[SlotKind] = frozenset({"intervention", "condition", "topic"})
# Kinds that filter a search rather than adding words to it.
FILTER_KINDS: frozenset[SlotKind] = frozenset({"language", "source"})
MAX_VALUES_PER_KIND = 3
MAX_QUERY_WORDS = 16

_FILLER = stop_words("continuity") | BACK_REFERENCES | lex.QUESTION_VERBS
_SPLIT_WORDS = _FILLER | {
    "and",
    "or",
    "but",
    "nor",
    "without",
    "not",
    "versus",
    "vs",
    "over",
    "under",
    "across",
    "within",
    "between",
    "through",
    "via",
    "per",
    "into",
    "during",
    "after",
    "before",
    "among",
    "against",
    "including",
    "excluding",
    "beyond",
    "while",
    "whilst",
    "like",
    "especially",
    "notably",
}
_LEADS = frozenset(
    [
        "in",
        "for",
        "with",
        "among",
        "on",
        "of",
        "about",
        "to",
        "from",
        "by",
        "at",
        "against",
        "during",
        "after",
        "before",
        "among",
    ]
)
# Letters and digits of any script ("depresión", "âgées", "抑郁症"), never cut inside a word.
_LETTER = r"[^\W_]"
_TOKEN = re.compile(rf"{_LETTER}(?:{_LETTER}|['\u2019\-./+])*(?:{_LETTER}|\+)|{_LETTER}|[^\s\w]|_")
_WORD = re.compile(_LETTER)
_POSSESSIVE = re.compile(r"['\u2019]s$")
_SPECIES = re.compile(r"[A-Z]\.[a-z]{3,}")  # as lex.GENUS_ABBREVIATION writes it
_USE_DISORDER = re.compile(r"\s+disorders?\b", re.I)
# A name no list or MeSH knows reads by the word before it: "in Ontario", "by Vertex".
_NAME_BY_LEAD: dict[str, SlotKind] = {
    "in": "place",
    "across": "place",
    "throughout": "place",
    "by": "organisation",
    "from": "organisation",
}
_SOURCE_RE = re.compile(
    r"\b(?:on\s+|in\s+|from\s+|via\s+)?(" + "|".join(re.escape(s) for s in lex.SOURCES) + r")\b",
    re.I,
)
_ANIMAL_RE = re.compile(
    r"\b((?:(?:"
    + "|".join(lex.POPULATION_QUALIFIERS)
    + r")\s+)?(?:"
    + "|".join(re.escape(a) for a in lex.ANIMALS)
    + r"))\b",
    re.I,
)
# A level of schooling names its pupils: "high school", "primary schools".
_SCHOOL_LEVEL_RE = re.compile(
    r"\b(?:(?:high|middle|primary|elementary|secondary|junior\s+high|senior\s+high|"
    r"grammar|nursery)\s+schools?|preschools?|kindergartens?)\b"
    r"(?!\s+(?:students|pupils|children|kids|teachers|staff|nurses))",
    re.I,
)
_POPULATION_HEAD_RE = re.compile(r"\b(" + "|".join(lex.POPULATION_HEADS) + r")\b", re.I)
# Care settings: where the people of a question are ("in nursing homes", "in the ICU").
_SETTING_RE = re.compile(
    r"\b(" + "|".join(lex.CARE_SETTINGS) + r")\b"
    r"(?!\s+(?:patients|residents|staff|nurses|workers|physicians|admissions|stays?)\b)",
    re.I,
)


def is_setting(text: str) -> bool:
    """Whether a place is a care setting ("nursing homes"), not a country or a city."""
    return _SETTING_RE.fullmatch(text.strip()) is not None


def same_family(a: SlotValue, b: SlotValue) -> bool:
    """Whether two values of one kind can stand for each other: a drug for a drug and a
    procedure for a procedure, a name for a name (topic words for topic words), a care
    setting for a care setting and a country for a country; any two of other kinds."""
    if a.kind == "intervention":
        return is_procedure(a.text) == is_procedure(b.text)
    if a.kind == "topic":
        return is_name(a.text) == is_name(b.text)
    if a.kind == "place":
        return is_setting(a.text) == is_setting(b.text)
    if a.kind == "population":
        # "elderly" beside "patients on hemodialysis": an age group narrows people named
        # by what they live with, it does not take their place.
        return not (
            (_is_age_group(a.text) and _named_by_treatment(b.text))
            or (_is_age_group(b.text) and _named_by_treatment(a.text))
        )
    return True


def _is_age_group(text: str) -> bool:
    """ "elderly", "older adults", "children under 5", "adults over 75"."""
    words = re.findall(r"[a-z]+", text.lower())
    return bool(words) and all(w in lex.AGE_GROUP_WORDS for w in words)


def _named_by_treatment(text: str) -> bool:
    """ "patients on hemodialysis", "people living with HIV": people named by what they
    live with or undergo, whatever their age."""
    words = text.lower().split()
    return (
        len(words) > 1 and words[0] in lex.PEOPLE_WORDS and _PEOPLE_WITH_RE.match(text) is not None
    )


# People named by what they live with or undergo: "people living with HIV", "patients on
# dialysis", "people who inject drugs".
_PEOPLE_WITH_RE = re.compile(
    r"\b(?:people|persons|patients|individuals|adults|children|kids|women|men|those)\s+"
    r"(?:who\s+have\s+sex\s+with\s+(?:men|women)|"
    r"(?:living\s+with|on|receiving|undergoing|who\s+(?:inject|use|have|are|take|had))\s+"
    r"[A-Za-z0-9][\w\-]*(?:\s+(?!(?:in|and|or|for|at|from|with|since|before|after|during|to|"
    r"who|while|vs|versus|than|compared)\b)[A-Za-z0-9][\w\-]*){0,3})",
    re.I,
)
_REGION_RE = re.compile(
    r"\b((?:North|South|East|West|Central|Southeast|Southern|Northern|Eastern|Western|"
    r"Sub-Saharan|South-East|South East)\s+(?:Africa|Asia|Europe|America|Asia-Pacific))\b",
    re.I,
)
# Words a population's head noun takes along: "shift workers", "APOE4 homozygotes".
POPULATION_MODIFIERS = 2


class SlotValue(BaseModel):
    """One value of a slot, as the user wrote it, with its MeSH heading when one exists."""

    kind: SlotKind
    text: str = Field(min_length=1)
    heading: str | None = None

    def same_as(self, other: SlotValue) -> bool:
        return _key(self.text) == _key(other.text)


class TopicReading(BaseModel):
    """What a conversation (or one question) is about: its slot values and year range."""

    values: list[SlotValue] = Field(default_factory=list)
    year_from: int | None = None
    year_to: int | None = None
    # What the conversation has let go of, latest last: a query that brings one of them
    # back (a model recalling the drug of three turns ago) is corrected.
    dropped: list[SlotValue] = Field(default_factory=list)

    def of(self, kind: SlotKind) -> list[SlotValue]:
        return [v for v in self.values if v.kind == kind]

    def subject(self) -> list[SlotValue]:
        return [v for v in self.values if v.kind in SUBJECT_KINDS]

    def is_empty(self) -> bool:
        return not self.values and self.year_from is None and self.year_to is None

    def has(self, value: SlotValue) -> bool:
        return any(v.same_as(value) for v in self.values)

    def query(self, max_words: int = MAX_QUERY_WORDS) -> str:
        """The retrieval query: the values in the order they were named, at most
        ``max_words`` words; when it is too long, values go by kind, the last of
        ``QUERY_ORDER`` first (the study types, then the aspects ...)."""
        kept = [v for v in self.values if v.kind in QUERY_ORDER]
        for kind in reversed(QUERY_ORDER):
            while _word_count(kept) > max_words and len(kept) > 1:
                last = next((v for v in reversed(kept) if v.kind == kind), None)
                if last is None:
                    break
                kept.remove(last)
        return " ".join(v.text for v in kept)

    def years(self) -> str:
        """ "2015-", "-2014", "2010-2015" or ""."""
        if self.year_from is None and self.year_to is None:
            return ""
        start = "" if self.year_from is None else str(self.year_from)
        end = "" if self.year_to is None else str(self.year_to)
        return f"{start}-{end}" if start != end else start

    def summary(self) -> str:
        """The reading in words, for the model's instructions and the user's report."""
        parts = [f"{v.kind.replace('_', ' ')}: {v.text}" for v in self.values]
        if self.years():
            parts.append(f"published: {self.years()}")
        return "; ".join(parts)


@dataclass(frozen=True)
class MessageReading:
    """One message read on its own: its values (each with the word that led into it),
    its years, and its conversation cues."""

    text: str
    values: tuple[SlotValue, ...] = ()
    leads: tuple[str, ...] = ()
    # What the message takes out of the topic: "vit D" in "omega-3 instead of vit D".
    dropped: tuple[str, ...] = ()
    # "forget phones, what about ...": what is dropped is left behind, not replaced.
    forgets: bool = False
    # "X instead": X takes the place of what it stands for.
    instead: bool = False
    # "with both": the subject it took the place of comes back beside the one in play.
    both: bool = False
    year_from: int | None = None
    year_to: int | None = None
    dated: bool = False
    # The message lifts the date limit ("any year is fine") and names no other.
    undated: bool = False
    adds: bool = False
    compares: bool = False
    switches: bool = False
    closing: bool = False
    elliptical: bool = False
    refers_back: bool = False
    # It points at a result ("the second one", "result 3").
    points_at_result: bool = False
    narrows: bool = False
    asks: bool = False
    word_count: int = 0

    def of(self, kind: SlotKind) -> list[SlotValue]:
        return [v for v in self.values if v.kind == kind]

    def lead_of(self, value: SlotValue) -> str:
        for candidate, lead in zip(self.values, self.leads, strict=True):
            if candidate is value:
                return lead
        return ""

    def subject(self) -> list[SlotValue]:
        return [v for v in self.values if v.kind in SUBJECT_KINDS]

    def as_topic(self) -> TopicReading:
        return TopicReading(
            values=bounded_values(list(self.values)), year_from=self.year_from, year_to=self.year_to
        )


# A source's search syntax is no part of a topic: "psilocybin[tiab] AND depression[mh]".
_SEARCH_SYNTAX = re.compile(
    r"(?i:\[(?:tiab|ti|ab|mh|mesh|majr|pt|la|dp|au|tw|all(?: fields)?|sh)(?::noexp)?\])"
    r"|\b(?:AND|OR|NOT)\b"  # operators in capitals only: "not in children" is a request
)


def _as_meant(text: str) -> str:
    """``text`` with slips in its cue words, its people, its drugs and its years put right
    ("waht about", "childern", "metfromin", "2O20")."""
    text = _MARKUP.sub(" ", text)
    text = _WITH.sub(lambda m: "without " if m.group(1) else "with ", text)
    text = lex.CUE_TYPO.sub(lambda m: lex.CUE_TYPOS[m.group(1).lower()], text)
    text = _LOWER_WORD.sub(lambda m: _people_as_meant(m.group(0)), text)
    text = drugs_as_meant(text)
    text = lex.SECTION_NUMBER.sub(r"\1\2", text)
    text = lex.GENUS_ABBREVIATION.sub(r"\1.\2", text)
    return lex.YEAR_WITH_O.sub(
        lambda m: (m.group(1) + m.group(2)).replace("O", "0").replace("o", "0"), text
    )


_LOWER_WORD = re.compile(r"\b[a-z]{6,}\b")
# Markup pasted or typed into a message names no topic: "<b>", "</script>".
_MARKUP = re.compile(r"</?[a-z][a-z0-9]*(?:\s[^<>]*)?/?>", re.I)
# "w/", "w/o": with, without.
_WITH = re.compile(r"\bw/(o\b)?\s*", re.I)
# The words for people and animals a slip of the keys is read as ("childern", "adolecents").
_PEOPLE_WORDS = sorted(
    {*lex.AGE_GROUP_WORDS, *lex.POPULATION_HEADS, *lex.ANIMALS, "patients", "participants"}
)
# How close a slip must be to the word it is read as (difflib's ratio).
_SLIP_CUTOFF = 0.85


@functools.cache
def _people_as_meant(word: str) -> str:
    """``word``, or the word for people it misspells when no list or MeSH knows it."""
    if word in _PEOPLE_WORDS or len(word) < _SLIP_MIN_LETTERS or is_mesh_word(word):
        return word
    close = difflib.get_close_matches(word, _PEOPLE_WORDS, n=1, cutoff=_SLIP_CUTOFF)
    return close[0] if close else word


_SLIP_MIN_LETTERS = 6


def read_message(text: str, today: dt.date | None = None) -> MessageReading:
    """The slots and cues of ``text``; each value with its MeSH heading when one exists,
    and a phrase the word lists cannot place given the kind MeSH's tree gives it."""
    today = today or dt.date.today()
    plain = " ".join(_SEARCH_SYNTAX.sub(" ", _as_meant(text)).split())
    tokens = [t.lower().strip("'\u2019") for t in _TOKEN.findall(plain) if _WORD.search(t)]
    if _is_closing(plain, tokens):
        return MessageReading(text=plain, closing=True, word_count=len(tokens))
    found: list[tuple[int, SlotValue, str]] = []
    rest, year_from, year_to, dated = _cut_dates(plain, today)
    dropped: list[str] = []
    for dropping in (lex.DROPPING, lex.SWAPPING):
        while (drop := dropping.search(rest)) is not None:
            said = drop.group("dropped").strip(" ,.;:-")
            if said:  # "not before 2017": the dates were cut, nothing is left to drop
                dropped.append(said)
            rest = _blank(rest, drop.start(), drop.end())
    pointed = False
    while (pointer := lex.RESULT_REFERENCE.search(rest)) is not None:
        pointed = True
        rest = _blank(rest, pointer.start(), pointer.end())
    if (alternative := lex.AS_ALTERNATIVE.search(rest)) is not None:  # a cue, not a topic
        rest = _blank(rest, alternative.start(), alternative.end())
    while (filler := lex.FILLER.search(rest)) is not None and filler.group(0).strip():
        rest = _blank(rest, filler.start(), filler.end())
    # "sorry, I meant high school", "adolescents I meant": a cue, not a topic.
    while (corrected := lex.CORRECTION.search(rest)) is not None and corrected.group(0).strip():
        rest = _blank(rest, corrected.start(), corrected.end())
    cue = lex.SWITCH.search(rest)
    if cue is not None:  # "switching topics:" names no topic
        rest = _blank(rest, cue.start(), cue.end())
    opening = lex.ELLIPTICAL.search(rest)
    if opening is not None:  # "what about X?": "about" does not lead into X
        rest = _blank(rest, opening.start(1), opening.end(1))
    rest = _cut_scope(rest, found)
    for chunk in _chunks(rest):
        for offset, part, kind in named_parts(chunk.text):
            if chunk.possessive:
                kind = "organisation"
            elif kind == "topic" and _SPECIES.fullmatch(part):
                kind = "population"  # "S.aureus": an organism, never a place "in" it
            elif kind == "topic" and is_name(part) and mesh_match(part) is None:
                kind = _NAME_BY_LEAD.get(chunk.lead, kind)
            text_value = lex.ASPECT_FORMS.get(part.lower(), part)
            found.append((chunk.start + offset, SlotValue(kind=kind, text=text_value), chunk.lead))
    found.sort(key=lambda item: item[0])
    values = _compared([_with_mesh(v) for _, v, _ in found], [at for at, _, _ in found], plain)
    values = _treatments_for(values, [lead for _, _, lead in found])
    if alternative is not None:  # "cleaner fish as an alternative": a treatment, not who
        values = [
            v.model_copy(update={"kind": "intervention"}) if v.kind == "population" else v
            for v in values
        ]
    return MessageReading(
        text=plain,
        values=tuple(values),
        leads=tuple(lead for _, _, lead in found),
        dropped=tuple(dropped),
        forgets=lex.FORGETTING.search(plain) is not None,
        instead=lex.INSTEAD.search(plain) is not None,
        both=lex.BOTH.search(plain) is not None,
        year_from=year_from,
        year_to=year_to,
        dated=dated,
        undated=dated and year_from is None and year_to is None,
        word_count=len(tokens),
        adds=bool(lex.ADDITION.search(plain)),
        compares=bool(lex.COMPARISON.search(plain)),
        switches=bool(lex.SWITCH.search(plain)),
        elliptical=bool(lex.ELLIPTICAL.search(plain))
        or _is_fragment(plain, tokens)
        or (
            lex.PREPOSITION_OPENING.search(plain) is not None
            and len(tokens) <= lex.PREPOSITION_FRAGMENT_WORDS
        ),
        narrows=bool(lex.NARROWING.search(plain)),
        refers_back=pointed or _refers_back(tokens),
        points_at_result=pointed,
        asks=bool(lex.QUESTION.search(plain)),
    )


def without_dates(text: str) -> str:
    """``text`` without its date phrases ("... dogs since 2015" -> "... dogs")."""
    rest, *_ = _cut_dates(text, dt.date.today())
    return " ".join(rest.replace(" , ", " ").split()).strip(" ,")


# "is there", "there are": "there" says something exists, it points back at nothing;
# "interventions that work": "that" after a noun starts a clause.
_BEING = frozenset({"is", "are", "was", "were", "be", "been", "any"})


def _refers_back(tokens: list[str]) -> bool:
    for at, said in enumerate(tokens):
        before = tokens[at - 1] if at else ""
        after = tokens[at + 1] if at + 1 < len(tokens) else ""
        if said == "there" and (before in _BEING or after in _BEING):
            continue
        if said == "that" and before and before not in _FILLER and before not in _LEADS:
            continue
        if said in BACK_REFERENCES or said == "ones":
            return True
    return False


def _is_fragment(plain: str, tokens: list[str]) -> bool:
    """A few words with no question or request verb: "GLP-1 agonists?", "Beijing?"."""
    return 0 < len(tokens) <= lex.FRAGMENT_WORDS and not lex.QUESTION.search(plain)


def _is_closing(plain: str, tokens: list[str]) -> bool:
    """Thanks or a goodbye, naming at most a word or two of what it closes, and no question."""
    if not tokens and lex.THANKS_EMOJI.search(plain):
        return True  # "🙏"
    if not lex.CLOSING_MARKERS.search(plain) or "?" in plain or lex.ELLIPTICAL.search(plain):
        return False
    other = [t for t in tokens if t not in lex.CLOSING_WORDS and t not in _FILLER]
    return len(other) <= lex.CLOSING_EXTRA_WORDS


def _cut_dates(text: str, today: dt.date) -> tuple[str, int | None, int | None, bool]:
    """The text without its date phrases, the years they give, and whether it names its
    dates at all: a phrase that lifts the limit ("any year is fine") names no years."""
    lifted = undated_spans(text)
    for start, end in reversed(lifted):
        text = _blank(text, start, end)
    phrases = date_phrases(text, QUERY_DATES)
    if not phrases:
        return text, None, None, bool(lifted)
    year_from: int | None = None
    year_to: int | None = None
    for phrase in phrases:
        span = phrase.range(today)
        if span.date_from is not None:
            year_from = span.date_from.year
            # A relative range ends today: no upper bound is needed.
        if span.date_to is not None and span.date_to < today:
            year_to = span.date_to.year
    if year_from is not None and year_to is not None and year_from > year_to:
        year_from, year_to = year_to, year_from
    for phrase in reversed(phrases):
        text = _blank(text, phrase.start, phrase.end)
    return text, year_from, year_to, True


def _blank(text: str, start: int, end: int) -> str:
    """``text`` with [start, end) turned into a comma, so positions stay comparable."""
    return text[:start] + " ," + " " * max(end - start - 2, 0) + text[end:]


_ORGANISATION_NAMES = {" ".join(name.lower().split()): name for name in lex.ORGANISATIONS}
_ORGANISATION_RE = re.compile(
    r"\b(?:"
    + "|".join(
        re.escape(name).replace(r"\ ", r"\s+")
        for name in sorted(lex.ORGANISATIONS, key=len, reverse=True)
    )
    + r")(?=(?:'s|\u2019s)?\b)",
    re.I,
)


def _cut_scope(text: str, found: list[tuple[int, SlotValue, str]]) -> str:
    """Cuts the scope phrases (study types, languages, sources, places, populations,
    organisations, trial phases) out of ``text``, adding them to ``found``."""

    def take(
        kind: SlotKind, match: re.Match[str], group: int = 0, value: str | None = None
    ) -> None:
        nonlocal text
        phrase = value or match.group(group) or match.group(0)
        start = match.start()
        if kind == "population":  # "immunocompromised adults", "APOE4 carriers"
            named_by_it = is_occupation(phrase) or phrase.lower() in _PAST_CONDITION_PEOPLE
            start = _qualified_start(text, start, keeps_condition=named_by_it)
            phrase = f"{text[start : match.start()]}{phrase}".strip()
        found.append((start, SlotValue(kind=kind, text=phrase), _lead_before(text, start)))
        text = _blank(text, start, match.end())

    for pattern in STUDY_TYPES.values():
        while (match := pattern.search(text)) is not None:
            take("study_type", match)
    for pattern in LANGUAGE_PHRASES:  # the search's own reader of language phrases
        while (match := pattern.search(text)) is not None:
            first, *others = codes_in(match.group(0))
            at = match.start()
            take("language", match, value=first)
            found.extend((at, SlotValue(kind="language", text=c), "") for c in others)
    while (match := _SOURCE_RE.search(text)) is not None:
        take("source", match, value=lex.SOURCES[match.group(1).lower()])
    while (match := lex.COMPANY_SUFFIXES.search(text)) is not None:
        take("organisation", match)
    while (match := _ORGANISATION_RE.search(text)) is not None:
        said = " ".join(match.group(0).lower().split())
        take("organisation", match, value=_ORGANISATION_NAMES[said])
    while (match := _REGION_RE.search(text)) is not None:
        take("place", match)
    while (match := _SETTING_RE.search(text)) is not None:
        take("place", match)
    while (match := HUMANS_ONLY.search(text)) is not None:  # "no animal studies"
        found.append((match.start(), SlotValue(kind="population", text="humans"), ""))
        text = _blank(text, match.start(), match.end())
    while (match := _people(_PEOPLE_WITH_RE, text)) is not None:
        take("population", match)
    while (match := _SCHOOL_LEVEL_RE.search(text)) is not None:  # "in high school"
        take("population", match)
    while (match := _people(_ANIMAL_RE, text)) is not None:
        take("population", match, value=match.group(1).lower())
    slots, phrases = read_slots(text)
    kinds: list[tuple[SlotKind, Iterable[str]]] = [
        ("place", slots.jurisdictions),
        ("population", slots.populations),
        ("organisation", slots.organisations),
    ]
    for phrase in phrases:
        match = re.search(re.escape(phrase), text)
        if match is None:
            continue
        kind = _scope_kind(phrase, kinds, slots.phases)
        if kind is None:
            continue
        value = phrase.lower() if kind == "population" else phrase
        if kind == "organisation":
            value = next((o for o in slots.organisations if o in phrase), phrase)
        if kind == "phase":
            value = trial_phase_of(phrase) or phrase
        take(kind, match, value=value)
    while (match := _population_phrase(text)) is not None:
        take("population", match)
    return text


def _population_phrase(text: str) -> re.Match[str] | None:
    """A head noun of a population with the content words before it ("shift workers");
    "patients" alone names nobody in particular."""
    for head in _POPULATION_HEAD_RE.finditer(text):
        if _inside_a_name(text, head.start(), head.end()):
            continue
        start = _qualified_start(text, head.start())
        if start < head.start() or head.group(1).lower() != "patients":
            return head
    return None


def _people(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first match of ``pattern`` that names people or animals, not a word inside
    the name of something else ("swine" in "African swine fever")."""
    return next(
        (m for m in pattern.finditer(text) if not _inside_a_name(text, m.start(), m.end())),
        None,
    )


# Words around a population's word that may make a name with it: "African swine fever",
# "tuberculosis, bovine" (two before, two after).
_NAME_REACH = 2
_NAME_WORD = re.compile(r"[A-Za-z0-9][\w\-']*")


def _inside_a_name(text: str, start: int, end: int) -> bool:
    """Whether [start, end) lies inside a longer phrase MeSH names as a disease, a drug
    or a procedure: the animal there says what the disease is, not who has it."""
    before = _NAME_WORD.findall(text[:start].rsplit(",", 1)[-1])[-_NAME_REACH:]
    after = _NAME_WORD.findall(text[end:].split(",", 1)[0])[:_NAME_REACH]
    said = text[start:end]
    for lead in range(len(before) + 1):
        for tail in range(len(after) + 1):
            if not lead and not tail:
                continue
            words = [*before[len(before) - lead :], said, *after[:tail]]
            match = mesh_match(" ".join(words))
            if match is not None and kind_of_match(match) in _OTHER_THAN_PEOPLE:
                return True
    return False


_OTHER_THAN_PEOPLE: frozenset[SlotKind] = frozenset({"condition", "intervention"})


# People named by a condition they had: "breast cancer survivors" are one population.
_PAST_CONDITION_PEOPLE = frozenset({"survivors", "survivor"})


def _qualified_start(text: str, start: int, *, keeps_condition: bool = False) -> int:
    """Where a population's phrase starts once the content words just before it (at most
    ``POPULATION_MODIFIERS``) are taken along; before an occupation, a condition's word
    is its field ("emergency physicians"), and before "survivors" what they survived."""
    for _ in range(POPULATION_MODIFIERS):
        before = re.search(r"([A-Za-z0-9][\w\-]*)\s+$", text[:start])
        word = before.group(1).lower() if before else ""
        if before is None or word in _SPLIT_WORDS | lex.ASPECT_WORDS:
            break
        if word in lex.INTERVENTION_HEADS or is_intervention_word(word):
            break  # "prolonged exposure therapy | veterans"
        if not keeps_condition and (
            is_condition_word(word) or mesh_kind(before.group(1))[0] == "condition"
        ):
            break  # "PTSD | veterans": the condition is a value of its own
        start = before.start(1)
    return start


def _scope_kind(
    phrase: str, kinds: list[tuple[SlotKind, Iterable[str]]], phases: Iterable[str]
) -> SlotKind | None:
    lowered = phrase.lower()
    for kind, values in kinds:
        if any(v.lower() == lowered or (kind == "organisation" and v in phrase) for v in values):
            return kind
    if lowered.startswith("phase") and any(True for _ in phases):
        return "phase"
    return None


def _lead_before(text: str, start: int) -> str:
    before = re.findall(r"[A-Za-z']+", text[:start])
    return before[-1].lower() if before and before[-1].lower() in _LEADS else ""


@dataclass(frozen=True)
class _Chunk:
    start: int
    text: str
    lead: str
    possessive: bool = False


# Words after which a verb's form is the verb: "does it cover", "will they change".
_SUBJECTS_OF_VERBS = BACK_REFERENCES | frozenset(
    [
        "do",
        "does",
        "did",
        "will",
        "would",
        "can",
        "could",
        "should",
        "may",
        "might",
        "must",
        "to",
        "not",
    ]
)
_NEXT_WORD = re.compile(r"\s+([A-Za-z][\w\-]*)")


def _content_word_follows(text: str, at: int) -> bool:
    following = _NEXT_WORD.match(text, at)
    return following is not None and following.group(1).lower() not in _SPLIT_WORDS


def _chunks(text: str) -> list[_Chunk]:
    """The runs of content words of ``text`` (where, the words, the preposition before);
    a name in the possessive ("GSK's", "Lilly's") is a chunk of its own."""
    chunks: list[_Chunk] = []
    current: list[str] = []
    start = 0
    lead = ""
    last_lead = ""
    last_token = ""

    def close(possessive: bool = False) -> None:
        nonlocal current
        words = _without_verbs(current)
        if words:
            chunks.append(_Chunk(start, " ".join(words), lead, possessive))
        current = []

    for match in _TOKEN.finditer(text):
        token = match.group(0)
        bare = token.lower().strip("'\u2019")
        owner = _POSSESSIVE.search(bare) is not None
        bare = _POSSESSIVE.sub("", bare)
        in_name = bare == "use" and _USE_DISORDER.match(text, match.end()) is not None
        # After a word of its phrase, "change" is a noun: "climate change", "behaviour change".
        in_name = in_name or (bare in ("change", "changes") and bool(current))
        # Before a word and not after its subject, a verb's form is a noun's modifier:
        # "what about cover crops", not "does it cover children".
        in_name = in_name or (
            bare in lex.NOUN_FORMS_OF_VERBS
            and last_token not in _SUBJECTS_OF_VERBS
            and (last_token in _SPLIT_WORDS or not last_token)
            and _content_word_follows(text, match.end())
        )
        splits = bare in _SPLIT_WORDS and not in_name  # "opioid use disorder" is one name
        if not _WORD.search(token) or splits or bare in lex.MATERIAL_WORDS:
            if current:
                close()
            last_lead = bare if bare in _LEADS else ("" if not _WORD.search(token) else last_lead)
            last_token = bare if _WORD.search(token) else ""
            continue
        last_token = bare
        word = _POSSESSIVE.sub("", token).strip("'\u2019")
        # An owner typed in lower case ("biontech's vaccine") opens its phrase; a common
        # noun's possessive ("children's hospital") stays in it.
        named = word[:1].isupper() or (not current and word.lower() not in lex.COMMON_OWNERS)
        if owner and named:
            if _names_a_condition(text[match.end() :]) or _eponym(word, text[match.end() :]):
                word = token.strip("'\u2019").replace("\u2019", "'")  # "Fournier's gangrene"
            elif current and is_name(" ".join(current)):  # "Novo Nordisk's"
                current.append(word)
                close(possessive=True)
                continue
            else:
                if current:
                    close()
                start, lead, current = match.start(), last_lead, [word]
                close(possessive=True)
                continue
        if not current:
            start = match.start()
            lead = last_lead
        current.append(word)
    if current:
        close()
    return chunks


def _names_a_condition(after: str) -> bool:
    """Whether the word after a possessive name is a condition's ("Fournier's gangrene",
    "Crohn's disease"): the name is an eponym, not an owner."""
    following = re.match(r"\s+([A-Za-z][\w\-]*)", after)
    if following is None:
        return False
    word = following.group(1).lower()
    return word in lex.CONDITION_HEADS or is_condition_word(word)


def _eponym(name: str, after: str) -> bool:
    """A possessive name that ends its phrase and names a disease ("paraquat and
    Parkinson's?"): "<name> disease" is a MeSH disease heading."""
    if re.match(r"\s+[A-Za-z]", after):
        return False
    found = mesh_match(f"{name} disease")
    return found is not None and any(n.startswith("C") for n in found.descriptor.tree_numbers)


def _without_verbs(words: list[str]) -> list[str]:
    """``words`` without the verb forms at their edges that name nothing ("testing PD-1
    inhibitors", "Pfizer developing", "reimbursed"): a word ending in -ing or -ed that no
    word list or MeSH knows."""
    words = list(words)
    while words and _is_verb_form(words[0], alone=len(words) == 1, last=False):
        words.pop(0)
    while words and _is_verb_form(words[-1], alone=len(words) == 1, last=True):
        words.pop()
    return words


def _is_verb_form(word: str, *, alone: bool, last: bool) -> bool:
    lowered = word.lower()
    if "-" in lowered or word[:1].isupper() or lowered in lex.ASPECT_WORDS:
        return False
    # "-ly" adverbs and "-ed" participles standing alone ("permanently", "reimbursed") or
    # ending a phrase ("Moderna signed"; first, "-ed" is an adjective: "accelerated
    # approval"); "-ing" forms at either edge ("testing PD-1 inhibitors").
    if alone:
        ends_as_verb = lowered.endswith(("ed", "ly")) and len(lowered) > 4
    else:
        # "-ing" nouns name things ("docking accuracy", "the swelling issue"): only the
        # verbs a request uses are cut ("testing PD-1 inhibitors").
        ends_as_verb = (
            lowered in lex.REQUEST_VERBS_ING
            or lowered in lex.DECISION_VERBS_ED
            or (last and lowered.endswith("ed"))
        )
    if not ends_as_verb or is_intervention_word(lowered) or is_condition_word(lowered):
        return False
    return mesh_match(lowered) is None


def _compared(values: list[SlotValue], starts: list[int], text: str) -> list[SlotValue]:
    """In "X versus Y" (or "compared with", "vs"), an intervention after the comparison
    word is X's comparator."""
    cue = lex.COMPARISON.search(text)
    if cue is not None:
        # "prolonged exposure vs cognitive processing therapy": what is compared with a
        # treatment is a treatment.
        before = [i for i, at in enumerate(starts) if at < cue.start()]
        after = [i for i, at in enumerate(starts) if at > cue.start()]
        if (
            before
            and after
            and values[before[-1]].kind == "topic"
            and len(values[before[-1]].text.split()) > 1  # not "robotic vs laparoscopic ..."
            and values[after[0]].kind == "intervention"
        ):
            at = before[-1]
            values = [
                *values[:at],
                values[at].model_copy(update={"kind": "intervention"}),
                *values[at + 1 :],
            ]
    if cue is None or not any(
        v.kind == "intervention" and at < cue.start() for v, at in zip(values, starts, strict=True)
    ):
        return values
    return [
        v.model_copy(update={"kind": "comparator"})
        if v.kind == "intervention" and at > cue.start()
        else v
        for v, at in zip(values, starts, strict=True)
    ]


def _treatments_for(values: list[SlotValue], leads: list[str]) -> list[SlotValue]:
    """A word no list or MeSH knows, just before "for" a condition, is a treatment of it:
    "paxlovid for long covid" (not "risk for dementia")."""
    treated = list(values)
    for at, (value, following) in enumerate(itertools.pairwise(values)):
        unknown = value.kind == "topic" and value.heading is None and " " not in value.text
        word = value.text.lower()
        if (
            unknown
            and following.kind == "condition"
            and leads[at + 1] == "for"
            and word not in lex.GENERIC_SUBJECT_WORDS
            and not word.endswith(lex.ASPECT_SUFFIXES)
        ):
            treated[at] = value.model_copy(update={"kind": "intervention"})
    return treated


def _with_mesh(value: SlotValue) -> SlotValue:
    if value.kind in FILTER_KINDS or value.kind in ("study_type", "place", "organisation"):
        return value
    kind, heading = mesh_kind(value.text)
    update: dict[str, object] = {"heading": heading} if heading else {}
    # A heading MeSH files as a disease or a behaviour is no intervention ("smoking
    # cessation" is what a drug is for).
    outranks = heading is not None and kind == "condition" and value.kind == "intervention"
    if kind is not None and (value.kind == "topic" or outranks):
        update["kind"] = kind
    return value.model_copy(update=update) if update else value


MAX_DROPPED = 12


def dropped_values(earlier: list[SlotValue], now: TopicReading) -> list[SlotValue]:
    """``earlier`` values the topic ``now`` no longer holds, the last ``MAX_DROPPED``."""
    kept: dict[str, SlotValue] = {}
    for value in earlier:
        if not now.has(value):
            kept.pop(_key(value.text), None)
            kept[_key(value.text)] = value
    return list(kept.values())[-MAX_DROPPED:]


def bounded_values(values: list[SlotValue]) -> list[SlotValue]:
    """No value twice (the first stays), and at most ``MAX_VALUES_PER_KIND`` values of
    each kind (the latest)."""
    unique: list[SlotValue] = []
    for value in values:
        if not any(v.same_as(value) for v in unique):
            unique.append(value)
    kept: list[SlotValue] = []
    for value in reversed(unique):
        if sum(v.kind == value.kind for v in kept) < MAX_VALUES_PER_KIND:
            kept.append(value)
    return list(reversed(kept))


def _key(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


def _word_count(values: list[SlotValue]) -> int:
    return sum(len(v.text.split()) for v in values)
