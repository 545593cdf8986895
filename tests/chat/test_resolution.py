"""Resolution of what a request may use: global + page + tab + subtab, in that order, each
name once; the client's mistakes (an unknown page, tab or subtab) and ours (a config naming
something unregistered) are told apart. Throwaway registrations are removed afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

import scholarstream.chat  # noqa: F401  (registers the built-ins)
from scholarstream.chat.core import (
    ChatContext,
    PayloadType,
    make_json_parser,
    register_payload_type,
)
from scholarstream.chat.core import _payloads as payload_registry
from scholarstream.chat.pages import (
    ClientAction,
    Resolution,
    SubTabConfig,
    TabConfig,
    register_page,
    resolve,
)
from scholarstream.chat.pages import _registry as page_registry
from scholarstream.chat.tools import (
    ToolConfig,
    ToolContext,
    ToolResult,
    register_tool,
    tools,
)
from scholarstream.chat.tools import _registry as tool_registry
from scholarstream.errors import ConfigurationError, InvalidInputError


async def _echo(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return ToolResult(text=str(params), for_user="Echoed.")


@dataclass
class Scratch:
    """Registers throwaway tools, payload types and pages under unique names, and removes
    them from the registries when the test ends."""

    prefix: str = field(default_factory=lambda: f"t{uuid.uuid4().hex[:8]}_")
    made: list[tuple[dict[str, Any], str]] = field(default_factory=list)

    def tool(self, name: str, *, is_global: bool = False) -> str:
        full = self.prefix + name
        register_tool(
            ToolConfig(
                name=full,
                description=f"Scratch tool {name}.",
                input_schema={"type": "object", "additionalProperties": False},
                executor=_echo,
                is_global=is_global,
            )
        )
        self.made.append((tool_registry._TOOLS, full))
        return full

    def payload(self, name: str, *, is_global: bool = False) -> str:
        full = self.prefix + name
        register_payload_type(
            PayloadType(
                name=full,
                description=f"Scratch payload {name}.",
                schema={"type": "object"},
                source="llm",
                is_global=is_global,
                parse_marker=f"{full.upper()}:",
                parser=make_json_parser(full),
                llm_instructions=f"{full.upper()}: {{}}",
            )
        )
        self.made.append((payload_registry._PAYLOAD_TYPES, full))
        return full

    def page(self, name: str, **config: Any) -> str:
        full = self.prefix + name
        register_page(full, **config)
        self.made.append((page_registry._PAGES, full))
        return full

    def remove(self) -> None:
        for registry, name in self.made:
            registry.pop(name, None)


@pytest.fixture
def scratch() -> Iterator[Scratch]:
    made = Scratch()
    yield made
    made.remove()


def global_tools() -> list[str]:
    return [tool.name for tool in tools() if tool.is_global]


def global_payloads() -> list[str]:
    return [p.name for p in payload_registry.payload_types() if p.is_global]


def names(resolution: Resolution) -> tuple[list[str], list[str]]:
    return [t.name for t in resolution.tools], [p.name for p in resolution.payloads]


def at(page: str, tab: str | None = None, subtab: str | None = None) -> ChatContext:
    return ChatContext(current_page=page, active_tab=tab, active_subtab=subtab)


def test_a_page_without_extras_gets_the_globals_only(scratch: Scratch) -> None:
    everywhere = scratch.tool("everywhere", is_global=True)
    elsewhere = scratch.tool("elsewhere")
    card = scratch.payload("card", is_global=True)
    page = scratch.page("plain")

    tool_names, payload_names = names(resolve(at(page)))

    assert tool_names == global_tools()
    assert everywhere in tool_names and elsewhere not in tool_names
    assert payload_names == global_payloads()
    assert card in payload_names
    assert "query_suggestion" not in payload_names  # a page payload, not a global one


def test_page_tab_and_subtab_each_add_theirs_in_order(scratch: Scratch) -> None:
    page_tool, tab_tool, sub_tool = (scratch.tool(n) for n in ("page", "tab", "sub"))
    page_card, tab_card, sub_card = (scratch.payload(n) for n in ("page", "tab", "sub"))
    action = ClientAction(action="open_thing", description="Opens the thing.")
    page = scratch.page(
        "layered",
        tools=[page_tool],
        payloads=[page_card],
        client_actions=[action],
        tabs={
            "edit": TabConfig(
                tools=(tab_tool,),
                payloads=(tab_card,),
                subtabs={"deep": SubTabConfig(tools=(sub_tool,), payloads=(sub_card,))},
            ),
            "view": TabConfig(),
        },
    )

    assert names(resolve(at(page))) == (
        [*global_tools(), page_tool],
        [*global_payloads(), page_card],
    )
    assert names(resolve(at(page, "view"))) == names(resolve(at(page)))
    assert names(resolve(at(page, "edit"))) == (
        [*global_tools(), page_tool, tab_tool],
        [*global_payloads(), page_card, tab_card],
    )
    deep = resolve(at(page, "edit", "deep"))
    assert names(deep) == (
        [*global_tools(), page_tool, tab_tool, sub_tool],
        [*global_payloads(), page_card, tab_card, sub_card],
    )
    assert deep.client_actions == [action]
    assert [p.name for p in deep.llm_payloads()] == [
        p.name for p in deep.payloads if p.source == "llm"
    ]
    assert deep.tool(sub_tool) is not None and deep.tool("no_such_tool") is None


def test_each_name_once_where_it_first_appears(scratch: Scratch) -> None:
    shared = scratch.tool("shared")
    card = scratch.payload("card")
    page = scratch.page(
        "repeats",
        # A global listed again, and the page's own names repeated by tab and subtab.
        tools=["search_pubmed", shared, shared],
        payloads=["pubmed_search_results", card],
        tabs={
            "t": TabConfig(
                tools=(shared,),
                payloads=(card,),
                subtabs={"s": SubTabConfig(tools=(shared,), payloads=(card,))},
            )
        },
    )

    tool_names, payload_names = names(resolve(at(page, "t", "s")))

    assert tool_names == [*global_tools(), shared]
    assert payload_names == [*global_payloads(), card]


def test_the_clients_mistakes_are_invalid_input_with_a_hint(scratch: Scratch) -> None:
    page = scratch.page("tabbed", tabs={"a": TabConfig(subtabs={"x": SubTabConfig()})})

    with pytest.raises(InvalidInputError) as no_page:
        resolve(at(scratch.prefix + "nowhere"))
    assert no_page.value.hint is not None and page in no_page.value.hint

    with pytest.raises(InvalidInputError) as no_tab:
        resolve(at(page, "b"))
    assert no_tab.value.hint == "Its tabs: a."

    with pytest.raises(InvalidInputError) as no_subtab:
        resolve(at(page, "a", "y"))
    assert no_subtab.value.hint == "Its subtabs: x."

    with pytest.raises(InvalidInputError) as orphan:
        resolve(at(page, None, "x"))
    assert orphan.value.hint == "Send active_tab with active_subtab."

    plain = scratch.page("tabless")
    with pytest.raises(InvalidInputError) as none:
        resolve(at(plain, "a"))
    assert none.value.hint is not None and "send no active_tab" in none.value.hint


def test_a_config_naming_something_unregistered_is_ours(scratch: Scratch) -> None:
    ghost_tool = scratch.prefix + "ghost_tool"
    bad_tool = scratch.page("bad_tool", tabs={"t": TabConfig(tools=(ghost_tool,))})
    bad_payload = scratch.page("bad_payload", payloads=[scratch.prefix + "ghost_card"])

    resolve(at(bad_tool))  # the page itself is fine; its tab is not
    with pytest.raises(ConfigurationError) as caught:
        resolve(at(bad_tool, "t"))
    assert ghost_tool in caught.value.message
    with pytest.raises(ConfigurationError):
        resolve(at(bad_payload))


def test_scratch_registrations_are_removed(scratch: Scratch) -> None:
    name = scratch.tool("temporary", is_global=True)
    assert name in global_tools()
    scratch.remove()
    assert name not in global_tools()


# --- the product's own pages -------------------------------------------------------------


def resolved(page: str, tab: str | None = None) -> tuple[set[str], set[str], set[str]]:
    resolution = resolve(at(page, tab))
    tool_names, payload_names = names(resolution)
    actions = {action.action for action in resolution.client_actions}
    return set(tool_names), set(payload_names), actions


def test_every_builtin_page_resolves() -> None:
    everywhere = {"search_pubmed", "search_literature", "get_article_details", "search_trials"}
    for page in ("home", "search", "library", "trials", "settings"):
        tool_names, payload_names, _ = resolved(page)
        assert everywhere <= tool_names
        assert "search_library" in tool_names
        assert "pubmed_search_results" in payload_names


def test_item_tools_are_offered_where_there_are_items() -> None:
    for page in ("search", "library", "trials"):
        tool_names, _, actions = resolved(page)
        assert {"retrieve_items", "analyze_items"} <= tool_names
        assert "open_item" in actions
    for page in ("home", "settings"):
        tool_names, _, _ = resolved(page)
        assert not {"retrieve_items", "analyze_items"} & tool_names


def test_each_page_offers_its_own_suggestions() -> None:
    suggestions = {"query_suggestion", "filter_suggestion", "ai_column_suggestion"}
    suggestions |= {"trial_search_suggestion"}
    expected = {
        ("home", None): {"query_suggestion"},
        ("search", None): {"query_suggestion"},
        ("search", "strategy"): {"query_suggestion"},
        ("search", "results"): {"query_suggestion", "filter_suggestion", "ai_column_suggestion"},
        ("library", None): {"query_suggestion", "filter_suggestion", "ai_column_suggestion"},
        ("trials", None): {
            "trial_search_suggestion",
            "filter_suggestion",
            "ai_column_suggestion",
        },
        ("settings", None): set(),
    }
    for (page, tab), wanted in expected.items():
        _, payload_names, _ = resolved(page, tab)
        assert payload_names & suggestions == wanted, (page, tab)
    _, _, home_actions = resolved("home")
    assert {"open_search_page", "open_library", "open_trials"} <= home_actions
