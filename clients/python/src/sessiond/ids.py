"""Ids the client chooses before a request leaves the process.

An id fixed before the first attempt makes every retry of the same request
idempotent: the server de-duplicates an Append by its entry ids, a Rewind /
Reset by its Leaf entry id and a CreateSession / ForkSession by the session
id. The formats are those of the TypeScript client and the server.

``fill_ids`` is shared by ``SessiondClient`` and ``AsyncSessiondClient``: it
writes the ids INTO the caller's request object, so that a retry the caller
makes with the same object (after a timeout, say) is de-duplicated too.

A session id is a second plus 32 random bits: two sessions made in the same
second draw the same id once in 2^32 pairs. A session the server finds under
an id the client drew in this call is therefore another caller's, never a
retry of this one, and ``SessionIdDraws`` draws again (the rules: ``retry.Attempts``).
Both draw through this module's ``new_session_id``, looked up at each draw:
tests replace it (``unittest.mock.patch("sessiond.ids.new_session_id", ...)``).
"""

from __future__ import annotations

import secrets
from datetime import datetime, timezone
from typing import List, Optional

from google.protobuf.message import Message

from .v1 import session_service_pb2 as ss
from .v1 import store_service_pb2 as st

__all__ = ["MAX_SESSION_ID_DRAWS", "SessionIdDraws", "fill_ids", "new_entry_id", "new_session_id"]

#: Session ids one call draws at most (the first included), as the server's store does.
MAX_SESSION_ID_DRAWS = 8


def new_entry_id() -> str:
    """A random entry id: 16 lowercase hex characters."""
    return secrets.token_hex(8)


def new_session_id(now: Optional[datetime] = None) -> str:
    """A time-sortable session id, ``YYYYMMDD-HHMMSS-<8 hex>`` in UTC."""
    t = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return f"{t:%Y%m%d-%H%M%S}-{secrets.token_hex(4)}"


def fill_ids(req: Message) -> bool:
    """Assigns, in place, the ids that make a retry of ``req`` idempotent; True when it drew the session id.

    Only what is missing: an id the caller set is kept, so calling it again
    (every retry does) changes nothing. Requests of other RPCs carry no id
    the client chooses and are left alone. The session id of a
    CreateSession, ForkSession or ImportSession (whose root records none)
    is drawn here when unset: that, and only that, is True.
    """
    drawn = False
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
            drawn = True
    elif isinstance(req, st.ImportSessionRequest):
        if not req.HasField("session_id"):
            # The id the log's root records, so that an export imported again
            # lands on the same session (and a retry is "created": false).
            root = req.entries[0] if req.entries else None
            recorded = root.session_info.session_id if root is not None else ""
            req.session_id = recorded or new_session_id()
            drawn = not recorded
        for e in req.entries:
            if not e.id:
                e.id = new_entry_id()
            if not e.HasField("timestamp"):
                e.timestamp.GetCurrentTime()
    return drawn


class SessionIdDraws:
    """The session id one call drew, drawn again when it turns out to be another session's.

    ``fill(req)`` fills ``req``'s ids (``fill_ids``) and keeps ``req`` when
    its session id was drawn there: an id the caller gave, one an import's
    root records or one an earlier call wrote into the same request object
    is not this call's and is never drawn again. ``sending(copy)`` adds the
    copy of the request that is sent instead (blob uploads). ``again()``
    writes a new id into each of them, at most ``MAX_SESSION_ID_DRAWS``
    draws in all; ``retry.Attempts`` says when.
    """

    def __init__(self, *requests: Message) -> None:
        #: The requests carrying the drawn id (none: nothing to draw again).
        self.requests: List[Message] = list(requests)
        #: Session ids drawn so far (the first one by ``fill_ids``).
        self.count = 1 if requests else 0

    @classmethod
    def fill(cls, req: Message, first: Optional[str] = None) -> "SessionIdDraws":
        """``fill_ids(req)``, and the draws of this call: ``req`` if its session id was drawn there.

        ``first`` (in-package code only): a session id the caller DREW
        (``new_session_id``) rather than chose, for a CreateSession or
        ForkSession naming none: it goes into ``req`` as this call's first
        draw, and is drawn again like one drawn here (an adapter that shows
        its session's id before it creates the session). A session id
        already in ``req`` is kept, and ``first`` ignored.
        """
        if first is not None:
            if not isinstance(req, (st.CreateSessionRequest, st.ForkSessionRequest)):
                raise TypeError(f"a first drawn id is for CreateSession / ForkSession, not {type(req).__name__}")
            if not req.HasField("session_id"):
                req.session_id = first
                fill_ids(req)
                return cls(req)
        return cls(req) if fill_ids(req) else cls()

    def sending(self, copy: Message) -> "SessionIdDraws":
        """The same draws, ``copy`` (of a request they hold) being sent: a new id goes into both."""
        if self.requests and all(copy is not r for r in self.requests):
            self.requests.append(copy)
        return self

    def again(self) -> bool:
        """Draws a new session id into the requests; False (nothing drawn) if none was drawn or after the last draw."""
        if not self.requests or self.count >= MAX_SESSION_ID_DRAWS:
            return False
        sid = new_session_id()
        for r in self.requests:
            setattr(r, "session_id", sid)
        self.count += 1
        return True
