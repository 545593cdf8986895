"""Chat on the Search page (seed 003's workflow): the start form, then per run the strategy
checkpoint (tab ``strategy``) and the results checkpoint (tab ``results``).

Besides the common context the page may send ``run`` (``{status, stage, iteration}``),
``strategy`` (the proposed ``{queries: [{source, query, filters}], rationale}``) and
``groupings`` (``{dimension: [{key, label, count}]}``, the groups the results can be
filtered by); items are ``search_result`` summaries whose id is the paper's id in the run,
sent with ``search_run_id``."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from scholarstream.chat._builtin_payloads import (
    AI_COLUMN_SUGGESTION,
    FILTER_SUGGESTION,
    QUERY_SUGGESTION,
)
from scholarstream.chat.core import ChatContext
from scholarstream.chat.pages._context_text import page_context, pairs, value_text
from scholarstream.chat.pages._navigation import OPEN_LIBRARY, OPEN_SEARCH_PAGE, OPEN_TRIALS
from scholarstream.chat.pages._registry import ClientAction, TabConfig, register_page
from scholarstream.chat.tools.builtin import ANALYZE_ITEMS, RETRIEVE_ITEMS

PAGE = "search"
STRATEGY = "strategy"
RESULTS = "results"
EXTRAS = ("run", "strategy", "groupings")

_GUIDANCE: Mapping[str | None, list[str]] = {
    None: [
        "The user is starting a search (or looking at recent ones). Help them phrase the "
        "question: population, intervention or exposure, outcome, study types, years. Offer "
        'it as QUERY_SUGGESTION with target "search" (Accept fills the question box).',
        "The workflow: the question is parsed, a query is built for each source and shown "
        "for approval (strategy checkpoint), then the sources are searched, duplicates "
        "merged, every paper scored with a reason and grouped, and the user reviews the "
        "results (results checkpoint), marking papers and iterating until satisfied.",
    ],
    STRATEGY: [
        "Checkpoint 1: the user reviews the search strategy (one query per source) before "
        "anything is searched, and approves, edits or rejects it with feedback.",
        "Explain each query's syntax when asked; point out missing synonyms, MeSH terms, "
        "spelling variants, or limits (dates, study types) that would lose relevant papers.",
        'A better question: QUERY_SUGGESTION with target "search"; a better PubMed query: '
        'QUERY_SUGGESTION with target "pubmed". Do not claim the strategy was changed: '
        "the user decides at the checkpoint.",
    ],
    RESULTS: [
        "Checkpoint 2: the user reviews the ranked results (each paper scored with a "
        "reason), marks papers relevant or irrelevant, filters by group, and either "
        "accepts the list or searches again broader or narrower with feedback.",
        "Answer questions about the results from data: analyze_items for counts and "
        "distributions (year, source, study type, label...), retrieve_items to read "
        "abstracts before judging relevance.",
        "FILTER_SUGGESTION here takes: theme, study_type, source (a group's label as "
        "listed under groupings), year_from, year_to, label (relevant, irrelevant, "
        "unlabelled). AI_COLUMN_SUGGESTION for criteria no filter captures (e.g. 'reports "
        "overall survival').",
        "If relevant papers seem missing, say why (narrow strategy, failed source, date "
        'limits) and offer a broader question as QUERY_SUGGESTION with target "search".',
    ],
}


def _strategy_lines(strategy: JsonValue) -> list[str]:
    if not isinstance(strategy, dict):
        return [f"Strategy: {value_text(strategy)}"]
    lines = []
    queries = strategy.get("queries")
    for query in queries if isinstance(queries, list) else []:
        if isinstance(query, dict):
            filters = query.get("filters")
            extra = f" (filters: {value_text(filters)})" if filters else ""
            lines.append(
                f"Strategy query for {value_text(query.get('source'))}: "
                f"{value_text(query.get('query'))}{extra}"
            )
    rest = {k: v for k, v in strategy.items() if k != "queries"}
    if rest:
        lines.append(f"Strategy: {pairs(rest)}")
    return lines


def build_context(context: ChatContext) -> str:
    extras = context.extras()
    lines = []
    if context.search_run_id:
        lines.append(f"Search run: {context.search_run_id}")
    if isinstance(extras.get("run"), dict):
        lines.append(f"Run state: {pairs(extras['run'])}")
    if "strategy" in extras:
        lines += _strategy_lines(extras["strategy"])
    if isinstance(extras.get("groupings"), dict):
        lines += [
            f"Results can be filtered by {dimension}: {value_text(groups)}"
            for dimension, groups in extras["groupings"].items()
        ]
    guidance = _GUIDANCE.get(context.active_tab, _GUIDANCE[None])
    return page_context(
        "Search",
        "Here the user asks a question in their own words and ScholarStream searches "
        "several sources with two checkpoints the user controls.",
        context,
        form_label="New-search form",
        extra_lines=lines,
        known_extras=EXTRAS,
        items_label="results" if context.item_summaries or context.active_tab == RESULTS else None,
        guidance=guidance,
    )


register_page(
    PAGE,
    context_builder=build_context,
    payloads=[QUERY_SUGGESTION.name],
    tools=[RETRIEVE_ITEMS.name, ANALYZE_ITEMS.name],
    tabs={
        STRATEGY: TabConfig(payloads=(QUERY_SUGGESTION.name,)),
        RESULTS: TabConfig(payloads=(FILTER_SUGGESTION.name, AI_COLUMN_SUGGESTION.name)),
    },
    client_actions=[
        ClientAction(
            action="open_item",
            description='Open one result\'s detail; params {"id": "<the result\'s id>"}.',
        ),
        OPEN_SEARCH_PAGE,
        OPEN_LIBRARY,
        OPEN_TRIALS,
    ],
)
