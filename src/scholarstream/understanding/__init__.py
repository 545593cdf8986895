"""One reading of a question, shared by search, chat continuity and streams.

- stop words: one list (``stop_words(reader)`` gives the words each reader skips);
- dates: one parser (``find_dates`` for a search question, ``date_phrases`` for the date
  slot of a chat message), with the range each phrase stands for;
- a search question: concepts with synonyms and abbreviations, PICO, study types,
  languages and exclusions (``read_question``);
- a chat message: its words, content words and scope slots (places, dates, trial phases,
  populations, organisations: ``read_slots``);
- a question or a chat message as typed slots (intervention, comparator, condition,
  population, place, organisation, aspect, study type, language, source, years:
  ``read_message``), and how a follow-up updates what a conversation is about
  (``follow``); a retrieval query is rendered from the slots (``TopicReading.query``);
- a stream purpose: key phrases and organisation names (``key_phrases``, ``proper_names``).

Pure: no database, engine, HTTP or model; it imports no feature.
"""

from scholarstream.understanding._concepts import (
    MAX_CONCEPTS,
    OUTCOMES,
    ConceptReading,
    PicoReading,
    QuestionReading,
    concept_phrases,
    find_pico,
    read_question,
    topic_of,
)
from scholarstream.understanding._dates import (
    MENTION_DATES,
    QUERY_DATES,
    DateForm,
    DateGrammar,
    DatePhrase,
    DateRange,
    date_phrases,
    find_dates,
    years_before,
)
from scholarstream.understanding._followup import LIFTS_DATES, FollowUp, TurnReading, follow
from scholarstream.understanding._phrase_kinds import is_name, is_procedure
from scholarstream.understanding._phrases import key_phrases, proper_names, topic_phrases
from scholarstream.understanding._restrictions import (
    HUMANS_ONLY,
    LANGUAGE_NAMES,
    LANGUAGES,
    STUDY_TYPES,
    clean_phrase,
    find_exclusions,
    find_languages,
    find_study_types,
    language_code,
)
from scholarstream.understanding._slot_kind import SlotKind
from scholarstream.understanding._slots import (
    ABBREVIATED_PLACES,
    COUNTRIES,
    POPULATIONS,
    REGIONS,
    REGULATORS,
    US_STATES,
    Slots,
    read_slots,
    trial_phase,
)
from scholarstream.understanding._stop_words import (
    BACK_REFERENCES,
    READERS,
    STOP_WORDS,
    StopWordReader,
    is_stop_word,
    stop_words,
)
from scholarstream.understanding._synonyms import (
    GROUPS,
    Abbreviations,
    SynonymGroup,
    find_abbreviations,
    group_of,
    is_abbreviation,
    known_phrases,
)
from scholarstream.understanding._topic import (
    MAX_QUERY_WORDS,
    MessageReading,
    SlotValue,
    TopicReading,
    read_message,
    same_family,
    without_dates,
)
from scholarstream.understanding._words import content_words, words

__all__ = [
    "ABBREVIATED_PLACES",
    "BACK_REFERENCES",
    "COUNTRIES",
    "GROUPS",
    "HUMANS_ONLY",
    "LANGUAGES",
    "LANGUAGE_NAMES",
    "LIFTS_DATES",
    "MAX_CONCEPTS",
    "MAX_QUERY_WORDS",
    "MENTION_DATES",
    "OUTCOMES",
    "POPULATIONS",
    "QUERY_DATES",
    "READERS",
    "REGIONS",
    "REGULATORS",
    "STOP_WORDS",
    "STUDY_TYPES",
    "US_STATES",
    "Abbreviations",
    "ConceptReading",
    "DateForm",
    "DateGrammar",
    "DatePhrase",
    "DateRange",
    "FollowUp",
    "MessageReading",
    "PicoReading",
    "QuestionReading",
    "SlotKind",
    "SlotValue",
    "Slots",
    "StopWordReader",
    "SynonymGroup",
    "TopicReading",
    "TurnReading",
    "clean_phrase",
    "concept_phrases",
    "content_words",
    "date_phrases",
    "find_abbreviations",
    "find_dates",
    "find_exclusions",
    "find_languages",
    "find_pico",
    "find_study_types",
    "follow",
    "group_of",
    "is_abbreviation",
    "is_name",
    "is_procedure",
    "is_stop_word",
    "key_phrases",
    "known_phrases",
    "language_code",
    "proper_names",
    "read_message",
    "read_question",
    "read_slots",
    "same_family",
    "stop_words",
    "topic_of",
    "topic_phrases",
    "trial_phase",
    "without_dates",
    "words",
    "years_before",
]
