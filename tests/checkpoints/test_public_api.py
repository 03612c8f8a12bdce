"""The `checkpoints` package exports a small, sorted surface."""

import subprocess
import sys
from pathlib import Path

import checkpoints
import checkpoints.store

ROOT = Path(__file__).resolve().parents[2]


def test_all_is_sorted_and_importable() -> None:
    assert checkpoints.__all__ == sorted(checkpoints.__all__)
    for name in checkpoints.__all__:
        assert getattr(checkpoints, name) is not None


def test_memory_saver_alias() -> None:
    assert checkpoints.MemorySaver is checkpoints.InMemorySaver


_WITHOUT_ASYNCPG = """
import sys
sys.modules["asyncpg"] = None  # as if the postgres extra were not installed
from checkpoints import *  # noqa: F403
from checkpoints.store import *  # noqa: F403
import checkpoints, checkpoints.store
for module, name in ((checkpoints, "PostgresSaver"), (checkpoints.store, "PostgresStore")):
    try:
        getattr(module, name)
    except ImportError as error:
        assert "graphrun[postgres]" in str(error), error
    else:
        raise AssertionError(name + " imported without asyncpg")
"""


def test_the_default_install_works_without_the_postgres_extra() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_ASYNCPG], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_postgres_classes_are_public_but_lazy() -> None:
    from checkpoints.postgres import PostgresSaver
    from checkpoints.store.postgres import PostgresStore

    assert checkpoints.PostgresSaver is PostgresSaver
    assert checkpoints.store.PostgresStore is PostgresStore


def test_sqlite_files_is_the_public_door_to_shared_sqlite_plumbing() -> None:
    import checkpoints.sqlite_files as sqlite_files

    assert sqlite_files.__all__ == sorted(sqlite_files.__all__)
    assert all(callable(getattr(sqlite_files, name)) for name in sqlite_files.__all__)
    # the agent server and the control plane import no private module of `checkpoints`
    for path in (ROOT / "http_adapter").rglob("*.py"):
        assert "checkpoints._" not in path.read_text(), path
