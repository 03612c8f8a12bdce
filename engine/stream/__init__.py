"""v3 streaming: a run as a `GraphRunStream` of typed projections (issue 29).

`graph.stream_events(input, version="v3")` (or `await graph.astream_events(..., version="v3")`)
returns a run stream: iterate it for protocol events, or read `run.values`, `run.messages`,
`run.lifecycle`, `run.subgraphs`, `run.output`. `StreamTransformer` subclasses passed as
`transformers=[...]` add projections of their own. LangGraph's `langgraph.stream` surface.
"""

from ._channel import StreamChannel
from ._lifecycle import (
    LifecyclePayload,
    LifecycleTransformer,
    SubgraphStatus,
    SubgraphTransformer,
)
from ._messages import MessagesTransformer
from ._projections import (
    CheckpointsTransformer,
    CustomTransformer,
    DebugTransformer,
    TasksTransformer,
    UpdatesTransformer,
    ValuesTransformer,
)
from ._run_stream import (
    AsyncGraphRunStream,
    AsyncSubgraphRunStream,
    GraphRunStream,
    SubgraphRunStream,
)
from ._tool_calls import ToolCallStream, ToolCallTransformer
from ._transformer import ProtocolEvent, StreamTransformer

__all__ = [
    "AsyncGraphRunStream",
    "AsyncSubgraphRunStream",
    "CheckpointsTransformer",
    "CustomTransformer",
    "DebugTransformer",
    "GraphRunStream",
    "LifecyclePayload",
    "LifecycleTransformer",
    "MessagesTransformer",
    "ProtocolEvent",
    "StreamChannel",
    "StreamTransformer",
    "SubgraphRunStream",
    "SubgraphStatus",
    "SubgraphTransformer",
    "TasksTransformer",
    "ToolCallStream",
    "ToolCallTransformer",
    "UpdatesTransformer",
    "ValuesTransformer",
]
