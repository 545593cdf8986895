"""Chat on the Library page: the user's imported records, searched offline.

Items are ``library_record`` summaries (id: the record's UUID); the form is the library
search (``q``, ``year_from``, ``year_to``, ``publication_type``, ``limit``); the page may
also send ``import_status`` (the last import's report)."""

from __future__ import annotations

from scholarstream.chat._builtin_payloads import (
    AI_COLUMN_SUGGESTION,
    FILTER_SUGGESTION,
    QUERY_SUGGESTION,
)
from scholarstream.chat.core import ChatContext
from scholarstream.chat.pages._context_text import page_context, value_text
from scholarstream.chat.pages._navigation import OPEN_SEARCH_PAGE, OPEN_TRIALS
from scholarstream.chat.pages._registry import ClientAction, register_page
from scholarstream.chat.tools.builtin import ANALYZE_ITEMS, RETRIEVE_ITEMS

PAGE = "library"


def build_context(context: ChatContext) -> str:
    extras = context.extras()
    lines = []
    if "import_status" in extras:
        lines.append(f"Last import: {value_text(extras['import_status'])}")
    return page_context(
        "Library",
        "It holds the records the user imported (PubMed XML, MEDLINE, RIS, BibTeX, EndNote, "
        "CSV, JSON files), searchable offline; the user can read, delete and export them.",
        context,
        form_label="Library search form (q = search words)",
        extra_lines=lines,
        known_extras=["import_status"],
        items_label="library records",
        guidance=[
            "The library search ranks plain words by BM25 over title, abstract, keywords "
            "and MeSH terms; it has no Boolean operators or field tags. A better search: "
            'QUERY_SUGGESTION with target "library" (Accept fills the search words and '
            "searches).",
            "FILTER_SUGGESTION here takes year_from, year_to and publication_type (e.g. "
            '"Review", "Randomized Controlled Trial"). AI_COLUMN_SUGGESTION classifies '
            "records by criteria no filter captures.",
            "Questions about the records: analyze_items for counts (by year, publication "
            "type, journal...), retrieve_items to read them in full, search_library to look "
            "beyond the page.",
            "Few or no results: say which filter or word narrows it; the library holds only "
            "what was imported, so offer search_literature or the Search page for more.",
        ],
    )


register_page(
    PAGE,
    context_builder=build_context,
    payloads=[QUERY_SUGGESTION.name, FILTER_SUGGESTION.name, AI_COLUMN_SUGGESTION.name],
    tools=[RETRIEVE_ITEMS.name, ANALYZE_ITEMS.name],
    client_actions=[
        ClientAction(
            action="open_item",
            description='Open a record\'s detail view; params {"id": "<library record UUID>"}.',
        ),
        OPEN_SEARCH_PAGE,
        OPEN_TRIALS,
    ],
)
