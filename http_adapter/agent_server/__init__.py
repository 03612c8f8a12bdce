"""The agent server: the LangGraph Agent Server HTTP API over graphrun's engine."""

from .app import create_app

__all__ = ["create_app"]
