"""Chat on the home page: no data on screen, so the assistant guides the user to the page
that does what they want, and turns a research question into a search."""

from __future__ import annotations

from scholarstream.chat._builtin_payloads import QUERY_SUGGESTION
from scholarstream.chat.core import ChatContext
from scholarstream.chat.pages._context_text import page_context, value_text
from scholarstream.chat.pages._navigation import (
    OPEN_LIBRARY,
    OPEN_SEARCH_PAGE,
    OPEN_SETTINGS,
    OPEN_TRIALS,
)
from scholarstream.chat.pages._registry import register_page

PAGE = "home"


def build_context(context: ChatContext) -> str:
    health = context.extras().get("health")
    return page_context(
        "Home",
        "It shows the server's status (database, workers, whether models are configured) "
        "and where to start; no literature is on screen.",
        context,
        extra_lines=[f"Server status: {value_text(health)}"] if health else [],
        known_extras=["health"],
        guidance=[
            "When the user describes what they are looking for, offer QUERY_SUGGESTION with "
            'target "search": Accept opens the Search page with the question filled in, '
            "where the user confirms the strategy before it searches.",
            "For a quick look, search yourself (search_literature, search_pubmed, "
            "search_trials, search_library) and summarise what you found.",
            "Point to the page that does the job: Search (systematic search with "
            "checkpoints), Library (imported records, offline), Trials (ClinicalTrials.gov), "
            "Settings (models and API keys); offer the matching open_* action.",
        ],
    )


register_page(
    PAGE,
    context_builder=build_context,
    payloads=[QUERY_SUGGESTION.name],
    client_actions=[OPEN_SEARCH_PAGE, OPEN_LIBRARY, OPEN_TRIALS, OPEN_SETTINGS],
)
