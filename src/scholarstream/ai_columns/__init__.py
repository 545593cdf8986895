"""AI columns: a named column of a results table whose value for each item a model judges
from the item's text against the column's criteria (a value and a one-line reason). Values
are cached per item and computed again when the criteria or the item's text change."""

from scholarstream.ai_columns._evaluator import (
    ColumnEvaluator,
    OutputKind,
    build_agent,
    build_prompt,
    output_kind,
    register_output_type,
)
from scholarstream.ai_columns._models import (
    MAX_ITEMS_PER_REQUEST,
    OUTPUT_TYPES,
    AIColumn,
    AIColumnCreate,
    AIColumnList,
    AIColumnSpec,
    AIColumnUpdate,
    ColumnItem,
    ColumnValue,
    ColumnValues,
    ColumnValuesRequest,
    EvaluatedValue,
    OutputType,
    ResultsTable,
    TableKey,
)
from scholarstream.ai_columns._store import AIColumnStore, content_hash
from scholarstream.ai_columns._values import column_values

__all__ = [
    "MAX_ITEMS_PER_REQUEST",
    "OUTPUT_TYPES",
    "AIColumn",
    "AIColumnCreate",
    "AIColumnList",
    "AIColumnSpec",
    "AIColumnStore",
    "AIColumnUpdate",
    "ColumnEvaluator",
    "ColumnItem",
    "ColumnValue",
    "ColumnValues",
    "ColumnValuesRequest",
    "EvaluatedValue",
    "OutputKind",
    "OutputType",
    "ResultsTable",
    "TableKey",
    "build_agent",
    "build_prompt",
    "column_values",
    "content_hash",
    "output_kind",
    "register_output_type",
]
