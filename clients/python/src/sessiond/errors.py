"""The one exception type of the client, and the status of what grpcio raises."""

from __future__ import annotations

from typing import Optional, Tuple

import grpc
import grpc.aio

__all__ = ["SessiondError", "status_of"]


def status_of(err: BaseException) -> Tuple[Optional[grpc.StatusCode], str]:
    """The code and details of a failed grpcio call, sync or asyncio.

    The sync API raises a ``grpc.Call`` that is also a ``grpc.RpcError``;
    grpc.aio raises ``AioRpcError``, which has the same ``code()`` and
    ``details()`` but is no ``grpc.Call``. Anything else has no status
    (``None``, and its text as the details).
    """
    if isinstance(err, (grpc.Call, grpc.aio.AioRpcError)):
        return err.code(), err.details() or ""
    return None, str(err)


class SessiondError(Exception):
    """A failed call: the gRPC status code and the server's message.

    Raised instead of ``grpc.RpcError`` so callers branch on ``err.code``
    (a ``grpc.StatusCode``) without knowing grpcio's call objects. The
    server's messages name the offending id, e.g. NOT_FOUND
    ``session "x" not found``; ABORTED is an optimistic-concurrency conflict
    (``expected_leaf_id`` / ``expected_seq``) and is never retried. The
    sync and the asyncio client raise the same type.
    """

    code: grpc.StatusCode
    message: str

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message

    @property
    def code_name(self) -> str:
        """The code as the README and the server spell it, e.g. ``"NOT_FOUND"``."""
        return str(self.code.name)

    @classmethod
    def from_rpc_error(cls, err: grpc.RpcError) -> "SessiondError":
        """Converts what grpcio raises (a ``grpc.Call`` or a grpc.aio ``AioRpcError``)."""
        code, details = status_of(err)
        return cls(code or grpc.StatusCode.UNKNOWN, details or str(err))
