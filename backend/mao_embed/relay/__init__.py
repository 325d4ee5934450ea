"""The relay: which page session a call goes to, and everything between an agent's call and the
page's answer — correlation, requestId idempotency, timeouts, cancel, resume (SPEC B2, W2, W3).

``local.Relay`` is one process's relay; ``cluster.ClusterRelay`` joins the relays of every
instance on one Redis (``redis_link``; docs/cluster.md). ``mao_embed.relay.Relay`` is the
public name.
"""

from mao_embed.relay.local import (
    Attachment,
    CloseCode,
    Relay,
    ResultListener,
    SessionIdentity,
    SessionInfo,
    SessionTransport,
    TransportClosed,
    failure,
    is_valid_request_id,
    new_request_id,
)

__all__ = [
    "Attachment",
    "CloseCode",
    "Relay",
    "ResultListener",
    "SessionIdentity",
    "SessionInfo",
    "SessionTransport",
    "TransportClosed",
    "failure",
    "is_valid_request_id",
    "new_request_id",
]
