"""The product's own payload types, tools and page configs, registered on import."""

from __future__ import annotations
