"""The typed boundary of AI columns: a column's spec (what the user asks of each item), the
column as stored, the items a table sends to be judged, and the values it gets back."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from scholarstream.search.core import FallbackReason, ModelFallback

OutputType = Literal["yes_no", "text", "number", "category"]
OUTPUT_TYPES: tuple[OutputType, ...] = ("yes_no", "text", "number", "category")

MAX_ITEMS_PER_REQUEST = 100
MAX_CATEGORIES = 20
REASON_LIMIT = 300
TEXT_VALUE_LIMIT = 200


class ResultsTable(StrEnum):
    """The results tables that have AI columns: the library, search results and trials."""

    LIBRARY = "library"
    SEARCH = "search"
    TRIALS = "trials"


_TABLE_KEYS = frozenset(table.value for table in ResultsTable)
RESULTS_TABLES = ", ".join(table.value for table in ResultsTable)
UNKNOWN_TABLE = f"must be one of the results tables with AI columns: {RESULTS_TABLES}"


def _known_table(value: object) -> object:
    # Before the enum's own check, whose message lists Python reprs of the values.
    if not isinstance(value, str) or value not in _TABLE_KEYS:
        raise PydanticCustomError("unknown_table", UNKNOWN_TABLE)
    return value


TableKey = Annotated[
    ResultsTable,
    BeforeValidator(_known_table),
    Field(description=f"The results table: {RESULTS_TABLES}."),
]
ColumnValueType = bool | float | str | None


def one_line(text: str, limit: int = REASON_LIMIT) -> str:
    """Whitespace collapsed to single spaces, cut to ``limit`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "\N{HORIZONTAL ELLIPSIS}"


def _clean_categories(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    cleaned = [" ".join(v.split()) for v in values]
    if len(cleaned) > MAX_CATEGORIES:
        raise ValueError(f"at most {MAX_CATEGORIES} categories")
    if any(not v for v in cleaned):
        raise ValueError("a category cannot be empty")
    if len({v.casefold() for v in cleaned}) != len(cleaned):
        raise ValueError("categories must differ from each other")
    return cleaned or None


Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
Criteria = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
Categories = Annotated[
    list[Annotated[str, StringConstraints(max_length=80)]] | None,
    AfterValidator(_clean_categories),
    Field(description="The allowed answers of a category column (2 to 20)."),
]


class AIColumnSpec(BaseModel):
    """What the user asks: a name, the criteria each item is judged on, and the kind of
    answer. ``categories`` (2 to 20) are required for, and only allowed with, ``category``."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    criteria: Criteria
    output_type: OutputType
    categories: Categories = None

    @model_validator(mode="after")
    def _categories_match_type(self) -> Self:
        if self.output_type == "category":
            if not self.categories or len(self.categories) < 2:
                raise ValueError("a category column needs at least 2 categories")
        elif self.categories:
            raise ValueError(
                f"categories are only allowed with output_type 'category', not {self.output_type!r}"
            )
        return self


class AIColumnCreate(AIColumnSpec):
    table: TableKey


class AIColumnUpdate(BaseModel):
    """A partial edit; the fields sent replace the column's, and the result must again be a
    valid spec. Editing the criteria, type or categories makes every value be computed anew."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    criteria: Criteria | None = None
    output_type: OutputType | None = None
    categories: Categories = None


class AIColumn(BaseModel):
    id: uuid.UUID
    table: str
    name: str
    criteria: str
    output_type: OutputType
    categories: list[str] | None = None
    created_at: datetime

    def spec(self) -> AIColumnSpec:
        return AIColumnSpec(
            name=self.name,
            criteria=self.criteria,
            output_type=self.output_type,
            categories=self.categories,
        )


class AIColumnList(BaseModel):
    columns: list[AIColumn]
    can_evaluate: bool = Field(description="False when no model is configured (offline mode).")
    problem: str | None = Field(default=None, description="Why values cannot be computed now.")


FieldName = Annotated[str, StringConstraints(min_length=1, max_length=60)]
FieldText = Annotated[str, StringConstraints(max_length=2000)]


class ColumnItem(BaseModel):
    """One row of a results table as the model reads it: the title, the abstract (papers) or
    summary (trials), and a few short key fields (year, phase, conditions ...)."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(min_length=1, max_length=300, description="The row's id in its table.")
    title: str = Field(min_length=1, max_length=2000)
    abstract: str | None = Field(default=None, max_length=20_000)
    summary: str | None = Field(default=None, max_length=20_000)
    fields: dict[FieldName, FieldText] = Field(default_factory=dict, max_length=20)

    def text(self) -> str:
        """The item as the model sees it (and as the cache hashes it)."""
        lines = [f"Title: {self.title}"]
        if self.abstract:
            lines.append(f"Abstract: {self.abstract}")
        if self.summary:
            lines.append(f"Summary: {self.summary}")
        lines.extend(f"{name}: {value}" for name, value in sorted(self.fields.items()) if value)
        return "\n".join(lines)


class ColumnValuesRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    items: list[ColumnItem] = Field(max_length=MAX_ITEMS_PER_REQUEST)

    @field_validator("items")
    @classmethod
    def _unique_keys(cls, items: list[ColumnItem]) -> list[ColumnItem]:
        seen: set[str] = set()
        for item in items:
            if item.key in seen:
                raise ValueError(f"item key {item.key!r} appears twice")
            seen.add(item.key)
        return items


class ColumnValue(BaseModel):
    """One cell: the value (None when the evaluation failed) and a one-line reason (or the
    error). ``cached``: taken from an earlier evaluation of the same criteria and text."""

    item_key: str
    value: ColumnValueType
    reason: str
    cached: bool = False
    failed: bool = False
    unavailable: FallbackReason | None = Field(
        default=None,
        description="Why a failed cell has no value: unusable (the model's answer could not "
        "be used), late (no answer in time), failed (the call failed). There is no offline "
        "way to answer a column's criteria: the cell is 'not available', is not stored, and "
        "is evaluated again on retry.",
    )

    @field_validator("reason")
    @classmethod
    def _one_line(cls, reason: str) -> str:
        return one_line(reason)


class EvaluatedValue(BaseModel):
    """A value just computed, with the model that computed it (kept with the cached value)."""

    value: ColumnValue
    model: str


class ColumnValues(BaseModel):
    column_id: uuid.UUID
    values: list[ColumnValue]
    fallbacks: list[ModelFallback] = Field(
        default_factory=list,
        description="Set when some cells of this request could not be evaluated: one notice "
        "in plain words (the cells say 'not available'; retry evaluates them again).",
    )
