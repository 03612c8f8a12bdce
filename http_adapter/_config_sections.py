"""The langgraph.json sections beyond graphs/env/dependencies/auth (issue 18): `http`, `store`,
`checkpointer`, and the keys we do not support, each named in a start-up warning.

Keys that only shape a deployment image (`python_version`, `dockerfile_lines`, ...) are skipped
silently, as `langgraph dev` skips them. Every other key graphrun does not act on is reported
by `unsupported_keys`, so a project never loses a setting without being told.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .agent_server.cors import CORS_KEYS
from .agent_server.http_options import DISABLE_FLAGS

__all__ = ["check_checkpointer", "check_http", "check_store", "unsupported_keys"]

ConfigErrorFactory = Callable[[str, str], Exception]  # (message, key) -> ConfigError

# Read by config.py itself, or build-only keys that `langgraph dev` ignores as well.
_HANDLED = frozenset(("graphs", "env", "dependencies", "auth", "api_keys", "http", "store",
                      "checkpointer", "webhooks", "engine"))
_BUILD_ONLY = frozenset((
    "$schema", "python_version", "node_version", "api_version", "base_image", "image_distro",
    "pip_config_file", "pip_installer", "source", "dockerfile_lines", "keep_pkg_tools",
))
_HTTP_KEYS = frozenset((
    "app", "cors", "configurable_headers", "enable_custom_route_auth",
    *(f"disable_{name}" for name in DISABLE_FLAGS),
))
_HEADER_KEYS = frozenset(("includes", "excludes", "include", "exclude"))
_STORE_KEYS = frozenset(("index", "ttl"))
_INDEX_KEYS = frozenset(("dims", "embed", "fields"))
_STORE_TTL_KEYS = frozenset(("refresh_on_read", "default_ttl", "sweep_interval_minutes"))
_THREAD_TTL_KEYS = frozenset(("strategy", "default_ttl", "sweep_interval_minutes", "sweep_limit"))


def unsupported_keys(raw: Mapping[str, Any]) -> list[str]:
    """Dotted names of the keys graphrun ignores (for the start-up warning)."""
    found = [k for k in raw if k not in _HANDLED and k not in _BUILD_ONLY]
    found += _extra(raw.get("http"), _HTTP_KEYS | {"disable_ui", "disable_webhooks"}, "http")
    found += _extra(raw.get("store"), _STORE_KEYS, "store")
    found += _extra(raw.get("checkpointer"), frozenset(("backend", "ttl")), "checkpointer")
    checkpointer = raw.get("checkpointer") if isinstance(raw.get("checkpointer"), dict) else {}
    if checkpointer.get("backend", "default") != "default":
        found.append("checkpointer.backend")
    auth = raw.get("auth") if isinstance(raw.get("auth"), dict) else {}
    found += _extra(auth, frozenset(("path",)), "auth")
    return found


def _extra(section: Any, known: frozenset[str], prefix: str) -> list[str]:
    if not isinstance(section, dict):
        return []
    return [f"{prefix}.{k}" for k in section if k not in known]


def _want(value: Any, kind: type | tuple[type, ...], what: str, key: str,
          error: ConfigErrorFactory) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool) and bool not in _kinds(kind):
        raise error(f"must be {what}", key)
    return value


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _strings(value: Any, key: str, error: ConfigErrorFactory) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise error("must be a list of strings", key)
    return value


# -- http -----------------------------------------------------------------------------------------


def check_http(spec: Any, error: ConfigErrorFactory) -> dict[str, Any]:
    """The validated `http` section ({} without one); `app` stays a string for config.py."""
    if spec is None:
        return {}
    http = dict(_want(spec, dict, "an object", "http", error))
    for name in DISABLE_FLAGS + ("ui", "webhooks"):
        if f"disable_{name}" in http:
            _want(http[f"disable_{name}"], bool, "true or false", f"http.disable_{name}", error)
    if "enable_custom_route_auth" in http:
        _want(http["enable_custom_route_auth"], bool, "true or false",
              "http.enable_custom_route_auth", error)
    if "app" in http:
        _want(http["app"], str, 'a "./file.py:app" or "module:app" string', "http.app", error)
    if http.get("cors") is not None:
        http["cors"] = _check_cors(http["cors"], error)
    if http.get("configurable_headers") is not None:
        http["configurable_headers"] = _check_headers(http["configurable_headers"], error)
    return http


def _check_cors(spec: Any, error: ConfigErrorFactory) -> dict[str, Any]:
    cors = _want(spec, dict, "an object", "http.cors", error)
    unknown = sorted(set(cors) - CORS_KEYS)
    if unknown:
        raise error(f"unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(CORS_KEYS))}",
                    "http.cors")
    for key in ("allow_origins", "allow_methods", "allow_headers", "expose_headers"):
        if key in cors:
            _strings(cors[key], f"http.cors.{key}", error)
    if "allow_credentials" in cors:
        _want(cors["allow_credentials"], bool, "true or false", "http.cors.allow_credentials", error)
    if "allow_origin_regex" in cors:
        _want(cors["allow_origin_regex"], str, "a string", "http.cors.allow_origin_regex", error)
    if "max_age" in cors:
        _want(cors["max_age"], int, "a number of seconds", "http.cors.max_age", error)
    return dict(cors)


def _check_headers(spec: Any, error: ConfigErrorFactory) -> dict[str, Any]:
    section = _want(spec, dict, "an object", "http.configurable_headers", error)
    unknown = sorted(set(section) - _HEADER_KEYS)
    if unknown:
        raise error(f"unknown key(s) {', '.join(unknown)}; known: includes, excludes",
                    "http.configurable_headers")
    for key, value in section.items():
        if value is not None:
            _strings(value, f"http.configurable_headers.{key}", error)
    return dict(section)


# -- store and checkpointer ---------------------------------------------------------------------


def check_store(spec: Any, error: ConfigErrorFactory,
                resolve: Callable[[str, str], Any]) -> dict[str, Any]:
    """`store.index` (its `embed` resolved: a `"./file.py:fn"` path is imported, a
    `"provider:model"` string goes through LangChain) and `store.ttl`."""
    if spec is None:
        return {}
    store = _want(spec, dict, "an object", "store", error)
    found: dict[str, Any] = {}
    if store.get("index") is not None:
        found["index"] = _check_index(store["index"], error, resolve)
    if store.get("ttl") is not None:
        found["ttl"] = _check_ttl(store["ttl"], _STORE_TTL_KEYS, "store.ttl", error)
        if "refresh_on_read" in found["ttl"]:
            _want(found["ttl"]["refresh_on_read"], bool, "true or false",
                  "store.ttl.refresh_on_read", error)
    return found


def _check_index(spec: Any, error: ConfigErrorFactory,
                 resolve: Callable[[str, str], Any]) -> dict[str, Any]:
    index = dict(_want(spec, dict, "an object", "store.index", error))
    unknown = sorted(set(index) - _INDEX_KEYS)
    if unknown:
        raise error(f"unknown key(s) {', '.join(unknown)}; known: dims, embed, fields",
                    "store.index")
    dims = _want(index.get("dims"), int, "a positive number of dimensions", "store.index.dims",
                 error)
    if dims < 1:
        raise error("must be a positive number of dimensions", "store.index.dims")
    embed = _want(index.get("embed"), str, 'a "./file.py:function" path or "provider:model"',
                  "store.index.embed", error)
    if _is_path(embed):
        index["embed"] = resolve(embed, "store.index.embed")
    else:
        index["embed"] = _provider_model(embed, error)
    if index.get("fields") is not None:
        _strings(index["fields"], "store.index.fields", error)
    return index


def _provider_model(embed: str, error: ConfigErrorFactory) -> Any:
    """`"provider:model"` through LangChain's `init_embeddings`, now, so a missing package or
    key is a config error at start-up rather than a traceback."""
    try:
        from langchain.embeddings import init_embeddings  # type: ignore[import-not-found]
    except ImportError:
        raise error(f"{embed!r} names a provider model, which needs the `langchain` package "
                    "(and the provider's); or give a \"./file.py:function\" path",
                    "store.index.embed") from None
    try:
        return init_embeddings(embed)
    except Exception as failure:
        raise error(f"{embed!r}: {type(failure).__name__}: {failure}", "store.index.embed") from None


def _is_path(embed: str) -> bool:
    """`"./embed.py:fn"` or `"pkg.module:fn"` (a path to import) versus `"openai:model"`."""
    target = embed.rpartition(":")[0]
    return target.endswith(".py") or "/" in target or "." in target


def _check_ttl(spec: Any, known: frozenset[str], key: str,
               error: ConfigErrorFactory) -> dict[str, Any]:
    ttl = dict(_want(spec, dict, "an object", key, error))
    unknown = sorted(set(ttl) - known)
    if unknown:
        raise error(f"unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}", key)
    for name in ("default_ttl", "sweep_interval_minutes", "sweep_limit"):
        value = ttl.get(name)
        if value is not None and (_want(value, (int, float), "a positive number of minutes",
                                        f"{key}.{name}", error) <= 0):
            raise error("must be a positive number", f"{key}.{name}")
    return ttl


def check_checkpointer(spec: Any, error: ConfigErrorFactory) -> dict[str, Any]:
    """`checkpointer.ttl`, checked so a typo fails early ({} without it)."""
    if spec is None:
        return {}
    checkpointer = _want(spec, dict, "an object", "checkpointer", error)
    if checkpointer.get("ttl") is None:
        return {}
    ttl = _check_ttl(checkpointer["ttl"], _THREAD_TTL_KEYS, "checkpointer.ttl", error)
    if ttl.get("strategy", "delete") not in ("delete", "keep_latest"):
        raise error('must be "delete" or "keep_latest"', "checkpointer.ttl.strategy")
    return {"ttl": ttl}

