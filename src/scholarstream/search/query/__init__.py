"""QueryBuilder skill: a ``SearchStrategy`` with one query per source, each in that
source's own syntax, broadened or narrowed on feedback, never a rejected one again."""

from scholarstream.search.query._feedback import FeedbackReading, read_feedback
from scholarstream.search.query._llm import LLMQueryBuilder
from scholarstream.search.query._plan import QueryPlan
from scholarstream.search.query._review import StrategyReview, review_edit, review_strategy
from scholarstream.search.query._rules import RuleQueryBuilder
from scholarstream.search.query._syntax import register_syntax, render, syntax_sources

__all__ = [
    "FeedbackReading",
    "LLMQueryBuilder",
    "QueryPlan",
    "RuleQueryBuilder",
    "StrategyReview",
    "read_feedback",
    "register_syntax",
    "render",
    "review_edit",
    "review_strategy",
    "syntax_sources",
]
