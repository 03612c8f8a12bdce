"""graphrun's HTTP adapters: the LangGraph-compatible agent server and the control plane.

Thin Starlette apps over `engine` and `checkpoints`: they decode requests, call, and encode
responses. No graph execution logic lives here.
"""
