"""Serving the SDK's runtime assets under ``/sdk/`` (SPEC E3, CONTRACT "Business page").

Layout written by the asset build step into ``mao_embed/_sdk/``:

- ``mao-chat.js``: the loader a business page includes by a fixed URL. It must be
  revalidated on every load (``no-cache``) so a new release reaches pages at once.
- ``<buildId>/<path>``: everything else (Pyodide, wheels, stdlib zip). The build id changes
  with the content, so these are cached for a year as ``immutable``.
- ``<file>.br`` / ``<file>.gz``: precompressed siblings, served with ``Content-Encoding``
  when the client accepts them; Pyodide's wasm and stdlib are tens of MB uncompressed.

The page lives on another origin than the backend, so assets carry CORS headers for
allowlisted origins only (``fetch`` of the wasm and ``import()`` of modules need them) and
``Cross-Origin-Resource-Policy: cross-origin`` so pages isolated with COEP can still load them.
"""

from __future__ import annotations

import os
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response

from mao_embed.security.origins import OriginPolicy

LOADER_NAME = "mao-chat.js"
NO_CACHE = "no-cache"
IMMUTABLE = "public, max-age=31536000, immutable"

MEDIA_TYPES: dict[str, str] = {
    ".wasm": "application/wasm",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".json": "application/json",
    ".map": "application/json",
    ".zip": "application/zip",
    # Wheels are zip files, but micropip only needs bytes; octet-stream keeps proxies from
    # treating them as documents.
    ".whl": "application/octet-stream",
    ".tar": "application/x-tar",
    # Dynamic libraries (wasm side modules): WebAssembly.compileStreaming insists on the type.
    ".so": "application/wasm",
    ".py": "text/x-python",
    ".css": "text/css",
    ".html": "text/html",
    ".txt": "text/plain",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}

# Preference order when the client accepts several: brotli is smaller for wasm and JS.
_ENCODINGS: tuple[tuple[str, str], ...] = (("br", ".br"), ("gzip", ".gz"))


def media_type_for(path: Path) -> str:
    return MEDIA_TYPES.get(path.suffix.lower(), "application/octet-stream")


def cors_headers(origins: OriginPolicy, request: Request) -> dict[str, str]:
    """CORS for an allowlisted Origin only; ``Vary: Origin`` always, since the answer depends
    on it and a shared cache must not hand one origin's headers to another."""
    headers = {"Vary": "Origin", "Cross-Origin-Resource-Policy": "cross-origin"}
    origin = request.headers.get("origin")
    if origins.allows(origin):
        assert origin is not None
        headers["Access-Control-Allow-Origin"] = origin
        # Lets the business page see sizes and timings of our assets in its own Resource
        # Timing (start-up cost is theirs to monitor); allowed origins only.
        headers["Timing-Allow-Origin"] = origin
    return headers


class SdkAssets:
    def __init__(self, root: Path, origins: OriginPolicy) -> None:
        self._root = root
        self._origins = origins

    async def serve(self, request: Request) -> Response:
        cors = cors_headers(self._origins, request)
        if request.method == "OPTIONS":
            return self._preflight(request, cors)
        relative = _safe_relative_path(request.path_params.get("path", ""))
        if relative is None:
            return PlainTextResponse("not found", status_code=404, headers=cors)
        path = self._root.joinpath(*relative)
        if not path.is_file():
            return PlainTextResponse("not found", status_code=404, headers=cors)
        cache = NO_CACHE if len(relative) == 1 else IMMUTABLE
        headers = {**cors, "Cache-Control": cache}
        chosen, encoding = _negotiate(path, request.headers.get("accept-encoding", ""))
        has_siblings = any(path.with_name(path.name + sfx).is_file() for _, sfx in _ENCODINGS)
        if has_siblings:
            headers["Vary"] = "Origin, Accept-Encoding"
        if encoding is not None:
            headers["Content-Encoding"] = encoding
        response = FileResponse(
            chosen, headers=headers, media_type=media_type_for(path), stat_result=os.stat(chosen)
        )
        # The loader is revalidated on every page load; answer unchanged files with 304.
        if _etag_matches(request.headers.get("if-none-match"), response.headers.get("etag")):
            kept = {
                k: v
                for k, v in response.headers.items()
                if k.lower() not in ("content-length", "content-type", "accept-ranges")
            }
            return Response(status_code=304, headers=kept)
        return response

    def _preflight(self, request: Request, cors: dict[str, str]) -> Response:
        if "Access-Control-Allow-Origin" not in cors:
            return Response(status_code=403, headers=cors)
        requested = request.headers.get("access-control-request-headers")
        headers = {
            **cors,
            "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
            "Access-Control-Max-Age": "600",
        }
        if requested:
            headers["Access-Control-Allow-Headers"] = requested
        return Response(status_code=204, headers=headers)


def _safe_relative_path(raw: str) -> tuple[str, ...] | None:
    """Path segments under the asset root, or None for anything that could escape it.

    Checked on the decoded segments, so ``%2e%2e`` is caught as ``..``. Symlinks placed by the
    build step are followed on purpose (the asset tree is ours); requests cannot create them.
    """
    if not raw or "\\" in raw or "\x00" in raw:
        return None
    segments = tuple(raw.split("/"))
    for segment in segments:
        if segment in ("", ".", "..") or segment.startswith("."):
            return None
    return segments


def _negotiate(path: Path, accept_encoding: str) -> tuple[Path, str | None]:
    accepted, refused = _parse_accept_encoding(accept_encoding)
    for encoding, suffix in _ENCODINGS:
        if encoding in accepted or ("*" in accepted and encoding not in refused):
            sibling = path.with_name(path.name + suffix)
            if sibling.is_file():
                return sibling, encoding
    return path, None


def _parse_accept_encoding(header: str) -> tuple[set[str], set[str]]:
    """Codings accepted (q > 0) and refused (``q=0``), per RFC 9110 §12.5.3."""
    accepted: set[str] = set()
    refused: set[str] = set()
    for item in header.split(","):
        name, _, params = item.strip().partition(";")
        name = name.strip().lower()
        if not name:
            continue
        quality = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        (accepted if quality > 0 else refused).add(name)
    return accepted, refused


def _etag_matches(if_none_match: str | None, etag: str | None) -> bool:
    if not if_none_match or not etag:
        return False
    candidates = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in candidates or etag.removeprefix("W/") in candidates
