"""The RelevanceScorer skill: a 0-1 score and a one-sentence reason per paper, best first,
re-ranked by what the user judged in earlier iterations (relevance feedback)."""

from scholarstream.search.scoring.cache import CacheKey, ScoreCache, cache_key
from scholarstream.search.scoring.feedback import FeedbackModel, FeedbackSettings
from scholarstream.search.scoring.lexical import LexicalRelevanceScorer, lexical_relevance
from scholarstream.search.scoring.llm import LLMRelevanceScorer
from scholarstream.search.scoring.ranking import (
    Relevance,
    feedback_probabilities,
    feedback_weight,
    rank,
    with_feedback_note,
)
from scholarstream.search.scoring.text import record_text

__all__ = [
    "CacheKey",
    "FeedbackModel",
    "FeedbackSettings",
    "LLMRelevanceScorer",
    "LexicalRelevanceScorer",
    "Relevance",
    "ScoreCache",
    "cache_key",
    "feedback_probabilities",
    "feedback_weight",
    "lexical_relevance",
    "rank",
    "record_text",
    "with_feedback_note",
]
