"""QueryBuilder skill: a ``SearchStrategy`` with one query per source, each in that
source's own syntax, broadened or narrowed on feedback, never a rejected one again."""

from scholarstream.search.query.llm import LLMQueryBuilder
from scholarstream.search.query.rules import RuleQueryBuilder
from scholarstream.search.query.syntax import register_syntax, render, syntax_sources

__all__ = ["LLMQueryBuilder", "RuleQueryBuilder", "register_syntax", "render", "syntax_sources"]
