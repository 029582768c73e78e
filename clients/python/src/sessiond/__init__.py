"""Python client of sessiond, the session store for LLM agents.

``SessiondClient`` (blocking) and ``AsyncSessiondClient`` (asyncio, over
grpc.aio) wrap the generated gRPC stubs (``sessiond.v1``) with the
guarantees of the TypeScript client: ids chosen before sending (so retries
are idempotent), retry of UNAVAILABLE, a resumable ``watch_entries`` and
``SessiondError`` carrying the gRPC code, and large parts kept as blobs
made invisible (references resolved, big parts uploaded: ``blobs``). The
generated message classes are the types of every request and response.
"""

from .async_client import AsyncSessionClient, AsyncSessiondClient, AsyncStoreClient
from .async_stream import AsyncStream
from .async_watch import AsyncEntryWatch
from .channel import DEFAULT_TARGET
from .client import SessionClient, SessiondClient, StoreClient
from .errors import SessiondError
from .ids import new_entry_id, new_session_id
from .messages import (
    assistant_message,
    json_struct,
    json_value,
    text_of,
    tool_call,
    tool_result,
    user_message,
)
from .retry import RetryPolicy
from .stream import Stream
from .v1.entry_pb2 import BlobPart, BlobRef, ContentPart, Entry, Message, Role, ToolCall, Usage
from .v1.session_pb2 import SessionMeta, SessionState, View
from .v1.store_service_pb2 import SortOrder
from .watch import EntryWatch

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_TARGET",
    "AsyncEntryWatch",
    "AsyncSessionClient",
    "AsyncSessiondClient",
    "AsyncStoreClient",
    "AsyncStream",
    "BlobPart",
    "BlobRef",
    "ContentPart",
    "Entry",
    "EntryWatch",
    "Message",
    "RetryPolicy",
    "Role",
    "SessionClient",
    "SessionMeta",
    "SessionState",
    "SessiondClient",
    "SessiondError",
    "SortOrder",
    "StoreClient",
    "Stream",
    "ToolCall",
    "Usage",
    "View",
    "assistant_message",
    "json_struct",
    "json_value",
    "new_entry_id",
    "new_session_id",
    "text_of",
    "tool_call",
    "tool_result",
    "user_message",
]
