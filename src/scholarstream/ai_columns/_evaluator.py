"""The model's judgement of each item against a column's criteria.

Each output type registers the structured answer the model must give (``register_output_type``);
one pydantic-ai ``Agent`` per column evaluates the items, at most
``settings.chat.ai_column_concurrency`` at a time, through the ``LLMGateway`` on the ``fast``
role (usage recorded under the feature ``ai_columns``). One item's failure becomes that item's
value ``None`` with the error as its reason; it never fails the others."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model
from pydantic_ai import Agent

from scholarstream.ai_columns._models import (
    TEXT_VALUE_LIMIT,
    AIColumn,
    ColumnItem,
    ColumnValue,
    ColumnValueType,
    EvaluatedValue,
    one_line,
)
from scholarstream.db import Database, OwnerScope
from scholarstream.errors import LLMError, OfflineModeError
from scholarstream.llm import LLMGateway
from scholarstream.search import FALLBACK_ERRORS, FallbackLog, FallbackReason, fallback_reason

log = logging.getLogger(__name__)

FEATURE = "ai_columns"
ROLE = "fast"

_REASON = Field(
    description="One short sentence: why this value, citing what the item says.", max_length=1000
)

INSTRUCTIONS = """\
You fill one column of a research results table. For the item you are given, answer the \
column's criteria using only what the item's text says; do not guess beyond it. Give the value \
and, as the reason, one short sentence naming the evidence (or saying that the text does not \
tell)."""


class Answer(BaseModel):
    """The structured output every output type extends: a value and a one-line reason."""

    value: Any
    reason: str = _REASON


class YesNoAnswer(Answer):
    value: bool = Field(description="true if the item meets the criteria, false if it does not.")


class TextAnswer(Answer):
    value: str = Field(
        description="A short answer of a few words (no full sentences).",
        max_length=TEXT_VALUE_LIMIT * 3,
    )


class NumberAnswer(Answer):
    value: float | None = Field(
        description="The number the criteria ask for; null when the item does not state it."
    )


@dataclass(frozen=True)
class OutputKind:
    """How one output type is asked for and read back."""

    name: str
    answer_model: Callable[[AIColumn], type[Answer]]
    describe: Callable[[AIColumn], str]
    normalize: Callable[[Any], ColumnValueType] = lambda value: value


_KINDS: dict[str, OutputKind] = {}


def register_output_type(kind: OutputKind) -> None:
    _KINDS[kind.name] = kind


def output_kind(name: str) -> OutputKind:
    try:
        return _KINDS[name]
    except KeyError:
        raise LLMError(
            f"AI columns have no output type {name!r}.",
            hint=f"Use one of: {', '.join(sorted(_KINDS))}.",
        ) from None


def _category_answer(column: AIColumn) -> type[Answer]:
    categories = tuple(column.categories or ())
    choice: Any = Literal.__getitem__(categories)
    model: type[Answer] = create_model(
        "CategoryAnswer",
        __base__=Answer,
        value=(choice, Field(description="Exactly one of the allowed categories.")),
    )
    return model


register_output_type(
    OutputKind(
        name="yes_no",
        answer_model=lambda _: YesNoAnswer,
        describe=lambda _: "Answer yes (true) or no (false).",
    )
)
register_output_type(
    OutputKind(
        name="text",
        answer_model=lambda _: TextAnswer,
        describe=lambda _: "Answer with a short text of a few words.",
        normalize=lambda value: one_line(str(value), TEXT_VALUE_LIMIT),
    )
)
register_output_type(
    OutputKind(
        name="number",
        answer_model=lambda _: NumberAnswer,
        describe=lambda _: "Answer with a number, or null when the item does not state it.",
        normalize=lambda value: None if value is None else float(value),
    )
)
register_output_type(
    OutputKind(
        name="category",
        answer_model=_category_answer,
        describe=lambda column: (
            "Answer with exactly one of these categories: " + "; ".join(column.categories or ())
        ),
    )
)


def build_agent(column: AIColumn) -> Agent[None, Answer]:
    kind = output_kind(column.output_type)
    answer: type[Answer] = kind.answer_model(column)
    return Agent(
        output_type=answer,
        instructions=f"{INSTRUCTIONS}\n{kind.describe(column)}",
        name=f"ai_column_{column.output_type}",
        retries=1,
    )


def build_prompt(column: AIColumn, item: ColumnItem) -> str:
    return f"Column: {column.name}\nCriteria: {column.criteria}\n\nThe item:\n{item.text()}"


class ColumnEvaluator:
    """Evaluates items for one owner; each model call runs in a short transaction of its own
    (the usage ledger), so evaluations may overlap."""

    def __init__(
        self,
        gateway: LLMGateway,
        database: Database,
        *,
        concurrency: int,
        role: str = ROLE,
    ) -> None:
        self.gateway = gateway
        self.database = database
        self.concurrency = max(1, concurrency)
        self.role = role

    async def check_online(self, owner_id: uuid.UUID) -> None:
        if await self.gateway.registry.offline_for_owner(self.database, owner_id):
            raise OfflineModeError(
                "AI column values need a language model, and none is configured "
                "(offline mode). Columns can still be created; their values appear once a "
                "model is configured."
            )

    async def evaluate(
        self,
        owner_id: uuid.UUID,
        column: AIColumn,
        items: Sequence[ColumnItem],
        *,
        fallbacks: FallbackLog | None = None,
    ) -> list[EvaluatedValue]:
        """One evaluation per item, in order; ``OfflineModeError`` with no model at all.
        An item the model could not evaluate is 'not available' (there is no offline way to
        answer a column's criteria), and ``fallbacks`` gets one record for the request."""
        fallbacks = fallbacks if fallbacks is not None else FallbackLog()
        if not items:
            return []
        await self.check_online(owner_id)
        agent = build_agent(column)
        kind = output_kind(column.output_type)
        gate = asyncio.Semaphore(self.concurrency)

        async def one(item: ColumnItem) -> EvaluatedValue:
            async with gate:
                return await self._evaluate_one(owner_id, agent, kind, column, item, fallbacks)

        return list(await asyncio.gather(*(one(item) for item in items)))

    async def _evaluate_one(
        self,
        owner_id: uuid.UUID,
        agent: Agent[None, Answer],
        kind: OutputKind,
        column: AIColumn,
        item: ColumnItem,
        fallbacks: FallbackLog,
    ) -> EvaluatedValue:
        try:
            # The whole call's deadline: a model that keeps writing never trips the
            # per-read timeout.
            async with (
                asyncio.timeout(self.gateway.settings.llm.deadline_seconds),
                self.database.session() as session,
            ):
                result = await self.gateway.run(
                    agent,
                    build_prompt(column, item),
                    scope=OwnerScope(session, owner_id),
                    feature=FEATURE,
                    role=self.role,
                )
        except FALLBACK_ERRORS as exc:
            fallbacks.failed(FEATURE, exc)
            return _failed(item, fallback_reason(exc), exc)
        except Exception as exc:
            # This item's failure (a dropped connection, a provider SDK error) is tolerated:
            # the batch goes on, the cell says so in plain words, the log has the details.
            log.warning("AI column %s: item %s failed", column.id, item.key, exc_info=True)
            fallbacks.failed(FEATURE, exc)
            return _failed(item, "failed", None)
        answer = result.output
        value = ColumnValue(
            item_key=item.key, value=kind.normalize(answer.value), reason=answer.reason or "-"
        )
        return EvaluatedValue(value=value, model=result.response.model_name or "unknown")


_UNAVAILABLE: dict[FallbackReason, str] = {
    "unusable": "the model's answer could not be used",
    "late": "the model did not answer in time",
    "failed": "the model call failed",
    "not_configured": "no model is set up for AI columns",
}


def _failed(item: ColumnItem, reason: FallbackReason, exc: BaseException | None) -> EvaluatedValue:
    """A 'not available' cell. A failed call names the provider's own message (the
    product's words for it); an unusable answer's details are library text, left out."""
    why = _UNAVAILABLE[reason]
    if reason == "failed" and isinstance(exc, LLMError):
        why = exc.message
    return EvaluatedValue(
        value=ColumnValue(
            item_key=item.key,
            value=None,
            reason=f"Not available: {why}",
            failed=True,
            unavailable=reason,
        ),
        model="",
    )
