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
    _analysis,
    _items,
    _library,
    _literature,
    _trials,
    _web,
)
from scholarstream.chat.tools.builtin._analysis import ANALYZE_ITEMS
from scholarstream.chat.tools.builtin._arguments import ToolArguments, input_schema, parse_arguments
from scholarstream.chat.tools.builtin._items import (
    RETRIEVE_ITEMS,
    Retrieval,
    Retrieved,
    Retriever,
    item_kinds,
    register_item_retriever,
)
from scholarstream.chat.tools.builtin._lookup import IdentifierKind, register_identifier_kind
from scholarstream.chat.tools.builtin._user_words import counted, listed, source_label
from scholarstream.chat.tools.builtin._web import WebPageReader

__all__ = [
    "ANALYZE_ITEMS",
    "RETRIEVE_ITEMS",
    "IdentifierKind",
    "Retrieval",
    "Retrieved",
    "Retriever",
    "ToolArguments",
    "WebPageReader",
    "counted",
    "input_schema",
    "item_kinds",
    "listed",
    "parse_arguments",
    "register_identifier_kind",
    "register_item_retriever",
    "source_label",
]
