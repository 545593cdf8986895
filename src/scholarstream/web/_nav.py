"""The navigation, by registration: a feature adds its page when it exists, so the menu
never shows something the product cannot do yet."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NavItem:
    key: str
    label: str
    path: str
    order: int = 100


_ITEMS: dict[str, NavItem] = {}


def register_nav_item(item: NavItem) -> None:
    _ITEMS[item.key] = item


def nav_items() -> list[NavItem]:
    return sorted(_ITEMS.values(), key=lambda i: (i.order, i.label))


register_nav_item(NavItem("home", "Home", "/", order=0))
register_nav_item(NavItem("settings", "Settings", "/settings", order=900))
