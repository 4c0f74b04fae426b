"""Environment configuration, read once at start (see docs/configuration.md).

Parsing is kept free of Flask and gunicorn imports so that a bad value is
reported before anything heavy is loaded or any socket is opened.
"""

import ipaddress
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

SERVICE = "productpage"

# Measured (DESIGN.md, "Choosing the worker model"): two processes use both cores
# of the benchmark machine; more only add context switches.
DEFAULT_WEB_CONCURRENCY = 2

LOG_LEVELS = ("debug", "info", "warn", "error")

_HOSTNAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$")


class ConfigError(Exception):
    """A variable has a value outside its grammar; str() is the one-line message."""


@dataclass(frozen=True)
class Peer:
    host: str
    port: int


@dataclass(frozen=True)
class Config:
    port: int = 9080
    listen_address: str = "0.0.0.0"
    http_nodelay: bool = True
    http_keepalive: bool = True
    keepalive_timeout: int = 60
    header_timeout: int = 10
    max_connections: int = 1024
    upstream_keepalive: bool = True
    upstream_max_requests: int = 100
    shutdown_timeout: int = 10
    access_log: bool = False
    server_timing: bool = True
    log_level: str = "info"
    web_concurrency: int = DEFAULT_WEB_CONCURRENCY
    session_secret: str | None = None
    details: Peer = Peer("details", 9080)
    reviews: Peer = Peer("reviews", 9080)
    ratings: Peer = Peer("ratings", 9080)

    @property
    def bind(self) -> str:
        if ":" in self.listen_address:
            return f"[{self.listen_address}]:{self.port}"
        return f"{self.listen_address}:{self.port}"


def _invalid(name: str, value: str, want: str) -> ConfigError:
    # json.dumps quotes and escapes, so the message stays on one line whatever the value.
    return ConfigError(f"invalid {name}={json.dumps(value)}: want {want}")


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value == "true":
        return True
    if value == "false":
        return False
    raise _invalid(name, raw, "true or false")


def _int(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = env.get(name)
    if raw is None:
        return default
    value = raw.strip()
    if re.fullmatch(r"[0-9]+", value) and low <= int(value) <= high:
        return int(value)
    raise _invalid(name, raw, f"an integer from {low} to {high}")


def _host(env: Mapping[str, str], name: str, default: str) -> str:
    raw = env.get(name)
    if raw is None:
        return default
    value = raw.strip()
    if _HOSTNAME.match(value):
        return value
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise _invalid(name, raw, "a host name or an IP address") from None


def _log_level(env: Mapping[str, str]) -> str:
    raw = env.get("LOG_LEVEL")
    if raw is None:
        return "info"
    value = raw.strip().lower()
    if value in LOG_LEVELS:
        return value
    raise _invalid("LOG_LEVEL", raw, "debug, info, warn or error")


def _session_secret(env: Mapping[str, str]) -> str | None:
    raw = env.get("SESSION_SECRET")
    if raw is None:
        return None
    if raw == "":
        raise _invalid("SESSION_SECRET", raw, "a non-empty string (or leave it unset)")
    return raw


def _peer(env: Mapping[str, str], prefix: str, default_host: str, domain: str) -> Peer:
    host = _host(env, f"{prefix}_HOSTNAME", default_host)
    port = _int(env, f"{prefix}_SERVICE_PORT", 9080, 1, 65535)
    return Peer(f"{host}.{domain}" if domain else host, port)


def _domain(env: Mapping[str, str]) -> str:
    # Empty counts as unset: upstream appended a bare "." for it, which no one wants.
    raw = env.get("SERVICES_DOMAIN", "")
    value = raw.strip().strip(".")
    if value and not _HOSTNAME.match(value):
        raise _invalid("SERVICES_DOMAIN", raw, "a DNS domain")
    return value


def from_env(env: Mapping[str, str]) -> Config:
    """Parse env into a Config; raise ConfigError naming the first bad variable."""
    domain = _domain(env)
    return Config(
        port=_int(env, "PORT", 9080, 1, 65535),
        listen_address=_host(env, "LISTEN_ADDRESS", "0.0.0.0"),
        http_nodelay=_bool(env, "HTTP_NODELAY", True),
        http_keepalive=_bool(env, "HTTP_KEEPALIVE", True),
        keepalive_timeout=_int(env, "HTTP_KEEPALIVE_TIMEOUT_SECONDS", 60, 1, 3600),
        header_timeout=_int(env, "HTTP_HEADER_TIMEOUT_SECONDS", 10, 1, 300),
        max_connections=_int(env, "HTTP_MAX_CONNECTIONS", 1024, 1, 100_000),
        upstream_keepalive=_bool(env, "UPSTREAM_KEEPALIVE", True),
        upstream_max_requests=_int(env, "UPSTREAM_MAX_REQUESTS_PER_CONNECTION", 100, 1, 1_000_000),
        shutdown_timeout=_int(env, "SHUTDOWN_TIMEOUT_SECONDS", 10, 1, 300),
        access_log=_bool(env, "ACCESS_LOG", False),
        server_timing=_bool(env, "SERVER_TIMING", True),
        log_level=_log_level(env),
        web_concurrency=_int(env, "WEB_CONCURRENCY", DEFAULT_WEB_CONCURRENCY, 1, 64),
        session_secret=_session_secret(env),
        details=_peer(env, "DETAILS", "details", domain),
        reviews=_peer(env, "REVIEWS", "reviews", domain),
        ratings=_peer(env, "RATINGS", "ratings", domain),
    )
