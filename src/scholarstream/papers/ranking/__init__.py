"""Paper-level ranking pieces shared by search, streams and screening: a record's text for
ranking, and the relevance-feedback model that learns from a user's judgements."""

from scholarstream.papers.ranking._feedback import (
    Embed,
    FeedbackModel,
    FeedbackSettings,
    feedback_model,
    title_meaning,
)
from scholarstream.papers.ranking._text import mention_phrase, record_text

__all__ = [
    "Embed",
    "FeedbackModel",
    "FeedbackSettings",
    "feedback_model",
    "mention_phrase",
    "record_text",
    "title_meaning",
]
