# langgraph-checkpoint is an optional extra: typed as Any where it is absent.
# mypy: disable-error-code="import-untyped, import-not-found, unused-ignore", allow-subclassing-any
"""``SessiondSaver``: LangGraph's checkpointer (``BaseCheckpointSaver``) over sessiond.

A thread is a session, a checkpoint an entry whose parent is its parent
checkpoint, so the session's tree is the thread's checkpoint tree and a
time-travel fork is a branch of it; subgraph namespaces are subagent
sessions of the thread; pending writes hang under their checkpoint with
their task ids; a channel value is stored once per version
(``langgraph_log`` has the entry shapes).

Every write is one Append with ``expected_seq`` = the head of the saver's
copy of the session, planned again when another writer appended first. A
run that continues the thread's latest checkpoint (``invoke`` without a
``checkpoint_id``) stores a step only while that checkpoint is still the
latest of its namespace: a second process running the same thread at the
same time gets ``CheckpointConflictError`` instead of a silent fork. A run
given a ``checkpoint_id`` (time travel) forks on purpose.

Sync methods (``get_tuple``, ``list``, ``put``, ``put_writes``,
``delete_thread``) run on a ``SessiondClient``, their ``a*`` twins on an
``AsyncSessiondClient``; the logic is written once (generators of calls,
run by a blocking or an asyncio driver).

The saver keeps a copy of each session it touched (every entry read, so
a thread's values are in memory once) and brings it up to date with one
small GetEntries per read when nothing changed. ``pip install
'sessiond[langgraph]'`` brings langgraph-checkpoint.
"""

from __future__ import annotations

import asyncio
import random
import threading
from dataclasses import dataclass
from typing import (
    Any,
    AsyncIterator,
    Dict,
    Generator,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

import grpc
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    PendingWrite,
    SerializerProtocol,
    get_checkpoint_id,
    get_checkpoint_metadata,
)

from .async_client import AsyncSessiondClient
from .client import SessiondClient
from .errors import SessiondError
from .langgraph_log import (
    AGENT_TYPE,
    CHECKPOINT_NS,
    KIND_TAG,
    NS_TAG,
    THREAD_TAG,
    WRITES_NS,
    CheckpointConflictError,
    CheckpointRecord,
    NamespaceLog,
    Typed,
    namespace_session_id,
    session_tags,
    thread_session_id,
)
from .v1.entry_pb2 import Entry
from .v1.store_service_pb2 import SessionFilter, SortBy, SortOrder

__all__ = [
    "CHECKPOINT_NS",
    "CheckpointConflictError",
    "LATEST_MARK",
    "SessiondSaver",
    "WRITES_NS",
]

#: The key ``get_tuple`` adds to the config of a checkpoint it read as the
#: latest: LangGraph carries it into the ``put`` of the run's next steps,
#: which then store only while that run still continues the latest
#: checkpoint. Keys starting with ``__`` stay out of checkpoint metadata.
LATEST_MARK = "__sessiond_read_latest__"

_PAGE = 1000
_ATTEMPTS = 64
_ABSENT = (
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION,  # an ambiguous prefix: not this id
    grpc.StatusCode.INVALID_ARGUMENT,  # a short id that is no session's and no prefix
)

T = TypeVar("T")


@dataclass(frozen=True)
class _Call:
    """One RPC the saver's logic asks its driver to make: ``client.<service>.<method>(**fields)``."""

    service: str
    method: str
    fields: Dict[str, Any]


_Steps = Generator[_Call, Any, T]


class SessiondSaver(BaseCheckpointSaver[str]):
    """LangGraph checkpoints in a sessiond workspace.

    ``SessiondSaver(SessiondClient(url))`` for ``invoke`` / ``stream``,
    ``SessiondSaver(AsyncSessiondClient(url))`` for ``ainvoke`` /
    ``astream`` (made inside the running loop), or both:
    ``SessiondSaver(client, aclient=aclient)``. With only an async client
    the sync methods work from other threads (as LangGraph's own async
    savers); with only a sync client the async ones run it in a thread.
    The caller owns and closes the clients. ``workspace``: the workspace
    of the threads (default: the server's default).
    """

    def __init__(
        self,
        client: Union[SessiondClient, AsyncSessiondClient, None] = None,
        *,
        aclient: Optional[AsyncSessiondClient] = None,
        workspace: str = "",
        serde: Optional[SerializerProtocol] = None,
    ) -> None:
        super().__init__(serde=serde)
        if isinstance(client, AsyncSessiondClient):
            if aclient is not None:
                raise TypeError("two async clients: give a SessiondClient as client")
            client, aclient = None, client
        if client is None and aclient is None:
            raise TypeError("SessiondSaver needs a SessiondClient or an AsyncSessiondClient")
        self.client: Optional[SessiondClient] = client
        self.aclient: Optional[AsyncSessiondClient] = aclient
        self.workspace = workspace
        self._logs: Dict[str, NamespaceLog] = {}
        self._logs_lock = threading.Lock()
        self._loop: Optional[asyncio.AbstractEventLoop] = None

    # ---- LangGraph's interface, sync

    def get_tuple(self, config: RunnableConfig) -> Optional[CheckpointTuple]:
        """The checkpoint the config names (``checkpoint_id``), else the thread's latest; None when absent."""
        return self._run(self._get_tuple(config))

    def list(
        self,
        config: Optional[RunnableConfig],
        *,
        filter: Optional[Dict[str, Any]] = None,
        before: Optional[RunnableConfig] = None,
        limit: Optional[int] = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first: of a thread (and namespace), or of every thread for ``None``."""
        yield from self._run(self._list(config, filter, before, limit))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Stores a checkpoint as a child of the config's ``checkpoint_id``; its config."""
        return self._run(self._put(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[Tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Stores a task's pending writes under the config's checkpoint."""
        self._run(self._put_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """Deletes the thread's session and its namespaces' (one DeleteSession)."""
        self._run(self._delete_thread(str(thread_id)))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """The base class's walk up the parent chain, on the saver's copy (one read, not one per ancestor)."""
        return self._run(self._delta_history(config, channels))

    # ---- async

    async def aget_tuple(self, config: RunnableConfig) -> Optional[CheckpointTuple]:
        return await self._arun(self._get_tuple(config))

    async def alist(
        self,
        config: Optional[RunnableConfig],
        *,
        filter: Optional[Dict[str, Any]] = None,
        before: Optional[RunnableConfig] = None,
        limit: Optional[int] = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for tup in await self._arun(self._list(config, filter, before, limit)):
            yield tup

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self._arun(self._put(config, checkpoint, metadata, new_versions))

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[Tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._arun(self._put_writes(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        await self._arun(self._delete_thread(str(thread_id)))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return await self._arun(self._delta_history(config, channels))

    def get_next_version(self, current: Optional[str], channel: None) -> str:
        """Versions as LangGraph's own savers make them: a counter and a random part, as a sortable string."""
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(str(current).split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"

    # ---- the drivers

    def _run(self, steps: _Steps[T]) -> T:
        """Runs the calls of ``steps`` on the sync client (or on the async one's loop, from another thread)."""
        client = self.client
        if client is None:
            loop = self._loop
            try:
                running: Optional[asyncio.AbstractEventLoop] = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if loop is None or not loop.is_running() or running is loop:
                raise RuntimeError(
                    "this SessiondSaver has only an AsyncSessiondClient: use the async methods "
                    "(ainvoke, astream, aget_state), or give it a SessiondClient too"
                )
            return asyncio.run_coroutine_threadsafe(self._arun(steps), loop).result()
        answer: Any = None
        error: Optional[SessiondError] = None
        while True:
            try:
                call = steps.throw(error) if error is not None else steps.send(answer)
            except StopIteration as stop:
                result: T = stop.value
                return result
            answer, error = None, None
            try:
                answer = getattr(getattr(client, call.service), call.method)(**call.fields)
            except SessiondError as err:
                error = err

    async def _arun(self, steps: _Steps[T]) -> T:
        """Runs the calls of ``steps`` on the async client (or the sync one in a thread)."""
        aclient = self.aclient
        if aclient is None:
            return await asyncio.to_thread(self._run, steps)
        self._loop = asyncio.get_running_loop()
        answer: Any = None
        error: Optional[SessiondError] = None
        while True:
            try:
                call = steps.throw(error) if error is not None else steps.send(answer)
            except StopIteration as stop:
                result: T = stop.value
                return result
            answer, error = None, None
            try:
                answer = await getattr(getattr(aclient, call.service), call.method)(**call.fields)
            except SessiondError as err:
                error = err

    # ---- sessions

    def _log(self, thread_id: str, checkpoint_ns: str) -> NamespaceLog:
        sid = namespace_session_id(thread_id, checkpoint_ns)
        with self._logs_lock:
            log = self._logs.get(sid)
            if log is None:
                log = self._logs[sid] = NamespaceLog(sid, thread_id, checkpoint_ns)
            return log

    def _refresh(self, log: NamespaceLog) -> _Steps[None]:
        """Brings the copy up to date: one small read of the root when nothing changed."""
        ws, sid = self.workspace, log.session_id
        root = log.root_id
        if root is not None:
            try:
                probe = yield _Call("session", "get_entries", {"workspace": ws, "session": sid, "entry_ids": [root]})
            except SessiondError as err:
                if err.code not in _ABSENT:
                    raise
                with log.lock:
                    log.reset()  # deleted, or deleted and created again
            else:
                if probe.head_seq == log.head:
                    return
        while True:
            with log.lock:
                after = log.head
            try:
                page = yield _Call(
                    "session",
                    "get_entries",
                    {"workspace": ws, "session": sid, "after_seq": after, "limit": _PAGE},
                )
            except SessiondError as err:
                if err.code not in _ABSENT:
                    raise
                with log.lock:
                    log.reset()
                return
            entries = list(page.entries)
            if after == 0 and entries and entries[0].session_info.session_id != sid:
                with log.lock:
                    log.reset()  # a prefix of another session's id: not this thread's
                return
            with log.lock:
                if not log.add(entries):
                    log.reset()
                    continue
                head = log.head
            if not entries or head >= page.head_seq:
                return

    def _open(self, thread_id: str, checkpoint_ns: str, create: bool) -> _Steps[Optional[NamespaceLog]]:
        """The namespace's copy, up to date; created on the server first when ``create``."""
        log = self._log(thread_id, checkpoint_ns)
        yield from self._refresh(log)
        if log.exists or not create:
            return log if log.exists else None
        if checkpoint_ns:
            yield from self._open(thread_id, "", True)
        fields: Dict[str, Any] = {
            "workspace": self.workspace,
            "session_id": log.session_id,
            "title": (f"LangGraph {checkpoint_ns}" if checkpoint_ns else f"LangGraph thread {thread_id}")[:200],
            "tags": session_tags(thread_id, checkpoint_ns),
            "metadata": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns},
        }
        if checkpoint_ns:
            fields["parent_session_id"] = thread_session_id(thread_id)
            fields["agent_type"] = AGENT_TYPE
        try:
            yield _Call("store", "create_session", fields)
        except SessiondError as err:
            if err.code != grpc.StatusCode.ALREADY_EXISTS:
                raise
        yield from self._refresh(log)
        if not log.exists:
            raise SessiondError(
                grpc.StatusCode.NOT_FOUND, f"session {log.session_id} was deleted as it was created"
            )
        return log

    def _append(self, log: NamespaceLog, plan: Any) -> _Steps[None]:
        """Appends what ``plan(log)`` returns (nothing when None) with ``expected_seq``, planning again on ABORTED."""
        for _ in range(_ATTEMPTS):
            with log.lock:
                entry: Optional[Entry] = plan(log)
                expected = log.head
            if entry is None:
                return
            try:
                answer = yield _Call(
                    "session",
                    "append",
                    {
                        "workspace": self.workspace,
                        "session": log.session_id,
                        "entries": [entry],
                        "expected_seq": expected,
                    },
                )
            except SessiondError as err:
                if err.code == grpc.StatusCode.ABORTED:
                    yield from self._refresh(log)
                    continue
                if err.code == grpc.StatusCode.NOT_FOUND:
                    reopened = yield from self._open(log.thread_id, log.checkpoint_ns, True)
                    log = reopened or log
                    continue
                raise
            stored = Entry()
            stored.CopyFrom(entry)
            stored.seq = answer.entries[0].seq
            with log.lock:
                log.add([stored])
            return
        raise SessiondError(
            grpc.StatusCode.ABORTED,
            f"session {log.session_id}: {_ATTEMPTS} appends in a row met another writer's; gave up",
        )

    # ---- the operations, as calls

    def _put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> _Steps[RunnableConfig]:
        conf = config["configurable"]
        thread_id = str(conf["thread_id"])
        ns = str(conf.get("checkpoint_ns") or "")
        parent_id = conf.get("checkpoint_id") or None
        bare: Dict[str, Any] = dict(checkpoint)
        values = bare.pop("channel_values", None) or {}
        meta = get_checkpoint_metadata(config, metadata)
        dumps = self.serde.dumps_typed
        new_values = [
            (ch, ver, dumps(values[ch]) if ch in values else ("empty", b""))
            for ch, ver in new_versions.items()
        ]
        readable: Dict[str, Any] = {}
        if isinstance(meta.get("source"), str):
            readable["source"] = meta["source"]
        if isinstance(meta.get("step"), int):
            readable["step"] = meta["step"]
        checkpoint_typed, metadata_typed = dumps(bare), dumps(meta)

        def plan(log: NamespaceLog) -> Optional[Entry]:
            return log.plan_checkpoint(
                checkpoint_id=checkpoint["id"],
                parent_id=parent_id,
                continues=bool(conf.get(LATEST_MARK)),
                checkpoint=checkpoint_typed,
                metadata=metadata_typed,
                new_values=new_values,
                readable=readable,
            )

        log = yield from self._open(thread_id, ns, True)
        assert log is not None
        yield from self._append(log, plan)
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    def _put_writes(
        self, config: RunnableConfig, writes: Sequence[Tuple[str, Any]], task_id: str, task_path: str
    ) -> _Steps[None]:
        conf = config["configurable"]
        thread_id = str(conf["thread_id"])
        ns = str(conf.get("checkpoint_ns") or "")
        checkpoint_id = str(conf["checkpoint_id"])
        items: List[Tuple[int, str, Typed]] = [
            (WRITES_IDX_MAP.get(ch, idx), ch, self.serde.dumps_typed(value))
            for idx, (ch, value) in enumerate(writes)
        ]

        def plan(log: NamespaceLog) -> Optional[Entry]:
            return log.plan_writes(
                checkpoint_id=checkpoint_id, task_id=str(task_id), task_path=task_path, writes=items
            )

        log = yield from self._open(thread_id, ns, True)
        assert log is not None
        yield from self._append(log, plan)

    def _get_tuple(self, config: RunnableConfig) -> _Steps[Optional[CheckpointTuple]]:
        conf = config["configurable"]
        thread_id = str(conf["thread_id"])
        ns = str(conf.get("checkpoint_ns") or "")
        wanted = get_checkpoint_id(config)
        log = yield from self._open(thread_id, ns, False)
        if log is None:
            return None
        with log.lock:
            record = log.checkpoints.get(wanted) if wanted else log.latest()
            if record is None:
                return None
            return self._tuple(log, record, mark=not wanted)

    def _list(
        self,
        config: Optional[RunnableConfig],
        filter: Optional[Dict[str, Any]],
        before: Optional[RunnableConfig],
        limit: Optional[int],
    ) -> _Steps[List[CheckpointTuple]]:
        found: List[CheckpointTuple] = []
        if limit is not None and limit <= 0:
            return found
        if config is None:
            threads = yield from self._threads()
            ns_wanted: Optional[str] = None
            id_wanted: Optional[str] = None
        else:
            conf = config["configurable"]
            threads = [str(conf["thread_id"])]
            ns_wanted = conf.get("checkpoint_ns")
            id_wanted = get_checkpoint_id(config)
        before_id = get_checkpoint_id(before) if before else None
        for thread_id in threads:
            if ns_wanted is not None:
                namespaces = [str(ns_wanted)]
            else:
                namespaces = yield from self._namespaces(thread_id)
            for ns in namespaces:
                log = yield from self._open(thread_id, ns, False)
                if log is None:
                    continue
                with log.lock:
                    for cid in sorted(log.checkpoints, reverse=True):
                        if id_wanted and cid != id_wanted:
                            continue
                        if before_id and cid >= before_id:
                            continue
                        record = log.checkpoints[cid]
                        meta = self.serde.loads_typed(record.metadata)
                        if filter and not all(meta.get(k) == v for k, v in filter.items()):
                            continue
                        found.append(self._tuple(log, record, mark=False, metadata=meta))
                        if limit is not None and len(found) >= limit:
                            return found
        return found

    def _threads(self) -> _Steps[List[str]]:
        """The workspace's threads, oldest first (ListSessions by the thread tag)."""
        return (yield from self._sessions({}, "thread", THREAD_TAG, "thread_id"))

    def _namespaces(self, thread_id: str) -> _Steps[List[str]]:
        """"" and the thread's other namespaces, oldest first."""
        sub = yield from self._sessions(
            {"parent_session_id": thread_session_id(thread_id)}, "namespace", NS_TAG, "checkpoint_ns"
        )
        return [""] + sub

    def _sessions(
        self, scope: Dict[str, Any], kind: str, tag: str, meta_key: str
    ) -> _Steps[List[str]]:
        names: List[str] = []
        token = ""
        while True:
            page = yield _Call(
                "store",
                "list_sessions",
                {
                    "workspace": self.workspace,
                    "filter": SessionFilter(tags={KIND_TAG: kind}),
                    "sort_by": SortBy.SORT_BY_CREATED,
                    "order": SortOrder.SORT_ORDER_OLDEST_FIRST,
                    "page_size": _PAGE,
                    "page_token": token,
                    **scope,
                },
            )
            for meta in page.sessions:
                name = meta.tags.get(tag)
                if name is None and meta_key in meta.metadata.fields:
                    name = meta.metadata.fields[meta_key].string_value
                names.append(name if name is not None else meta.id)
            token = page.next_page_token
            if not token:
                return names

    def _delete_thread(self, thread_id: str) -> _Steps[None]:
        sid = thread_session_id(thread_id)
        try:
            meta = yield _Call("store", "get_session", {"workspace": self.workspace, "session": sid})
            if meta.session.id == sid:
                yield _Call(
                    "store",
                    "delete_session",
                    {"workspace": self.workspace, "session": sid, "include_subagents": True},
                )
        except SessiondError as err:
            if err.code not in _ABSENT:
                raise
        with self._logs_lock:
            for log in self._logs.values():
                if log.thread_id == thread_id:
                    with log.lock:
                        log.reset()

    def _delta_history(
        self, config: RunnableConfig, channels: Sequence[str]
    ) -> _Steps[Mapping[str, DeltaChannelHistory]]:
        if not channels:
            return {}
        conf = config["configurable"]
        thread_id = str(conf["thread_id"])
        ns = str(conf.get("checkpoint_ns") or "")
        wanted = get_checkpoint_id(config)
        log = yield from self._open(thread_id, ns, False)
        collected: Dict[str, List[PendingWrite]] = {c: [] for c in channels}
        seeds: Dict[str, Any] = {}
        remaining = set(channels)
        if log is not None:
            with log.lock:
                target = log.checkpoints.get(wanted) if wanted else log.latest()
                cursor = target.parent_checkpoint_id if target else None
                while cursor is not None and remaining:
                    record = log.checkpoints.get(cursor)
                    if record is None:
                        break
                    for w in reversed(log.pending_writes(cursor)):
                        if w.channel in remaining:
                            collected[w.channel].append((w.task_id, w.channel, self.serde.loads_typed(w.value)))
                    values = self._values(log, self.serde.loads_typed(record.checkpoint))
                    for ch in list(remaining):
                        if ch in values:
                            seeds[ch] = values[ch]
                            remaining.discard(ch)
                    cursor = record.parent_checkpoint_id
        result: Dict[str, DeltaChannelHistory] = {}
        for ch in channels:
            entry: DeltaChannelHistory = {"writes": list(reversed(collected[ch]))}
            if ch in seeds:
                entry["seed"] = seeds[ch]
            result[ch] = entry
        return result

    # ---- decoding

    def _values(self, log: NamespaceLog, checkpoint: Mapping[str, Any]) -> Dict[str, Any]:
        """A checkpoint's channel values: each channel's at its version (a deleted one left out)."""
        values: Dict[str, Any] = {}
        for ch, ver in checkpoint.get("channel_versions", {}).items():
            stored = log.value(ch, ver)
            if stored is not None and stored[0] != "empty":
                values[ch] = self.serde.loads_typed(stored)
        return values

    def _tuple(
        self,
        log: NamespaceLog,
        record: CheckpointRecord,
        *,
        mark: bool,
        metadata: Optional[CheckpointMetadata] = None,
    ) -> CheckpointTuple:
        loads = self.serde.loads_typed
        checkpoint = loads(record.checkpoint)
        values = self._values(log, checkpoint)
        configurable: Dict[str, Any] = {
            "thread_id": log.thread_id,
            "checkpoint_ns": log.checkpoint_ns,
            "checkpoint_id": record.checkpoint_id,
        }
        if mark:
            configurable[LATEST_MARK] = record.checkpoint_id
        parent = record.parent_checkpoint_id
        return CheckpointTuple(
            config={"configurable": configurable},
            checkpoint={**checkpoint, "channel_values": values},
            metadata=metadata if metadata is not None else loads(record.metadata),
            parent_config=(
                {
                    "configurable": {
                        "thread_id": log.thread_id,
                        "checkpoint_ns": log.checkpoint_ns,
                        "checkpoint_id": parent,
                    }
                }
                if parent
                else None
            ),
            pending_writes=[(w.task_id, w.channel, loads(w.value)) for w in log.pending_writes(record.checkpoint_id)],
        )
