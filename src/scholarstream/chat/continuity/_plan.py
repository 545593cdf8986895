"""Planning (seed 004): the message becomes subquestions, each routed to the library, a
tool (a source search) or reasoning; the blueprint gives each retrieval step its query
rendered from what the conversation is about after the message (its slots), with the
publication years as a filter, never as query words."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

from scholarstream.understanding import REGULATORS, TopicReading, read_message

Route = Literal["library", "tool", "reasoning"]
SEARCH_TRIALS = "search_trials"
_LIBRARY = re.compile(r"\b(my library|my papers|library)\b", re.I)
_TRIALS = re.compile(r"\btrials?\b", re.I)
_REGULATOR = re.compile(
    # The regulators as written ("WHO", not "who"); the other words in any case.
    r"\b(?:(?-i:" + "|".join(re.escape(n) for n in REGULATORS) + r")"
    r"|regulators?|regulatory|approvals?|guidance|required|requirements?)\b",
    re.I,
)
_CLOSING = re.compile(r"^\W*(thanks?|thank you|ok(ay)?|great|perfect|that'?s (it|all))\W*$", re.I)
_URL = re.compile(r"https?://[^\s<>\"')\]]+", re.I)
# A page or the web asked for: there is no web search, so the user is asked for a link.
_WEB_PAGE = re.compile(
    r"\b(website|web ?site|web ?page|home ?page|their site|the site|link|the web|internet|"
    r"online|google)\b",
    re.I,
)
READ_WEB_PAGE = "read_web_page"
# A task on text the user has (explain, summarise, translate...): a model answers it
# without a search, unless the message also asks for the literature.
_TASK_ON_TEXT = re.compile(
    r"^\W*(?:(?:please|pls|can you|could you|would you|help me|now)\s+)*"
    r"(?:explain|define|summari[sz]e|translate|draft|write|rewrite|rephrase|reword|"
    r"paraphrase|proofread|format|interpret|tell me what)\b"
    r"|\bwhat (?:does|do)\b.{1,60}\bmean\b|\bwhat is meant by\b"
    # A definition: "what is EGFR?", "what's an odds ratio"
    r"|^\W*what(?:'s|\s+is|\s+are)\s+(?:an?\s+|the\s+)?[\w-]+(?:\s+[\w-]+)?\W*$",
    re.I,
)
# An instruction to the assistant or the page, or a greeting: no question for the
# literature (when it does not follow up on a searched topic).
_INSTRUCTION = re.compile(
    r"^\W*(?:(?:please|pls|can you|could you|would you|will you|now|ok(?:ay)?|and)\s+)*"
    r"(?:say|remember|show me (?:how|what|an? example)|split|try|test|repeat|ignore|make|"
    r"create|generate|calculate|compute|count|convert|open|go|click|add|save|delete|"
    r"export|import|run|stop|cancel|accept|approve|reject|start|rename|set|move|select|"
    r"mark|tag|sort|hi|hello|hey|good (?:morning|afternoon|evening)|who are you|"
    r"what can you do)\b",
    re.I,
)
_ASKS_FOR_LITERATURE = re.compile(
    r"\b(?:papers?|stud(?:y|ies)|articles?|evidence|literature|trials?|research|"
    r"publications?|reviews?|meta-?analys[ie]s|sources|references|citations|find|search|"
    r"look up|any data)\b",
    re.I,
)


def is_link(text: str) -> bool:
    return bool(_URL.fullmatch(text.strip()))


def without_links(message: str) -> str:
    """The message as words: an address is something to read, not a topic."""
    return " ".join(_URL.sub(" ", message).split())


class SubQuestion(BaseModel):
    text: str
    route: Route
    tool: str | None = None


class Plan(BaseModel):
    subquestions: list[SubQuestion]
    # The user wants a page read but gave no address: ask them for the link.
    needs_link: bool = False


class BlueprintStep(BaseModel):
    route: Route
    tool: str | None
    query: str
    year_from: int | None = None
    year_to: int | None = None


# Where a long message asks for something: its opening words ("Find papers similar to
# this abstract:"), not a word of the text it pastes ("...in this trial...").
_REQUEST_WORDS = 30
_REQUEST_END = re.compile(r"[:\n]")


def _request_of(message: str) -> str:
    words = message.split()
    if len(words) <= _REQUEST_WORDS:
        return message
    opening = " ".join(words[:_REQUEST_WORDS])
    end = _REQUEST_END.search(opening)
    return opening[: end.start()] if end else opening


def asks_for_literature(message: str) -> bool:
    """Whether the message's request names the literature (papers, studies, evidence...)."""
    return bool(_ASKS_FOR_LITERATURE.search(_request_of(message)))


def is_task(message: str, *, follows_up: bool) -> bool:
    """Whether the message asks for something other than the literature: work on text
    ("explain the second result", "what does NNT mean?"), or, when it does not follow up
    on a searched topic, an instruction or a greeting ("split these", "hello")."""
    request = _request_of(message)
    if _ASKS_FOR_LITERATURE.search(request):
        return False
    return bool(_TASK_ON_TEXT.search(request)) or (
        not follows_up and bool(_INSTRUCTION.search(request))
    )


def build_plan(message: str, *, follows_trials: bool = False) -> Plan:
    """Rule-based routing: a link the user gives is read; the library when the user names
    it, trials when they ask for trials (or follow on from a search of the registry:
    "what about PTSD?" after ongoing trials of psilocybin), the literature sources
    otherwise; a closing remark needs no retrieval. A page asked for without its address is
    searched for, and the user is asked for the link."""
    if _CLOSING.match(message) or read_message(message).closing:
        return Plan(subquestions=[SubQuestion(text=message, route="reasoning")])
    links = list(dict.fromkeys(m.rstrip(".,;:") for m in _URL.findall(message)))
    if links:
        return Plan(
            subquestions=[SubQuestion(text=url, route="tool", tool=READ_WEB_PAGE) for url in links]
        )
    request = _request_of(message)
    needs_link = bool(_WEB_PAGE.search(request))
    if _LIBRARY.search(request):
        return Plan(
            subquestions=[SubQuestion(text=message, route="library", tool="search_library")],
            needs_link=needs_link,
        )
    if _TRIALS.search(request) or follows_trials:
        # The registry, and the library, which holds what was published on the trials and
        # answers when the registry cannot be reached; a regulator's question ("What has the
        # FDA required for confirmatory trials?") is one for the literature as well.
        steps = [
            SubQuestion(text=message, route="tool", tool=SEARCH_TRIALS),
            SubQuestion(text=message, route="library", tool="search_library"),
        ]
        if _REGULATOR.search(request):
            steps.append(SubQuestion(text=message, route="tool", tool="search_literature"))
        return Plan(subquestions=steps, needs_link=needs_link)
    return Plan(
        subquestions=[
            SubQuestion(text=message, route="library", tool="search_library"),
            SubQuestion(text=message, route="tool", tool="search_literature"),
        ],
        needs_link=needs_link,
    )


def build_blueprint(plan: Plan, topic: TopicReading) -> list[BlueprintStep]:
    """Every retrieval step gets the query rendered from ``topic`` and its years; an
    address is read as given."""
    query = topic.query()
    return [
        BlueprintStep(route=sq.route, tool=sq.tool, query=sq.text)
        if sq.tool == READ_WEB_PAGE
        else BlueprintStep(
            route=sq.route,
            tool=sq.tool,
            query=query,
            year_from=topic.year_from,
            year_to=topic.year_to,
        )
        for sq in plan.subquestions
        if sq.route != "reasoning" and (sq.tool == READ_WEB_PAGE or query)
    ]
