"""One model call's budget: its answer budget (``max_tokens``), its per-read timeout, its
total deadline, and what its failure becomes (an ``LLMError``, logged once).

Every model call has a **total deadline**, ``llm.deadline_seconds``, streamed or not. The
per-read timeout (``llm.timeout_seconds``) only bounds each wait for the next bytes: a stream
that keeps producing, or a server that keeps a non-streamed request open while it writes
3,000 tokens, never trips it. When the deadline passes, the task doing the call is
cancelled, which closes the HTTP connection (httpx drops a connection whose response was
not read to the end), so the server sees the client leave and stops generating: llama-server
frees the slot instead of starving the next call.

Product code that runs an agent uses ``LLMGateway.run``/``run_with``, which do all of this.
Code that calls pydantic-ai itself (the chat loop's ``model_request_stream``, the stream
guide's ``agent.iter``) wraps each call in a ``ModelCall``::

    async with llm.call(resolved, "chat") as call:            # or ModelCall.of(...)
        async with model_request_stream(
            resolved.model, messages, model_settings=call.model_settings, ...
        ) as stream:
            async for event in stream:
                call.output_started()                            # an answer has begun
                ...

and gets, on leaving the block:

==================================  =====================================================
what happened inside                what leaves the block
==================================  =====================================================
the deadline passed, nothing came   ``LLMError`` "<model> did not answer within N s"
the deadline passed mid-answer      ``LLMError`` "<model>'s answer was cut off after N s"
a pydantic-ai model failure         ``model_error(...)``: ``ModelCapabilityError`` for
(``MODEL_FAILURES``)                what the server cannot do, else an ``LLMError``
an ``LLMError`` raised inside       itself
==================================  =====================================================

Each of these is logged once, at WARNING, with the feature, the model, the provider and
the request id (never the prompt or a key). ``call.model_settings`` carries the per-read
timeout and ``max_tokens`` (``LLMGateway.max_tokens``); ``call.capabilities`` the retry
policy (``retries``) for an agent run.

A producer that *yields* while it calls the model (an async generator, like the stream
guide) must not hold the deadline across its ``yield``: the cancellation would land in its
consumer. ``ModelCall.stream(produce)`` runs the producer in a task of its own under the
deadline and hands its items over; leaving the loop early cancels the producer (and closes
its connection).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from types import TracebackType
from typing import Any, TypeVar

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.settings import ModelSettings

from scholarstream.errors import LLMError, ModelCapabilityError
from scholarstream.llm._model_errors import MODEL_FAILURES, model_error
from scholarstream.llm._retries import retry_capabilities
from scholarstream.llm._roles import ResolvedModel
from scholarstream.logs import request_id_var
from scholarstream.settings import DEFAULT_MAX_TOKENS, LLMSettings

__all__ = ["ModelCall", "answer_budget", "log_model_failure"]

log = logging.getLogger("scholarstream.llm")

T = TypeVar("T")

_LOGGED = "_scholarstream_model_failure_logged"


def answer_budget(resolved: ResolvedModel, llm: LLMSettings, feature: str) -> int:
    """The answer budget (``max_tokens``) of ``feature`` on this model: the provider's
    override, the server's setting, the provider kind's default, the built-in default, in
    that order; ``default`` for a feature none of them names."""
    budgets: tuple[Mapping[str, int], ...] = (
        resolved.capabilities.max_tokens,
        llm.max_tokens,
        resolved.capabilities.default_max_tokens,
        DEFAULT_MAX_TOKENS,
    )
    for name in (feature, "default"):
        for budget in budgets:
            if name in budget:
                return budget[name]
    return DEFAULT_MAX_TOKENS["default"]  # pragma: no cover - DEFAULT_MAX_TOKENS names it


def log_model_failure(error: LLMError, resolved: ResolvedModel, feature: str) -> None:
    """Logs ``error`` at WARNING with the feature, model, provider and request id, once per
    error however many layers see it. Never the prompt, never a key (the message is the
    product's, and the log filter redacts keys)."""
    if getattr(error, _LOGGED, False):
        return
    with contextlib.suppress(AttributeError):  # an error that refuses attributes: log anyway
        setattr(error, _LOGGED, True)
    request_id = request_id_var.get() or "-"
    capability = error.capability if isinstance(error, ModelCapabilityError) else None
    log.warning(
        "model call failed: feature=%s model=%s provider=%s request=%s code=%s: %s",
        feature,
        resolved.model_string,
        resolved.provider,
        request_id,
        error.code,
        error.message,
        extra={
            "llm_feature": feature,
            "llm_model": resolved.model_string,
            "llm_provider": resolved.provider,
            "llm_request_id": request_id,
            "llm_code": error.code,
            "llm_capability": capability,
        },
    )


class ModelCall:
    """One call to ``resolved`` for ``feature``: its budget, its deadline, its failure.
    An async context manager, used once."""

    def __init__(
        self,
        resolved: ResolvedModel,
        feature: str,
        *,
        timeout_seconds: float,
        deadline_seconds: float,
        max_tokens: int,
    ) -> None:
        self.resolved = resolved
        self.feature = feature
        self.timeout_seconds = timeout_seconds
        """The per-read timeout (``llm.timeout_seconds``); also the retry policy's budget."""
        self.deadline_seconds = deadline_seconds
        """The most the whole call may take (``llm.deadline_seconds``)."""
        self.max_tokens = max_tokens
        self._answered = False
        self._timeout: asyncio.Timeout | None = None

    @classmethod
    def of(cls, resolved: ResolvedModel, feature: str, llm: LLMSettings) -> ModelCall:
        """The call as the server's settings budget it (for code without the gateway)."""
        return cls(
            resolved,
            feature,
            timeout_seconds=llm.timeout_seconds,
            deadline_seconds=llm.deadline_seconds,
            max_tokens=answer_budget(resolved, llm, feature),
        )

    @property
    def model_settings(self) -> ModelSettings:
        """What every request of this call carries: the per-read timeout and ``max_tokens``."""
        return {"timeout": self.timeout_seconds, "max_tokens": self.max_tokens}

    @property
    def capabilities(self) -> list[AbstractCapability[Any]]:
        """The retry policy for an agent run of this call (``capabilities=`` of a run)."""
        return retry_capabilities(self.resolved, self.timeout_seconds)

    @property
    def answered(self) -> bool:
        """Whether any of the answer had come (``output_started``)."""
        return self._answered

    def output_started(self) -> None:
        """Tells the call that the model's answer has begun: a deadline reached from now on
        cut an answer off, it did not find the model silent."""
        self._answered = True

    def remaining(self) -> float:
        """Seconds left before the deadline (the whole deadline before the call starts)."""
        if self._timeout is None or self._timeout.when() is None:
            return self.deadline_seconds
        when = self._timeout.when()
        assert when is not None
        return max(0.0, when - asyncio.get_running_loop().time())

    def error(self, exc: BaseException) -> LLMError:
        """``exc`` (a pydantic-ai model failure, or an ``LLMError``) as the product's error,
        logged once."""
        if isinstance(exc, LLMError):
            error = exc
        elif isinstance(exc, MODEL_FAILURES):
            error = model_error(exc, self.resolved, timeout_seconds=self.timeout_seconds)
        else:
            raise TypeError(f"not a model failure: {type(exc).__name__}") from exc
        log_model_failure(error, self.resolved, self.feature)
        return error

    def deadline_error(self) -> LLMError:
        """What the user reads when the deadline passed."""
        model, seconds = self.resolved.model_string, f"{self.deadline_seconds:g}"
        if self._answered:
            return LLMError(
                f"The answer of {model} was cut off after {seconds} s, the longest a model "
                "call may take.",
                hint=f"Ask for a shorter answer, pick a faster model than {model}, or raise "
                "llm.deadline_seconds (or lower the answer budget, llm.max_tokens).",
            )
        return LLMError(
            f"{model} did not answer within {seconds} s.",
            hint=f"The model's server is slow, busy or not responding: try again, pick "
            f"another model than {model}, or raise llm.deadline_seconds.",
        )

    async def __aenter__(self) -> ModelCall:
        if self._timeout is not None:
            raise RuntimeError("a ModelCall is used once")
        self._timeout = asyncio.timeout(self.deadline_seconds)
        await self._timeout.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        assert self._timeout is not None
        try:
            await self._timeout.__aexit__(exc_type, exc, tb)
        except TimeoutError as expired:
            # Our deadline cancelled the call: the connection is closed by now.
            raise self.error(self.deadline_error()) from expired
        if exc is None:
            return False
        if isinstance(exc, (*MODEL_FAILURES, LLMError)):
            error = self.error(exc)
            if error is not exc:
                raise error from exc
        return False

    async def stream(self, produce: Callable[[ModelCall], AsyncIterator[T]]) -> AsyncIterator[T]:
        """The items of ``produce(self)``, produced in a task of its own under this call's
        deadline (entered here: do not also enter the call). Each item counts as output.
        Leaving the loop early cancels the producer; its failure is raised here, as the
        context manager would raise it."""
        queue: asyncio.Queue[tuple[bool, Any]] = asyncio.Queue()

        async def pump() -> None:
            async with self:
                async for item in produce(self):
                    self.output_started()
                    queue.put_nowait((True, item))

        task = asyncio.create_task(pump())  # copies the context: the request id goes along
        task.add_done_callback(lambda _: queue.put_nowait((False, None)))
        try:
            while True:
                more, item = await queue.get()
                if not more:
                    break
                yield item
            await task  # its failure, if it failed
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait({task})
            if task.done() and not task.cancelled():
                task.exception()  # retrieved: no "never retrieved" warning for an abandoned one
