"""Paper-level ranking pieces shared by search, streams and screening: a record's text for
ranking, and the relevance-feedback model that learns from a user's judgements."""

from scholarstream.papers.ranking.feedback import FeedbackModel, FeedbackSettings
from scholarstream.papers.ranking.text import record_text

__all__ = ["FeedbackModel", "FeedbackSettings", "record_text"]
