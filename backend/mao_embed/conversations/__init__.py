"""The panel's stored conversations (SPEC U5, B7): ``store`` (the interface, SQLite) and
``redis_store`` (a cluster's, imported only with ``serve --redis``)."""

from .store import (
    DEFAULT_TTL_S,
    MAX_STORED_ENTRIES,
    Conversation,
    ConversationKey,
    ConversationStore,
    SchemaError,
    SqliteConversationStore,
    conversations_path,
)

__all__ = [
    "DEFAULT_TTL_S",
    "MAX_STORED_ENTRIES",
    "Conversation",
    "ConversationKey",
    "ConversationStore",
    "SchemaError",
    "SqliteConversationStore",
    "conversations_path",
]
