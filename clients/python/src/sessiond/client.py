"""``SessiondClient``: both services over one gRPC channel, with the TS client's guarantees.

- Ids before send: an Append's entries with an empty id, a Rewind / Reset
  without ``entry_id`` and a CreateSession / ForkSession without
  ``session_id`` get one here, written INTO the request object, before the
  first attempt. Every retry (ours, or the caller's with the same request)
  then carries the same ids and the server de-duplicates it.
- Retry: unary calls that fail with UNAVAILABLE (server restarting, a
  connection lost mid-call) are retried with exponential backoff and jitter.
  A retried DeleteSession that meets NOT_FOUND after an attempt whose
  outcome is unknown succeeds (empty response): that attempt deleted it.
  ABORTED (a CAS conflict) and every other code are raised at once.
- Errors: every failure is a ``SessiondError`` with the ``grpc.StatusCode``
  and the server's message.
- Streams are never retried here; ``watch_entries`` resumes by seq.
- Tracing: with the ``opentelemetry`` API installed, every call carries the
  active span's W3C trace context (``trace.py``).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import (
    Any,
    Callable,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

import grpc
from google.protobuf.message import Message as _PbMessage

from .errors import SessiondError
from .reconnect import close_channel, wait_reconnecting
from .ids import new_entry_id, new_session_id
from .messages import json_struct
from .v1 import session_service_pb2 as ss
from .v1 import session_service_pb2_grpc as ss_grpc
from .v1 import store_service_pb2 as st
from .v1 import store_service_pb2_grpc as st_grpc
from .stream import Stream
from .trace import trace_headers
from .watch import EntryWatch

__all__ = ["RetryPolicy", "SessiondClient", "SessionClient", "StoreClient", "Stream"]

DEFAULT_TARGET = "127.0.0.1:50051"

Metadata = Sequence[Tuple[str, Union[str, bytes]]]
Req = TypeVar("Req", bound=_PbMessage)


@dataclass(frozen=True)
class RetryPolicy:
    """Retry of UNAVAILABLE unary calls (the TS client's defaults)."""

    #: Attempts in total, including the first.
    max_attempts: int = 5
    #: First backoff in seconds, doubled each attempt, with jitter.
    base_delay: float = 0.05
    #: Longest backoff in seconds.
    max_delay: float = 2.0

    def delay(self, attempt: int) -> float:
        """Backoff after failed attempt number ``attempt`` (1-based): half fixed, half jitter."""
        d = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return d / 2 + random.random() * (d / 2)


def _not_sent(err: grpc.RpcError) -> bool:
    """UNAVAILABLE because no connection could be made: the server never saw the request.

    Anything else (a connection lost mid-call, a server going away) may
    have come after the server acted: the outcome is unknown.
    """
    details = err.details() if isinstance(err, grpc.Call) else ""
    return "failed to connect to all addresses" in (details or "")


def _fill_ids(method: str, req: Any) -> None:
    """Assigns, in place, the ids that make a retry of ``req`` idempotent."""
    if method == "Append":
        for e in req.entries:
            if not e.id:
                e.id = new_entry_id()
    elif method in ("Rewind", "Reset"):
        if not req.HasField("entry_id"):
            req.entry_id = new_entry_id()
    elif method in ("CreateSession", "ForkSession"):
        if not req.HasField("session_id"):
            req.session_id = new_session_id()
    elif method == "ImportSession":
        if not req.HasField("session_id"):
            root = req.entries[0] if req.entries else None
            recorded = root.session_info.session_id if root is not None else ""
            req.session_id = recorded or new_session_id()
        for e in req.entries:
            if not e.id:
                e.id = new_entry_id()
            if not e.HasField("timestamp"):
                e.timestamp.GetCurrentTime()


def _build(cls: Callable[..., Req], request: Optional[Req], fields: Mapping[str, Any]) -> Req:
    """The request: the one given, or one built from keyword fields.

    A ``dict`` for a ``google.protobuf.Struct`` field (``metadata``) is
    converted, which the generated constructors refuse to do.
    """
    if request is not None:
        if fields:
            raise TypeError("pass either a request message or keyword fields, not both")
        return request
    desc = cls.DESCRIPTOR  # type: ignore[attr-defined]
    conv = {}
    for name, value in fields.items():
        f = desc.fields_by_name.get(name)
        if (
            f is not None
            and f.message_type is not None
            and f.message_type.full_name == "google.protobuf.Struct"
            and isinstance(value, Mapping)
        ):
            value = json_struct(value)
        conv[name] = value
    return cls(**conv)


class _Invoker:
    """What the service wrappers share: metadata, deadline, ids and retry."""

    def __init__(
        self,
        metadata: Metadata,
        timeout: Optional[float],
        retry: Optional[RetryPolicy],
        channel: Optional[grpc.Channel] = None,
    ) -> None:
        self.metadata = tuple(metadata)
        self.timeout = timeout
        self.retry = retry
        self.channel = channel

    def _md(self, headers: Optional[Metadata]) -> Tuple[Tuple[str, Union[str, bytes]], ...]:
        extra = tuple(headers or ())
        own = any(k == "traceparent" for k, _ in self.metadata + extra)
        return self.metadata + (() if own else trace_headers()) + extra

    def unary(
        self,
        method: str,
        rpc: Callable[..., Any],
        req: Any,
        timeout: Optional[float],
        headers: Optional[Metadata],
    ) -> Any:
        _fill_ids(method, req)
        md = self._md(headers)
        deadline = self.timeout if timeout is None else timeout
        policy = self.retry
        unknown = False
        attempt = 1
        while True:
            try:
                return rpc(req, timeout=deadline, metadata=md)
            except grpc.RpcError as err:
                code = err.code() if isinstance(err, grpc.Call) else None
                if unknown and method == "DeleteSession" and code == grpc.StatusCode.NOT_FOUND:
                    # A lost attempt deleted it: the caller wants it gone, and it is.
                    return st.DeleteSessionResponse()
                if (
                    policy is None
                    or code != grpc.StatusCode.UNAVAILABLE
                    or attempt >= policy.max_attempts
                ):
                    raise SessiondError.from_rpc_error(err) from None
                unknown = unknown or not _not_sent(err)
                wait_reconnecting(self.channel, policy.delay(attempt))
                attempt += 1

    def stream(self, rpc: Callable[..., Any], req: Any, headers: Optional[Metadata]) -> Stream[Any]:
        # No default deadline: it would end every watch after that long.
        return Stream(rpc(req, metadata=self._md(headers)))


class StoreClient:
    """StoreService: sessions of a workspace.

    Each method takes a request message or its fields as keywords
    (``create_session(title="t", metadata={"k": 1})``), ``timeout`` in
    seconds and ``headers``: extra gRPC metadata pairs (not called
    ``metadata``, which is a field of CreateSessionRequest).
    """

    def __init__(self, stub: st_grpc.StoreServiceStub, invoker: _Invoker) -> None:
        #: The generated stub, for calls without the client's ids / retry.
        self.stub = stub
        self._inv = invoker

    def create_session(
        self,
        request: Optional[st.CreateSessionRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.CreateSessionResponse:
        """Creates a session; ``session_id`` is chosen here when unset (retry-safe)."""
        req = _build(st.CreateSessionRequest, request, fields)
        return self._inv.unary("CreateSession", self.stub.CreateSession, req, timeout, headers)

    def get_session(
        self,
        request: Optional[st.GetSessionRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.GetSessionResponse:
        """A session's metadata, by full id or unique prefix."""
        req = _build(st.GetSessionRequest, request, fields)
        return self._inv.unary("GetSession", self.stub.GetSession, req, timeout, headers)

    def list_sessions(
        self,
        request: Optional[st.ListSessionsRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.ListSessionsResponse:
        """One page of a workspace's sessions; send ``next_page_token`` back for the next."""
        req = _build(st.ListSessionsRequest, request, fields)
        return self._inv.unary("ListSessions", self.stub.ListSessions, req, timeout, headers)

    def search_entries(
        self,
        request: Optional[st.SearchEntriesRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.SearchEntriesResponse:
        """One page of message entries whose text holds every word of ``query``."""
        req = _build(st.SearchEntriesRequest, request, fields)
        return self._inv.unary("SearchEntries", self.stub.SearchEntries, req, timeout, headers)

    def delete_session(
        self,
        request: Optional[st.DeleteSessionRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.DeleteSessionResponse:
        """Deletes a session (and its subagents with ``include_subagents``)."""
        req = _build(st.DeleteSessionRequest, request, fields)
        return self._inv.unary("DeleteSession", self.stub.DeleteSession, req, timeout, headers)

    def fork_session(
        self,
        request: Optional[st.ForkSessionRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.ForkSessionResponse:
        """A new session with the path root → ``entry``; ``session_id`` chosen here when unset."""
        req = _build(st.ForkSessionRequest, request, fields)
        return self._inv.unary("ForkSession", self.stub.ForkSession, req, timeout, headers)

    def import_session(
        self,
        request: Optional[st.ImportSessionRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.ImportSessionResponse:
        """Stores a whole log exactly (ids, seqs, timestamps, root); again: ``created=False``."""
        req = _build(st.ImportSessionRequest, request, fields)
        return self._inv.unary("ImportSession", self.stub.ImportSession, req, timeout, headers)

    def watch_sessions(
        self,
        request: Optional[st.WatchSessionsRequest] = None,
        *,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> Stream[st.WatchSessionsResponse]:
        """Session events of a workspace (created / updated / deleted), resumable by cursor."""
        req = _build(st.WatchSessionsRequest, request, fields)
        return self._inv.stream(self.stub.WatchSessions, req, headers)


class SessionClient:
    """SessionService: one session's log; arguments as for ``StoreClient``."""

    def __init__(self, stub: ss_grpc.SessionServiceStub, invoker: _Invoker) -> None:
        #: The generated stub, for calls without the client's ids / retry.
        self.stub = stub
        self._inv = invoker

    def append(
        self,
        request: Optional[ss.AppendRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.AppendResponse:
        """Appends a batch, all or nothing. Empty entry ids are filled in the request first."""
        req = _build(ss.AppendRequest, request, fields)
        return self._inv.unary("Append", self.stub.Append, req, timeout, headers)

    def rewind(
        self,
        request: Optional[ss.RewindRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.RewindResponse:
        """Moves the leaf to ``target`` (an entry id or a label)."""
        req = _build(ss.RewindRequest, request, fields)
        return self._inv.unary("Rewind", self.stub.Rewind, req, timeout, headers)

    def reset(
        self,
        request: Optional[ss.ResetRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.ResetResponse:
        """Moves the leaf back to the root."""
        req = _build(ss.ResetRequest, request, fields)
        return self._inv.unary("Reset", self.stub.Reset, req, timeout, headers)

    def get_state(
        self,
        request: Optional[ss.GetStateRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.GetStateResponse:
        """The fold of the path (one page; ``next_page_token`` for more)."""
        req = _build(ss.GetStateRequest, request, fields)
        return self._inv.unary("GetState", self.stub.GetState, req, timeout, headers)

    def get_entries(
        self,
        request: Optional[ss.GetEntriesRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.GetEntriesResponse:
        """Raw log entries after ``after_seq``, at most ``limit``."""
        req = _build(ss.GetEntriesRequest, request, fields)
        return self._inv.unary("GetEntries", self.stub.GetEntries, req, timeout, headers)

    def get_tree(
        self,
        request: Optional[ss.GetTreeRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.GetTreeResponse:
        """The entry tree, for drawing (one page; ``next_page_token`` for more)."""
        req = _build(ss.GetTreeRequest, request, fields)
        return self._inv.unary("GetTree", self.stub.GetTree, req, timeout, headers)

    def watch_entries(
        self,
        request: Optional[ss.WatchEntriesRequest] = None,
        *,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> Stream[ss.WatchEntriesResponse]:
        """One WatchEntries stream, NOT resumed; ``SessiondClient.watch_entries`` resumes."""
        req = _build(ss.WatchEntriesRequest, request, fields)
        return self._inv.stream(self.stub.WatchEntries, req, headers)


def _stuck(method: str) -> SessiondError:
    """A page that brings nothing yet promises more would make the loop endless."""
    return SessiondError(
        grpc.StatusCode.INTERNAL,
        f"{method}: the server sent an empty page with a next page token",
    )


def _read_pem(v: Union[bytes, str, "os.PathLike[str]", None]) -> Optional[bytes]:
    """PEM bytes, PEM text, or a path to a PEM file."""
    if v is None or isinstance(v, bytes):
        return v
    s = os.fspath(v)
    if s.lstrip().startswith("-----BEGIN"):
        return s.encode()
    with open(s, "rb") as f:
        return f.read()


def _parse_target(url: str) -> Tuple[str, Optional[bool]]:
    """``http://h:p`` (cleartext), ``https://h:p`` (TLS) or a bare ``h:p`` (either)."""
    for scheme, tls in (("http://", False), ("https://", True)):
        if url.startswith(scheme):
            return url[len(scheme) :].rstrip("/"), tls
    return url, None


#: Channel options: reconnect quickly after a server restart (grpc's default
#: first backoff is 1 s growing to 120 s, during which calls fail at once),
#: and keepalive: a connection that dies without a word (the server's host
#: lost power, a NAT or proxy dropped it) sends no FIN and no RST, so a call
#: on it, a watch above all, would wait forever. While calls are open and
#: nothing has arrived for 20 s, grpc sends a PING; no answer within 10 s
#: closes the connection, its calls fail with UNAVAILABLE, and
#: ``watch_entries`` and the retry go on over a new one. A watch's heartbeats
#: are traffic, so a healthy watch is never pinged; an idle channel is not
#: either. ``options`` given to ``SessiondClient`` override any of these
#: (e.g. ``("grpc.keepalive_time_ms", 2**31 - 1)`` for no PING at all).
_CHANNEL_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 0),
    # grpc stops pinging after 2 PINGs without data by default; a long call
    # with no data (none of sessiond's streams is one: heartbeats) stays covered.
    ("grpc.http2.max_pings_without_data", 0),
    # Since grpc-core's ping rework (grpcio 1.5x), an unanswered keepalive PING
    # closes the connection only after grpc.http2.ping_timeout_ms (default
    # 60 s), whatever keepalive_timeout_ms says (measured with grpcio 1.85.1:
    # a frozen connection with keepalive_timeout_ms 500 was still open after
    # 20 s). It follows keepalive_timeout_ms unless given (SessiondClient).
    ("grpc.http2.ping_timeout_ms", 10_000),
)


class SessiondClient:
    """Both services of a sessiond server over one channel.

    ``SessiondClient("http://127.0.0.1:50051")`` (cleartext HTTP/2),
    ``SessiondClient("https://host:443", token=..., ca="ca.pem")`` (TLS).
    A bare ``host:port`` is cleartext unless ``tls=True`` or ``ca`` is
    given. ``timeout`` (seconds) is the default deadline of unary calls
    only, never of streams. ``retry=None`` turns the retry off.
    Use it as a context manager, or call ``close()``.
    """

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        token: Optional[str] = None,
        *,
        tls: Optional[bool] = None,
        ca: Union[bytes, str, "os.PathLike[str]", None] = None,
        cert: Union[bytes, str, "os.PathLike[str]", None] = None,
        key: Union[bytes, str, "os.PathLike[str]", None] = None,
        retry: Optional[RetryPolicy] = RetryPolicy(),
        timeout: Optional[float] = None,
        options: Sequence[Tuple[str, Any]] = (),
        interceptors: Sequence[Any] = (),
    ) -> None:
        address, scheme_tls = _parse_target(target)
        if scheme_tls is False and (tls or ca is not None):
            raise ValueError("an http:// target is cleartext; use https:// for TLS")
        use_tls = scheme_tls or bool(tls) or ca is not None or cert is not None
        # One value per key, the caller's over ours: grpc does not promise
        # which of two values of a key it reads.
        merged = dict(_CHANNEL_OPTIONS)
        merged.update(options)
        given = dict(options)
        if "grpc.keepalive_timeout_ms" in given and "grpc.http2.ping_timeout_ms" not in given:
            merged["grpc.http2.ping_timeout_ms"] = given["grpc.keepalive_timeout_ms"]
        opts = list(merged.items())
        if use_tls:
            creds = grpc.ssl_channel_credentials(
                root_certificates=_read_pem(ca),
                private_key=_read_pem(key),
                certificate_chain=_read_pem(cert),
            )
            channel = grpc.secure_channel(address, creds, options=opts)
        else:
            channel = grpc.insecure_channel(address, options=opts)
        self._raw_channel = channel
        #: The channel the stubs use (with the caller's interceptors).
        self.channel: grpc.Channel = grpc.intercept_channel(channel, *interceptors)
        self.target = address
        md: Metadata = (("authorization", f"Bearer {token}"),) if token is not None else ()
        inv = _Invoker(md, timeout, retry, channel)
        self.store = StoreClient(st_grpc.StoreServiceStub(self.channel), inv)
        self.session = SessionClient(ss_grpc.SessionServiceStub(self.channel), inv)

    def watch_entries(
        self,
        session: str,
        after_seq: int = 0,
        workspace: str = "",
        *,
        retry_delay: float = 0.1,
        max_retry_delay: float = 5.0,
        on_reconnect: Optional[Callable[[SessiondError, int], None]] = None,
    ) -> EntryWatch:
        """Every entry after ``after_seq``, then live ones, surviving disconnects.

        See ``EntryWatch``: each entry comes exactly once and in order, even
        across server restarts; heartbeats are passed through.
        """
        return EntryWatch(
            lambda after: self.session.watch_entries(
                workspace=workspace, session=session, after_seq=after
            ),
            channel=self.channel,
            after_seq=after_seq,
            retry_delay=retry_delay,
            max_retry_delay=max_retry_delay,
            on_reconnect=on_reconnect,
        )

    def read_state(
        self, request: Optional[ss.GetStateRequest] = None, **fields: Any
    ) -> ss.GetStateResponse:
        """The whole state: GetState page after page, messages merged.

        All pages describe the snapshot of the first (see the proto), so the
        result is consistent while entries are appended. A ``page_token`` in
        the request is ignored, and the request itself is not changed.
        """
        req = ss.GetStateRequest()
        req.CopyFrom(_build(ss.GetStateRequest, request, fields))
        req.page_token = ""
        res = self.session.get_state(req)
        while res.next_page_token:
            req.page_token = res.next_page_token
            page = self.session.get_state(req)
            if not page.state.messages and page.next_page_token:
                raise _stuck("GetState")
            res.state.messages.extend(page.state.messages)
            res.next_page_token = page.next_page_token
        return res

    def read_tree(
        self, request: Optional[ss.GetTreeRequest] = None, **fields: Any
    ) -> ss.GetTreeResponse:
        """Every node of the tree: GetTree page after page, merged (as ``read_state``)."""
        req = ss.GetTreeRequest()
        req.CopyFrom(_build(ss.GetTreeRequest, request, fields))
        req.page_token = ""
        res = self.session.get_tree(req)
        while res.next_page_token:
            req.page_token = res.next_page_token
            page = self.session.get_tree(req)
            if not page.nodes and page.next_page_token:
                raise _stuck("GetTree")
            res.nodes.extend(page.nodes)
            res.next_page_token = page.next_page_token
        return res

    def close(self) -> None:
        """Closes the channel; calls and streams still running end with CANCELLED."""
        close_channel(self._raw_channel)

    def __enter__(self) -> "SessiondClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
