"""Offline mode's answer to a message that is not a command (seed 004): the turn's
blueprint runs as it is, each step's reframed query through its tool, and the user gets
what was searched and what was found. Follow-ups work the same as with a model.

No model reads the tools' results first, so the answer is made of what each tool tells a
user in its own words: a result its ``ToolResult.for_user``, a failure its
``ToolConfig.failure_for_user``, refused arguments their ``ToolArgumentsError.for_user``.
What was written for the model (``ToolResult.text``, an error's message and hint) is never
shown: it names tools, tells the model what to do, and may carry a library's error class."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from pydantic_ai import ModelRetry

from scholarstream.chat._agent_loop import ToolRunner
from scholarstream.chat.continuity import TurnContinuity, published
from scholarstream.chat.pages import Resolution
from scholarstream.chat.tools import (
    ToolArgumentsError,
    ToolConfig,
    ToolContext,
    ToolProgress,
    ToolResult,
)

NO_MODEL = (
    "No language model is configured, so these are search results, not an answer: "
    "configure a model under Settings for answers. /help lists the commands."
)
NEEDS_LINK = (
    "There is no web search here, so I searched the literature instead. "
    "I can read a web page when you give me its address: paste the link in your next message."
)
NOT_ON_PAGE = "One of the searches this message needs is not available on this page."
DONE = "Done."
NOT_RUN = "Not run: this answer has already run as many steps as one answer may."
COULD_NOT = "That could not be done just now. Try again later."
LIBRARY = "library"
QUOTED_CHARS = 120


def reading(continuity: TurnContinuity) -> str | None:
    """One line on how the message was read, so a carried topic is never a surprise; None
    when there is no query (a message that is only a link)."""
    query = " ".join(continuity.refined_query.split())
    if not query:
        return None
    if len(query) > QUOTED_CHARS:  # a long message is searched as it is, not quoted whole
        query = query[:QUOTED_CHARS].rsplit(" ", 1)[0] + "…"
    intent = continuity.classification.intent
    years = published(continuity.topic)
    dated = f", published {years}" if years else ""
    if intent == "followup_continuation":
        return f"Read as a follow-up on the conversation's topic: searching for “{query}”{dated}."
    if intent == "slot_fill":
        return f"Read as a narrower scope for the same topic: searching for “{query}”{dated}."
    return f"Searching for “{query}”{dated}."


@dataclass
class ToolOutcome:
    """How one run of a tool ended: its result, or the error it raised (neither: it was
    not run)."""

    result: ToolResult | None = None
    error: Exception | None = None

    def for_user(self, tool: ToolConfig, arguments: dict[str, Any], context: ToolContext) -> str:
        """What the user reads of the run: the result's own words, the refusal's, or the
        failure as the tool words it."""
        if self.result is not None:
            return self.result.for_user or DONE
        if isinstance(self.error, ToolArgumentsError):
            return self.error.for_user
        if self.error is None:
            return NOT_RUN
        if tool.failure_for_user is None:
            return COULD_NOT
        return tool.failure_for_user(self.error, arguments, context)


def watched(tool: ToolConfig) -> tuple[ToolConfig, ToolOutcome]:
    """``tool``, with an executor that notes its result or its error (which still goes on
    to the caller) in the outcome returned beside it: the runner keeps only the model's text."""
    outcome = ToolOutcome()
    executor = tool.executor

    async def watching(
        params: dict[str, Any], ctx: ToolContext
    ) -> AsyncIterator[ToolProgress | ToolResult]:
        try:
            produced = executor(params, ctx)
            if inspect.isawaitable(produced):
                result: ToolResult = await produced
                outcome.result = result
                yield result
                return
            async for item in produced:
                if isinstance(item, ToolResult):
                    outcome.result = item
                yield item
        except Exception as exc:
            outcome.error = exc
            raise

    return dataclasses.replace(tool, executor=watching), outcome


async def run_for_user(runner: ToolRunner, tool: ToolConfig, arguments: dict[str, Any]) -> str:
    """Runs ``tool`` through ``runner`` (its events, payload and queries as in any turn) and
    returns what the user reads of the run, never the text the runner returns for a model."""
    tool_watched, outcome = watched(tool)
    try:
        await runner.run(tool_watched, arguments)
    except ModelRetry as exc:  # the arguments were refused: the cause says why
        if isinstance(exc.__cause__, Exception):
            outcome.error = exc.__cause__
    return outcome.for_user(tool, arguments, runner.context)


async def offline_retrieval(
    continuity: TurnContinuity, resolution: Resolution, runner: ToolRunner
) -> str:
    available = {tool.name: tool for tool in resolution.tools}
    parts = [line for line in [reading(continuity)] if line]
    for step in continuity.steps:
        tool = available.get(step.tool or "")
        if tool is None or tool.query_argument is None:
            parts.append(NOT_ON_PAGE)
            continue
        arguments: dict[str, Any] = {tool.query_argument: step.query}
        accepted = tool.input_schema.get("properties", {})
        for key, year in (("year_from", step.year_from), ("year_to", step.year_to)):
            if year is not None and key in accepted:
                arguments[key] = year
        if tool.name == "search_literature" and any(
            s.tool == "search_library" for s in continuity.steps
        ):
            # The library has its own step: the sources' search need not repeat it.
            sources = runner.context.services.search.default_sources
            arguments["sources"] = [s for s in sources if s != LIBRARY] or None
        parts.append(await run_for_user(runner, tool, arguments))
    if continuity.needs_link:
        parts.append(NEEDS_LINK)
    parts.append(NO_MODEL)
    # Two steps refused for the same reason say it once.
    return "\n\n".join(dict.fromkeys(parts))
