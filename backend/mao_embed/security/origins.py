"""Which business-page origins may load the SDK and open its WebSocket (SPEC B5, CONTRACT).

Matching is exact on the serialized origin (scheme, host, port): no wildcards, no suffix
matching, because ``https://shop.example`` must not admit ``https://shop.example.evil``.
"""

from __future__ import annotations

from collections.abc import Iterable

from mao_embed.config import canonical_origin


class OriginPolicy:
    __slots__ = ("_allowed",)

    def __init__(self, origins: Iterable[str] = ()) -> None:
        self._allowed: frozenset[str] = frozenset(canonical_origin(o) for o in origins)

    def allows(self, origin: str | None) -> bool:
        # "null" is what sandboxed iframes and file:// pages send; it identifies no one.
        return bool(origin) and origin != "null" and origin in self._allowed

    def add(self, *origins: str) -> None:
        """Widen the allowlist, e.g. with the server's own origins once its port is known.

        Replaces the set in one assignment so the event loop thread never sees it half-built.
        """
        self._allowed = self._allowed | {canonical_origin(o) for o in origins}

    @property
    def allowed(self) -> frozenset[str]:
        return self._allowed
