"""Environment configuration, read once at start (docs/configuration.md). No Flask or gunicorn
import: a bad value is reported before anything heavy loads or any socket is opened."""

import ipaddress
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

SERVICE = "productpage"
LOG_LEVELS = ("debug", "info", "warn", "error")
_HOSTNAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$")


class ConfigError(Exception):
    """A variable has a value outside its grammar; str() is the one-line message."""


@dataclass(frozen=True)
class Peer:
    host: str
    port: int


def _bool(raw: str) -> bool:
    if (value := raw.strip().lower()) in ("true", "false"):
        return value == "true"
    raise ValueError("true or false")


def _int(low: int, high: int):
    def parse(raw: str) -> int:
        value = raw.strip()
        if re.fullmatch(r"[0-9]+", value) and low <= int(value) <= high:
            return int(value)
        raise ValueError(f"an integer from {low} to {high}")

    return parse


def _host(raw: str) -> str:
    value = raw.strip()
    if _HOSTNAME.match(value):
        return value
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise ValueError("a host name or an IP address") from None


def _log_level(raw: str) -> str:
    if (value := raw.strip().lower()) in LOG_LEVELS:
        return value
    raise ValueError("debug, info, warn or error")


def _secret(raw: str) -> str:
    if raw:
        return raw
    raise ValueError("a non-empty string (or leave it unset)")


def _domain(raw: str) -> str:
    # Empty counts as unset: upstream appended a bare "." for it, which no one wants.
    value = raw.strip().strip(".")
    if value and not _HOSTNAME.match(value):
        raise ValueError("a DNS domain")
    return value


_PORT = _int(1, 65535)


def _env(name: str, default, parse):
    """A Config field read from the variable name with parse, default when unset."""
    return field(default=default, metadata={"env": name, "parse": parse})


@dataclass(frozen=True)
class Config:
    port: int = _env("PORT", 9080, _PORT)
    listen_address: str = _env("LISTEN_ADDRESS", "0.0.0.0", _host)
    http_nodelay: bool = _env("HTTP_NODELAY", True, _bool)
    http_keepalive: bool = _env("HTTP_KEEPALIVE", True, _bool)
    keepalive_timeout: int = _env("HTTP_KEEPALIVE_TIMEOUT_SECONDS", 60, _int(1, 3600))
    header_timeout: int = _env("HTTP_HEADER_TIMEOUT_SECONDS", 10, _int(1, 300))
    max_connections: int = _env("HTTP_MAX_CONNECTIONS", 1024, _int(1, 100_000))
    upstream_keepalive: bool = _env("UPSTREAM_KEEPALIVE", True, _bool)
    upstream_max_requests: int = _env(
        "UPSTREAM_MAX_REQUESTS_PER_CONNECTION", 100, _int(1, 1_000_000)
    )
    shutdown_timeout: int = _env("SHUTDOWN_TIMEOUT_SECONDS", 10, _int(1, 300))
    access_log: bool = _env("ACCESS_LOG", False, _bool)
    server_timing: bool = _env("SERVER_TIMING", True, _bool)
    log_level: str = _env("LOG_LEVEL", "info", _log_level)
    # One worker per core (DESIGN.md, "Choosing the worker model").
    web_concurrency: int = _env("WEB_CONCURRENCY", 2, _int(1, 64))
    session_secret: str | None = _env("SESSION_SECRET", None, _secret)
    # <NAME>_HOSTNAME, <NAME>_SERVICE_PORT and SERVICES_DOMAIN (from_env).
    details: Peer = Peer("details", 9080)
    reviews: Peer = Peer("reviews", 9080)
    ratings: Peer = Peer("ratings", 9080)

    @property
    def bind(self) -> str:
        host = self.listen_address
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"


def _read(env: Mapping[str, str], name: str, parse, default):
    raw = env.get(name)
    if raw is None:
        return default
    try:
        return parse(raw)
    except ValueError as err:
        # json.dumps quotes and escapes, so the message stays on one line whatever the value.
        raise ConfigError(f"invalid {name}={json.dumps(raw)}: want {err}") from None


def from_env(env: Mapping[str, str]) -> Config:
    """Parse env into a Config; raise ConfigError naming the first bad variable."""
    domain = _read(env, "SERVICES_DOMAIN", _domain, "")
    values = {
        knob.name: _read(env, knob.metadata["env"], knob.metadata["parse"], knob.default)
        for knob in fields(Config)
        if knob.metadata
    }
    for peer in ("details", "reviews", "ratings"):
        host = _read(env, f"{peer.upper()}_HOSTNAME", _host, peer)
        port = _read(env, f"{peer.upper()}_SERVICE_PORT", _PORT, 9080)
        values[peer] = Peer(f"{host}.{domain}" if domain else host, port)
    return Config(**values)
