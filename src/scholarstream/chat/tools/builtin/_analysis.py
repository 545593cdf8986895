"""Counting over the items on the page (seed 002, "Enhance"): the model asks, the tool
counts, so "what's the most common phase among these 35 trials?" is answered from exact
numbers, not from the model's reading of a table.

Operations over the item summaries' ``fields``: ``count`` (optionally of items whose field
equals a value), ``distribution`` of a field (each element of a list-valued field counts;
items without a value are counted apart), ``compare`` (the distribution of one field within
each group of another) and ``summary`` of a numeric field (min, max, mean, median).
Percentages are of the items analysed, with one decimal."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, model_validator

from scholarstream.chat._builtin_payloads import (
    ANALYSIS_RESULT,
    AnalysisFilter,
    AnalysisGroup,
    AnalysisResult,
    AnalysisRow,
    NumericSummary,
)
from scholarstream.chat.core import ItemSummary, SummaryValue
from scholarstream.chat.tools._execution import ToolArgumentsError
from scholarstream.chat.tools._registry import ToolConfig, ToolContext, ToolResult, register_tool
from scholarstream.chat.tools.builtin._arguments import ToolArguments, input_schema, parse_arguments
from scholarstream.errors import InvalidInputError

Operation = Literal["count", "distribution", "compare", "summary"]
NO_VALUE = "(no value)"
TITLE = "title"


class AnalyzeArgs(ToolArguments):
    operation: Operation = Field(
        default="distribution",
        description="count: how many items (optionally whose field equals value); "
        "distribution: how often each value of field occurs; compare: the distribution of "
        "field within each group of group_by; summary: min, max, mean, median of a numeric "
        "field.",
    )
    field: str | None = Field(
        default=None,
        min_length=1,
        max_length=80,
        description="A key of the item summaries' fields (e.g. phase, status, year), or "
        "title. Required except for a plain count.",
    )
    value: str | int | float | bool | None = Field(
        default=None, description="count only: count the items whose field equals this."
    )
    group_by: str | None = Field(
        default=None, min_length=1, max_length=80, description="compare only: the grouping field."
    )
    only_selected: bool = Field(
        default=False, description="Analyse only the items the user selected."
    )

    @model_validator(mode="after")
    def _consistent(self) -> AnalyzeArgs:
        if self.operation != "count" and self.field is None:
            raise ValueError(f"{self.operation} needs a field")
        if self.value is not None and (self.operation != "count" or self.field is None):
            raise ValueError("value filters a count: give operation count and a field with it")
        if (self.operation == "compare") != (self.group_by is not None):
            raise ValueError("group_by goes with operation compare, and compare needs it")
        return self


# --- reading the summaries ---------------------------------------------------------------


def _text(value: SummaryValue) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value).strip()


def _raw(item: ItemSummary, field: str) -> SummaryValue:
    return item.title if field == TITLE else item.fields.get(field)


def _values(item: ItemSummary, field: str) -> list[str]:
    """The item's distinct values of ``field``; empty when it has none."""
    raw = _raw(item, field)
    values = raw if isinstance(raw, list) else [raw]
    return list(dict.fromkeys(text for value in values if (text := _text(value))))


def _field(name: str, items: Sequence[ItemSummary]) -> str:
    """``name`` as the summaries spell it; an unknown field is the model's mistake, and the
    answer lists the fields there are."""
    available = sorted({key for item in items for key in item.fields})
    if name == TITLE or name in available:
        return name
    for key in available:
        if key.casefold() == name.casefold():
            return key
    raise ToolArgumentsError(
        f"No item on the page has the field {name!r}.",
        hint=f"The items' fields: {', '.join([*available, TITLE])}.",
        for_user=f"No item on this page has the field “{name}”. The items' fields: "
        f"{', '.join([*available, TITLE])}.",
    )


def _percent(count: int, total: int) -> float:
    return round(100 * count / total, 1) if total else 0.0


def _rows(counts: Counter[str], total: int) -> list[AnalysisRow]:
    ordered = sorted(counts.items(), key=lambda pair: (-pair[1], pair[0].casefold()))
    return [AnalysisRow(value=v, count=c, percent=_percent(c, total)) for v, c in ordered]


def _distribution(items: Sequence[ItemSummary], field: str) -> tuple[list[AnalysisRow], int]:
    counts: Counter[str] = Counter()
    missing = 0
    for item in items:
        values = _values(item, field)
        counts.update(values)
        missing += not values
    return _rows(counts, len(items)), missing


def _number(value: SummaryValue) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).replace(",", "").strip())
    except ValueError:
        return None


# --- operations --------------------------------------------------------------------------


def _result(args: AnalyzeArgs, total: int, **parts: Any) -> AnalysisResult:
    base: dict[str, Any] = {
        "operation": args.operation,
        "field": args.field,
        "filter": None,
        "group_by": args.group_by,
        "total": total,
        "matched": None,
        "missing": 0,
        "rows": [],
        "groups": [],
        "stats": None,
    }
    return AnalysisResult.model_validate({**base, **parts})


def count(args: AnalyzeArgs, items: Sequence[ItemSummary]) -> AnalysisResult:
    total = len(items)
    if args.field is None:
        return _result(args, total, matched=total)
    field = _field(args.field, items)
    missing = sum(1 for item in items if not _values(item, field))
    if args.value is None:
        return _result(args, total, field=field, matched=total - missing, missing=missing)
    wanted = _text(args.value).casefold()
    wanted = {"true": "yes", "false": "no"}.get(wanted, wanted)
    matched = sum(1 for item in items if any(v.casefold() == wanted for v in _values(item, field)))
    return _result(
        args,
        total,
        field=field,
        filter=AnalysisFilter(field=field, value=_text(args.value)),
        matched=matched,
        missing=missing,
    )


def distribution(args: AnalyzeArgs, items: Sequence[ItemSummary]) -> AnalysisResult:
    field = _field(args.field or "", items)
    rows, missing = _distribution(items, field)
    return _result(args, len(items), field=field, rows=rows, missing=missing)


def compare(args: AnalyzeArgs, items: Sequence[ItemSummary]) -> AnalysisResult:
    field = _field(args.field or "", items)
    group_by = _field(args.group_by or "", items)
    members: dict[str | None, list[ItemSummary]] = {}
    for item in items:
        in_groups: list[str | None] = [*_values(item, group_by)] or [None]
        for group in in_groups:
            members.setdefault(group, []).append(item)
    groups = []
    for group, grouped in sorted(
        members.items(), key=lambda pair: (pair[0] is None, -len(pair[1]), pair[0] or "")
    ):
        rows, missing = _distribution(grouped, field)
        groups.append(AnalysisGroup(group=group, total=len(grouped), missing=missing, rows=rows))
    overall, missing = _distribution(items, field)
    return _result(
        args,
        len(items),
        field=field,
        group_by=group_by,
        rows=overall,
        missing=missing,
        groups=groups,
    )


def summary(args: AnalyzeArgs, items: Sequence[ItemSummary]) -> AnalysisResult:
    field = _field(args.field or "", items)
    numbers: list[float] = []
    missing = 0
    for item in items:
        raw = _raw(item, field)
        found = [
            n for v in (raw if isinstance(raw, list) else [raw]) if (n := _number(v)) is not None
        ]
        numbers.extend(found)
        missing += not found
    if not numbers:
        raise ToolArgumentsError(
            f"The field {field!r} holds no numbers.",
            hint="Use operation distribution for a field of words.",
            for_user=f"The field “{field}” holds no numbers.",
        )
    stats = NumericSummary(
        count=len(numbers),
        min=min(numbers),
        max=max(numbers),
        mean=round(statistics.fmean(numbers), 4),
        median=statistics.median(numbers),
    )
    return _result(args, len(items), field=field, missing=missing, stats=stats)


OPERATIONS = {"count": count, "distribution": distribution, "compare": compare, "summary": summary}


# --- text for the model ------------------------------------------------------------------


def _number_text(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:,.2f}"


def _row_lines(rows: Sequence[AnalysisRow], indent: str = "- ") -> list[str]:
    return [f"{indent}{row.value}: {row.count} ({row.percent:.1f}%)" for row in rows]


def _most_common(rows: Sequence[AnalysisRow], total: int) -> str:
    if not rows:
        return "No item has a value for it."
    top = [row for row in rows if row.count == rows[0].count]
    names = " and ".join(row.value for row in top)
    tied = " (tied)" if len(top) > 1 else ""
    return f"Most common{tied}: {names}, {top[0].count} of {total} items ({top[0].percent:.1f}%)."


def describe(result: AnalysisResult, scope: str) -> str:
    total = result.total
    field = result.field or ""
    if result.operation == "count":
        if result.filter is not None:
            share = _percent(result.matched or 0, total)
            return (
                f"{result.matched} of {total} {scope} have {field} = {result.filter.value!r} "
                f"({share:.1f}%)."
            )
        if result.field is not None:
            return (
                f"{result.matched} of {total} {scope} have a value for {field}; "
                f"{result.missing} have none."
            )
        return f"There are {total} {scope}."
    if result.operation == "summary" and result.stats is not None:
        s = result.stats
        return (
            f"{field} over {s.count} values of {total} {scope}: min {_number_text(s.min)}, "
            f"max {_number_text(s.max)}, mean {_number_text(s.mean)}, median "
            f"{_number_text(s.median)}; {result.missing} items have no number for it."
        )
    lines = [f"Distribution of {field} across {total} {scope}:"]
    lines += _row_lines(result.rows)
    if result.missing:
        lines.append(f"- {NO_VALUE}: {result.missing} ({_percent(result.missing, total):.1f}%)")
    if sum(row.count for row in result.rows) + result.missing > total:
        lines.append("Items can have several values, so the counts add up to more than the items.")
    lines.append(_most_common(result.rows, total))
    for group in result.groups:
        name = group.group if group.group is not None else f"(no {result.group_by})"
        lines.append(f"\n{result.group_by} = {name} ({group.total} items):")
        lines += _row_lines(group.rows, "  - ")
        if group.missing:
            lines.append(f"  - {NO_VALUE}: {group.missing}")
    return "\n".join(lines)


async def analyze_items(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    args = parse_arguments("analyze_items", AnalyzeArgs, params)
    items = ctx.chat.item_summaries
    scope = "items on the page"
    if args.only_selected:
        selected = set(ctx.chat.selection)
        items = [item for item in items if item.id in selected]
        scope = "selected items"
    if not items:
        raise InvalidInputError(
            f"There are no {scope} to analyse.",
            hint="Analyse after results are loaded (or select some items first); "
            "analyze_items counts over the item summaries the page sends.",
        )
    result = OPERATIONS[args.operation](args, items)
    text = describe(result, scope)
    shown = ctx.chat.results.total if ctx.chat.results else None
    if shown is not None and shown > len(ctx.chat.item_summaries):
        text += (
            f"\nThe page has {shown} results in all but sent {len(ctx.chat.item_summaries)}: "
            "these numbers cover only those."
        )
    return ToolResult(
        text=text,
        for_user=for_user(result, scope),
        payload=ANALYSIS_RESULT.payload(result.model_dump(mode="json")),
    )


# --- text for a person -------------------------------------------------------------------


def _words(field: str) -> str:
    """A field's key as a person reads it: ``start_date`` as "start date"."""
    return field.replace("_", " ")


def for_user(result: AnalysisResult, scope: str) -> str:
    """The count in one sentence, with the field in words; the table is the card's."""
    total = result.total
    field = _words(result.field or "")
    if result.operation == "count":
        if result.filter is not None:
            share = _percent(result.matched or 0, total)
            return (
                f"{result.matched} of {total} {scope} have {field} “{result.filter.value}” "
                f"({share:.0f}%)."
            )
        if result.field is not None:
            return f"{result.matched} of {total} {scope} have a {field}."
        return f"There are {total} {scope}."
    if result.operation == "summary" and result.stats is not None:
        s = result.stats
        return (
            f"The {field} of {s.count} of {total} {scope}: from {_number_text(s.min)} to "
            f"{_number_text(s.max)}, median {_number_text(s.median)}."
        )
    grouped = f", by {_words(result.group_by)}" if result.group_by else ""
    top = result.rows[0] if result.rows else None
    common = f"; the most common is {top.value} ({top.count})" if top else ""
    return f"Counted the {field} of {total} {scope}{grouped}{common}."


ANALYZE_ITEMS = register_tool(
    ToolConfig(
        name="analyze_items",
        description="Count, tabulate and compare the items on the page exactly (from their "
        "summaries' fields): a count (optionally of items whose field equals a value), the "
        "distribution of a field with percentages, a field's distribution per group of "
        "another field, or min/max/mean/median of a numeric field. Use it for any question "
        "about how many, which is most common, or how items split, instead of counting.",
        input_schema=input_schema(AnalyzeArgs),
        executor=analyze_items,
        category="items",
        payload_type=ANALYSIS_RESULT.name,
        is_global=False,
        command="analyze",
        command_argument="field",
        command_summary="Count and tabulate the items on this page by one of their fields",
    )
)
