"""``RuleIntentParser``: the offline intent parser. The question is read by the shared
rule-based reader (``scholarstream.understanding.read_question`` for its concepts and
filters; its PICO from the typed slots of ``read_message``, the reading chat continuity
keeps, or from the phrasing when the slots give none); this module turns the reading into
the search's ``ParsedIntent`` and refuses a question with nothing to search."""

from __future__ import annotations

import datetime as dt

from scholarstream.errors import InvalidInputError
from scholarstream.search.core import Concept, ParsedIntent, PicoElements
from scholarstream.understanding import (
    QuestionReading,
    SlotKind,
    TopicReading,
    read_message,
    read_question,
)

EMPTY_HINT = (
    "Describe what you are looking for, e.g. 'Does metformin reduce mortality in adults "
    "with type 2 diabetes?' or 'machine learning for protein structure prediction'."
)


def pico_of(slots: TopicReading) -> PicoElements | None:
    """PICO from a question's typed slots, when it reads as a clinical question: an
    intervention with a condition, a population or an outcome."""

    def joined(*kinds: SlotKind) -> str | None:
        return " ".join(v.text for kind in kinds for v in slots.of(kind)) or None

    intervention = joined("intervention")
    condition = joined("condition")
    people = joined("population")
    outcome = joined("aspect")
    if intervention is None or not (condition or people or outcome):
        return None
    population = f"{people or 'patients'} with {condition}" if condition else people
    return PicoElements(
        population=population,
        intervention=intervention,
        comparison=joined("comparator"),
        outcome=outcome,
    )


def intent_of(
    user_input: str, reading: QuestionReading, today: dt.date | None = None
) -> ParsedIntent:
    """The search's ``ParsedIntent`` of a question and its reading."""
    # The typed slots first, element by element; the phrasing's PICO ("in adults with
    # ...") for what they do not give.
    typed = pico_of(read_message(user_input, today).as_topic())
    phrased = None if reading.pico is None else PicoElements(**reading.pico.present())
    pico = typed or phrased
    if typed is not None and phrased is not None:
        pico = PicoElements(**{**phrased.present(), **typed.present()})
    return ParsedIntent(
        question=user_input,
        topic=reading.topic,
        concepts=[Concept(term=c.term, synonyms=list(c.synonyms)) for c in reading.concepts],
        pico=pico,
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
        return intent_of(user_input, reading, self._today)
