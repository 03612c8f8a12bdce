"""Managed state keys, as LangGraph's `langgraph.managed`: computed per step, never stored."""

from ._managed import IsLastStep, RemainingSteps

__all__ = ["IsLastStep", "RemainingSteps"]
