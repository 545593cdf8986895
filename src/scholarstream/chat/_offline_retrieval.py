"""Offline mode's answer to a message that is not a command (seed 004): the turn's
blueprint runs as it is, each step's reframed query through its tool, and the user gets
what was searched and what was found. Follow-ups work the same as with a model."""

from __future__ import annotations

from pydantic_ai import ModelRetry

from scholarstream.chat._agent_loop import ToolRunner
from scholarstream.chat.continuity import TurnContinuity, published
from scholarstream.chat.pages import Resolution

NO_MODEL = (
    "No language model is configured, so these are search results, not an answer: "
    "configure a model under Settings for answers. /help lists the commands."
)
NEEDS_LINK = (
    "There is no web search here, so I searched your library and the literature sources. "
    "I can read a web page when you give me its address: paste the link in your next message."
)
LIBRARY = "library"


def reading(continuity: TurnContinuity) -> str:
    """One line on how the message was read, so a carried topic is never a surprise."""
    query = continuity.refined_query
    intent = continuity.classification.intent
    years = published(continuity.topic)
    dated = f", published {years}" if years else ""
    if intent == "followup_continuation":
        return f"Read as a follow-up on the conversation's topic: searching for “{query}”{dated}."
    if intent == "slot_fill":
        return f"Read as a narrower scope for the same topic: searching for “{query}”{dated}."
    return f"Searching for “{query}”{dated}."


async def offline_retrieval(
    continuity: TurnContinuity, resolution: Resolution, runner: ToolRunner
) -> str:
    available = {tool.name: tool for tool in resolution.tools}
    parts = [reading(continuity)]
    for step in continuity.steps:
        tool = available.get(step.tool or "")
        if tool is None or tool.query_argument is None:
            parts.append(f"({step.tool} is not available on this page.)")
            continue
        arguments: dict[str, object] = {tool.query_argument: step.query}
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
        try:
            parts.append(await runner.run(tool, arguments))
        except ModelRetry as exc:  # the query was refused; with no model, say why
            parts.append(f"{tool.name}: {exc.message}")
    if continuity.needs_link:
        parts.append(NEEDS_LINK)
    parts.append(NO_MODEL)
    return "\n\n".join(parts)
