"""Slash commands: ``/search QUERY`` runs the tool whose ``command`` is ``search``. They work
with or without a model, and are all the chat can do in offline mode."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scholarstream.chat.core import SuggestedValue
from scholarstream.chat.pages import Resolution
from scholarstream.chat.tools import ToolConfig, tool_label

HELP = "help"


@dataclass(frozen=True)
class Command:
    name: str
    tool: ToolConfig

    @property
    def usage(self) -> str:
        argument = self.tool.command_argument
        return f"/{self.name}" + (f" {argument.upper()}" if argument else "")

    @property
    def summary(self) -> str:
        """What the command does, in the user's words (``ToolConfig`` requires it of every
        tool with a command: the tool's description is the model's)."""
        return self.tool.command_summary or f"Run “{tool_label(self.tool.name)}”"


@dataclass(frozen=True)
class CommandCall:
    command: Command
    arguments: dict[str, Any]


def command_line(tool: ToolConfig, arguments: dict[str, Any] | None = None) -> str | None:
    """The slash command that runs ``tool`` with ``arguments`` (its command argument, the
    one a command can fill), e.g. ``/library EGFR resistance``; its usage when the
    arguments do not give that argument; None for a tool without a command."""
    if tool.command is None:
        return None
    command = Command(tool.command, tool)
    argument = tool.command_argument
    value = (arguments or {}).get(argument) if argument else None
    if isinstance(value, list):
        value = " ".join(str(v) for v in value)
    if isinstance(value, str | int | float) and str(value).strip():
        return f"/{command.name} {str(value).strip()}"
    return command.usage


def command_chip(
    tool: ToolConfig, arguments: dict[str, Any] | None = None
) -> SuggestedValue | None:
    """A chip that runs ``command_line(tool, arguments)``; without the argument it puts
    the command in the box for the user to complete."""
    line = command_line(tool, arguments)
    if line is None or tool.command is None:
        return None
    filled = line != Command(tool.command, tool).usage or tool.command_argument is None
    return SuggestedValue(label=line, value=line if filled else f"/{tool.command} ")


def available_commands(resolution: Resolution) -> list[Command]:
    return [Command(t.command, t) for t in resolution.tools if t.command is not None]


def is_command(message: str) -> bool:
    return message.startswith("/") and len(message) > 1 and not message[1].isspace()


def parse_command(message: str, resolution: Resolution) -> CommandCall | None:
    """The call a ``/command`` message asks for; None for ``/help`` or an unknown command."""
    name, _, rest = message[1:].partition(" ")
    command = next((c for c in available_commands(resolution) if c.name == name.lower()), None)
    if command is None:
        return None
    argument = command.tool.command_argument
    text = rest.strip()
    if argument is None or not text:
        return CommandCall(command, {})
    schema = command.tool.input_schema.get("properties", {}).get(argument, {})
    # "/items a b, c" fills a list argument with each id.
    value: Any = text.replace(",", " ").split() if schema.get("type") == "array" else text
    return CommandCall(command, {argument: value})


def missing_argument_text(call: CommandCall) -> str | None:
    """What to type when a command that needs its argument came without it ("/trials"):
    None when the argument was given (the tool refused its value)."""
    command = call.command
    argument = command.tool.command_argument
    if argument is None or call.arguments:
        return None
    summary = command.summary[:1].lower() + command.summary[1:]
    return f"/{command.name} needs {argument.upper()} after it: type {command.usage} to {summary}."


def help_text(resolution: Resolution, *, offline: bool, unknown: str | None = None) -> str:
    lines = []
    if unknown is not None:
        lines.append(f"There is no command {unknown} on this page.")
    if offline:
        lines.append(
            "No language model is configured, so answers are search results, not written "
            "answers: configure one under Settings. Type a question to search, or use these "
            "commands:"
        )
    else:
        lines.append(
            "Type a question to ask the assistant, or use a command: it does one thing at "
            "once, without the model."
        )
    lines += [f"- {c.usage}: {c.summary}" for c in available_commands(resolution)]
    return "\n".join(lines)


def command_chips(resolution: Resolution) -> list[SuggestedValue]:
    chips = [SuggestedValue(label="/help", value="/help")]
    for command in available_commands(resolution)[:4]:
        chips.append(SuggestedValue(label=command.usage, value=f"/{command.name} "))
    return chips
