"""The ResultOrganizer skill."""

from scholarstream.search.organize._llm import LLMResultOrganizer
from scholarstream.search.organize._organizer import RuleResultOrganizer, collection_stats
from scholarstream.search.organize._study_types import study_type

__all__ = [
    "LLMResultOrganizer",
    "RuleResultOrganizer",
    "collection_stats",
    "study_type",
]
