"""High-entropy bearer secrets (API tokens, session cookies): shown once, stored as SHA-256."""

from __future__ import annotations

import hashlib
import secrets


def new_secret(prefix: str) -> str:
    return f"{prefix}_{secrets.token_urlsafe(32)}"


def digest(secret: str) -> str:
    # A plain hash suffices: the secrets carry 256 bits of entropy, so nothing to brute-force.
    return hashlib.sha256(secret.encode()).hexdigest()
