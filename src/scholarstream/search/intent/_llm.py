"""``LLMIntentParser``: the question read by a model, as structured output.

The model's answer is checked before it becomes a ``ParsedIntent``: reversed dates are
swapped, language names become ISO 639-1 codes, study types take their canonical names,
an empty PICO is dropped, and missing concepts come from the rule parser. A limit the
request does not state is the model's invention, not the user's wish, and is dropped: a
period where the request names none (no year, no phrase the rule reader knows) or one that
starts after today, a study type, a language or an exclusion the request does not mention.
A small model adds them readily ("randomized controlled trial", "en", a date range ending
today) and each one can empty a search. When the model's
answer is unusable, late or failed, the rule parser reads the question for that call (the
README's promise), and the run's ``FallbackLog`` is told.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai import Agent

from scholarstream.errors import InvalidInputError
from scholarstream.search._bounds import Items, Text
from scholarstream.search._fallbacks import FALLBACK_ERRORS, FallbackLog
from scholarstream.search._llm import SkillLLM
from scholarstream.search.core import Concept, ParsedIntent, PicoElements
from scholarstream.search.intent._rules import EMPTY_HINT, RuleIntentParser
from scholarstream.understanding import (
    STUDY_TYPES,
    QuestionReading,
    language_code,
    read_question,
    topic_of,
)

FEATURE = "search.intent"

INSTRUCTIONS = f"""\
You read a researcher's literature-search request and return its structure.

- topic: the request as one short topic line (at most 15 words), no question form.
- concepts: the 2-5 distinct ideas a search must combine (AND), most important first.
  Each has a term (as the user would search it) and synonyms: other spellings, standard
  abbreviations, and names authors use for the same thing (not broader or narrower
  ideas). Leave out filler such as "effect", "studies", "patients", "evidence".
- pico: only for clinical questions (patients, treatments, exposures, outcomes):
  population, intervention, comparison, outcome, each a short phrase or null. For any
  other question (methods, computing, basic science) pico is null.
- date_from / date_to: ISO dates, only when the request states or implies a period
  ("since 2015" is 2015-01-01 to null; "last 5 years" counts back from today's date,
  given with the request). Otherwise null.
- study_types: only those the user asks for, named as one of:
  {", ".join(STUDY_TYPES)}.
- languages: ISO 639-1 codes of publication languages the user asks for, e.g. "en".
- exclude_terms: only what the user explicitly excludes ("not in children" -> "children").
"""


# Bounds that a good answer never reaches and that keep a rambling one inside the
# ``search.intent`` budget (400 tokens): the grammar a local server builds from the schema
# ends each list and string there (see ``search._bounds``).
_Term = Annotated[str, Text(60)]
_Phrase = Annotated[str, Text(100)]


class _ConceptOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    term: Annotated[str, Text(60, least=1)]
    synonyms: Annotated[list[Annotated[str, Text(40)]], Items(4)] = Field(default_factory=list)


class _PicoOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    population: _Phrase | None = None
    intervention: _Phrase | None = None
    comparison: _Phrase | None = None
    outcome: _Phrase | None = None


class _IntentOutput(BaseModel):
    """ParsedIntent without the question (kept from the input) and without its date-order
    check, so a reversed range can be repaired rather than refused."""

    model_config = ConfigDict(extra="forbid")

    topic: Annotated[str, Text(120)] = ""
    concepts: Annotated[list[_ConceptOut], Items(5)] = Field(default_factory=list)
    pico: _PicoOut | None = None
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    study_types: Annotated[list[_Term], Items(4)] = Field(default_factory=list)
    languages: Annotated[list[Annotated[str, Text(20)]], Items(4)] = Field(default_factory=list)
    exclude_terms: Annotated[list[_Term], Items(5)] = Field(default_factory=list)


def _study_type(value: str) -> str:
    value = " ".join(value.split())
    canonical = next((name for name, p in STUDY_TYPES.items() if p.search(value)), None)
    return canonical or value.lower()


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))


def _mentioned(values: Iterable[str], question: str) -> list[str]:
    """The values the question mentions: a study type by any of its names, else the words."""
    text = question.casefold()
    return [
        v
        for v in values
        if (STUDY_TYPES[v].search(question) if v in STUDY_TYPES else v.casefold() in text)
    ]


_YEAR = re.compile(r"\b(1[89]|20)\d\d\b")


def _stated_period(
    output: _IntentOutput, question: str, reading: QuestionReading, today: dt.date
) -> tuple[dt.date | None, dt.date | None]:
    """The model's period, when the question states one: the rule reader finds one, or the
    question names a year. A period that starts after today is never meant."""
    date_from, date_to = output.date_from, output.date_to
    if date_from and date_to and date_from > date_to:
        date_from, date_to = date_to, date_from
    stated = reading.dates.date_from or reading.dates.date_to or _YEAR.search(question)
    if not stated or (date_from is not None and date_from > today):
        return None, None
    return date_from, date_to


class LLMIntentParser:
    def __init__(
        self, llm: SkillLLM, *, today: dt.date | None = None, fallbacks: FallbackLog | None = None
    ) -> None:
        self._llm = llm
        self.fallbacks = fallbacks if fallbacks is not None else FallbackLog()
        self._today = today
        self._rules = RuleIntentParser(today=today)
        self._agent: Agent[None, _IntentOutput] = Agent(
            output_type=_IntentOutput, instructions=INSTRUCTIONS, name="intent_parser"
        )

    async def parse(self, user_input: str) -> ParsedIntent:
        question = " ".join(user_input.split())
        if not question:
            raise InvalidInputError("The question is empty.", hint=EMPTY_HINT)
        today = self._today or dt.date.today()
        prompt = f"Today's date: {today.isoformat()}\n\nRequest: {question}"
        try:
            output = await self._llm.structured(self._agent, prompt, feature=FEATURE)
        except FALLBACK_ERRORS as exc:
            # Checked before the fallback is recorded: a question the rules find nothing
            # in is refused as the user's to fix, whatever the model did.
            intent = self._rules.parse_now(user_input)
            self.fallbacks.failed(FEATURE, exc)
            return intent
        return self._intent(user_input, question, output, today)

    def _intent(
        self, user_input: str, question: str, output: _IntentOutput, today: dt.date
    ) -> ParsedIntent:
        reading = read_question(question, today)
        date_from, date_to = _stated_period(output, question, reading, today)
        concepts = [
            Concept(term=c.term, synonyms=c.synonyms) for c in output.concepts if c.term.strip()
        ]
        if not concepts:
            concepts = self._rule_concepts(question)
        pico = PicoElements(**output.pico.model_dump()) if output.pico else None
        pico = pico if pico and pico.present() else None
        return ParsedIntent(
            question=user_input,
            topic=" ".join(output.topic.split()) or topic_of(question),
            concepts=concepts,
            pico=pico,
            date_from=date_from,
            date_to=date_to,
            study_types=_unique(
                [*reading.study_types, *_mentioned(map(_study_type, output.study_types), question)]
            ),
            languages=_unique(
                [code for s in output.languages if (code := language_code(s))]
                if reading.languages
                else []
            ),
            exclude_terms=_unique(
                [
                    *reading.exclusions,
                    *_mentioned((" ".join(t.split()) for t in output.exclude_terms), question),
                ]
            ),
        )

    def _rule_concepts(self, question: str) -> list[Concept]:
        try:
            return self._rules.parse_now(question).concepts
        except InvalidInputError:
            # Nothing the rules recognise: the question itself is the one concept.
            return [Concept(term=topic_of(question))]
