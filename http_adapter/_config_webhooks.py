"""The `webhooks` section of langgraph.json (issue 26 §5), as langgraph-cli documents it:

    "webhooks": {
      "env_prefix": "LG_WEBHOOK_",
      "url": {"require_https": true, "allowed_domains": ["hooks.example.com", "*.corp.com"],
              "allowed_ports": [443], "max_url_length": 4096, "disable_loopback": true},
      "headers": {"Authorization": "Bearer ${{ env.LG_WEBHOOK_TOKEN }}"},
      "allowed_fields": ["run_id", "status"]
    }

Header values may hold `${{ env.NAME }}` templates, resolved here once from the environment;
`NAME` must start with `env_prefix` (default `LG_WEBHOOK_`), so a config cannot send any other
secret of the process out. Every problem is a one-line config error naming its key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["DEFAULT_ENV_PREFIX", "check_webhooks"]

DEFAULT_ENV_PREFIX = "LG_WEBHOOK_"
_KEYS = frozenset(("env_prefix", "url", "headers", "allowed_fields"))
_URL_KEYS = frozenset(("require_https", "allowed_domains", "allowed_ports", "max_url_length",
                       "disable_loopback"))
_TEMPLATE = re.compile(r"\$\{\{(.*?)\}\}")
_ENV_NAME = re.compile(r"\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")

ConfigErrorFactory = Callable[[str, str], Exception]  # (message, key) -> ConfigError


def check_webhooks(spec: Any, error: ConfigErrorFactory,
                   environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The validated section ({} without one), its header templates resolved."""
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise error("must be an object", "webhooks")
    _known(spec, _KEYS, "webhooks", error)
    prefix = spec.get("env_prefix", DEFAULT_ENV_PREFIX)
    if not isinstance(prefix, str):
        raise error("must be a string", "webhooks.env_prefix")
    found: dict[str, Any] = {"env_prefix": prefix}
    if spec.get("url") is not None:
        found["url"] = _check_url(spec["url"], error)
    if spec.get("headers") is not None:
        found["headers"] = _check_headers(spec["headers"], prefix, error,
                                          os.environ if environ is None else environ)
    if spec.get("allowed_fields") is not None:
        fields = spec["allowed_fields"]
        if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
            raise error("must be a list of strings", "webhooks.allowed_fields")
        found["allowed_fields"] = list(fields)
    return found


def _known(section: dict[str, Any], known: frozenset[str], key: str,
           error: ConfigErrorFactory) -> None:
    unknown = sorted(set(section) - known)
    if unknown:
        raise error(f"unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}",
                    key)


def _check_url(spec: Any, error: ConfigErrorFactory) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise error("must be an object", "webhooks.url")
    _known(spec, _URL_KEYS, "webhooks.url", error)
    for name in ("require_https", "disable_loopback"):
        if name in spec and not isinstance(spec[name], bool):
            raise error("must be true or false", f"webhooks.url.{name}")
    domains = spec.get("allowed_domains")
    if domains is not None and (not isinstance(domains, list) or not all(
            isinstance(d, str) and d.strip() for d in domains)):
        raise error("must be a list of host names", "webhooks.url.allowed_domains")
    ports = spec.get("allowed_ports")
    if ports is not None and (not isinstance(ports, list) or not all(
            _int(p) and 0 < p < 65536 for p in ports)):
        raise error("must be a list of port numbers", "webhooks.url.allowed_ports")
    length = spec.get("max_url_length")
    if length is not None and not (_int(length) and length > 0):
        raise error("must be a positive number of characters", "webhooks.url.max_url_length")
    return dict(spec)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_headers(spec: Any, prefix: str, error: ConfigErrorFactory,
                   environ: Mapping[str, str]) -> dict[str, str]:
    if not isinstance(spec, dict):
        raise error("must be an object of header name -> value", "webhooks.headers")
    headers = {}
    for name, value in spec.items():
        key = f"webhooks.headers.{name}"
        if not _HEADER_NAME.fullmatch(name):
            raise error("is not a valid header name", key)
        if not isinstance(value, str):
            raise error("must be a string", key)
        resolved = _TEMPLATE.sub(lambda m: _env(m.group(1), prefix, key, error, environ), value)
        if any(c in resolved for c in "\r\n\0"):
            raise error("must be one line", key)
        headers[name] = resolved
    return headers


def _env(template: str, prefix: str, key: str, error: ConfigErrorFactory,
         environ: Mapping[str, str]) -> str:
    """One `${{ env.NAME }}`: the variable's value, if its name has the prefix and it is set."""
    match = _ENV_NAME.fullmatch(template)
    if match is None:
        raise error(f"unsupported template ${{{{{template}}}}}; use ${{{{ env.NAME }}}}", key)
    name = match.group(1)
    if not name.startswith(prefix):
        raise error(f"env.{name} does not start with env_prefix {prefix!r}", key)
    if name not in environ:
        raise error(f"environment variable {name} is not set", key)
    return environ[name]
