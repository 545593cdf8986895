"""Page, tab and subtab chat configurations and their resolution."""

from scholarstream.chat.pages.registry import (
    ClientAction,
    ContextBuilder,
    PageConfig,
    Resolution,
    SubTabConfig,
    TabConfig,
    get_page,
    pages,
    register_page,
    resolve,
)

__all__ = [
    "ClientAction",
    "ContextBuilder",
    "PageConfig",
    "Resolution",
    "SubTabConfig",
    "TabConfig",
    "get_page",
    "pages",
    "register_page",
    "resolve",
]
