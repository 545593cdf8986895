"""The product's own chat tools; importing this package registers them.

| tool | command | payload |
|---|---|---|
| search_pubmed | /pubmed QUERY | pubmed_search_results |
| search_literature | /search QUERY | literature_search_results |
| get_article_details | /details IDENTIFIER | article_details |
| search_trials | /trials QUERY | trial_search_results |
| search_library | /library QUERY | literature_search_results |
| retrieve_items (pages with items) | /items IDS | retrieved_items |
| analyze_items (pages with items) | /analyze FIELD | analysis_result |
| read_web_page | /read URL | (none: text only) |
"""

from scholarstream.chat.tools.builtin import (  # noqa: F401  (imported to register)
    analysis,
    items,
    library,
    literature,
    trials,
    web,
)
from scholarstream.chat.tools.builtin.items import (
    Retrieval,
    Retrieved,
    Retriever,
    item_kinds,
    register_item_retriever,
)
from scholarstream.chat.tools.builtin.lookup import IdentifierKind, register_identifier_kind

__all__ = [
    "IdentifierKind",
    "Retrieval",
    "Retrieved",
    "Retriever",
    "item_kinds",
    "register_identifier_kind",
    "register_item_retriever",
]
