"""Page configurations (seed 002, "Configurations"): which payloads, tools and client
actions a page, tab and subtab use, and how the page describes itself to the model.
Resolution is exactly: global + page + tab + subtab."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from scholarstream.chat.core import ChatContext, PayloadType, get_payload_type, payload_types
from scholarstream.chat.tools import ToolConfig, get_tool, tools
from scholarstream.errors import ConfigurationError, InvalidInputError

ContextBuilder = Callable[[ChatContext], str]
"""Page-specific instructions for the model, built from what the user sees."""


@dataclass(frozen=True)
class ClientAction:
    """Something the page's client can do when a suggested action names it."""

    action: str
    description: str


@dataclass(frozen=True)
class SubTabConfig:
    payloads: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class TabConfig:
    payloads: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    subtabs: Mapping[str, SubTabConfig] = field(default_factory=dict)


@dataclass(frozen=True)
class PageConfig:
    page: str
    context_builder: ContextBuilder | None = None
    payloads: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    tabs: Mapping[str, TabConfig] = field(default_factory=dict)
    client_actions: tuple[ClientAction, ...] = ()


_PAGES: dict[str, PageConfig] = {}


def register_page(
    page: str,
    *,
    context_builder: ContextBuilder | None = None,
    payloads: Iterable[str] = (),
    tools: Iterable[str] = (),
    tabs: Mapping[str, TabConfig] | None = None,
    client_actions: Iterable[ClientAction] = (),
) -> PageConfig:
    if page in _PAGES:
        raise ValueError(f"chat page {page!r} is registered twice")
    config = PageConfig(
        page=page,
        context_builder=context_builder,
        payloads=tuple(payloads),
        tools=tuple(tools),
        tabs=dict(tabs or {}),
        client_actions=tuple(client_actions),
    )
    _PAGES[page] = config
    return config


def get_page(page: str) -> PageConfig:
    config = _PAGES.get(page)
    if config is None:
        raise InvalidInputError(
            f"The chat does not know the page {page!r}.",
            hint=f"Send current_page as one of: {', '.join(sorted(_PAGES))}.",
        )
    return config


def pages() -> list[PageConfig]:
    return sorted(_PAGES.values(), key=lambda p: p.page)


@dataclass(frozen=True)
class Resolution:
    """What one request may use, and where the page's part of the system prompt comes from."""

    page: PageConfig
    tools: list[ToolConfig]
    payloads: list[PayloadType]
    client_actions: list[ClientAction]

    def tool(self, name: str) -> ToolConfig | None:
        return next((t for t in self.tools if t.name == name), None)

    def llm_payloads(self) -> list[PayloadType]:
        return [p for p in self.payloads if p.source == "llm"]


def resolve(context: ChatContext) -> Resolution:
    """Global + page + tab + subtab, in that order, each name once. An unknown page, tab or
    subtab is the client's mistake (``InvalidInputError``); a config naming an unregistered
    tool or payload is ours (``ConfigurationError``)."""
    page = get_page(context.current_page)
    tool_names = [t.name for t in tools() if t.is_global] + list(page.tools)
    payload_names = [p.name for p in payload_types() if p.is_global] + list(page.payloads)
    if context.active_tab is not None:
        tab = page.tabs.get(context.active_tab)
        if tab is None:
            raise InvalidInputError(
                f"The page {page.page!r} has no chat tab {context.active_tab!r}.",
                hint=f"Its tabs: {', '.join(sorted(page.tabs)) or 'none (send no active_tab)'}.",
            )
        tool_names += tab.tools
        payload_names += tab.payloads
        if context.active_subtab is not None:
            subtab = tab.subtabs.get(context.active_subtab)
            if subtab is None:
                raise InvalidInputError(
                    f"The tab {context.active_tab!r} has no subtab {context.active_subtab!r}.",
                    hint=f"Its subtabs: {', '.join(sorted(tab.subtabs)) or 'none'}.",
                )
            tool_names += subtab.tools
            payload_names += subtab.payloads
    elif context.active_subtab is not None:
        raise InvalidInputError(
            "A subtab was sent without its tab.", hint="Send active_tab with active_subtab."
        )
    try:
        resolved_tools = [get_tool(name) for name in dict.fromkeys(tool_names)]
        resolved_payloads = [get_payload_type(name) for name in dict.fromkeys(payload_names)]
    except KeyError as exc:
        raise ConfigurationError(f"Chat page {page.page!r}: {exc.args[0]}") from exc
    return Resolution(
        page=page,
        tools=resolved_tools,
        payloads=resolved_payloads,
        client_actions=list(page.client_actions),
    )
