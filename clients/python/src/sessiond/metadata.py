"""What every call of a client carries besides its request: metadata and a deadline.

Shared by the sync and the asyncio client: the bearer token, the caller's
W3C trace context (``trace.py``), the per-call ``headers``, and the
default deadline of unary calls (streams never get one: it would end every
watch after that long).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple, Union

from .retry import RetryPolicy
from .trace import trace_headers

__all__ = ["CallDefaults", "Metadata", "MetadataTuple"]

#: Extra gRPC metadata a caller passes: ``(key, value)`` pairs.
Metadata = Sequence[Tuple[str, Union[str, bytes]]]
MetadataTuple = Tuple[Tuple[str, Union[str, bytes]], ...]


@dataclass(frozen=True)
class CallDefaults:
    """A client's settings for each of its calls."""

    #: Sent with every call (the ``authorization`` header of a token).
    metadata: MetadataTuple = ()
    #: Default deadline of unary calls, in seconds; None: no deadline.
    timeout: Optional[float] = None
    #: Retry of UNAVAILABLE; None: no retry.
    retry: Optional[RetryPolicy] = None

    @staticmethod
    def for_token(token: Optional[str], timeout: Optional[float], retry: Optional[RetryPolicy]) -> "CallDefaults":
        md: MetadataTuple = (("authorization", f"Bearer {token}"),) if token is not None else ()
        return CallDefaults(md, timeout, retry)

    def metadata_for(self, headers: Optional[Metadata]) -> MetadataTuple:
        """The client's metadata, the active trace context (unless the caller passes a ``traceparent``), then ``headers``."""
        extra = tuple(headers or ())
        own = any(k == "traceparent" for k, _ in self.metadata + extra)
        return self.metadata + (() if own else trace_headers()) + extra

    def deadline(self, timeout: Optional[float]) -> Optional[float]:
        """A call's own ``timeout`` or else the client's."""
        return self.timeout if timeout is None else timeout
