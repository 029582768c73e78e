"""A server stream of grpc.aio, as the asyncio client hands it out."""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Generic, Optional, TypeVar

import grpc
import grpc.aio
from google.protobuf.message import Message

from .errors import SessiondError, status_of

__all__ = ["AsyncStream", "channel_cancellation", "task_is_cancelled"]

Req = TypeVar("Req", bound=Message)
Resp = TypeVar("Resp", bound=Message)


def task_is_cancelled() -> Optional[bool]:
    """Whether the running task is being cancelled; None when Python cannot tell (3.10: no ``Task.cancelling``)."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    if task is None or cancelling is None:
        return None
    return bool(cancelling())


def channel_cancellation(client_closing: bool) -> Optional[SessiondError]:
    """What an ``asyncio.CancelledError`` out of a grpc.aio call is, unless the caller's own.

    grpc.aio cancels the calls of a channel that closes, and their awaits
    raise CancelledError; the sync client raises CANCELLED then, and so does
    this one: the SessiondError returned here. None means the caller's task
    is being cancelled (or, on Python 3.10, that it may be, the client not
    closing): the CancelledError goes on as it came.
    """
    cancelled = task_is_cancelled()
    if cancelled or (cancelled is None and not client_closing):
        return None
    return SessiondError(grpc.StatusCode.CANCELLED, "the call was cancelled (the channel closed)")


class AsyncStream(Generic[Resp]):
    """A server stream: ``async for`` over it; ``close()`` (or leaving ``async with``) cancels the call.

    Errors come out of the iteration as ``SessiondError``, except the
    cancellation that ``close()`` itself causes, which just ends it. grpc.aio
    ends a cancelled call's read with ``asyncio.CancelledError``: one of the
    caller's task being cancelled goes on as it is, one of the channel
    closing becomes CANCELLED (``channel_cancellation``). ``on_message``,
    when given, is awaited with each message before the caller sees it and
    may complete it in place (the client resolves blob references there);
    what it raises comes out of the iteration.
    """

    def __init__(
        self,
        call: "grpc.aio.UnaryStreamCall[Req, Resp]",
        client_closing: Callable[[], bool] = lambda: False,
        on_message: Optional[Callable[[Resp], Awaitable[None]]] = None,
    ) -> None:
        self._call = call
        self._closed = False
        self._client_closing = client_closing
        self._on_message = on_message

    def __aiter__(self) -> "AsyncStream[Resp]":
        return self

    async def __anext__(self) -> Resp:
        try:
            msg = await self._call.read()
        except grpc.RpcError as err:
            if self._closed and status_of(err)[0] == grpc.StatusCode.CANCELLED:
                raise StopAsyncIteration from None
            raise SessiondError.from_rpc_error(err) from None
        except asyncio.CancelledError:
            if task_is_cancelled():
                raise
            if self._closed:
                raise StopAsyncIteration from None
            cut_off = channel_cancellation(self._client_closing())
            if cut_off is None:
                raise
            raise cut_off from None
        if msg is grpc.aio.EOF:
            raise StopAsyncIteration
        response: Resp = msg  # type: ignore[assignment]
        if self._on_message is not None:
            await self._on_message(response)
        return response

    def close(self) -> None:
        """Cancels the call; safe more than once."""
        self._closed = True
        self._call.cancel()

    async def __aenter__(self) -> "AsyncStream[Resp]":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()
