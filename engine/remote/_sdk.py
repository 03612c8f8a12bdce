"""The optional pieces `RemoteGraph` borrows: the official `langgraph-sdk` clients and LangSmith's
trace headers (issue 29).

Both load on first use: `import engine` and `import engine.remote` need neither, and a
`RemoteGraph` given its own `client`/`sync_client` never imports the SDK.
"""

from __future__ import annotations

from typing import Any

__all__ = ["channel_decoder", "default_clients", "merge_tracing_headers"]

INSTALL = "pip install 'graphrun[remote]'"


def _sdk_client_module() -> Any:
    try:
        from langgraph_sdk import client
    except ImportError as error:
        raise ImportError(
            "RemoteGraph(url=...) talks to the server through the official langgraph-sdk client, "
            f"which is not installed: {INSTALL} (the `remote` extra; from a clone: "
            "pip install -e '.[remote]')"
        ) from error
    return client


def default_clients(
    url: str, api_key: str | None, headers: dict[str, str] | None
) -> tuple[Any, Any]:
    """The SDK's async and sync clients for `url`."""
    sdk = _sdk_client_module()
    return (
        sdk.get_client(url=url, api_key=api_key, headers=headers),
        sdk.get_sync_client(url=url, api_key=api_key, headers=headers),
    )


def channel_decoder(channel: str) -> Any:
    """The SDK's decoder of a v3 channel's events into their `params.data` items."""
    _sdk_client_module()
    from langgraph_sdk.stream.decoders import DataDecoder

    return DataDecoder(channel)


def merge_tracing_headers(headers: dict[str, str] | None) -> dict[str, str] | None:
    """`headers` plus the current LangSmith run's trace headers, so the server's run joins the
    caller's trace (`distributed_tracing=True`); unchanged outside a traced run."""
    try:
        import langsmith
    except ImportError:
        return headers
    run = langsmith.get_current_run_tree()
    if run is None:
        return headers
    traced = run.to_headers()
    if not headers:
        return traced
    if "baggage" in headers and "baggage" in traced:
        traced["baggage"] = f"{headers['baggage']},{traced['baggage']}"
    return {**headers, **traced}
