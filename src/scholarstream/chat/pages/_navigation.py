"""Client actions every page offers: going to another page with something filled in. A
suggested action names one of these with ``handler: "client"`` and its params."""

from __future__ import annotations

from scholarstream.chat.pages._registry import ClientAction

OPEN_SEARCH_PAGE = ClientAction(
    action="open_search_page",
    description='Open the Search page; params {"question": "..."} fills its question box.',
)
OPEN_LIBRARY = ClientAction(
    action="open_library",
    description='Open the Library; params {"query": "..."} searches the user\'s library.',
)
OPEN_TRIALS = ClientAction(
    action="open_trials",
    description="Open the Trials page; params may fill its form: condition, intervention, "
    "q (other terms), sponsor, phase, status (ClinicalTrials.gov codes such as PHASE3, "
    "RECRUITING), date_from, date_to (YYYY-MM-DD).",
)
OPEN_SETTINGS = ClientAction(
    action="open_settings",
    description="Open Settings (model roles and the user's API keys).",
)
