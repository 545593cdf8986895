"""Markdown written by models, turned into HTML that is safe to show anywhere.

Model output is never trusted HTML. It is rendered by markdown-it-py with raw HTML off
(a ``<script>`` in the text comes out as the text ``<script>``), then sanitised by nh3 to
the tags a report needs: no scripts, no event handlers, no styles, no images (an image is
a request to someone else's server each time the page is read), links only to
``http``, ``https`` and ``mailto`` addresses, each with ``rel="noopener noreferrer
nofollow"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import nh3
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererProtocol
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

__all__ = ["ALLOWED_TAGS", "ALLOWED_URL_SCHEMES", "render_markdown"]

ALLOWED_TAGS = frozenset(
    {
        "a",
        "abbr",
        "b",
        "blockquote",
        "br",
        "code",
        "del",
        "dd",
        "dl",
        "dt",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "li",
        "ol",
        "p",
        "pre",
        "s",
        "strong",
        "sub",
        "sup",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
ALLOWED_URL_SCHEMES = frozenset({"http", "https", "mailto"})

_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "ol": {"start"},
    "td": {"align"},
    "th": {"align"},
}


def _image_as_link(
    renderer: RendererProtocol,
    tokens: Sequence[Token],
    idx: int,
    options: OptionsDict,
    env: EnvType,
) -> str:
    """An image becomes a link to it, named by its alt text: the page loads nothing."""
    token = tokens[idx]
    alt = "".join(child.content for child in token.children or [])
    src = str(token.attrGet("src") or "")
    return f'<a href="{escape(src)}">{escape(alt or "image")}</a>'


_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_markdown.enable(["table", "strikethrough"])
_markdown.add_render_rule("image", _image_as_link)

_cleaner = nh3.Cleaner(
    tags=ALLOWED_TAGS,
    clean_content_tags={"script", "style"},
    attributes=_ATTRIBUTES,
    url_schemes=ALLOWED_URL_SCHEMES,
    link_rel="noopener noreferrer nofollow",
    url_relative="deny",
)


def render_markdown(text: str) -> str:
    """``text`` (Markdown from a model or a user) as sanitised HTML."""
    return _cleaner.clean(_markdown.render(text))
