"""The backend audit log (SPEC B2, P6): ``AuditLog`` records to a crash-safe journal
(``journal.py``) that a thread imports into SQLite; ``records.py`` is what a record holds."""

from mao_embed.audit.log import (
    CHECKPOINT_INTERVAL_S,
    IMPORT_INTERVAL_S,
    AuditLog,
    AuditWriteError,
)
from mao_embed.audit.records import AuditEvent, AuditRecord

__all__ = [
    "CHECKPOINT_INTERVAL_S",
    "IMPORT_INTERVAL_S",
    "AuditEvent",
    "AuditLog",
    "AuditRecord",
    "AuditWriteError",
]
