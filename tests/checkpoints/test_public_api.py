"""The `checkpoints` package exports a small, sorted surface."""

import checkpoints


def test_all_is_sorted_and_importable() -> None:
    assert checkpoints.__all__ == sorted(checkpoints.__all__)
    for name in checkpoints.__all__:
        assert getattr(checkpoints, name) is not None


def test_memory_saver_alias() -> None:
    assert checkpoints.MemorySaver is checkpoints.InMemorySaver
