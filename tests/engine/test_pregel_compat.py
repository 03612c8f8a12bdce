"""Small LangGraph compatibility points LangGraph's own tests rely on (issues 27, 29)."""

from __future__ import annotations

import pickle

import pydantic
import pytest

from checkpoints.serde import default_serializer
from engine.errors import is_invalid_resume
from engine.types import Interrupt


def test_interrupts_saved_by_langgraph_before_0_6_load() -> None:
    """Old checkpoints hold `Interrupt(value, resumable=..., ns=[...], when=...)`: they build,
    their id comes from `ns`, and they round-trip through pickle and the checkpoint serde."""
    old = Interrupt(value="q", resumable=True, ns=["qa:1"], when="during")
    assert old.value == "q" and len(old.id) == 32
    assert old == Interrupt(value="q", ns=["qa:1"])
    assert old != Interrupt(value="q", ns=["qa:2"])
    assert Interrupt("q", "given-id", ns=["qa:1"]).id == "given-id"
    assert pickle.loads(pickle.dumps(old)) == old
    serde = default_serializer
    assert serde.loads(serde.dumps(old)) == old
    with pytest.raises(TypeError):
        Interrupt("q", unknown=1)


def test_is_invalid_resume_only_marks_resume_validation() -> None:
    class Decision(pydantic.BaseModel):
        approved: bool

    with pytest.raises(pydantic.ValidationError) as caught:
        Decision.model_validate({"approved": "nope"})
    assert not is_invalid_resume(caught.value)
    assert not is_invalid_resume(ValueError("nope"))
