"""A WatchEntries iterator that survives disconnects and server restarts (threads; ``async_watch`` for asyncio)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable, Iterator, Optional

import grpc

from .errors import SessiondError
from .reconnect import wait_reconnecting
from .resume import RESUMABLE, OnReconnect, ResumePoint, stream_ended

if TYPE_CHECKING:
    from .stream import Stream
    from .v1.session_service_pb2 import WatchEntriesResponse

__all__ = ["EntryWatch", "RESUMABLE"]


class EntryWatch:
    """Iterates ``WatchEntriesResponse`` (entries and heartbeats) for one session.

    It remembers the seq of the last entry it delivered (``last_seq``) and,
    when the stream breaks, reconnects with ``after_seq=last_seq`` after a
    backoff (``retry_delay`` doubling up to ``max_retry_delay``, with
    jitter), so the caller sees every entry exactly once, in order, whatever
    happened to the connection. Entries the server sends again (seq <=
    last_seq) are skipped (``resume.py``).

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
        on_reconnect: Optional[OnReconnect] = None,
        channel: Optional[grpc.Channel] = None,
    ) -> None:
        self._open = open_stream
        self._channel = channel
        self._resume = ResumePoint(after_seq, retry_delay, max_retry_delay, on_reconnect)
        self._stream: Optional[Stream[WatchEntriesResponse]] = None
        self._closed = threading.Event()
        self._lock = threading.Lock()

    @property
    def last_seq(self) -> int:
        """Seq of the last entry delivered; a reconnect asks for what comes after it."""
        return self._resume.last_seq

    @property
    def reconnects(self) -> int:
        """How many times the stream broke and was opened again."""
        return self._resume.reconnects

    def __iter__(self) -> Iterator["WatchEntriesResponse"]:
        return self

    def __next__(self) -> "WatchEntriesResponse":
        while not self._closed.is_set():
            stream = self._current()
            if stream is None:
                break
            try:
                for msg in stream:
                    if self._resume.deliver(msg):
                        return msg
                if self._closed.is_set():
                    break
                err = stream_ended()
            except SessiondError as e:
                if self._closed.is_set():
                    break
                err = e
            self._drop(stream)
            try:
                pause = self._resume.broke(err)
            except SessiondError:
                self.close()
                raise
            # Waits (driving the channel's reconnect) unless close() is called meanwhile.
            wait_reconnecting(self._channel, pause, self._closed)
        raise StopIteration

    def _current(self) -> "Optional[Stream[WatchEntriesResponse]]":
        with self._lock:
            if self._closed.is_set():
                return None
            if self._stream is None:
                try:
                    self._stream = self._open(self._resume.last_seq)
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
