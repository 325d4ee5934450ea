"""The ``mao-embed`` command (CONTRACT "Operator")."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace

from mao_embed.config import (
    ENV_ORIGINS,
    ENV_REDIS_URL,
    ServerConfig,
    canonical_origin,
    default_instance_name,
    load_config,
    parse_duration,
    redacted_redis_url,
    resolve_origins,
    resolve_redis_url,
    resolve_secret,
    server_origins,
)
from mao_embed.security.tokens import DEFAULT_TTL_S, MAX_TTL_S, issue_token

# Subcommands implemented elsewhere that parse their own arguments.
_DELEGATED = ("demo", "build-assets")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mao-embed",
        description="Let an AI agent see and operate a real business web page.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser(
        "serve", help="run the backend (SDK assets, WebSocket, agent API, MCP)"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--demo", action="store_true", help="also serve the demo pages under /demo/")
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="business-page origin allowed to connect (repeatable; env MAO_EMBED_ORIGINS too)",
    )
    serve.add_argument("--db", metavar="FILE", help="audit database (default: XDG state dir)")
    serve.add_argument("--secret", help="token signing secret (default: env or per-user file)")
    serve.add_argument(
        "--redis",
        metavar="URL",
        help="join a cluster through this Redis, redis://HOST:PORT/DB (env MAO_EMBED_REDIS_URL)",
    )
    serve.add_argument(
        "--conversation-ttl",
        metavar="DURATION",
        default="30d",
        help="how long a panel conversation is kept after its last message: 30d, 12h, 90m, "
        "3600s (default 30d)",
    )
    serve.add_argument(
        "--instance",
        metavar="NAME",
        help="this instance's unique name in the cluster (env MAO_EMBED_INSTANCE; default: "
        "host-pid-random)",
    )

    token = commands.add_parser("token", help="print one SDK token signed with the serve secret")
    token.add_argument("--user", required=True)
    token.add_argument("--agent", required=True)
    token.add_argument("--origin", help="bind the token to one page origin")
    token.add_argument("--ttl", type=int, default=DEFAULT_TTL_S, metavar="SECONDS")
    token.add_argument("--secret")

    commands.add_parser("demo", help="run the scripted demo end to end (exit 0 on success)")
    commands.add_parser("build-assets", help="build the SDK assets served under /sdk/")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in _DELEGATED:
        # Imported lazily: these pull in Playwright and the asset toolchain.
        if args_list[0] == "demo":
            from mao_embed.demo import main as demo_main

            sys.exit(demo_main(args_list[1:]))
        from mao_embed.assets import main as assets_main

        sys.exit(assets_main(args_list[1:]))

    parser = build_parser()
    args = parser.parse_args(args_list)
    if args.command == "token":
        return _token(parser, args)
    return _serve(parser, args)


def _token(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if not 1 <= args.ttl <= MAX_TTL_S:
        parser.error(f"--ttl must be between 1 and {MAX_TTL_S} seconds")
    origin = args.origin
    if origin is not None:
        try:
            origin = canonical_origin(origin)
        except ValueError as exc:
            parser.error(f"--origin: {exc}")
    print(
        issue_token(
            resolve_secret(args.secret),
            user_id=args.user,
            agent_id=args.agent,
            origin=origin,
            ttl_s=args.ttl,
        )
    )
    return 0


def _serve(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    # Checked before the asset build: a bad flag is refused at once, with the usage line.
    try:  # an origin that can match no page would refuse every handshake without a word
        resolve_origins(args.allow_origin)
    except ValueError as exc:
        parser.error(f"--allow-origin / {ENV_ORIGINS}: {exc}")
    try:
        redis_url = resolve_redis_url(args.redis)
    except ValueError as exc:
        parser.error(f"--redis / {ENV_REDIS_URL}: {exc}")
    try:
        conversation_ttl_s = parse_duration(args.conversation_ttl)
    except ValueError as exc:
        parser.error(f"--conversation-ttl: {exc}")
    from mao_embed.assets import SDK_DIR, ensure_built, source_checkout
    from mao_embed.server import serve_forever

    if source_checkout():
        ensure_built()  # cheap when up to date; rebuilds after a change to the page package
    elif not (SDK_DIR / "manifest.json").is_file():
        print("mao-embed: the SDK assets are missing from this installation", file=sys.stderr)
        return 2

    origins = list(args.allow_origin)
    if args.demo and args.port:
        # Port 0 is resolved after binding; serve_forever adds the real origins then.
        origins.extend(server_origins(args.port))
    config = load_config(
        host=args.host,
        port=args.port,
        secret=args.secret,
        allow_origins=origins,
        db_path=args.db,
        demo=args.demo,
        redis_url=redis_url,
        conversation_ttl_s=conversation_ttl_s,
        **({"instance_name": args.instance} if args.instance else {}),
    )
    if config.redis_url and not config.instance_name:
        config = replace(config, instance_name=default_instance_name())

    def announce(url: str) -> None:
        print(
            f"mao-embed serving on {url} "
            f"(allowed origins: {', '.join(config.allowed_origins) or 'none'}; "
            f"audit: {config.db_path}; agent API: "
            f"{'API key' if config.api_key else 'loopback only'}"
            f"{_cluster_note(config)})",
            file=sys.stderr,
            flush=True,
        )

    serve_forever(config, announce)
    return 0


def _cluster_note(config: ServerConfig) -> str:
    if not config.redis_url:
        return ""
    return f"; cluster: instance {config.instance_name} on {redacted_redis_url(config.redis_url)}"


if __name__ == "__main__":
    sys.exit(main())
