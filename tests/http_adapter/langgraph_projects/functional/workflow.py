"""An essay outline with the functional API: a task, an approval, a turn counter across runs."""

from typing import Any

from langgraph.func import entrypoint, task
from langgraph.types import interrupt


@task
def outline(topic: str) -> list[str]:
    return [f"{topic}: why it matters", f"{topic}: what to do"]


@entrypoint()
def essay(request: dict[str, Any], *, previous: Any = None) -> dict[str, Any]:
    points = outline(request["topic"]).result()
    approved = interrupt({"outline": points})
    turns = (previous or {}).get("turns", 0) + 1
    return {"topic": request["topic"], "outline": points, "approved": approved, "turns": turns}
