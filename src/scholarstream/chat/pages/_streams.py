"""Chat on the research-stream pages: the list of streams (``streams``), one stream's page
(``stream``) and the creation page (``stream_new``).

A stream's page sends ``stream_id`` (so the stream's ``chat_instructions`` join the system
prompt) and ``stream``: the stream as shown (name, type, frequency, purpose, focus areas,
keywords, organisations, enabled, the sources searched, unsaved_changes). The creation page
sends ``stream_creation``: the workflow's step, who guides it, the configuration so far
with the user's unsent preview edits, and the skipped steps.

Streams serve academics and industry alike: the fields are named as the guide and the
stream's page name them ("goals", "organisations"; a type by its label), never by their
stored names (``business_goals``, ``competitors``)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from scholarstream.chat.core import ChatContext
from scholarstream.chat.pages._context_text import page_context, pairs
from scholarstream.chat.pages._navigation import OPEN_LIBRARY, OPEN_SEARCH_PAGE, OPEN_TRIALS
from scholarstream.chat.pages._registry import register_page
from scholarstream.streams import field_specs

LIST_PAGE = "streams"
STREAM_PAGE = "stream"
CREATION_PAGE = "stream_new"

_NAVIGATION = [OPEN_SEARCH_PAGE, OPEN_LIBRARY, OPEN_TRIALS]


NAMING_FIELDS = frozenset({"step", "skipped_steps", "unsaved_changes"})
"""The page's keys whose values name stream fields."""


def _label(name: JsonValue) -> JsonValue:
    specs = {spec.name: spec.label for spec in field_specs()}
    if isinstance(name, list):
        return [specs.get(n, n) if isinstance(n, str) else n for n in name]
    return specs.get(name, name) if isinstance(name, str) else name


def _shown(values: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
    """``values`` keyed by each stream field's label, its choices by theirs, the fields a
    step or a list names by their labels; the page's other keys (and a nested ``config``)
    as they are."""
    specs = {spec.name: spec for spec in field_specs()}
    shown: dict[str, JsonValue] = {}
    for key, value in values.items():
        spec = specs.get(key)
        if spec is None:
            if key in NAMING_FIELDS:
                shown[key] = _label(value)
            else:
                shown[key] = _shown(value) if isinstance(value, dict) else value
        elif spec.choices and isinstance(value, str):
            shown[spec.label] = spec.choice_label(value)
        else:
            shown[spec.label] = value
    return shown


def _mapping_line(label: str, value: object) -> list[str]:
    if not isinstance(value, dict) or not value:
        return []
    return [f"{label}: {pairs(_shown(value))}."]


def build_list_context(context: ChatContext) -> str:
    return page_context(
        "Streams",
        "It lists the user's research streams (saved watches on a field: a research topic, "
        "a method, a disease area, a regulatory area, the work of organisations such as "
        "labs, universities or companies) and has a New stream button that opens a guided "
        "creation.",
        context,
        guidance=[
            "To create a stream, point to the New stream button: a guide there asks for the "
            "purpose, goals, name, type, focus areas, keywords, organisations to follow "
            "(optional) and report frequency, one at a time.",
            "Each stream runs on its report frequency (and on demand from its page); its "
            "reports list the new items found since the previous run.",
        ],
    )


def build_stream_context(context: ChatContext) -> str:
    extras = context.extras()
    return page_context(
        "research stream",
        "It shows one research stream's configuration (every field and the chat "
        "instructions, editable), its retrieval queries (one per literature source, in that "
        "source's syntax, editable and saved per source), and its reports (a Run now button "
        "and the list of monitoring runs, each opening its report).",
        context,
        extra_lines=_mapping_line("The stream", extras.get("stream")),
        known_extras=["stream"],
        guidance=[
            "Help the user sharpen the stream: better keywords, focus areas and organisations, "
            "and queries in each source's syntax (PubMed [tiab]/[mh] tags, arXiv all:, "
            "ClinicalTrials.gov condition terms). The user edits and saves them on this "
            "page; give the exact text to paste.",
            "To check what a query finds, run it with search_pubmed, search_trials or "
            "search_literature and report the counts and a few titles.",
        ],
    )


def build_creation_context(context: ChatContext) -> str:
    extras = context.extras()
    return page_context(
        "new research stream",
        "A guide on the page walks the user through creating a research stream step by "
        "step (purpose, goals, expected outcomes, name, type, focus areas, keywords, "
        "optional organisations to follow, report frequency, then review), with suggestion "
        "chips and a preview panel the user edits in place.",
        context,
        extra_lines=_mapping_line("The creation", extras.get("stream_creation")),
        known_extras=["stream_creation"],
        guidance=[
            "The guide on the page records the answers; you cannot change them. Help the "
            "user decide: explain a field, propose keywords, focus areas or organisations "
            "they can type to the guide or into the preview panel.",
            "To test candidate keywords, search with search_pubmed or search_literature and "
            "report how much they find.",
        ],
    )


register_page(LIST_PAGE, context_builder=build_list_context, client_actions=_NAVIGATION)
register_page(STREAM_PAGE, context_builder=build_stream_context, client_actions=_NAVIGATION)
register_page(CREATION_PAGE, context_builder=build_creation_context, client_actions=_NAVIGATION)
