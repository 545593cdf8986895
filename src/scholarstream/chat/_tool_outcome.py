"""How one run of a chat tool ended, and what a user reads of it.

A tool's result carries two texts: ``ToolResult.text`` for a model and
``ToolResult.for_user`` for a person. A failure is worded for a person by the tool's
``ToolConfig.failure_for_user``, refused arguments by ``ToolArgumentsError.for_user``, an
error that says it for a person by its own ``for_user`` (``ToolFailedError``), anything else
by the product's message alone (its hint may be for a model). The model's text (it names
tools, tells the model what to do, and may carry a library's error class) never reaches
the user through this."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scholarstream.chat.tools import (
    ToolConfig,
    ToolContext,
    ToolFailedError,
    ToolNotFoundError,
    ToolResult,
)
from scholarstream.errors import ScholarStreamError

DONE = "Done."
NOT_RUN = "Not run: this answer has already run as many steps as one answer may."
COULD_NOT = "That could not be done just now. Try again later."


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
            return self.result.for_user
        if isinstance(self.error, ToolFailedError | ToolNotFoundError):
            return self.error.for_user
        if self.error is None:
            return NOT_RUN
        if tool.failure_for_user is not None:
            return tool.failure_for_user(self.error, arguments, context)
        # The product's own errors are worded for people; anything else is not shown.
        return self.error.message if isinstance(self.error, ScholarStreamError) else COULD_NOT
