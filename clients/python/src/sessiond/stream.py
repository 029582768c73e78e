"""A server stream of the generated stubs, as the sync client hands it out (``async_stream`` for asyncio)."""

from __future__ import annotations

from typing import Any, Callable, Generic, Optional, TypeVar

import grpc
from google.protobuf.message import Message as _PbMessage

from .errors import SessiondError

__all__ = ["Stream"]

Resp = TypeVar("Resp", bound=_PbMessage)


class Stream(Generic[Resp]):
    """A server stream: iterate it; ``close()`` (or leaving a ``with``) cancels the call.

    Errors come out of the iteration as ``SessiondError``, except the
    CANCELLED that ``close()`` itself causes, which just ends it.
    ``on_message``, when given, sees each message before the caller does
    and may complete it in place (the client resolves blob references
    there); what it raises comes out of the iteration.
    """

    def __init__(self, call: Any, on_message: Optional[Callable[[Resp], None]] = None) -> None:
        self._call = call
        self._closed = False
        self._on_message = on_message

    def __iter__(self) -> "Stream[Resp]":
        return self

    def __next__(self) -> Resp:
        try:
            msg: Resp = next(self._call)
        except grpc.RpcError as err:
            if self._closed and isinstance(err, grpc.Call) and err.code() == grpc.StatusCode.CANCELLED:
                raise StopIteration from None
            raise SessiondError.from_rpc_error(err) from None
        if self._on_message is not None:
            self._on_message(msg)
        return msg

    def close(self) -> None:
        """Cancels the call; safe from another thread and more than once."""
        self._closed = True
        self._call.cancel()

    def __enter__(self) -> "Stream[Resp]":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
