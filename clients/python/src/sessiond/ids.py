"""Ids the client chooses before a request leaves the process.

An id fixed before the first attempt makes every retry of the same request
idempotent: the server de-duplicates an Append by its entry ids, a Rewind /
Reset by its Leaf entry id and a CreateSession / ForkSession by the session
id. The formats are those of the TypeScript client and the server.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timezone
from typing import Optional

__all__ = ["new_entry_id", "new_session_id"]


def new_entry_id() -> str:
    """A random entry id: 16 lowercase hex characters."""
    return secrets.token_hex(8)


def new_session_id(now: Optional[datetime] = None) -> str:
    """A time-sortable session id, ``YYYYMMDD-HHMMSS-<8 hex>`` in UTC."""
    t = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return f"{t:%Y%m%d-%H%M%S}-{secrets.token_hex(4)}"
