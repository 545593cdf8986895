"""Sources, queries and failures in the user's words, for what the tools tell a user when no
model answers (``ToolResult.for_user``, ``ToolConfig.failure_for_user``): sources by their
labels ("PubMed", "your library"), never their ids; failures by what happened and what to
do, never an error's class or message."""

from __future__ import annotations

from collections.abc import Sequence

from scholarstream.chat.tools._registry import ToolContext
from scholarstream.errors import (
    ScholarStreamError,
    SourceCredentialsError,
    SourceQueryError,
    SourceUnavailableError,
)
from scholarstream.sources import FailureCause, SourceFailedError, failure_words, source_names

LIBRARY = "library"
YOUR_LIBRARY = "your library"

# What happened to a source, and what to do, by its error's code.
_FAILED: dict[str, tuple[str, str]] = {
    SourceUnavailableError.code: ("could not be searched just now", "Try again later."),
    SourceCredentialsError.code: (
        "refused this server's access key",
        "An administrator can check the key under Settings.",
    ),
    SourceQueryError.code: ("could not read the search", "Try simpler words."),
}
_OTHERWISE = ("could not be searched just now", "Try again later.")


def source_label(ctx: ToolContext, name: str) -> str:
    """The source's name as people write it ("PubMed", "Semantic Scholar")."""
    if name == LIBRARY:
        return YOUR_LIBRARY
    if name in source_names():
        return ctx.services.sources.get(name).info.label
    return name


def listed(items: Sequence[str], conjunction: str = "and") -> str:
    """ "A", "A and B", "A, B and C"."""
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} {conjunction} {items[-1]}"


def quoted(text: str, limit: int = 120) -> str:
    """``text`` (a query, an identifier) in quotation marks, on one line and cut at about
    ``limit`` characters."""
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + "…"
    return f"“{text}”"


def sentence(text: str) -> str:
    """``text`` as the start of a sentence ("your library ..." as "Your library ...";
    a source's label is written as it is: "arXiv")."""
    if text.startswith(YOUR_LIBRARY):
        return YOUR_LIBRARY.capitalize() + text[len(YOUR_LIBRARY) :]
    return text


Failed = tuple[str, str | None, FailureCause | None]
"""A failed source: its label, its error's code and, when it could not answer at all, why
(``sources.FailureCause``)."""


def failures(failed: Sequence[Failed], *, answered: int = 0) -> list[str]:
    """One sentence per kind of failure, for (label, error code, cause): "PubMed did not
    answer in time; the other sources answered. Retry in a few minutes." The cause says
    what happened when there is one (the sources' own wording, ``sources.failure_words``),
    else the code. ``answered``: how many other sources answered."""
    by_kind: dict[tuple[str, str], list[str]] = {}
    for label, code, cause in failed:
        kind = failure_words(cause) or _FAILED.get(code or "", _OTHERWISE)
        by_kind.setdefault(kind, []).append(label)
    others = ""
    if answered:
        others = "; the other source answered" if answered == 1 else "; the other sources answered"
    return [
        sentence(f"{listed(labels)} {what}{others}. {todo}")
        for (what, todo), labels in by_kind.items()
    ]


def failure(labels: Sequence[str], error: Exception) -> str:
    """``error`` of searching ``labels``, in words: "ClinicalTrials.gov could not be
    reached. Try again later." An error that is not a source's is "could not be searched
    just now"."""
    code = error.code if isinstance(error, ScholarStreamError) else None
    cause = error.cause if isinstance(error, SourceFailedError) else None
    return failures([(label, code, cause) for label in labels])[0]


def counted(count: int, noun: str) -> str:
    """ "1 paper", "12 papers", "1,834 studies"."""
    plural = {"study": "studies"}.get(noun, f"{noun}s")
    return f"{count:,} {noun if count == 1 else plural}"


NOTHING_FOUND = "Nothing was found for {query}. Try fewer or broader words."
