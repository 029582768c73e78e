"""How a watch of WatchEntries resumes: which breaks it survives, where it picks up, how long it waits.

``EntryWatch`` (threads) and ``AsyncEntryWatch`` (asyncio) share this
bookkeeping; they differ only in how they read a stream and how they wait.
The guarantee it keeps: each entry is delivered once and in order across
any number of reconnects, because a new stream asks for what comes after
the last seq delivered (``after_seq``) and anything the server sends again
(seq <= that) is dropped here.
"""

from __future__ import annotations

import random
from typing import Callable, Optional

import grpc

from .errors import SessiondError
from .v1.session_service_pb2 import WatchEntriesResponse

__all__ = ["RESUMABLE", "OnReconnect", "ResumePoint"]

#: Codes after which the watch reconnects instead of ending. All mean "the
#: stream broke", never "this session cannot be watched": a server going
#: down (UNAVAILABLE, or CANCELLED / INTERNAL when it resets the stream), a
#: proxy's deadline, a connection reset. NOT_FOUND (the session was deleted),
#: PERMISSION_DENIED and the like end the watch by raising.
RESUMABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
    }
)

#: Called on each reconnect with what broke the stream and the last seq delivered.
OnReconnect = Callable[[SessiondError, int], None]


class ResumePoint:
    """The state of one resumable watch: the last seq delivered, the reconnects, the backoff."""

    def __init__(
        self,
        after_seq: int,
        retry_delay: float,
        max_retry_delay: float,
        on_reconnect: Optional[OnReconnect],
    ) -> None:
        #: Seq of the last entry delivered; a reconnect asks for what comes after it.
        self.last_seq = after_seq
        #: How many times the stream broke and was opened again.
        self.reconnects = 0
        self._base = retry_delay
        self._max = max_retry_delay
        self._delay = retry_delay
        self._on_reconnect = on_reconnect

    def deliver(self, msg: WatchEntriesResponse) -> bool:
        """Whether to hand ``msg`` to the caller: not an entry already delivered.

        A message arriving also means the stream works: the backoff starts over.
        """
        self._delay = self._base
        if msg.WhichOneof("event") == "entry":
            if msg.entry.seq <= self.last_seq:
                return False
            self.last_seq = msg.entry.seq
        return True

    def broke(self, err: SessiondError) -> float:
        """The stream broke with ``err``: raises it unless resumable, else the pause before reopening.

        The pause is the current backoff, half fixed and half jitter; the
        next one doubles, up to the maximum.
        """
        if err.code not in RESUMABLE:
            raise err
        self.reconnects += 1
        if self._on_reconnect is not None:
            self._on_reconnect(err, self.last_seq)
        pause = self._delay / 2 + random.random() * (self._delay / 2)
        self._delay = min(self._delay * 2, self._max)
        return pause


def stream_ended() -> SessiondError:
    """A stream that ended cleanly (a proxy closing it): resumed like a break."""
    return SessiondError(grpc.StatusCode.UNAVAILABLE, "watch stream ended")
