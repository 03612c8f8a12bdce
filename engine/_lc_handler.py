"""The LangChain callback handler behind `messages` and `events` (imported only when
langchain-core already is: `engine` never imports it on its own).

It subclasses LangChain's `_StreamingCallbackHandler` (a private class of
`langchain_core.tracers._streaming`), as LangGraph's own handler does: that marker is how
LangChain knows to hand a streaming handler each chunk of a streamed runnable's output.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers._streaming import _StreamingCallbackHandler

from ._messages import TAG_NOSTREAM, message_id, messages_in, user_tags

__all__ = ["MessagesHandler"]


class MessagesHandler(BaseCallbackHandler, _StreamingCallbackHandler):
    """Streams the tokens of the chat models a task calls, in `messages` and `events`.

    Attached whenever one of those modes is on, also where nothing of it is shown (a
    subgraph without subgraphs=True), because its presence makes LangChain stream the
    model's answer, which shapes the message (ids, chunks) as under LangGraph.
    """

    run_inline = True

    def __init__(self, run: Any, task: Any) -> None:
        self.run = run
        self.task = task
        self.active: dict[Any, dict[str, Any]] = {}  # run id -> `messages` metadata
        # run id -> (name, own tags, input messages, metadata) for `events`
        self.described: dict[Any, tuple[str, list[str], Any, dict[str, Any]]] = {}
        self.streamed: set[Any] = set()
        # `events` of the LangChain runs around a model (chains, prompts, parsers, retry
        # wrappers, tools; issue 17): run id -> [kind, name, tags, metadata, inputs]
        self.runs: dict[Any, list[Any]] = {}
        self.parent_of: dict[Any, Any] = {}  # run id -> the LangChain run it runs in
        self.tapped: set[Any] = set()

    def tap_output_iter(self, run_id: Any, output: Any) -> Any:
        if self.run.events is None or run_id not in self.runs or run_id in self.tapped:
            return output
        self.tapped.add(run_id)
        return self._tap(run_id, output)

    def tap_output_aiter(self, run_id: Any, output: Any) -> Any:
        if self.run.events is None or run_id not in self.runs or run_id in self.tapped:
            return output
        self.tapped.add(run_id)
        return self._atap(run_id, output)

    def _tap(self, run_id: Any, output: Any) -> Any:
        for chunk in output:
            self._run_event(run_id, "stream", {"chunk": chunk})
            yield chunk

    async def _atap(self, run_id: Any, output: Any) -> Any:
        async for chunk in output:
            self._run_event(run_id, "stream", {"chunk": chunk})
            yield chunk

    def _meta(self, metadata: Any) -> dict[str, Any]:
        meta = dict(metadata or {})
        ns = self.task.ns  # a called `@task` shows its whole namespace (issue 17)
        meta["checkpoint_ns"] = ns if self.task.node.writer is not None else ns.split("|")[0]
        return meta

    def _started(self, run_id: Any, parent_run_id: Any, info: list[Any], data: Any) -> None:
        # the node's own LangChain metadata, which a chat model overrides with its own
        info[3].setdefault("ls_integration", "langgraph")
        if parent_run_id is not None:
            self.parent_of[run_id] = parent_run_id
        self.runs[run_id] = info
        self._run_event(run_id, "start", data)

    def on_chain_start(
        self, serialized: Any, inputs: Any, *, run_id: Any, parent_run_id: Any = None,
        tags: Any = None, metadata: Any = None, run_type: Any = None, name: Any = None,
        **kwargs: Any,
    ) -> None:
        if self.run.events is None:
            return
        # a streamed runnable starts with a placeholder input: its input shows at the end
        known = inputs != {"input": ""}
        info = [run_type or "chain", _run_name(name, serialized), list(tags or ()),
                self._meta(metadata), inputs if known else None]
        self._started(run_id, parent_run_id, info, {"input": inputs} if known else {})

    def on_chain_end(self, outputs: Any, *, run_id: Any, inputs: Any = None,
                     **kwargs: Any) -> None:
        info = self.runs.get(run_id)
        if info is not None:
            start = info[4]
            self._run_event(run_id, "end", {"output": outputs, "input": inputs or start or {}})
            self._forget_run(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> None:
        self._forget_run(run_id)  # no event (as astream_events)

    def on_tool_start(
        self, serialized: Any, input_str: str, *, run_id: Any, parent_run_id: Any = None,
        tags: Any = None, metadata: Any = None, name: Any = None, inputs: Any = None,
        **kwargs: Any,
    ) -> None:
        if self.run.events is None:
            return
        info = [
            "tool", _run_name(name, serialized), list(tags or ()), self._meta(metadata),
            inputs, kwargs.get("tool_call_id"),
        ]
        self._started(run_id, parent_run_id, info, {"input": inputs or {}})

    def on_tool_end(self, output: Any, *, run_id: Any, **kwargs: Any) -> None:
        info = self.runs.get(run_id)
        if info is not None:
            self._run_event(run_id, "end", {"output": output, "input": info[4]})
            self._forget_run(run_id)

    def on_tool_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> None:
        info = self.runs.get(run_id)
        if info is not None:
            call_id = kwargs.get("tool_call_id") or info[5]
            data = {"error": error, "input": info[4], "tool_call_id": call_id}
            self._run_event(run_id, "error", data)
            self._forget_run(run_id)

    def _run_event(self, run_id: Any, stage: str, data: dict[str, Any]) -> None:
        events = self.run.events
        info = self.runs.get(run_id)
        if events is not None and info is not None:
            kind, name, tags, metadata = info[:4]
            events.chat_model(self.task, f"on_{kind}_{stage}", name, str(run_id), data,
                              metadata, tags, self._ancestors(run_id))

    def _ancestors(self, run_id: Any) -> list[str]:
        chain: list[str] = []
        parent = self.parent_of.get(run_id)
        while parent is not None and len(chain) < 100:
            chain.append(str(parent))
            parent = self.parent_of.get(parent)
        return chain[::-1]

    def _forget_run(self, run_id: Any) -> None:
        self.runs.pop(run_id, None)
        self.tapped.discard(run_id)

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: Any, tags: Any = None,
        metadata: Any = None, parent_run_id: Any = None, **kwargs: Any,
    ) -> None:
        meta = self._meta(metadata)
        if self.run.events is not None:  # LangGraph's metadata, the run's own tags
            if parent_run_id is not None:
                self.parent_of[run_id] = parent_run_id
            name = kwargs.get("name") or (serialized or {}).get("name") or "ChatModel"
            self.described[run_id] = (name, list(tags or ()), messages, dict(meta))
            self._event("on_chat_model_start", run_id, {"input": {"messages": messages}})
        if tags and TAG_NOSTREAM in tags:  # kept out of `messages` only (as LangGraph)
            return
        shown = user_tags(tags) if tags else None
        if shown:
            meta["tags"] = shown
        meta["graph_node"] = self.task.name  # the seed's name for langgraph_node (SPEC §1)
        self.active[run_id] = meta

    def on_llm_new_token(
        self, token: str, *, chunk: Any = None, run_id: Any, **kwargs: Any
    ) -> None:
        message = getattr(chunk, "message", None)
        if message is None:
            return
        meta = self.active.get(run_id)
        if meta is not None:
            self.streamed.add(run_id)
            self.run.push_message(self.task, message, meta, replace=True)
        if self.run.events is not None:
            self._event("on_chat_model_stream", run_id, {"chunk": message})

    def on_llm_end(self, response: Any, *, run_id: Any, **kwargs: Any) -> None:
        meta = self.active.get(run_id)
        output = None
        for generations in response.generations:
            for generation in generations:
                output = getattr(generation, "message", None)
                if meta is not None and output is not None and run_id not in self.streamed:
                    if not self._seen(output):  # e.g. a model echoing its input
                        self.run.push_message(self.task, output, meta, replace=True)
        described = self.described.get(run_id)
        if described is not None:
            data = {"output": output, "input": {"messages": described[2]}}
            self._event("on_chat_model_end", run_id, data)
        self._forget(run_id)

    def on_llm_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> None:
        self._forget(run_id)

    def _seen(self, message: Any) -> bool:
        """A whole (unstreamed) answer already streamed, or one of the task's inputs, is
        not streamed again (as LangGraph)."""
        mid = message_id(message)
        if mid is None:
            return False
        if mid in self.run.root.seen_messages:
            return True
        return any(message_id(m) == mid for m in messages_in(self.task.input))

    def _forget(self, run_id: Any) -> None:
        self.active.pop(run_id, None)
        self.described.pop(run_id, None)
        self.streamed.discard(run_id)

    def _event(self, kind: str, run_id: Any, data: dict[str, Any]) -> None:
        events = self.run.events
        described = self.described.get(run_id)
        if events is not None and described is not None:
            name, tags, _, metadata = described
            events.chat_model(self.task, kind, name, str(run_id), data, metadata, tags,
                              self._ancestors(run_id))



def _run_name(name: Any, serialized: Any) -> str:
    """A LangChain run's name: given, else its serialized name or class (as LangChain)."""
    if name is not None:
        return str(name)
    if serialized:
        if "name" in serialized:
            return str(serialized["name"])
        if "id" in serialized:
            return str(serialized["id"][-1])
    return "Unnamed"
