"""``AsyncSessiondClient``: ``SessiondClient`` for asyncio, over grpc.aio.

The same constructor arguments, the same ``store`` / ``session`` methods
(awaited), the same guarantees, because the rules are the same code: ids
chosen before send (``ids.fill_ids``) and a session id drawn again when it
is another session's (``ids.SessionIdDraws``), the retry of UNAVAILABLE and
the DeleteSession rule (``retry.Attempts``), the errors (``SessiondError``),
keyword fields to a request (``request``), the paging merge of
``read_state`` / ``read_tree`` (``paging``), the resumable watch's
bookkeeping (``resume``), the channel's options (``channel``), the
metadata of each call (``metadata``) and what is done with blobs,
resolved in answers and uploaded for large parts (``blobs``). What this
module adds is only the awaiting: calls are awaited, waits are ``asyncio``
sleeps (a watch's end early when it is closed), streams are async
iterators.

Make it inside a running event loop (``async with AsyncSessiondClient(...)
as client:`` in a coroutine): a grpc.aio channel belongs to the loop it
was made in.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Optional, Sequence, Set, Tuple, TypeVar, cast

import grpc
import grpc.aio
from google.protobuf.message import Message

from .async_stream import AsyncStream, channel_cancellation
from .async_watch import AsyncEntryWatch
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
from .paging import aread_all, state_pages, tree_pages
from .reconnect import await_reconnecting
from .request import build_request as _build
from .resume import OnReconnect
from .retry import Attempts, RetryPolicy
from .v1 import entry_pb2
from .v1 import session_service_pb2 as ss
from .v1 import session_service_pb2_grpc as ss_grpc
from .v1 import store_service_pb2 as st
from .v1 import store_service_pb2_grpc as st_grpc

__all__ = ["AsyncSessionClient", "AsyncSessiondClient", "AsyncStoreClient"]

Req = TypeVar("Req", bound=Message)
Resp = TypeVar("Resp", bound=Message)


class _AsyncInvoker:
    """What the service wrappers share: metadata, deadline, ids and retry (awaited)."""

    def __init__(self, defaults: CallDefaults, channel: Optional[grpc.aio.Channel] = None) -> None:
        self.defaults = defaults
        self.channel = channel
        #: Set by ``AsyncSessiondClient.close()``: a CancelledError of a call is then the close's.
        self.closing = False

    async def unary(
        self,
        rpc: "grpc.aio.UnaryUnaryMultiCallable[Req, Resp]",
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
                res = await rpc(req, timeout=deadline, metadata=md)
            except asyncio.CancelledError:
                cancelled = channel_cancellation(self.closing)
                if cancelled is None:
                    raise
                raise cancelled from None
            except grpc.RpcError as err:
                pause = attempts.failed(err)
                if pause is None:
                    # A lost attempt deleted it: the caller wants it gone, and it is.
                    return cast(Resp, attempts.succeeded_response())
                if pause > 0:  # (0: a session id drawn again, sent at once)
                    await await_reconnecting(self.channel, pause)
                continue
            if not attempts.answered(res):  # (True: another session's; a new id drawn)
                return res

    def stream(
        self,
        rpc: "grpc.aio.UnaryStreamMultiCallable[Req, Resp]",
        req: Req,
        headers: Optional[Metadata],
        on_message: Optional[Callable[[Resp], Awaitable[None]]] = None,
    ) -> AsyncStream[Resp]:
        # No default deadline: it would end every watch after that long.
        return AsyncStream(
            rpc(req, metadata=self.defaults.metadata_for(headers)), lambda: self.closing, on_message
        )


class _AsyncBlobIO:
    """The client's blobs, awaited: GetBlob reads (cached), PutBlob uploads (``_BlobIO`` of the sync client)."""

    def __init__(
        self, stub: st_grpc.StoreServiceAsyncStub, invoker: _AsyncInvoker, settings: BlobSettings
    ) -> None:
        self.stub = stub
        self.settings = settings
        self.cache = BlobCache(settings.cache_bytes)
        self._inv = invoker

    async def read(
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
                async for chunk in call:
                    got.add(chunk)
                return got.result()
            except asyncio.CancelledError:
                cancelled = channel_cancellation(self._inv.closing)
                if cancelled is None:
                    raise
                raise cancelled from None
            except grpc.RpcError as err:
                pause = attempts.failed(err)
                if pause is None:  # (only a DeleteSession succeeds by failing)
                    raise SessiondError.from_rpc_error(err) from None
                await await_reconnecting(self._inv.channel, pause)
            finally:
                call.cancel()  # (nothing, once it ended; a check that failed leaves it running)

    async def bytes_of(
        self, workspace: str, ref: entry_pb2.BlobRef, timeout: Optional[float], headers: Optional[Metadata]
    ) -> bytes:
        """A reference's blob, from the cache or read (and kept)."""
        data = self.cache.get(workspace, ref.sha256)
        if data is None or len(data) != ref.size:
            data = await self.read(
                workspace, ref.sha256, expected_size=ref.size, timeout=timeout, headers=headers
            )
            self.cache.put(workspace, ref.sha256, data)
        return data

    async def resolve(
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
            part.CopyFrom(resolved_part(ref, await self.bytes_of(workspace, ref, timeout, headers)))

    async def put(
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
                res = await self._inv.unary(self.stub.PutBlob, req, timeout, headers)
            except SessiondError as err:
                if not ask_upload_held(err, moved):
                    raise
                moved += 1
                ask = st.PutBlobRequest(workspace=workspace, sha256=sha256, size=len(data), offset=0)
                res = await self._inv.unary(self.stub.PutBlob, ask, timeout, headers)
                offset = next_upload_offset(res, 0, len(data), asked=True)
                continue
            offset = next_upload_offset(res, offset, len(data))

    async def upload_parts(
        self, req: UploadRequest, timeout: Optional[float], headers: Optional[Metadata]
    ) -> UploadRequest:
        """The request to send: ``req``, or a copy with the parts ``uploads_in`` picks uploaded and sent as references."""
        fill_ids(req)  # the ids go into the caller's request (a retry with it reuses them), not the copy only
        uploads = uploads_in(req.entries, self.settings.upload_over, self.settings.inline_budget)
        done: Set[str] = set()
        for u in uploads:
            if u.sha256 not in done:
                await self.put(req.workspace, u.content.data, u.sha256, timeout, headers)
                done.add(u.sha256)
        return with_references(req, uploads)


class AsyncStoreClient:
    """StoreService: sessions of a workspace (asyncio; the methods of ``StoreClient``, awaited).

    Each method takes a request message or its fields as keywords
    (``create_session(title="t", metadata={"k": 1})``), ``timeout`` in
    seconds and ``headers``: extra gRPC metadata pairs (not called
    ``metadata``, which is a field of CreateSessionRequest).
    """

    def __init__(
        self,
        stub: st_grpc.StoreServiceAsyncStub,
        invoker: _AsyncInvoker,
        blobs: Optional[_AsyncBlobIO] = None,
    ) -> None:
        #: The generated stub, for calls without the client's ids / retry.
        self.stub = stub
        self._inv = invoker
        self._blobs = blobs

    async def create_session(
        self,
        request: Optional[st.CreateSessionRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.CreateSessionResponse:
        """Creates a session; ``session_id`` is chosen here when unset (retry-safe)."""
        req = _build(st.CreateSessionRequest, request, fields)
        return await self._inv.unary(self.stub.CreateSession, req, timeout, headers)

    async def _create_session_drawn(
        self,
        drawn_id: str,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.CreateSessionResponse:
        """``create_session`` under ``drawn_id``, an id the caller drew (``ids.new_session_id``), not chose.

        For in-package code that shows a session's id before creating it
        (``openai_agents.SessiondSession``): the id is this call's first
        draw, drawn again, as one drawn here, when another session holds it
        (``ids.SessionIdDraws.fill``'s ``first``). The response names the
        session created: ``drawn_id`` or a later draw.
        """
        req = _build(st.CreateSessionRequest, None, fields)
        draws = SessionIdDraws.fill(req, first=drawn_id)
        return await self._inv.unary(self.stub.CreateSession, req, timeout, headers, draws)

    async def get_session(
        self,
        request: Optional[st.GetSessionRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.GetSessionResponse:
        """A session's metadata, by full id or unique prefix."""
        req = _build(st.GetSessionRequest, request, fields)
        return await self._inv.unary(self.stub.GetSession, req, timeout, headers)

    async def list_sessions(
        self,
        request: Optional[st.ListSessionsRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.ListSessionsResponse:
        """One page of a workspace's sessions; send ``next_page_token`` back for the next."""
        req = _build(st.ListSessionsRequest, request, fields)
        return await self._inv.unary(self.stub.ListSessions, req, timeout, headers)

    async def list_workspaces(
        self,
        request: Optional[st.ListWorkspacesRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.ListWorkspacesResponse:
        """One page of the workspaces holding sessions (those the token may use), by name, with their counts."""
        req = _build(st.ListWorkspacesRequest, request, fields)
        return await self._inv.unary(self.stub.ListWorkspaces, req, timeout, headers)

    async def search_entries(
        self,
        request: Optional[st.SearchEntriesRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.SearchEntriesResponse:
        """One page of message entries whose text holds every word of ``query``."""
        req = _build(st.SearchEntriesRequest, request, fields)
        return await self._inv.unary(self.stub.SearchEntries, req, timeout, headers)

    async def delete_session(
        self,
        request: Optional[st.DeleteSessionRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.DeleteSessionResponse:
        """Deletes a session (and its subagents with ``include_subagents``)."""
        req = _build(st.DeleteSessionRequest, request, fields)
        return await self._inv.unary(self.stub.DeleteSession, req, timeout, headers)

    async def erase_sessions(
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
        return await self._inv.unary(self.stub.EraseSessions, req, timeout, headers)

    async def usage_report(
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
        return await self._inv.unary(self.stub.UsageReport, req, timeout, headers)

    async def fork_session(
        self,
        request: Optional[st.ForkSessionRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.ForkSessionResponse:
        """A new session with the path root → ``entry``; ``session_id`` chosen here when unset."""
        req = _build(st.ForkSessionRequest, request, fields)
        return await self._inv.unary(self.stub.ForkSession, req, timeout, headers)

    async def import_session(
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
        sent = req if self._blobs is None else await self._blobs.upload_parts(req, timeout, headers)
        return await self._inv.unary(self.stub.ImportSession, sent, timeout, headers, draws.sending(sent))

    async def share_session(
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
        return await self._inv.unary(self.stub.ShareSession, req, timeout, headers)

    async def revoke_share(
        self,
        request: Optional[st.RevokeShareRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.RevokeShareResponse:
        """Makes a share unreadable at once, by its ``token`` or its id (the token's first 12 characters). Idempotent."""
        req = _build(st.RevokeShareRequest, request, fields)
        return await self._inv.unary(self.stub.RevokeShare, req, timeout, headers)

    async def list_shares(
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
        return await self._inv.unary(self.stub.ListShares, req, timeout, headers)

    async def read_share(
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
        return await self._inv.unary(self.stub.ReadShare, req, timeout, headers)

    def watch_sessions(
        self,
        request: Optional[st.WatchSessionsRequest] = None,
        *,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> AsyncStream[st.WatchSessionsResponse]:
        """Session events of a workspace (created / updated / deleted), resumable by cursor."""
        req = _build(st.WatchSessionsRequest, request, fields)
        return self._inv.stream(self.stub.WatchSessions, req, headers)

    def get_blob(
        self,
        request: Optional[st.GetBlobRequest] = None,
        *,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> AsyncStream[st.GetBlobResponse]:
        """A blob's chunks (1 MiB each), from ``offset``, at most ``length`` bytes; ``AsyncSessiondClient.get_blob`` joins them."""
        req = _build(st.GetBlobRequest, request, fields)
        return self._inv.stream(self.stub.GetBlob, req, headers)

    async def put_blob(
        self,
        request: Optional[st.PutBlobRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> st.PutBlobResponse:
        """One chunk of an upload; ``AsyncSessiondClient.put_blob`` sends a whole blob."""
        req = _build(st.PutBlobRequest, request, fields)
        return await self._inv.unary(self.stub.PutBlob, req, timeout, headers)


class AsyncSessionClient:
    """SessionService: one session's log (asyncio; the methods of ``SessionClient``, awaited)."""

    def __init__(
        self,
        stub: ss_grpc.SessionServiceAsyncStub,
        invoker: _AsyncInvoker,
        blobs: Optional[_AsyncBlobIO] = None,
    ) -> None:
        #: The generated stub, for calls without the client's ids / retry.
        self.stub = stub
        self._inv = invoker
        self._blobs = blobs

    async def append(
        self,
        request: Optional[ss.AppendRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.AppendResponse:
        """Appends a batch, all or nothing. Empty entry ids are filled in the request first.

        Large parts are uploaded first and sent as references when they add
        up to more than half of the largest request, the largest first, in a
        copy of the request (see ``SessionClient.append``).
        """
        req = _build(ss.AppendRequest, request, fields)
        if self._blobs is not None:
            req = await self._blobs.upload_parts(req, timeout, headers)
        return await self._inv.unary(self.stub.Append, req, timeout, headers)

    async def rewind(
        self,
        request: Optional[ss.RewindRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.RewindResponse:
        """Moves the leaf to ``target`` (an entry id or a label)."""
        req = _build(ss.RewindRequest, request, fields)
        return await self._inv.unary(self.stub.Rewind, req, timeout, headers)

    async def redact_entries(
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
        return await self._inv.unary(self.stub.RedactEntries, req, timeout, headers)

    async def get_usage(
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
        return await self._inv.unary(self.stub.GetUsage, req, timeout, headers)

    async def reset(
        self,
        request: Optional[ss.ResetRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.ResetResponse:
        """Moves the leaf back to the root."""
        req = _build(ss.ResetRequest, request, fields)
        return await self._inv.unary(self.stub.Reset, req, timeout, headers)

    async def get_state(
        self,
        request: Optional[ss.GetStateRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.GetStateResponse:
        """The fold of the path (one page; ``next_page_token`` for more), blob references resolved."""
        req = _build(ss.GetStateRequest, request, fields)
        res = await self._inv.unary(self.stub.GetState, req, timeout, headers)
        if self._blobs is not None:
            await self._blobs.resolve(req.workspace, res, timeout, headers)
        return res

    async def get_entries(
        self,
        request: Optional[ss.GetEntriesRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.GetEntriesResponse:
        """Raw log entries after ``after_seq``, at most ``limit``, blob references resolved."""
        req = _build(ss.GetEntriesRequest, request, fields)
        res = await self._inv.unary(self.stub.GetEntries, req, timeout, headers)
        if self._blobs is not None:
            await self._blobs.resolve(req.workspace, res, timeout, headers)
        return res

    async def get_tree(
        self,
        request: Optional[ss.GetTreeRequest] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> ss.GetTreeResponse:
        """The entry tree, for drawing (one page; ``next_page_token`` for more)."""
        req = _build(ss.GetTreeRequest, request, fields)
        return await self._inv.unary(self.stub.GetTree, req, timeout, headers)

    def watch_entries(
        self,
        request: Optional[ss.WatchEntriesRequest] = None,
        *,
        headers: Optional[Metadata] = None,
        **fields: Any,
    ) -> AsyncStream[ss.WatchEntriesResponse]:
        """One WatchEntries stream, NOT resumed; ``AsyncSessiondClient.watch_entries`` resumes.

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


class AsyncSessiondClient:
    """Both services of a sessiond server over one grpc.aio channel.

    ``AsyncSessiondClient("http://127.0.0.1:50051")``, with the arguments of
    ``SessiondClient`` (``token``, ``tls``, ``ca``, ``cert``, ``key``,
    ``retry``, ``timeout``, ``options``, ``blobs``,
    ``upload_parts_over_bytes``, ``blob_cache_bytes``); ``interceptors``
    are ``grpc.aio.ClientInterceptor``s (grpc.aio takes them when the
    channel is made). Use it as ``async with``, or ``await close()``.
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
        interceptors: Sequence[grpc.aio.ClientInterceptor] = (),
        blobs: BlobMode = "resolve",
        upload_parts_over_bytes: int = DEFAULT_UPLOAD_PARTS_OVER_BYTES,
        blob_cache_bytes: int = DEFAULT_BLOB_CACHE_BYTES,
    ) -> None:
        cs = channel_settings(target, tls=tls, ca=ca, cert=cert, key=key, options=options)
        settings = BlobSettings(
            blobs, upload_parts_over_bytes, blob_cache_bytes, max_request_bytes(cs.options)
        )
        if cs.credentials is not None:
            channel = grpc.aio.secure_channel(
                cs.address, cs.credentials, options=cs.options, interceptors=list(interceptors)
            )
        else:
            channel = grpc.aio.insecure_channel(
                cs.address, options=cs.options, interceptors=list(interceptors)
            )
        #: The channel the stubs use (with the caller's interceptors).
        self.channel: grpc.aio.Channel = channel
        self.target = cs.address
        self._inv = inv = _AsyncInvoker(CallDefaults.for_token(token, timeout, retry), channel)
        # The generated Stub over an aio channel is the AsyncStub of the .pyi
        # (which exists only there: one class serves both at run time).
        store_stub = st_grpc.StoreServiceStub(channel)
        self._blobs = _AsyncBlobIO(store_stub, inv, settings)
        self.store = AsyncStoreClient(store_stub, inv, self._blobs)
        self.session = AsyncSessionClient(ss_grpc.SessionServiceStub(channel), inv, self._blobs)

    def watch_entries(
        self,
        session: str,
        after_seq: int = 0,
        workspace: str = "",
        *,
        retry_delay: float = 0.1,
        max_retry_delay: float = 5.0,
        on_reconnect: Optional[OnReconnect] = None,
    ) -> AsyncEntryWatch:
        """Every entry after ``after_seq``, then live ones, surviving disconnects: ``async for ev in ...``.

        See ``AsyncEntryWatch``: each entry comes exactly once and in order,
        even across server restarts; heartbeats are passed through.
        """
        return AsyncEntryWatch(
            lambda after: self.session.watch_entries(
                workspace=workspace, session=session, after_seq=after
            ),
            channel=self.channel,
            after_seq=after_seq,
            retry_delay=retry_delay,
            max_retry_delay=max_retry_delay,
            on_reconnect=on_reconnect,
        )

    async def read_state(
        self, request: Optional[ss.GetStateRequest] = None, **fields: Any
    ) -> ss.GetStateResponse:
        """The whole state: GetState page after page, messages merged (see ``SessiondClient.read_state``)."""
        pages = state_pages(_build(ss.GetStateRequest, request, fields))
        return await aread_all(pages, lambda req: self.session.get_state(req))

    async def read_tree(
        self, request: Optional[ss.GetTreeRequest] = None, **fields: Any
    ) -> ss.GetTreeResponse:
        """Every node of the tree: GetTree page after page, merged."""
        pages = tree_pages(_build(ss.GetTreeRequest, request, fields))
        return await aread_all(pages, lambda req: self.session.get_tree(req))

    async def get_blob(
        self,
        sha256: str,
        workspace: str = "",
        offset: int = 0,
        length: int = 0,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
    ) -> bytes:
        """A blob of the workspace, or ``length`` bytes of it from ``offset`` (see ``SessiondClient.get_blob``)."""
        whole = offset == 0 and length == 0
        if whole:
            cached = self._blobs.cache.get(workspace, sha256)
            if cached is not None:
                return cached
        data = await self._blobs.read(
            workspace, sha256, offset, length, timeout=timeout, headers=headers
        )
        if whole:
            self._blobs.cache.put(workspace, sha256, data)
        return data

    async def put_blob(
        self,
        data: bytes,
        workspace: str = "",
        *,
        timeout: Optional[float] = None,
        headers: Optional[Metadata] = None,
    ) -> str:
        """Uploads ``data`` as a blob of the workspace and returns its SHA-256 (see ``SessiondClient.put_blob``)."""
        sha256 = sha256_hex(data)
        await self._blobs.put(workspace, data, sha256, timeout, headers)
        return sha256

    async def close(self) -> None:
        """Closes the channel; calls still running end with CANCELLED, streams too (a watch quietly)."""
        self._inv.closing = True
        await self.channel.close()

    async def __aenter__(self) -> "AsyncSessiondClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
