"""Chat on the Settings page: model roles (set by the server) and the user's own API keys.

The page may send ``roles`` (``[{role, model, ready, problem}]``) and ``user_keys`` (the
providers the user stored a key for; never the keys)."""

from __future__ import annotations

from scholarstream.chat.core import ChatContext
from scholarstream.chat.pages._context_text import page_context, value_text
from scholarstream.chat.pages._navigation import OPEN_LIBRARY, OPEN_SEARCH_PAGE, OPEN_TRIALS
from scholarstream.chat.pages._registry import register_page

PAGE = "settings"
EXTRAS = ("roles", "user_keys")


def build_context(context: ChatContext) -> str:
    extras = context.extras()
    lines = [f"{name}: {value_text(extras[name])}" for name in EXTRAS if name in extras]
    return page_context(
        "Settings",
        "It shows the model roles the server configured (which model each role uses, and "
        "whether it is ready) and lets the user store their own provider API keys, kept "
        "encrypted and never shown again.",
        context,
        form_label="API key form",
        extra_lines=lines,
        known_extras=EXTRAS,
        guidance=[
            "Roles are set by the server, e.g. SCHOLARSTREAM_LLM__ROLES__DEFAULT="
            "openai:gpt-4.1-mini with OPENAI_API_KEY; an administrator restarts the server "
            "after changing them. Model strings look like openai:..., anthropic:..., "
            "google-gla:..., ollama:llama3.1.",
            "A user's own key (the form here) is used before the server's for that "
            "provider. Never ask the user to paste a key into the chat.",
            "Explain a role that is not ready from its problem text (missing key, unknown "
            "provider) and what to do about it.",
        ],
    )


register_page(
    PAGE,
    context_builder=build_context,
    client_actions=[OPEN_SEARCH_PAGE, OPEN_LIBRARY, OPEN_TRIALS],
)
