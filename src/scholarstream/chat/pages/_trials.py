"""Chat on the Trials page: a ClinicalTrials.gov search form and its results.

The form's fields are the page's own (``condition``, ``intervention``, ``q``, ``sponsor``,
``phase``, ``status``, ``date_from``, ``date_to``); items are ``trial`` summaries (id: the
NCT id; fields phase, status, conditions, enrollment, sponsor, start_date)."""

from __future__ import annotations

from scholarstream.chat._builtin_payloads import (
    AI_COLUMN_SUGGESTION,
    FILTER_SUGGESTION,
    TRIAL_SEARCH_SUGGESTION,
)
from scholarstream.chat.core import ChatContext
from scholarstream.chat.pages._context_text import page_context
from scholarstream.chat.pages._navigation import OPEN_LIBRARY, OPEN_SEARCH_PAGE
from scholarstream.chat.pages._registry import ClientAction, register_page
from scholarstream.chat.tools.builtin import ANALYZE_ITEMS, RETRIEVE_ITEMS

PAGE = "trials"


def build_context(context: ChatContext) -> str:
    return page_context(
        "Trials",
        "It searches ClinicalTrials.gov (the registry of clinical studies) by condition, "
        "intervention, sponsor and other terms, narrowed by phase, overall status and "
        "start date, 20 studies per page.",
        context,
        form_label="Trial search form (q = other terms; date_from/date_to = study start)",
        items_label="trials",
        guidance=[
            "To change the search, offer TRIAL_SEARCH_SUGGESTION: Accept fills this form and "
            "searches. FILTER_SUGGESTION here takes phase and status (ClinicalTrials.gov "
            "codes such as PHASE3, RECRUITING). AI_COLUMN_SUGGESTION for criteria in the "
            "full records (e.g. 'overall survival is a primary endpoint').",
            "Questions about the loaded trials (most common phase, how many recruiting, "
            "phase by status): analyze_items over the summaries, then answer with its "
            "numbers. For endpoints, eligibility or design, retrieve_items reads the studies "
            "in full.",
            "Few or no results: point at the filter or term that narrows it (a phase, a "
            "status, a start date range, a very specific intervention name).",
        ],
    )


register_page(
    PAGE,
    context_builder=build_context,
    payloads=[TRIAL_SEARCH_SUGGESTION.name, FILTER_SUGGESTION.name, AI_COLUMN_SUGGESTION.name],
    tools=[RETRIEVE_ITEMS.name, ANALYZE_ITEMS.name],
    client_actions=[
        ClientAction(
            action="open_item",
            description='Open a study\'s detail view; params {"id": "<NCT id>"}.',
        ),
        OPEN_SEARCH_PAGE,
        OPEN_LIBRARY,
    ],
)
