"""IntentParser skill: the user's question as a ``ParsedIntent`` (topic, concepts with
synonyms, PICO for clinical questions, dates, study types, languages, exclusions)."""

from scholarstream.search.intent._llm import LLMIntentParser
from scholarstream.search.intent._rules import RuleIntentParser

__all__ = [
    "LLMIntentParser",
    "RuleIntentParser",
]
