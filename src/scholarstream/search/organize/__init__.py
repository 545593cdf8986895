"""The ResultOrganizer skill."""

from scholarstream.search.organize.llm import LLMResultOrganizer
from scholarstream.search.organize.organizer import RuleResultOrganizer, collection_stats
from scholarstream.search.organize.study_types import study_type

__all__ = ["LLMResultOrganizer", "RuleResultOrganizer", "collection_stats", "study_type"]
