"""One model call of a research: a selected model answering the prompt, or the synthesis
model writing the synthesis. It runs through the gateway (usage recorded for the user),
with the user's own key for the provider or else the server's, and ends within
``timeout_seconds`` (``settings.llm.timeout_seconds``) however the provider behaves. It
receives what it uses: the database (the user's scope, the usage ledger), the model
registry and the gateway.

The outcome is a value, never an exception: a provider that failed is a result the
research records (and the user may retry), not an error of the workflow running it.

==========================================  =====================================
failure                                     ``error_code`` recorded
==========================================  =====================================
no answer within the timeout                ``llm_error``
the provider refused the key (HTTP 401)     ``api_key_invalid``
any product error (no key, unknown ...)     its code (``missing_credentials`` ...)
an empty answer                             ``llm_error``
anything else the provider's SDK raised     ``llm_error``
==========================================  =====================================

The error is the product's wording of the failure (``LLMError``: the provider's message
and what to do), never an exception's class name. An answer that stopped at its length
limit (the finish reason ``length``: ``llm.max_tokens`` of the feature) is an answer: it
is kept, with ``cut_off`` set.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable

from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError

from scholarstream.db import Database, OwnerScope
from scholarstream.errors import LLMError, ScholarStreamError
from scholarstream.llm import DEFAULT_ROLE, LLMGateway, ModelRegistry
from scholarstream.research.core import CamelModel, SynthesisPrompt

__all__ = [
    "CALL_FEATURE",
    "RESEARCH_INSTRUCTIONS",
    "SYNTHESIS_FEATURE",
    "SYNTHESIS_ROLE",
    "CallOutcome",
    "ask_model",
    "ask_synthesis_model",
]

log = logging.getLogger(__name__)

CALL_FEATURE = "research"
SYNTHESIS_FEATURE = "research.synthesis"
SYNTHESIS_ROLE = "synthesis"  # the usage ledger's role of synthesis calls

RESEARCH_INSTRUCTIONS = """\
You answer a research question for a researcher or analyst. Write a thorough, accurate
research report in Markdown: the answer first, then the evidence. Name the studies,
trials, guidelines and other sources you rely on, say how strong the evidence is, and say
plainly where it is uncertain, conflicting or missing. Do not invent sources."""


class CallOutcome(CamelModel):
    """What one call produced: ``content``, or ``error`` with its ``error_code``."""

    content: str | None = None
    cut_off: bool = False
    error: str | None = None
    error_code: str | None = None

    @property
    def succeeded(self) -> bool:
        return self.content is not None


def _timed_out(exc: BaseException, model: str, timeout: float) -> CallOutcome:
    return CallOutcome(
        error=f"{model} did not answer within {timeout:g} s.", error_code=LLMError.code
    )


def _product_error(exc: BaseException, model: str, timeout: float) -> CallOutcome:
    assert isinstance(exc, ScholarStreamError)
    cause = exc.__cause__
    refused = isinstance(cause, ModelHTTPError) and cause.status_code == 401
    return CallOutcome(error=str(exc), error_code="api_key_invalid" if refused else exc.code)


def _unexpected(exc: BaseException, model: str, timeout: float) -> CallOutcome:
    log.warning("research call of %s failed", model, exc_info=exc)
    return CallOutcome(
        error=f"The call of {model} failed unexpectedly (the server's log has the details). "
        f"Try again, or pick another model than {model}.",
        error_code=LLMError.code,
    )


_Describe = Callable[[BaseException, str, float], CallOutcome]

# First match wins: a TimeoutError is not a product error, a product error is an Exception.
_FAILURES: tuple[tuple[type[BaseException], _Describe], ...] = (
    (TimeoutError, _timed_out),
    (ScholarStreamError, _product_error),
    (Exception, _unexpected),
)


def _failure(exc: Exception, model: str, timeout: float) -> CallOutcome:
    describe = next(describe for kind, describe in _FAILURES if isinstance(exc, kind))
    return describe(exc, model, timeout)


async def _ask(
    owner_id: uuid.UUID,
    model: str,
    prompt: str,
    *,
    database: Database,
    models: ModelRegistry,
    llm: LLMGateway,
    timeout_seconds: float,
    instructions: str,
    feature: str,
    role: str,
) -> CallOutcome:
    timeout = timeout_seconds
    agent: Agent[None, str] = Agent(output_type=str, instructions=instructions)
    try:
        async with asyncio.timeout(timeout):
            async with database.session() as session:
                resolved = await models.resolve_model_string(
                    model, OwnerScope(session, owner_id), role=role
                )
            # A session of its own, used only once the model has answered (to record the
            # usage): no transaction stays open while the provider thinks.
            async with database.session() as session:
                result = await llm.run_with(
                    agent, prompt, resolved, scope=OwnerScope(session, owner_id), feature=feature
                )
    except Exception as exc:
        return _failure(exc, model, timeout)
    if not result.output.strip():
        return CallOutcome(
            error=f"{model} answered with an empty text. Try again, or pick another model "
            f"than {model}.",
            error_code=LLMError.code,
        )
    # The answer budget ran out before the model finished: what it wrote is kept.
    cut_off = result.response.finish_reason == "length"
    return CallOutcome(content=result.output, cut_off=cut_off)


async def ask_model(
    owner_id: uuid.UUID,
    model: str,
    prompt: str,
    *,
    database: Database,
    models: ModelRegistry,
    llm: LLMGateway,
    timeout_seconds: float,
) -> CallOutcome:
    """``model``'s answer to the research prompt."""
    return await _ask(
        owner_id,
        model,
        prompt,
        database=database,
        models=models,
        llm=llm,
        timeout_seconds=timeout_seconds,
        instructions=RESEARCH_INSTRUCTIONS,
        feature=CALL_FEATURE,
        role=DEFAULT_ROLE,
    )


async def ask_synthesis_model(
    owner_id: uuid.UUID,
    model: str,
    prompt: SynthesisPrompt,
    *,
    database: Database,
    models: ModelRegistry,
    llm: LLMGateway,
    timeout_seconds: float,
) -> CallOutcome:
    """The synthesis ``model`` writes of the sources in ``prompt``."""
    return await _ask(
        owner_id,
        model,
        prompt.user_prompt,
        database=database,
        models=models,
        llm=llm,
        timeout_seconds=timeout_seconds,
        instructions=prompt.instructions,
        feature=SYNTHESIS_FEATURE,
        role=SYNTHESIS_ROLE,
    )
