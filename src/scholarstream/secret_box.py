"""Encryption of stored secrets (users' provider keys) with a key derived from the server secret."""

from __future__ import annotations

import base64
import os
import secrets
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from scholarstream.errors import ConfigurationError
from scholarstream.settings import Settings, prepare_data_dir

SECRET_FILE_NAME = "secret.key"  # noqa: S105 (a file name)


def load_server_secret(settings: Settings) -> bytes:
    """The configured secret, or one generated once into the data directory (mode 0600)."""
    if settings.server.secret_key is not None:
        return settings.server.secret_key.get_secret_value().encode()
    path = settings.data_dir / SECRET_FILE_NAME
    if not path.exists():
        prepare_data_dir(settings)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(48))
    return Path(path).read_text().strip().encode()


class SecretBox:
    def __init__(self, server_secret: bytes) -> None:
        key = HKDF(
            algorithm=hashes.SHA256(), length=32, salt=None, info=b"scholarstream/stored-secrets"
        ).derive(server_secret)
        self._fernet = Fernet(base64.urlsafe_b64encode(key))

    def encrypt(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode()).decode()

    def decrypt(self, token: str) -> str:
        try:
            return self._fernet.decrypt(token.encode()).decode()
        except InvalidToken as exc:
            raise ConfigurationError(
                "A stored key cannot be decrypted with this server's secret.",
                hint="The server secret changed since the key was saved: restore the old "
                "SCHOLARSTREAM_SERVER__SECRET_KEY, or save the key again.",
            ) from exc
