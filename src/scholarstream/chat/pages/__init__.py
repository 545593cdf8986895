"""Page, tab and subtab chat configurations and their resolution. Importing this package
registers the product's pages."""

from scholarstream.chat.pages import (  # noqa: F401  (imported to register)
    _home,
    _library,
    _research,
    _search,
    _settings,
    _stream_report,
    _streams,
    _trials,
)
from scholarstream.chat.pages._registry import (
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
