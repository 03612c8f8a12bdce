"""SecretBox: Fernet keys, passphrases, rotation, and the generated key file."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from http_adapter.control_plane.secrets import SecretBox


def test_a_fernet_key_round_trips(tmp_path: Path) -> None:
    key = Fernet.generate_key().decode()
    box = SecretBox(key, tmp_path)
    token = box.encrypt(b"value")
    assert b"value" not in token and box.decrypt(token) == b"value"
    assert Fernet(key.encode()).decrypt(token) == b"value"  # the key is used as it is
    assert not (tmp_path / "secret.key").exists()


def test_a_passphrase_is_stretched_and_stable(tmp_path: Path) -> None:
    token = SecretBox("correct horse battery staple", tmp_path).encrypt(b"v")
    assert SecretBox("correct horse battery staple", tmp_path).decrypt(token) == b"v"
    with pytest.raises(ValueError, match="GRAPHRUN_SECRET_KEY is not the key"):
        SecretBox("another passphrase", tmp_path).decrypt(token)


def test_keys_rotate(tmp_path: Path) -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    token = SecretBox(old, tmp_path).encrypt(b"v")
    rotated = SecretBox(f"{new},{old}", tmp_path)
    assert rotated.decrypt(token) == b"v"
    assert SecretBox(new, tmp_path).decrypt(rotated.encrypt(b"w")) == b"w"


def test_without_a_key_one_is_generated_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    token = SecretBox(None, tmp_path / "state").encrypt(b"v")
    key_file = tmp_path / "state" / "secret.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert "GRAPHRUN_SECRET_KEY is not set" in caplog.text
    assert SecretBox(None, tmp_path / "state").decrypt(token) == b"v"
