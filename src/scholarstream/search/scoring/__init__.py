"""The RelevanceScorer skill: a 0-1 score and a one-sentence reason per paper, best first,
by words alone, by words and meaning (with an embedding model), or by a model;
re-ranked by what the user judged in earlier iterations (relevance feedback)."""

from scholarstream.papers.ranking import FeedbackModel, FeedbackSettings, record_text
from scholarstream.search.scoring._cache import CacheKey, ScoreCache, cache_key
from scholarstream.search.scoring._hybrid import (
    MEANING_NOTE,
    HybridRelevanceScorer,
    MeaningScale,
    hybrid_relevance,
    intent_text,
    meaning,
)
from scholarstream.search.scoring._lexical import LexicalRelevanceScorer, lexical_relevance
from scholarstream.search.scoring._llm import LLMRelevanceScorer
from scholarstream.search.scoring._ranking import (
    OfflineScorer,
    Relevance,
    feedback_probabilities,
    feedback_weight,
    rank,
    with_feedback_note,
)

__all__ = [
    "MEANING_NOTE",
    "CacheKey",
    "FeedbackModel",
    "FeedbackSettings",
    "HybridRelevanceScorer",
    "LLMRelevanceScorer",
    "LexicalRelevanceScorer",
    "MeaningScale",
    "OfflineScorer",
    "Relevance",
    "ScoreCache",
    "cache_key",
    "feedback_probabilities",
    "feedback_weight",
    "hybrid_relevance",
    "intent_text",
    "lexical_relevance",
    "meaning",
    "rank",
    "record_text",
    "with_feedback_note",
]
