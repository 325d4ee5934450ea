"""Server configuration and where its secrets and state live (CONTRACT "Operator").

``mao-embed token`` and ``mao-embed serve`` must sign and verify with the same secret without
the operator configuring anything, so the secret falls back to a per-user file created on
first use. The agent API key and the allowed page origins come from flags or the environment.
"""

from __future__ import annotations

import ipaddress
import os
import re
import secrets
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

import idna
from mao_page.protocol import MAX_MESSAGE_BYTES

ENV_SECRET = "MAO_EMBED_SECRET"
ENV_ORIGINS = "MAO_EMBED_ORIGINS"
ENV_API_KEY = "MAO_EMBED_API_KEY"
# The panel chat's agent loop (SPEC B3): any OpenAI-compatible chat-completions endpoint.
ENV_LLM_BASE_URL = "MAO_EMBED_LLM_BASE_URL"
ENV_LLM_MODEL = "MAO_EMBED_LLM_MODEL"
ENV_LLM_API_KEY = "MAO_EMBED_LLM_API_KEY"
# The cluster (``serve --redis``, docs/cluster.md): the Redis every instance shares, and this
# instance's name in the session directory and its audit records.
ENV_REDIS_URL = "MAO_EMBED_REDIS_URL"
ENV_INSTANCE = "MAO_EMBED_INSTANCE"
_REDIS_SCHEMES = ("redis", "rediss", "unix")

PACKAGE_DIR = Path(__file__).parent
# Produced by the asset build step (``mao-embed build-assets``); gitignored, shipped in the wheel.
DEFAULT_SDK_DIR = PACKAGE_DIR / "_sdk"
DEFAULT_DEMO_DIR = PACKAGE_DIR / "demo_pages"

# 32 random bytes is the HMAC-SHA256 block-strength recommendation (RFC 2104 §3).
_SECRET_BYTES = 32


@dataclass(frozen=True, slots=True)
class LlmConfig:
    """The model behind the panel chat. ``base_url`` ends before ``/chat/completions``
    (e.g. ``http://127.0.0.1:11434/v1``); ``api_key`` may be unset for local servers."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    # Model turns per user message before the loop stops and says so.
    max_steps: int = 12
    request_timeout_s: float = 120.0


@dataclass(frozen=True, slots=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    secret: str = field(default="", repr=False)
    allowed_origins: tuple[str, ...] = ()
    db_path: Path | None = None
    api_key: str | None = field(default=None, repr=False)
    demo: bool = False
    heartbeat_interval_ms: int = 15_000
    # Missed heartbeats before a silent page is treated as dead (protocol docstring step 4).
    heartbeat_misses: int = 3
    default_timeout_ms: int = 30_000
    # Extra wait past a request's timeoutMs so the page's own timeout answer wins the race.
    response_grace_ms: int = 500
    hello_timeout_ms: int = 10_000
    max_message_bytes: int = MAX_MESSAGE_BYTES
    # How long a dropped session may be resumed with the same sessionId (SPEC W4).
    resume_window_ms: int = 60_000
    # Inbound frames per second per connection, with a burst allowance. A page only answers
    # what it was asked (SPEC W4), so anything near this is a misbehaving client.
    inbound_rate_per_s: float = 50.0
    inbound_burst: int = 200
    sdk_dir: Path = DEFAULT_SDK_DIR
    demo_dir: Path = DEFAULT_DEMO_DIR
    # None: the panel chat answers "no model configured" (SPEC B3).
    llm: LlmConfig | None = None
    # None: one process, nothing shared (the default). Set: this instance joins the cluster of
    # every instance on the same Redis with the same secret and API key (SPEC B6).
    redis_url: str | None = field(default=None, repr=False)
    # Unique per running instance; None: host name, pid and a random suffix.
    instance_name: str | None = None
    # An instance unseen in Redis this long is dead: its sessions leave the list. Capped at
    # the page heartbeat window (interval x misses), the promise made to operators.
    cluster_liveness_ms: int = 5_000
    # How long Redis keeps the first result of an agent-given requestId (SPEC W2).
    request_retention_ms: int = 300_000
    # How long a panel conversation is kept after its last message (``--conversation-ttl``,
    # SPEC U5); stored beside the audit database (``conversations.db``), or in Redis.
    conversation_ttl_s: float = 30 * 24 * 3600

    def __post_init__(self) -> None:
        if not self.secret:
            raise ValueError("ServerConfig.secret must be set; use resolve_secret()")
        object.__setattr__(
            self, "allowed_origins", tuple(canonical_origin(o) for o in self.allowed_origins)
        )

    def with_origins(self, *origins: str) -> ServerConfig:
        merged = dict.fromkeys(self.allowed_origins)
        merged.update(dict.fromkeys(canonical_origin(o) for o in origins))
        return replace(self, allowed_origins=tuple(merged))


def normalize_origin(origin: str) -> str:
    """Origins are compared exactly (SPEC B5); only a trailing slash typed by an operator is
    forgiven, since browsers never send one in the Origin header."""
    return origin.strip().rstrip("/")


_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?")
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")


def canonical_origin(origin: str) -> str:
    """An operator's allowlist entry as a browser serializes that origin in its Origin header,
    or ``ValueError`` saying why it never could match one.

    Matching stays exact (SPEC B5); this only refuses entries that can match no page (a bare
    host, a path, ``*``, ``null``) instead of accepting them and then refusing every handshake
    without a word, and writes what browsers write: lower-case scheme and host, no default
    port (``https://Shop.Example:443/`` is ``https://shop.example``).
    """
    text = normalize_origin(origin)
    if text in ("*", "null"):
        raise ValueError(f"origin {origin!r} is refused: list each page origin, e.g. "
                         f"https://shop.example")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:  # a port out of range or not a number, a broken IPv6 literal
        raise ValueError(f"origin {origin!r} is not scheme://host[:port] ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"origin {origin!r} is not http(s)://host[:port], e.g. "
                         f"https://shop.example")
    if (
        parts.username is not None
        or parts.path
        or parts.query
        or parts.fragment
        or text.endswith(("?", "#"))
    ):
        raise ValueError(
            f"origin {origin!r} has more than scheme://host[:port]: an origin has no path, query "
            f"or user"
        )
    return f"{scheme}://{_canonical_host(parts.hostname, origin)}" + (
        "" if port in (None, _DEFAULT_PORTS[scheme]) else f":{port}"
    )


def _canonical_host(host: str, origin: str) -> str:
    """``host`` (lower-cased by urlsplit) as the WHATWG URL parser writes it, or ValueError."""
    if ":" in host:  # an IPv6 literal: browsers write it compressed ([::1])
        if "%" in host:
            raise ValueError(f"origin {origin!r}: a zone id (%...) cannot appear in an origin")
        try:
            address = ipaddress.IPv6Address(host)
        except ValueError:
            raise ValueError(f"origin {origin!r} has an invalid IPv6 address") from None
        mapped = address.ipv4_mapped
        if mapped is None:
            return f"[{address}]"  # compressed, lower case: RFC 5952, as WHATWG writes it
        # Browsers write an IPv4-mapped address in hex ([::ffff:102:304]); Python 3.13's str
        # writes it dotted, so it is spelled out here.
        high, low = int(mapped) >> 16, int(mapped) & 0xFFFF
        return f"[::ffff:{high:x}:{low:x}]"
    last = host.removesuffix(".").rpartition(".")[2]
    if _NUMERIC_LABEL.fullmatch(last):
        # Ends in a number: browsers read it as an IPv4 address (127.1, 0x7f.0.0.1 and
        # 1.2.3.4. are 127.0.0.1 / 1.2.3.4 to them); only the dotted-quad form is taken.
        address = host.removesuffix(".")
        try:
            if str(ipaddress.IPv4Address(address)) == address:
                return address
        except ValueError:
            pass
        raise ValueError(
            f"origin {origin!r}: write the IPv4 address as four decimal numbers, a.b.c.d"
        )
    if host.isascii() and "xn--" not in host:
        if not _HOST.fullmatch(host):  # e.g. "*.shop.example": there are no wildcards
            raise ValueError(
                f"origin {origin!r} has an invalid host name (no wildcards: list each origin)"
            )
        return host
    # Internationalized: UTS #46 non-transitional processing, as browsers do ("faß.de" is
    # xn--fa-hia.de, not fass.de as Python's IDNA 2003 codec has it); it also checks the
    # xn-- labels an operator typed.
    try:
        return idna.encode(host, uts46=True, transitional=False).decode("ascii")
    except idna.IDNAError as exc:
        raise ValueError(f"origin {origin!r} has an invalid host name ({exc})") from None


def server_origins(port: int) -> tuple[str, ...]:
    """The backend's own origins, allowed in demo mode so its demo pages can connect."""
    return (f"http://127.0.0.1:{port}", f"http://localhost:{port}")


def config_home(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mao-embed"


def state_home(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "mao-embed"


def default_db_path(environ: Mapping[str, str] | None = None) -> Path:
    return state_home(environ) / "audit.db"


def resolve_secret(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """``--secret`` > env MAO_EMBED_SECRET > the per-user secret file (created 0600)."""
    env = os.environ if environ is None else environ
    if explicit:
        return explicit
    if env.get(ENV_SECRET):
        return env[ENV_SECRET]
    return _read_or_create_secret_file(config_home(env) / "secret")


def _read_or_create_secret_file(path: Path) -> str:
    try:
        existing = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        existing = ""
    if existing:
        return existing
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    candidate = secrets.token_urlsafe(_SECRET_BYTES)
    # O_EXCL so two processes starting at once (serve and token) cannot write different
    # secrets; the loser reads the winner's file.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="utf-8").strip()
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(candidate + "\n")
    return candidate


def resolve_origins(
    flags: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """``--allow-origin`` flags plus env MAO_EMBED_ORIGINS (comma-separated), de-duplicated,
    each in its canonical form; ``ValueError`` names the first that can match no page."""
    env = os.environ if environ is None else environ
    from_env = [o for o in env.get(ENV_ORIGINS, "").split(",") if o.strip()]
    merged = dict.fromkeys(canonical_origin(o) for o in [*flags, *from_env])
    return tuple(merged)


def resolve_api_key(environ: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if environ is None else environ
    return env.get(ENV_API_KEY) or None


def resolve_redis_url(
    explicit: str | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """``--redis`` > env MAO_EMBED_REDIS_URL; ``ValueError`` for anything but a Redis URL."""
    env = os.environ if environ is None else environ
    url = (explicit or env.get(ENV_REDIS_URL, "")).strip()
    if not url:
        return None
    scheme = urlsplit(url).scheme.lower()
    if scheme not in _REDIS_SCHEMES:
        raise ValueError(f"{url!r} is not a Redis URL: redis://HOST:PORT/DB (or rediss://, "
                         f"unix://)")
    return url


def redacted_redis_url(url: str) -> str:
    """The URL without its password, for logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname}" + (
        f":{parts.port}" if parts.port else ""
    )
    return parts._replace(netloc=netloc).geturl()


_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*")
_DURATION_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """``30d``, ``12h``, ``90m``, ``3600s`` or ``3600`` (seconds) in seconds; ``ValueError``
    for anything else or for zero."""
    match = _DURATION.fullmatch(text.lower())
    if match is None or float(match[1]) <= 0:
        raise ValueError(f"{text!r} is not a duration such as 30d, 12h, 90m or 3600s")
    return float(match[1]) * _DURATION_UNITS[match[2]]


def default_instance_name() -> str:
    """Host, pid and a random suffix: unique per process, and readable in the audit log."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def resolve_llm(environ: Mapping[str, str] | None = None) -> LlmConfig | None:
    """The panel chat's model from MAO_EMBED_LLM_BASE_URL / _MODEL / _API_KEY; both the base
    URL and the model must be set, else the chat is not configured."""
    env = os.environ if environ is None else environ
    base_url = env.get(ENV_LLM_BASE_URL, "").strip()
    model = env.get(ENV_LLM_MODEL, "").strip()
    if not base_url or not model:
        return None
    return LlmConfig(base_url=base_url, model=model, api_key=env.get(ENV_LLM_API_KEY) or None)


def load_config(
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    secret: str | None = None,
    allow_origins: Iterable[str] = (),
    db_path: Path | str | None = None,
    demo: bool = False,
    environ: Mapping[str, str] | None = None,
    **overrides: object,
) -> ServerConfig:
    """Build a config the way the CLI does: flags first, then the environment, then files.

    ``db_path=None`` means the default state file; pass ``overrides`` for any other field.
    """
    overrides.setdefault("llm", resolve_llm(environ))
    env = os.environ if environ is None else environ
    overrides.setdefault("redis_url", resolve_redis_url(None, environ))
    overrides.setdefault("instance_name", env.get(ENV_INSTANCE) or None)
    return ServerConfig(
        host=host,
        port=port,
        secret=resolve_secret(secret, environ),
        allowed_origins=resolve_origins(allow_origins, environ),
        db_path=Path(db_path) if db_path is not None else default_db_path(environ),
        api_key=resolve_api_key(environ),
        demo=demo,
        **overrides,  # type: ignore[arg-type]
    )
