"""The usage ledger: tokens and cost of every model run, per user and feature."""

from __future__ import annotations

from decimal import Decimal

from genai_prices import Usage, calc_price
from pydantic import BaseModel
from pydantic_ai.usage import RunUsage
from sqlalchemy import func

from scholarstream.db import OwnerScope
from scholarstream.db.tables import LLMUsage
from scholarstream.llm._providers import split_model_string
from scholarstream.llm._roles import ResolvedModel
from scholarstream.settings import Settings

_MTOK = Decimal(1_000_000)


def estimate_cost(settings: Settings, model_string: str, usage: RunUsage) -> Decimal | None:
    """USD from the configured price, else the genai-prices table; None if unknown."""
    configured = settings.llm.prices.get(model_string)
    if configured is not None:
        return (
            Decimal(str(configured.input_per_mtok)) * usage.input_tokens
            + Decimal(str(configured.output_per_mtok)) * usage.output_tokens
        ) / _MTOK
    try:
        provider, model_name = split_model_string(model_string)
        price = calc_price(
            Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens),
            model_ref=model_name,
            provider_id=provider,
        )
    except LookupError:
        return None
    return Decimal(price.total_price)


async def record_usage(
    scope: OwnerScope,
    settings: Settings,
    *,
    feature: str,
    resolved: ResolvedModel,
    usage: RunUsage,
) -> LLMUsage:
    row = scope.add(
        LLMUsage(
            feature=feature,
            role=resolved.role,
            model=resolved.model_string,
            provider=resolved.provider,
            credential_source=resolved.credential_source,
            requests=usage.requests,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=estimate_cost(settings, resolved.model_string, usage),
        )
    )
    await scope.session.flush()
    return row


class UsageTotal(BaseModel):
    """A user's model usage summed per model and feature."""

    model: str
    feature: str
    runs: int
    requests: int
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal | None


async def usage_totals(scope: OwnerScope) -> list[UsageTotal]:
    query = (
        scope.select(LLMUsage)
        .with_only_columns(
            LLMUsage.model,
            LLMUsage.feature,
            func.count(),
            func.sum(LLMUsage.requests),
            func.sum(LLMUsage.input_tokens),
            func.sum(LLMUsage.output_tokens),
            func.sum(LLMUsage.cost_usd),
        )
        .group_by(LLMUsage.model, LLMUsage.feature)
        .order_by(LLMUsage.model, LLMUsage.feature)
    )
    rows = (await scope.session.execute(query)).all()
    return [
        UsageTotal(
            model=r[0],
            feature=r[1],
            runs=int(r[2]),
            requests=int(r[3] or 0),
            input_tokens=int(r[4] or 0),
            output_tokens=int(r[5] or 0),
            cost_usd=Decimal(r[6]) if r[6] is not None else None,
        )
        for r in rows
    ]
