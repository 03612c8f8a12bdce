"""Trimmed tracebacks (issue 30 item 1): the user's frames stay, graphrun's go."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import START, StateGraph
from http_adapter._tracebacks import user_location, user_traceback

HERE = Path(__file__).resolve()


def _failing_graph(fail: object) -> object:
    builder = StateGraph(dict)
    builder.add_node("node", fail)
    builder.add_edge(START, "node")
    return builder.compile()


def _lookup(state: dict) -> dict:
    return {"x": state["missing"]}


def _wrap(state: dict) -> dict:
    try:
        return _lookup(state)
    except KeyError as error:
        raise RuntimeError("lookup failed") from error


def test_the_users_frames_stay_through_a_cause() -> None:
    with pytest.raises(RuntimeError) as caught:
        _failing_graph(_wrap).invoke({"y": 1})
    text = user_traceback(caught.value)
    assert text.startswith("(") and "framework frames trimmed" in text.splitlines()[0]
    assert f'File "{HERE}"' in text and "in _lookup" in text and "in _wrap" in text
    assert "The above exception was the direct cause" in text  # the cause is kept, trimmed too
    assert "/engine/" not in text
    assert user_location(caught.value, root=HERE.parent).startswith("test_tracebacks.py, line ")
    assert user_location(caught.value).endswith(", in _wrap")


def test_an_error_without_user_frames_keeps_its_innermost_frame() -> None:
    with pytest.raises(Exception) as caught:  # the engine refuses a node's non-dict update
        _failing_graph(lambda state: 3).invoke({"y": 1})
    error = caught.value
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == str(HERE):  # this test's frames
        tb = tb.tb_next
    text = user_traceback(error.with_traceback(tb))
    frames = [line for line in text.splitlines() if line.lstrip().startswith("File ")]
    assert len(frames) == 1 and "/engine/" in frames[0], text  # where it arose, nothing more
    assert text.endswith(f"{type(error).__name__}: {error}")
    assert user_location(error) is None
