"""A WatchEntries async iterator that survives disconnects and server restarts (asyncio)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Callable, Optional

import grpc.aio

from .errors import SessiondError
from .reconnect import await_reconnecting
from .resume import OnReconnect, ResumePoint, stream_ended

if TYPE_CHECKING:
    from .async_stream import AsyncStream
    from .v1.session_service_pb2 import WatchEntriesResponse

__all__ = ["AsyncEntryWatch"]


class AsyncEntryWatch:
    """``async for`` over ``WatchEntriesResponse`` (entries and heartbeats) of one session.

    The asyncio twin of ``EntryWatch``, with the same rules (``resume.py``):
    when the stream breaks it reopens it with ``after_seq`` = ``last_seq``
    after a backoff (``retry_delay`` doubling up to ``max_retry_delay``,
    with jitter), so each entry comes exactly once and in order across
    reconnects and server restarts. NOT_FOUND (the session was deleted) and
    other errors that are not a broken stream end it by raising
    ``SessiondError``.

    ``close()`` ends it (from another task too: a pending ``__anext__``
    returns StopAsyncIteration); so does leaving ``async with``. Made by
    ``AsyncSessiondClient.watch_entries``.
    """

    def __init__(
        self,
        open_stream: Callable[[int], "AsyncStream[WatchEntriesResponse]"],
        *,
        after_seq: int = 0,
        retry_delay: float = 0.1,
        max_retry_delay: float = 5.0,
        on_reconnect: Optional[OnReconnect] = None,
        channel: Optional[grpc.aio.Channel] = None,
    ) -> None:
        self._open = open_stream
        self._channel = channel
        self._resume = ResumePoint(after_seq, retry_delay, max_retry_delay, on_reconnect)
        self._stream: Optional[AsyncStream[WatchEntriesResponse]] = None
        self._closed = asyncio.Event()

    @property
    def last_seq(self) -> int:
        """Seq of the last entry delivered; a reconnect asks for what comes after it."""
        return self._resume.last_seq

    @property
    def reconnects(self) -> int:
        """How many times the stream broke and was opened again."""
        return self._resume.reconnects

    def __aiter__(self) -> "AsyncEntryWatch":
        return self

    async def __anext__(self) -> "WatchEntriesResponse":
        while not self._closed.is_set():
            stream = self._current()
            if stream is None:
                break
            try:
                async for msg in stream:
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
            # Waits (asking the channel to reconnect) unless close() is called meanwhile.
            await await_reconnecting(self._channel, pause, self._closed)
        raise StopAsyncIteration

    def _current(self) -> "Optional[AsyncStream[WatchEntriesResponse]]":
        if self._closed.is_set():
            return None
        if self._stream is None:
            try:
                self._stream = self._open(self._resume.last_seq)
            except (ValueError, grpc.aio.UsageError):
                # grpc.aio: UsageError "Channel is closed." (the client was closed).
                self._closed.set()
                return None
        return self._stream

    def _drop(self, stream: "AsyncStream[WatchEntriesResponse]") -> None:
        if self._stream is stream:
            self._stream = None
        stream.close()

    def close(self) -> None:
        """Ends the watch and cancels its stream; the iteration stops."""
        self._closed.set()
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.close()

    async def __aenter__(self) -> "AsyncEntryWatch":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()
