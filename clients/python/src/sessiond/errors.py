"""The one exception type of the client."""

from __future__ import annotations

from typing import Optional

import grpc

__all__ = ["SessiondError"]


class SessiondError(Exception):
    """A failed call: the gRPC status code and the server's message.

    Raised instead of ``grpc.RpcError`` so callers branch on ``err.code``
    (a ``grpc.StatusCode``) without knowing grpcio's call objects. The
    server's messages name the offending id, e.g. NOT_FOUND
    ``session "x" not found``; ABORTED is an optimistic-concurrency conflict
    (``expected_leaf_id`` / ``expected_seq``) and is never retried.
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
        """Converts what grpcio raises (a ``grpc.Call`` that is also an error)."""
        code: Optional[grpc.StatusCode] = None
        details: Optional[str] = None
        if isinstance(err, grpc.Call):
            code = err.code()
            details = err.details()
        return cls(code or grpc.StatusCode.UNKNOWN, details or str(err))
