"""Secrets at rest: Fernet (AES-128-CBC + HMAC-SHA256) from `cryptography`.

The key comes from `GRAPHRUN_SECRET_KEY`: a Fernet key (`Fernet.generate_key()`), or any other
string, which is stretched into one with scrypt. Several comma-separated keys rotate: the first
encrypts, all decrypt (`MultiFernet`), so a new key can be put first and old tokens still read.
Without the variable a key is generated once into `<data_dir>/secret.key` (mode 0600), so a
fresh install works and restarts still read what they wrote.

Only ciphertext reaches the SQLite file; plaintext lives in memory for as long as a request or a
deploy needs it, and nothing here logs.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

__all__ = ["SecretBox"]

logger = logging.getLogger("http_adapter.control_plane")
_SALT = b"graphrun-control-plane-secrets"


class SecretBox:
    """Encrypts and decrypts the control plane's secrets."""

    def __init__(self, key: str | None, data_dir: Path) -> None:
        spec = key if key else _generated_key(data_dir)
        self._fernet = MultiFernet([Fernet(_fernet_key(k.strip())) for k in spec.split(",") if k.strip()])

    def encrypt(self, plaintext: bytes) -> bytes:
        return self._fernet.encrypt(plaintext)

    def decrypt(self, token: bytes) -> bytes:
        try:
            return self._fernet.decrypt(token)
        except InvalidToken:
            raise ValueError(
                "a stored secret cannot be decrypted: GRAPHRUN_SECRET_KEY is not the key it was "
                "written with"
            ) from None


def _fernet_key(key: str) -> bytes:
    try:
        if len(base64.urlsafe_b64decode(key.encode())) == 32:
            return key.encode()
    except ValueError:
        pass
    derived = hashlib.scrypt(key.encode(), salt=_SALT, n=2**14, r=8, p=1, dklen=32)
    return base64.urlsafe_b64encode(derived)


def _generated_key(data_dir: Path) -> str:
    path = data_dir / "secret.key"
    if path.is_file():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    key = Fernet.generate_key()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(key)
    logger.warning("GRAPHRUN_SECRET_KEY is not set: secrets are encrypted with a key generated "
                   "into %s; keep that file, or set the variable", path)
    return key.decode()
