"""Ids the client chooses before a request leaves the process.

An id fixed before the first attempt makes every retry of the same request
idempotent: the server de-duplicates an Append by its entry ids, a Rewind /
Reset by its Leaf entry id and a CreateSession / ForkSession by the session
id. The formats are those of the TypeScript client and the server.

``fill_ids`` is shared by ``SessiondClient`` and ``AsyncSessiondClient``: it
writes the ids INTO the caller's request object, so that a retry the caller
makes with the same object (after a timeout, say) is de-duplicated too.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timezone
from typing import Optional

from google.protobuf.message import Message

from .v1 import session_service_pb2 as ss
from .v1 import store_service_pb2 as st

__all__ = ["fill_ids", "new_entry_id", "new_session_id"]


def new_entry_id() -> str:
    """A random entry id: 16 lowercase hex characters."""
    return secrets.token_hex(8)


def new_session_id(now: Optional[datetime] = None) -> str:
    """A time-sortable session id, ``YYYYMMDD-HHMMSS-<8 hex>`` in UTC."""
    t = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return f"{t:%Y%m%d-%H%M%S}-{secrets.token_hex(4)}"


def fill_ids(req: Message) -> None:
    """Assigns, in place, the ids that make a retry of ``req`` idempotent.

    Only what is missing: an id the caller set is kept, so calling it again
    (every retry does) changes nothing. Requests of other RPCs carry no id
    the client chooses and are left alone.
    """
    if isinstance(req, ss.AppendRequest):
        for e in req.entries:
            if not e.id:
                e.id = new_entry_id()
    elif isinstance(req, (ss.RewindRequest, ss.ResetRequest)):
        if not req.HasField("entry_id"):
            req.entry_id = new_entry_id()
    elif isinstance(req, (st.CreateSessionRequest, st.ForkSessionRequest)):
        if not req.HasField("session_id"):
            req.session_id = new_session_id()
    elif isinstance(req, st.ImportSessionRequest):
        if not req.HasField("session_id"):
            # The id the log's root records, so that an export imported again
            # lands on the same session (and a retry is "created": false).
            root = req.entries[0] if req.entries else None
            recorded = root.session_info.session_id if root is not None else ""
            req.session_id = recorded or new_session_id()
        for e in req.entries:
            if not e.id:
                e.id = new_entry_id()
            if not e.HasField("timestamp"):
                e.timestamp.GetCurrentTime()
