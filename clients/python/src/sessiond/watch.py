"""A WatchEntries iterator that survives disconnects and server restarts."""

from __future__ import annotations

import random
import threading
from typing import TYPE_CHECKING, Callable, Iterator, Optional

import grpc

from .errors import SessiondError
from .reconnect import wait_reconnecting

if TYPE_CHECKING:
    from .stream import Stream
    from .v1.session_service_pb2 import WatchEntriesResponse

__all__ = ["EntryWatch", "RESUMABLE"]

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


class EntryWatch:
    """Iterates ``WatchEntriesResponse`` (entries and heartbeats) for one session.

    It remembers the seq of the last entry it delivered (``last_seq``) and,
    when the stream breaks, reconnects with ``after_seq=last_seq`` after a
    backoff (``retry_delay`` doubling up to ``max_retry_delay``, with
    jitter), so the caller sees every entry exactly once, in order, whatever
    happened to the connection. Entries the server sends again (seq <=
    last_seq) are skipped.

    ``close()`` ends it (from any thread, e.g. while another thread is
    blocked in ``next()``); so does leaving a ``with`` block. Made by
    ``SessiondClient.watch_entries``.
    """

    def __init__(
        self,
        open_stream: Callable[[int], "Stream[WatchEntriesResponse]"],
        *,
        after_seq: int = 0,
        retry_delay: float = 0.1,
        max_retry_delay: float = 5.0,
        on_reconnect: Optional[Callable[[SessiondError, int], None]] = None,
        channel: Optional[grpc.Channel] = None,
    ) -> None:
        self._open = open_stream
        self._channel = channel
        #: Seq of the last entry delivered; a reconnect asks for what comes after it.
        self.last_seq = after_seq
        #: How many times the stream broke and was opened again.
        self.reconnects = 0
        self._base = retry_delay
        self._max = max_retry_delay
        self._delay = retry_delay
        self._on_reconnect = on_reconnect
        self._stream: Optional[Stream[WatchEntriesResponse]] = None
        self._closed = threading.Event()
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator["WatchEntriesResponse"]:
        return self

    def __next__(self) -> "WatchEntriesResponse":
        while not self._closed.is_set():
            stream = self._current()
            if stream is None:
                break
            try:
                for msg in stream:
                    self._delay = self._base
                    if msg.WhichOneof("event") == "entry":
                        if msg.entry.seq <= self.last_seq:
                            continue
                        self.last_seq = msg.entry.seq
                    return msg
                if self._closed.is_set():
                    break
                # A clean end (a proxy closing the stream): reconnect after a pause.
                err = SessiondError(grpc.StatusCode.UNAVAILABLE, "watch stream ended")
            except SessiondError as e:
                if self._closed.is_set():
                    break
                if e.code not in RESUMABLE:
                    self.close()
                    raise
                err = e
            self._drop(stream)
            self.reconnects += 1
            if self._on_reconnect is not None:
                self._on_reconnect(err, self.last_seq)
            # Waits (driving the channel's reconnect) unless close() is called meanwhile.
            pause = self._delay / 2 + random.random() * (self._delay / 2)
            wait_reconnecting(self._channel, pause, self._closed)
            self._delay = min(self._delay * 2, self._max)
        raise StopIteration

    def _current(self) -> "Optional[Stream[WatchEntriesResponse]]":
        with self._lock:
            if self._closed.is_set():
                return None
            if self._stream is None:
                try:
                    self._stream = self._open(self.last_seq)
                except ValueError:
                    # grpcio: "Cannot invoke RPC on closed channel!" (the client was closed).
                    self._closed.set()
                    return None
            return self._stream

    def _drop(self, stream: "Stream[WatchEntriesResponse]") -> None:
        with self._lock:
            if self._stream is stream:
                self._stream = None
        stream.close()

    def close(self) -> None:
        """Ends the watch and cancels its stream; the iteration stops."""
        self._closed.set()
        with self._lock:
            stream, self._stream = self._stream, None
        if stream is not None:
            stream.close()

    def __enter__(self) -> "EntryWatch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
