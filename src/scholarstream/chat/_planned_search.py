"""The turn's blueprint run without a model (seed 004): each step's reframed query through
its tool, and the user gets what was searched and what was found. Offline mode answers a
message that is not a command this way; with a model, a message that asks for the
literature gets the same search when the model answered without one (a small local model
often offers a query or answers from memory instead of calling the tool).

No model reads the tools' results first, so the answer is made of what each tool tells a
user in its own words (``ToolOutcome.for_user``), never what was written for a model."""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart

from scholarstream.chat._agent_loop import Emit, ToolRunner, TurnTranscript
from scholarstream.chat._commands import command_chip
from scholarstream.chat.continuity import TurnContinuity, published
from scholarstream.chat.core import SuggestedValue, TextDeltaEvent
from scholarstream.chat.pages import Resolution
from scholarstream.chat.tools import ToolContext
from scholarstream.understanding import LIFTS_DATES

NO_MODEL = (
    "No language model is configured, so these are search results, not an answer: "
    "configure a model under Settings for answers. /help lists the commands."
)
NO_TOPIC = (
    "No language model is configured, so I cannot answer questions; I search for papers, "
    "and this message names nothing to search for. Type a topic (the condition, "
    "intervention or outcome you want papers on), or use a command: {commands}. /help "
    "lists them all; configure a model under Settings to have questions answered."
)
NEEDS_LINK = (
    "There is no web search here, so I searched the literature instead. "
    "I can read a web page when you give me its address: paste the link in your next message."
)
NOT_ON_PAGE = "One of the searches this message needs is not available on this page."
SAME_SEARCH = (
    "That is the search I just ran: its results are above. Without a language model I "
    "cannot read one for you; to see one in full, type /details with its PMID, DOI or "
    "library record id."
)
MODEL_DID_NOT_SEARCH = "The model answered without searching, so the search was run for it."
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
        kept = "Read as a follow-up, keeping the conversation's topic"
        return f"{kept}: searching for “{query}”{dated}."
    if intent == "slot_fill" and continuity.classification.reason == LIFTS_DATES:
        return f"Same topic, now with no date limit: searching for “{query}”."
    if intent == "slot_fill":
        return f"Same topic, with the limits you changed: searching for “{query}”{dated}."
    return f"Searching for “{query}”{dated}."


async def offline_retrieval(
    continuity: TurnContinuity, resolution: Resolution, runner: ToolRunner
) -> str:
    parts = [line for line in [reading(continuity)] if line]
    parts += await _run_steps(continuity, resolution, runner)
    if continuity.needs_link:
        parts.append(NEEDS_LINK)
    parts.append(NO_MODEL)
    # Two steps refused for the same reason say it once.
    return "\n\n".join(dict.fromkeys(parts))


async def search_if_skipped(
    continuity: TurnContinuity,
    resolution: Resolution,
    context: ToolContext,
    transcript: TurnTranscript,
    emit: Emit,
    *,
    offered_an_action: bool,
) -> None:
    """After a model's answer to a message that asks for the literature: when the model
    did not act on it (it offered a query, answered from memory, or cannot call tools),
    the searches continuity planned run, and their results end the answer and the model's
    history (not the notice: a small model copies notices). A model that ran a tool, or
    offered an action the server runs (``offered_an_action``), did act; a search it tried
    and got refused is still the search it wanted. Where the page has none of the
    searches, they are offered as commands."""
    retrieval = {tool.name for tool in resolution.tools if tool.query_argument}
    acted = any(e.ok or e.tool_name not in retrieval for e in transcript.tool_history)
    if transcript.queries or acted or offered_an_action:
        return
    if not any(step.tool in retrieval for step in continuity.steps):
        transcript.chips.extend(planned_commands(continuity, resolution))
        return
    runner = ToolRunner(context, emit, transcript, max_calls=len(continuity.steps))
    parts = [line for line in [reading(continuity)] if line]
    parts += await _run_steps(continuity, resolution, runner, skip_missing=True)
    found = "\n\n".join(dict.fromkeys(parts))
    shown = f"{MODEL_DID_NOT_SEARCH}\n\n{found}"
    if transcript.text.strip():
        shown = f"\n\n{shown}"
    transcript.text += shown
    emit(TextDeltaEvent(text=shown))
    _add_to_last_answer(transcript.new_messages, found)


def _add_to_last_answer(messages: list[ModelMessage], text: str) -> None:
    if messages and isinstance(messages[-1], ModelResponse):
        last = messages[-1]
        messages[-1] = dataclasses.replace(last, parts=[*last.parts, TextPart(text)])


def planned_commands(
    continuity: TurnContinuity | None, resolution: Resolution
) -> list[SuggestedValue]:
    """The commands that run the retrieval follow-up continuity planned for a message
    (``/library <reframed query>`` ...)."""
    if continuity is None:
        return []
    tools = {tool.name: tool for tool in resolution.tools}
    chips = []
    for step in continuity.steps:
        tool = tools.get(step.tool or "")
        if tool is not None and tool.command_argument is not None and step.query.strip():
            chip = command_chip(tool, {tool.command_argument: step.query})
            if chip is not None:
                chips.append(chip)
    return chips


async def _run_steps(
    continuity: TurnContinuity,
    resolution: Resolution,
    runner: ToolRunner,
    *,
    skip_missing: bool = False,
) -> list[str]:
    """What each step's tool tells the user of its run; a step the page has no tool for
    is said to be missing, or (``skip_missing``) left out."""
    available = {tool.name: tool for tool in resolution.tools}
    parts = []
    for step in continuity.steps:
        tool = available.get(step.tool or "")
        if tool is None or tool.query_argument is None:
            if not skip_missing:
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
        parts.append(await runner.run_for_user(tool, arguments))
    return parts
