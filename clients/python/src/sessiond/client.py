"""``SessiondClient``: both services over one blocking gRPC channel, with the TS client's guarantees.

- Ids before send: an Append's entries with an empty id, a Rewind / Reset
  without ``entry_id`` and a CreateSession / ForkSession without
  ``session_id`` get one here, written INTO the request object, before the
  first attempt. Every retry (ours, or the caller's with the same request)
  then carries the same ids and the server de-duplicates it. A session id
  drawn here that another session turns out to hold (ALREADY_EXISTS or
  ``created=false``, while no attempt of ours can have reached the server)
  is drawn again, written into the request, and the call sent again (8
  draws at most).
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
- Blobs: references in GetState, GetEntries and WatchEntries answers are
  replaced by the parts they stand for (read with GetBlob, cached), and
  parts of an Append / ImportSession over ``upload_parts_over_bytes`` are
  uploaded with PutBlob first and sent as references when they add up to
  more than half of the largest request (the largest first, until the
  rest fit; ``blobs.py``).

The rules themselves live in small modules that ``AsyncSessiondClient``
(``async_client.py``) shares: ``ids`` (ids before send), ``retry`` (what is
retried), ``errors``, ``request`` (keyword fields to a message), ``paging``
(``read_state`` / ``read_tree``), ``resume`` (the watch), ``channel`` and
``metadata``, ``blobs``. This module only calls and waits, blocking.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Set, Tuple, TypeVar, cast

import grpc
from google.protobuf.message import Message

from .blobs import (
    DEFAULT_BLOB_CACHE_BYTES,
    DEFAULT_UPLOAD_PARTS_OVER_BYTES,
    UPLOAD_CHUNK_BYTES,
    Answer,
    BlobAssembly,
    BlobCache,
    BlobMode,
    BlobSettings,
    UploadRequest,
    ask_upload_held,
    blob_parts,
    max_request_bytes,
    next_upload_offset,
    resolved_part,
    sha256_hex,
    uploads_in,
    with_references,
)
from .channel import DEFAULT_TARGET, Pem, channel_settings
from .errors import SessiondError
from .ids import SessionIdDraws, fill_ids
from .metadata import CallDefaults, Metadata
from .paging import read_all, state_pages, tree_pages
from .reconnect import close_channel, wait_reconnecting
from .request import build_request as _build
from .resume import OnReconnect
from .retry import Attempts, RetryPolicy
from .stream import Stream
from .v1 import entry_pb2
from .v1 import session_service_pb2 as ss
from .v1 import session_service_pb2_grpc as ss_grpc
from .v1 import store_service_pb2 as st
from .v1 import store_service_pb2_grpc as st_grpc
from .watch import EntryWatch

__all__ = ["DEFAULT_TARGET", "RetryPolicy", "SessiondClient", "SessionClient", "StoreClient", "Stream"]

Req = TypeVar("Req", bound=Message)
Resp = TypeVar("Resp", bound=Message)


class _Invoker:
    """What the service wrappers share: metadata, deadline, ids and retry (blocking)."""

    def __init__(self, defaults: CallDefaults, channel: Optional[grpc.Channel] = None) -> None:
        self.defaults = defaults
        self.channel = channel

    def unary(
        self,
        rpc: "grpc.UnaryUnaryMultiCallable[Req, Resp]",
        req: Req,
        timeout: Optional[float],
        headers: Optional[Metadata],
        draws: Optional[SessionIdDraws] = None,
    ) -> Resp:
        """One unary call: ids filled (``draws`` says it was done), retried, a session id drawn again."""
        if draws is None:
            draws = SessionIdDraws.fill(req)
        md = self.defaults.metadata_for(headers)
        deadline = self.defaults.deadline(timeout)
        attempts = Attempts(req, self.defaults.retry, draws)
        while True:
            try:
                res = rpc(req, timeout=deadline, metadata=md)
            except grpc.RpcError as err:
                pause = attempts.failed(err)
                if pause is None:
                    # A lost attempt deleted it: the caller wants it gone, and it is.
                    return cast(Resp, attempts.succeeded_response())
                if pause > 0:  # (0: a session id drawn again, sent at once)
                    wait_reconnecting(self.channel, pause)
                continue
            if not attempts.answered(res):  # (True: another session's; a new id drawn)
                return res

    def stream(
        self,
        rpc: "grpc.UnaryStreamMultiCallable[Req, Resp]",
        req: Req,
        headers: Optional[Metadata],
        on_message: Optional[Callable[[Resp], None]] = None,
    ) -> Stream[Resp]:
        # No default deadline: it would end every watch after that long.
        return Stream(rpc(req, metadata=self.defaults.metadata_for(headers)), on_message)


class _BlobIO:
    """The client's blobs, blocking: GetBlob reads (cached), PutBlob uploads (the rules: ``blobs.py``)."""

    def __init__(self, stub: st_grpc.StoreServiceStub, invoker: _Invoker, settings: BlobSettings) -> None:
        self.stub = stub
        self.settings = settings
        self.cache = BlobCache(settings.cache_bytes)
        self._inv = invoker

    def read(
        self,
        workspace: str,
        sha256: str,
        offset: int = 0,
        length: int = 0,
        *,
        expected_size: Optional[int] = None,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
    ) -> bytes:
        """GetBlob, every chunk, checked; the whole read again after UNAVAILABLE (the retry of unary calls)."""
        req = st.GetBlobRequest(workspace=workspace, sha256=sha256, offset=offset, length=length)
        defaults = self._inv.defaults
        md = defaults.metadata_for(headers)
        deadline = defaults.deadline(timeout)  # a read ends: the unary deadline suits it
        attempts = Attempts(req, defaults.retry)
        while True:
            got = BlobAssembly(sha256, offset, length, expected_size)
            call = self.stub.GetBlob(req, timeout=deadline, metadata=md)
            try:
                for chunk in call:
                    got.add(chunk)
                return got.result()
            except grpc.RpcError as err:
                pause = attempts.failed(err)
                if pause is None:  # (only a DeleteSession succeeds by failing)
                    raise SessiondError.from_rpc_error(err) from None
                wait_reconnecting(self._inv.channel, pause)
            finally:
                call.cancel()  # (nothing, once it ended; a check that failed leaves it running)

    def bytes_of(
        self, workspace: str, ref: entry_pb2.BlobRef, timeout: Optional[float], headers: Optional[Metadata]
    ) -> bytes:
        """A reference's blob, from the cache or read (and kept)."""
        data = self.cache.get(workspace, ref.sha256)
        if data is None or len(data) != ref.size:
            data = self.read(
                workspace, ref.sha256, expected_size=ref.size, timeout=timeout, headers=headers
            )
            self.cache.put(workspace, ref.sha256, data)
        return data

    def resolve(
        self,
        workspace: str,
        answer: Answer,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
    ) -> None:
        """Replaces, in ``answer``, every reference by the part it stands for (unless the client keeps references)."""
        if not self.settings.resolve:
            return
        for part in blob_parts(answer):
            ref = part.blob
            part.CopyFrom(resolved_part(ref, self.bytes_of(workspace, ref, timeout, headers)))

    def put(
        self,
        workspace: str,
        data: bytes,
        sha256: str,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
    ) -> None:
        """PutBlob in chunks of 1 MiB, each at the offset the server says it holds, until stored."""
        offset: Optional[int] = 0
        moved = 0
        while offset is not None:
            chunk = data[offset : offset + UPLOAD_CHUNK_BYTES]
            req = st.PutBlobRequest(
                workspace=workspace, sha256=sha256, size=len(data), offset=offset, data=chunk
            )
            try:
                res = self._inv.unary(self.stub.PutBlob, req, timeout, headers)
            except SessiondError as err:
                if not ask_upload_held(err, moved):
                    raise
                moved += 1
                ask = st.PutBlobRequest(workspace=workspace, sha256=sha256, size=len(data), offset=0)
                res = self._inv.unary(self.stub.PutBlob, ask, timeout, headers)
                offset = next_upload_offset(res, 0, len(data), asked=True)
                continue
            offset = next_upload_offset(res, offset, len(data))

    def upload_parts(
        self, req: UploadRequest, timeout: Optional[float], headers: Optional[Metadata]
    ) -> UploadRequest:
        """The request to send: ``req``, or a copy with the parts ``uploads_in`` picks uploaded and sent as references."""
        fill_ids(req)  # the ids go into the caller's request (a retry with it reuses them), not the copy only
        uploads = uploads_in(req.entries, self.settings.upload_over, self.settings.inline_budget)
        done: Set[str] = set()
        for u in uploads:
            if u.sha256 not in done:
                self.put(req.workspace, u.content.data, u.sha256, timeout, headers)
                done.add(u.sha256)
        return with_references(req, uploads)


class StoreClient:
    """StoreService: sessions of a workspace.

    Each method takes a request message or its fields as keywords
    (``create_session(title="t", metadata={"k": 1})``), ``timeout`` in
    seconds and ``headers``: extra gRPC metadata pairs (not called
    ``metadata``, which is a field of CreateSessionRequest).
    """

    def __init__(
        self, stub: st_grpc.StoreServiceStub, invoker: _Invoker, blobs: Optional[_BlobIO] = None
    ) -> None:
        #: The generated stub, for calls without the client's ids / retry.
        self.stub = stub
        self._inv = invoker
        self._blobs = blobs

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
        return self._inv.unary(self.stub.CreateSession, req, timeout, headers)

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
        return self._inv.unary(self.stub.GetSession, req, timeout, headers)

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
        return self._inv.unary(self.stub.ListSessions, req, timeout, headers)

    def list_workspaces(
        self,
        request: Optional[st.ListWorkspacesRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.ListWorkspacesResponse:
        """One page of the workspaces holding sessions (those the token may use), by name, with their counts."""
        req = _build(st.ListWorkspacesRequest, request, fields)
        return self._inv.unary(self.stub.ListWorkspaces, req, timeout, headers)

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
        return self._inv.unary(self.stub.SearchEntries, req, timeout, headers)

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
        return self._inv.unary(self.stub.DeleteSession, req, timeout, headers)

    def erase_sessions(
        self,
        request: Optional[st.EraseSessionsRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.EraseSessionsResponse:
        """Erases sessions (``session_ids``, ``tags`` or ``all``) with their subagents; ``by`` required.

        Their tree stays; their content reads as erased. One audit record is
        written and returned (``audit_record``, JSON). Idempotent.
        """
        req = _build(st.EraseSessionsRequest, request, fields)
        return self._inv.unary(self.stub.EraseSessions, req, timeout, headers)

    def usage_report(
        self,
        request: Optional[st.UsageReportRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.UsageReportResponse:
        """A workspace's usage over ``[start, end)`` in one call.

        Every assistant message with usage in the window, of every session
        (subagents included) holding ``tags``, grouped by ``bucket``
        (``USAGE_BUCKET_HOUR`` / ``USAGE_BUCKET_DAY``; unset: the whole
        window), by model with ``by_model`` and by the values of
        ``group_by_tags``; ``rows``, their ``total`` and the ``sessions``
        counted. Costs are exact decimal strings per currency.
        """
        req = _build(st.UsageReportRequest, request, fields)
        return self._inv.unary(self.stub.UsageReport, req, timeout, headers)

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
        return self._inv.unary(self.stub.ForkSession, req, timeout, headers)

    def import_session(
        self,
        request: Optional[st.ImportSessionRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.ImportSessionResponse:
        """Stores a whole log exactly (ids, seqs, timestamps, root); again: ``created=False``.

        Large parts may be uploaded first and sent as references (as ``append``).
        """
        req = _build(st.ImportSessionRequest, request, fields)
        draws = SessionIdDraws.fill(req)  # the caller's request: a copy for blobs is made from it
        sent = req if self._blobs is None else self._blobs.upload_parts(req, timeout, headers)
        return self._inv.unary(self.stub.ImportSession, sent, timeout, headers, draws.sending(sent))

    def share_session(
        self,
        request: Optional[st.ShareSessionRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.ShareSessionResponse:
        """Makes a read-only link to a session's path (root -> ``entry_id``, default the leaf).

        ``share.token`` is the secret and ``share.path`` (``/share/<token>``)
        the link on the server; both are shown only here (the server keeps a
        digest). ``expires_at`` defaults to 7 days (at most 365);
        ``omit_tool_output`` / ``omit_thinking`` leave those out.
        """
        req = _build(st.ShareSessionRequest, request, fields)
        return self._inv.unary(self.stub.ShareSession, req, timeout, headers)

    def revoke_share(
        self,
        request: Optional[st.RevokeShareRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.RevokeShareResponse:
        """Makes a share unreadable at once, by its ``token`` or its id (the token's first 12 characters). Idempotent."""
        req = _build(st.RevokeShareRequest, request, fields)
        return self._inv.unary(self.stub.RevokeShare, req, timeout, headers)

    def list_shares(
        self,
        request: Optional[st.ListSharesRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.ListSharesResponse:
        """A page of a workspace's shares (of one ``session`` if given), newest first, revoked and expired ones too.

        Each share's ``token`` holds its id (the token's first 12 characters) only.
        """
        req = _build(st.ListSharesRequest, request, fields)
        return self._inv.unary(self.stub.ListShares, req, timeout, headers)

    def read_share(
        self,
        request: Optional[st.ReadShareRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.ReadShareResponse:
        """A share's snapshot by its ``token`` alone (no auth token needed), paged by ``page_token``.

        ``entries`` is the path root -> the shared entry as it reads now
        (later redaction shows as markers, the share's omissions applied).
        NOT_FOUND for an unknown, revoked or expired share, or one whose
        session was deleted or erased.
        """
        req = _build(st.ReadShareRequest, request, fields)
        return self._inv.unary(self.stub.ReadShare, req, timeout, headers)

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

    def get_blob(
        self,
        request: Optional[st.GetBlobRequest] = None,
        *,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> Stream[st.GetBlobResponse]:
        """A blob's chunks (1 MiB each), from ``offset``, at most ``length`` bytes; ``SessiondClient.get_blob`` joins them."""
        req = _build(st.GetBlobRequest, request, fields)
        return self._inv.stream(self.stub.GetBlob, req, headers)

    def put_blob(
        self,
        request: Optional[st.PutBlobRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.PutBlobResponse:
        """One chunk of an upload; ``SessiondClient.put_blob`` sends a whole blob."""
        req = _build(st.PutBlobRequest, request, fields)
        return self._inv.unary(self.stub.PutBlob, req, timeout, headers)


class SessionClient:
    """SessionService: one session's log; arguments as for ``StoreClient``."""

    def __init__(
        self, stub: ss_grpc.SessionServiceStub, invoker: _Invoker, blobs: Optional[_BlobIO] = None
    ) -> None:
        #: The generated stub, for calls without the client's ids / retry.
        self.stub = stub
        self._inv = invoker
        self._blobs = blobs

    def append(
        self,
        request: Optional[ss.AppendRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.AppendResponse:
        """Appends a batch, all or nothing. Empty entry ids are filled in the request first.

        Text, thinking and image parts over the client's
        ``upload_parts_over_bytes`` go inline while they add up to at most
        half of the largest request the client sends (4 MiB, or the
        channel's ``grpc.max_send_message_length``): the server stores them
        as blobs. Over that, the largest are uploaded first (PutBlob), one
        at a time until the rest fit, and sent as references, in a copy of
        the request: the caller's is not changed (but for the ids).
        """
        req = _build(ss.AppendRequest, request, fields)
        if self._blobs is not None:
            req = self._blobs.upload_parts(req, timeout, headers)
        return self._inv.unary(self.stub.Append, req, timeout, headers)

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
        return self._inv.unary(self.stub.Rewind, req, timeout, headers)

    def redact_entries(
        self,
        request: Optional[ss.RedactEntriesRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.RedactEntriesResponse:
        """Purges the content of ``entry_ids`` (keeping the tree), with ``why`` and ``by``.

        Idempotent: entries already redacted are answered as stored.
        """
        req = _build(ss.RedactEntriesRequest, request, fields)
        return self._inv.unary(self.stub.RedactEntries, req, timeout, headers)

    def get_usage(
        self,
        request: Optional[ss.GetUsageRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.GetUsageResponse:
        """What a session cost: its ``tree``, ``current_path``, ``branches``, ``subagents``, ``total``.

        Tokens and exact decimal costs per currency; a message without a
        caller-set cost is priced from the server's price table or counted in
        ``unpriced_messages``. ``context_tokens`` estimates the current
        context's size. ``skip_subagents=True`` leaves the subagents out.
        """
        req = _build(ss.GetUsageRequest, request, fields)
        return self._inv.unary(self.stub.GetUsage, req, timeout, headers)

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
        return self._inv.unary(self.stub.Reset, req, timeout, headers)

    def get_state(
        self,
        request: Optional[ss.GetStateRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.GetStateResponse:
        """The fold of the path (one page; ``next_page_token`` for more), blob references resolved."""
        req = _build(ss.GetStateRequest, request, fields)
        res = self._inv.unary(self.stub.GetState, req, timeout, headers)
        if self._blobs is not None:
            self._blobs.resolve(req.workspace, res, timeout, headers)
        return res

    def get_entries(
        self,
        request: Optional[ss.GetEntriesRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.GetEntriesResponse:
        """Raw log entries after ``after_seq``, at most ``limit``, blob references resolved."""
        req = _build(ss.GetEntriesRequest, request, fields)
        res = self._inv.unary(self.stub.GetEntries, req, timeout, headers)
        if self._blobs is not None:
            self._blobs.resolve(req.workspace, res, timeout, headers)
        return res

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
        return self._inv.unary(self.stub.GetTree, req, timeout, headers)

    def watch_entries(
        self,
        request: Optional[ss.WatchEntriesRequest] = None,
        *,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> Stream[ss.WatchEntriesResponse]:
        """One WatchEntries stream, NOT resumed; ``SessiondClient.watch_entries`` resumes.

        Blob references of its entries are resolved as each one arrives.
        """
        req = _build(ss.WatchEntriesRequest, request, fields)
        blobs = self._blobs
        if blobs is None or not blobs.settings.resolve:
            return self._inv.stream(self.stub.WatchEntries, req, headers)
        workspace = req.workspace
        return self._inv.stream(
            self.stub.WatchEntries,
            req,
            headers,
            lambda ev: blobs.resolve(workspace, ev, None, headers),
        )


class SessiondClient:
    """Both services of a sessiond server over one channel (blocking; ``AsyncSessiondClient`` for asyncio).

    ``SessiondClient("http://127.0.0.1:50051")`` (cleartext HTTP/2),
    ``SessiondClient("https://host:443", token=..., ca="ca.pem")`` (TLS).
    A bare ``host:port`` is cleartext unless ``tls=True`` or ``ca`` is
    given. ``timeout`` (seconds) is the default deadline of unary calls
    only, never of streams. ``retry=None`` turns the retry off.
    ``interceptors`` are grpc client interceptors (``grpc.intercept_channel``).
    Use it as a context manager, or call ``close()``.

    Blobs: ``blobs="resolve"`` (default) replaces the blob references of
    GetState, GetEntries and WatchEntries answers by the parts they stand
    for (read with GetBlob; the last ``blob_cache_bytes`` read are kept);
    ``blobs="refs"`` leaves them. Text, thinking and image parts of an
    Append / ImportSession over ``upload_parts_over_bytes`` (0: never) may
    be uploaded with PutBlob first and sent as references: only when they
    add up to more than half of the largest request the client sends (the
    ``grpc.max_send_message_length`` of ``options``, else 4 MiB), and then
    the largest first, until the rest fit in that half.
    """

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        token: Optional[str] = None,
        *,
        tls: Optional[bool] = None,
        ca: Pem = None,
        cert: Pem = None,
        key: Pem = None,
        retry: Optional[RetryPolicy] = RetryPolicy(),
        timeout: Optional[float] = None,
        options: Sequence[Tuple[str, Any]] = (),
        interceptors: Sequence[Any] = (),
        blobs: BlobMode = "resolve",
        upload_parts_over_bytes: int = DEFAULT_UPLOAD_PARTS_OVER_BYTES,
        blob_cache_bytes: int = DEFAULT_BLOB_CACHE_BYTES,
    ) -> None:
        cs = channel_settings(target, tls=tls, ca=ca, cert=cert, key=key, options=options)
        settings = BlobSettings(
            blobs, upload_parts_over_bytes, blob_cache_bytes, max_request_bytes(cs.options)
        )
        if cs.credentials is not None:
            channel = grpc.secure_channel(cs.address, cs.credentials, options=cs.options)
        else:
            channel = grpc.insecure_channel(cs.address, options=cs.options)
        self._raw_channel = channel
        #: The channel the stubs use (with the caller's interceptors).
        self.channel: grpc.Channel = grpc.intercept_channel(channel, *interceptors)
        self.target = cs.address
        inv = _Invoker(CallDefaults.for_token(token, timeout, retry), channel)
        store_stub = st_grpc.StoreServiceStub(self.channel)
        self._blobs = _BlobIO(store_stub, inv, settings)
        self.store = StoreClient(store_stub, inv, self._blobs)
        self.session = SessionClient(ss_grpc.SessionServiceStub(self.channel), inv, self._blobs)

    def watch_entries(
        self,
        session: str,
        after_seq: int = 0,
        workspace: str = "",
        *,
        retry_delay: float = 0.1,
        max_retry_delay: float = 5.0,
        on_reconnect: Optional[OnReconnect] = None,
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
        pages = state_pages(_build(ss.GetStateRequest, request, fields))
        return read_all(pages, lambda req: self.session.get_state(req))

    def read_tree(
        self, request: Optional[ss.GetTreeRequest] = None, **fields: Any
    ) -> ss.GetTreeResponse:
        """Every node of the tree: GetTree page after page, merged (as ``read_state``)."""
        pages = tree_pages(_build(ss.GetTreeRequest, request, fields))
        return read_all(pages, lambda req: self.session.get_tree(req))

    def get_blob(
        self,
        sha256: str,
        workspace: str = "",
        offset: int = 0,
        length: int = 0,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
    ) -> bytes:
        """A blob of the workspace (a ``BlobRef``'s ``sha256``), or ``length`` bytes of it from ``offset`` (0: to the end).

        Every chunk of GetBlob, joined and checked; the whole blob comes
        from the client's cache when it is there. NOT_FOUND: no such blob.
        """
        whole = offset == 0 and length == 0
        if whole:
            cached = self._blobs.cache.get(workspace, sha256)
            if cached is not None:
                return cached
        data = self._blobs.read(workspace, sha256, offset, length, timeout=timeout, headers=headers)
        if whole:
            self._blobs.cache.put(workspace, sha256, data)
        return data

    def put_blob(
        self,
        data: bytes,
        workspace: str = "",
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
    ) -> str:
        """Uploads ``data`` as a blob of the workspace (PutBlob, in chunks) and returns its SHA-256.

        A ``BlobRef`` with that hash may then be appended. The same bytes
        again are stored once (the server answers at once).
        """
        sha256 = sha256_hex(data)
        self._blobs.put(workspace, data, sha256, timeout, headers)
        return sha256

    def close(self) -> None:
        """Closes the channel; calls and streams still running end with CANCELLED."""
        close_channel(self._raw_channel)

    def __enter__(self) -> "SessiondClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
