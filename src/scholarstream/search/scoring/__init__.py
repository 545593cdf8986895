"""The RelevanceScorer skill: a 0-1 score and a one-sentence reason per paper, best first,
re-ranked by what the user judged in earlier iterations (relevance feedback)."""

from scholarstream.papers.ranking import FeedbackModel, FeedbackSettings, record_text
from scholarstream.search.scoring._cache import CacheKey, ScoreCache, cache_key
from scholarstream.search.scoring._lexical import LexicalRelevanceScorer, lexical_relevance
from scholarstream.search.scoring._llm import LLMRelevanceScorer
from scholarstream.search.scoring._ranking import (
    Relevance,
    feedback_probabilities,
    feedback_weight,
    rank,
    with_feedback_note,
)

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
