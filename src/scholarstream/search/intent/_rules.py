"""``RuleIntentParser``: the offline intent parser. The question is read by the shared
rule-based reader (``scholarstream.understanding.read_question``); this module turns the
reading into the search's ``ParsedIntent`` and refuses a question with nothing to search."""

from __future__ import annotations

import datetime as dt

from scholarstream.errors import InvalidInputError
from scholarstream.search.core import Concept, ParsedIntent, PicoElements
from scholarstream.understanding import QuestionReading, read_question

EMPTY_HINT = (
    "Describe what you are looking for, e.g. 'Does metformin reduce mortality in adults "
    "with type 2 diabetes?' or 'machine learning for protein structure prediction'."
)


def intent_of(user_input: str, reading: QuestionReading) -> ParsedIntent:
    """The search's ``ParsedIntent`` of a question and its reading."""
    pico = reading.pico
    return ParsedIntent(
        question=user_input,
        topic=reading.topic,
        concepts=[Concept(term=c.term, synonyms=list(c.synonyms)) for c in reading.concepts],
        pico=None if pico is None else PicoElements(**pico.present()),
        date_from=reading.dates.date_from,
        date_to=reading.dates.date_to,
        study_types=list(reading.study_types),
        languages=list(reading.languages),
        exclude_terms=list(reading.exclusions),
    )


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
        reading = read_question(question, self._today or dt.date.today())
        if not reading.concepts:
            raise InvalidInputError(
                f"There is nothing to search for in {question!r}.", hint=EMPTY_HINT
            )
        return intent_of(user_input, reading)
