"""The parts of every page's context the model reads the same way: form values, filters,
pagination, sort, selection, the open viewer, result counts and the item summaries as a
compact table (seed 002: "If the user sees it on screen and it's dynamic, it should be in
the context"). Page modules add what only they know."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from pydantic import JsonValue

from scholarstream.chat.core import ChatContext, ItemSummary, SummaryValue

EMPTY = "(empty)"
TITLE_CHARS = 140
CELL_CHARS = 60

ITEMS_NOTE = (
    "These are summaries, not full records. Call retrieve_items with their ids to read "
    "abstracts, trial summaries, outcomes and every identifier before answering questions "
    "the summaries cannot answer. Call analyze_items to count, tabulate or compare these "
    "items (e.g. the distribution of a field) instead of counting by eye."
)


def value_text(value: JsonValue | SummaryValue) -> str:
    """A form or field value as the user sees it; blank ones are shown as ``(empty)``."""
    if value is None or value == "" or value == [] or value == {}:
        return EMPTY
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def pairs(values: Mapping[str, JsonValue]) -> str:
    return "; ".join(f"{key} = {value_text(value)}" for key, value in values.items())


def _cell(text: str, limit: int) -> str:
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def items_table(items: Sequence[ItemSummary]) -> str:
    """The summaries as a table: id, title, then every field any of them has."""
    columns = list(dict.fromkeys(key for item in items for key in item.fields))
    kinds = {item.kind for item in items}
    head = ["id", *(["kind"] if len(kinds) > 1 else []), "title", *columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for item in items:
        cells = [
            item.id,
            *([item.kind] if len(kinds) > 1 else []),
            _cell(item.title or EMPTY, TITLE_CHARS),
            *(_cell(value_text(item.fields.get(column)), CELL_CHARS) for column in columns),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _results(context: ChatContext) -> str | None:
    counts = context.results
    if counts is None:
        return None
    parts = [
        f"{value} {name}"
        for name, value in (
            ("in total", counts.total),
            ("loaded", counts.loaded),
            ("after filters", counts.filtered),
            ("visible", counts.visible),
        )
        if value is not None
    ]
    return "Results: " + ", ".join(parts) + "." if parts else None


def _selection(context: ChatContext) -> str:
    if not context.selection:
        return "Selection: nothing selected."
    named = []
    for item_id in context.selection:
        item = context.item(item_id)
        named.append(f"{item_id} ({_cell(item.title, 80)})" if item and item.title else item_id)
    return f"Selection: {len(context.selection)} selected: " + "; ".join(named) + "."


def state_lines(
    context: ChatContext,
    *,
    form_label: str = "Search form",
    known_extras: Iterable[str] = (),
) -> list[str]:
    """What the user sees, one line per part; parts the page did not send are left out,
    except the selection (nothing selected is worth knowing)."""
    lines: list[str] = []
    if context.search_form is not None:
        lines.append(f"{form_label}: {pairs(context.search_form) or EMPTY}.")
    if context.filters is not None:
        lines.append(f"Filters: {pairs(context.filters) or 'none'}.")
    results = _results(context)
    if results:
        lines.append(results)
    if context.pagination is not None:
        size = context.pagination.page_size
        per_page = f", {size} per page" if size else ""
        lines.append(f"Pagination: page {context.pagination.page}{per_page}.")
    if context.sort is not None:
        direction = "ascending" if context.sort.direction == "asc" else "descending"
        lines.append(f"Sort: by {context.sort.column}, {direction}.")
    lines.append(_selection(context))
    if context.viewer:
        lines.append(f"Open detail view: {pairs(context.viewer)}.")
    if context.current_article:
        lines.append(f"Open article: {pairs(context.current_article)}.")
    skip = set(known_extras)
    extras = {key: value for key, value in context.extras().items() if key not in skip}
    if extras:
        lines.append(f"Other page state: {pairs(extras)}.")
    return lines


def items_section(context: ChatContext, what: str = "items") -> str:
    items = context.item_summaries
    if not items:
        return f"No {what} are loaded on the page."
    return f"{len(items)} {what} on the page (summaries):\n{items_table(items)}\n{ITEMS_NOTE}"


def page_context(
    title: str,
    purpose: str,
    context: ChatContext,
    *,
    guidance: Sequence[str] = (),
    form_label: str = "Search form",
    known_extras: Iterable[str] = (),
    extra_lines: Sequence[str] = (),
    items_label: str | None = None,
) -> str:
    """The whole page context: where the user is, what they see, and how to help here."""
    where = f"The user is on the {title} page"
    if context.active_tab:
        where += f", tab {context.active_tab!r}"
        if context.active_subtab:
            where += f", subtab {context.active_subtab!r}"
    blocks = [f"{where}. {purpose}"]
    state = [*extra_lines, *state_lines(context, form_label=form_label, known_extras=known_extras)]
    blocks.append("What the user sees now:\n" + "\n".join(f"- {line}" for line in state))
    if items_label is not None:
        blocks.append(items_section(context, items_label))
    if guidance:
        blocks.append("How to help here:\n" + "\n".join(f"- {line}" for line in guidance))
    return "\n\n".join(blocks)
