"""A caller's run config, normalized as LangGraph normalizes it (issue 27).

LangGraph accepts a config with ids at its top level (`invoke(x, {"thread_id": "t"})`): every
non-empty key that is not a LangChain config key moves into `configurable`. Its default
recursion limit is 10007, set by `LANGGRAPH_DEFAULT_RECURSION_LIMIT`: agent loops that ran
for hundreds of steps on LangGraph must not stop at 25 here.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["DEFAULT_RECURSION_LIMIT", "merge_config"]

DEFAULT_RECURSION_LIMIT = int(os.environ.get("LANGGRAPH_DEFAULT_RECURSION_LIMIT", "10007"))

# LangChain's RunnableConfig keys: everything else at the top level is a configurable value.
_CONFIG_KEYS = frozenset((
    "tags", "metadata", "callbacks", "run_name", "max_concurrency", "recursion_limit",
    "configurable", "run_id",
))


def merge_config(config: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of `config` with its own `configurable` dict, holding the top-level ids too."""
    if not config:
        return {"configurable": {}}
    merged = {k: v for k, v in config.items() if k in _CONFIG_KEYS and v is not None}
    conf = dict(config.get("configurable") or {})
    for key, value in config.items():
        if key not in _CONFIG_KEYS and value is not None:
            conf[key] = value
    merged["configurable"] = conf
    return merged
