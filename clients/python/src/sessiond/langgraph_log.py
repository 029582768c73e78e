"""What ``sessiond.langgraph`` keeps of a LangGraph thread in sessiond, and what it reads back.

No I/O here: the entry shapes, the ids, and ``NamespaceLog``, the saver's
copy of one namespace's session (the entries read so far, indexed), with
the plans of ``put`` and ``put_writes`` made against it.

The mapping (docs/agent-sdks.md and the client README say the same):

- A thread is a session (id: the thread id when it is a valid session id
  of at most 100 characters, else ``lgt-`` and 32 hex digits of its
  SHA-256), tagged ``langgraph.kind`` = ``thread`` and ``langgraph.thread``.
  Its root namespace ("") lives in it; every other checkpoint namespace
  (a subgraph's, ``node:<task id>``) is a subagent session of it,
  ``ns-<12 hex of SHA-256(namespace)>-<thread session id>``, agent type
  ``langgraph-subgraph``, tagged ``langgraph.kind`` = ``namespace``.
- A checkpoint is one Custom entry (namespace ``langgraph.checkpoint``,
  id ``cp-<checkpoint id>``) whose parent is its parent checkpoint's entry
  (the session's root when it has none): the session's tree is the
  thread's checkpoint tree, and a time-travel fork is a branch of it. It
  holds the checkpoint without its channel values, the metadata, and the
  values of the channels whose version is new in it, each once: a
  checkpoint whose channel kept its version names that version only, and
  a reader takes the value from the entry that stored it.
- The pending writes of one ``put_writes`` call are one Custom entry
  (``langgraph.writes``, id ``w-`` and a hash of what it holds) under the
  checkpoint they belong to, with the task id, the task path and each
  write's index: a write (task id, index) stored once is not stored again
  (a special write, negative index, is replaced, as LangGraph's savers do).
- Values are the saver's serializer's typed pairs: ``{"type": t, "b64":
  base64}``, or ``{"type": "json", "json": text}`` for JSON (LangGraph JS),
  ``{"type": t}`` for an empty payload.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union

from google.protobuf import json_format

from .messages import json_struct
from .v1.entry_pb2 import Custom, Entry

__all__ = [
    "AGENT_TYPE",
    "CHECKPOINT_NS",
    "CheckpointConflictError",
    "CheckpointRecord",
    "KIND_TAG",
    "NS_TAG",
    "NamespaceLog",
    "THREAD_TAG",
    "Typed",
    "WRITES_NS",
    "WriteRecord",
    "checkpoint_entry_id",
    "namespace_session_id",
    "thread_session_id",
    "typed_from_json",
    "typed_to_json",
    "version_key",
]

#: Custom namespace of a checkpoint entry.
CHECKPOINT_NS = "langgraph.checkpoint"
#: Custom namespace of a pending-writes entry.
WRITES_NS = "langgraph.writes"
#: Session tags: what the session is (``thread`` / ``namespace``), its thread id, its namespace.
KIND_TAG = "langgraph.kind"
THREAD_TAG = "langgraph.thread"
NS_TAG = "langgraph.ns"
#: Agent type of a namespace's subagent session.
AGENT_TYPE = "langgraph-subgraph"

Typed = Tuple[str, bytes]
Version = Union[str, int, float]

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$")
_ENTRY_SUFFIX = re.compile(r"^[A-Za-z0-9_-]{1,61}$")
_TAG_VALUE_BYTES = 256


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def thread_session_id(thread_id: str) -> str:
    """The session of a thread: its id when that is a valid session id (<= 100 chars), else a hash of it."""
    if _SESSION_ID.match(thread_id):
        return thread_id
    return "lgt-" + _sha(thread_id)[:32]


def namespace_session_id(thread_id: str, checkpoint_ns: str) -> str:
    """The session of a namespace: the thread's own for "", else a subagent session of it."""
    thread = thread_session_id(thread_id)
    if not checkpoint_ns:
        return thread
    return f"ns-{_sha(checkpoint_ns)[:12]}-{thread}"


def session_tags(thread_id: str, checkpoint_ns: str) -> Dict[str, str]:
    """The tags of a thread's or a namespace's session (values over 256 bytes are left out)."""
    tags = {KIND_TAG: "namespace" if checkpoint_ns else "thread"}
    for key, value in ((THREAD_TAG, thread_id), (NS_TAG, checkpoint_ns)):
        if value and len(value.encode("utf-8")) <= _TAG_VALUE_BYTES:
            tags[key] = value
    return tags


def checkpoint_entry_id(checkpoint_id: str) -> str:
    """``cp-<checkpoint id>``, or ``cpx-`` and a hash when the id cannot be part of an entry id."""
    if _ENTRY_SUFFIX.match(checkpoint_id):
        return "cp-" + checkpoint_id
    return "cpx-" + _sha(checkpoint_id)[:40]


def version_key(version: Any) -> str:
    """A channel version as an index key: a string as itself, a number by value (1 and 1.0 alike)."""
    if isinstance(version, str):
        return "s:" + version
    number = float(version)
    return f"n:{int(number)}" if number.is_integer() else f"n:{number!r}"


def typed_to_json(value: Typed) -> Dict[str, Any]:
    """A serializer's (type, bytes) pair as JSON: JSON text stays readable, other bytes are base64."""
    kind, data = value
    if kind == "json":
        try:
            return {"type": kind, "json": bytes(data).decode("utf-8")}
        except UnicodeDecodeError:
            pass
    if not data:
        return {"type": kind}
    return {"type": kind, "b64": base64.b64encode(bytes(data)).decode("ascii")}


def typed_from_json(obj: Mapping[str, Any]) -> Typed:
    """The (type, bytes) pair ``typed_to_json`` wrote."""
    kind = str(obj.get("type", ""))
    if "json" in obj:
        return kind, str(obj["json"]).encode("utf-8")
    if "b64" in obj:
        return kind, base64.b64decode(str(obj["b64"]))
    return kind, b""


class CheckpointConflictError(Exception):
    """Another writer moved the thread on since this run read it; nothing of this step was stored.

    A run that started from the thread's latest checkpoint (``invoke``
    without a ``checkpoint_id``) saves each step only while the checkpoint
    it continues is still the latest of its namespace; the check and the
    write are one Append under ``expected_seq``. Load the thread again and
    run again, or fork on purpose by passing the checkpoint's id.
    """

    def __init__(
        self, thread_id: str, checkpoint_ns: str, parent_id: str, latest_id: str, checkpoint_id: str
    ) -> None:
        where = f"thread {thread_id!r}" + (f" namespace {checkpoint_ns!r}" if checkpoint_ns else "")
        super().__init__(
            f"{where}: checkpoint {checkpoint_id!r} continues {parent_id!r}, which is no longer the "
            f"latest checkpoint: {latest_id!r} was written since (another writer runs this thread). "
            "Nothing was stored. Load the thread again and run again, or pass checkpoint_id to fork."
        )
        self.thread_id = thread_id
        self.checkpoint_ns = checkpoint_ns
        self.parent_id = parent_id
        self.latest_id = latest_id
        self.checkpoint_id = checkpoint_id


@dataclass
class CheckpointRecord:
    """A checkpoint as stored: the serialized checkpoint (no values) and metadata, and where it hangs."""

    checkpoint_id: str
    entry_id: str
    seq: int
    parent_checkpoint_id: Optional[str]
    checkpoint: Typed
    metadata: Typed


@dataclass
class WriteRecord:
    """One pending write as stored."""

    task_id: str
    idx: int
    channel: str
    value: Typed
    task_path: str


@dataclass
class NamespaceLog:
    """The saver's copy of one namespace's session: every entry up to ``head``, indexed.

    ``exists`` is False until the session has been read (or when it was
    not found). Callers hold ``lock`` while they read or change it; no I/O
    happens under it.
    """

    session_id: str
    thread_id: str
    checkpoint_ns: str
    exists: bool = False
    root_id: Optional[str] = None
    head: int = 0
    checkpoints: Dict[str, CheckpointRecord] = field(default_factory=dict)
    values: Dict[Tuple[str, str], Typed] = field(default_factory=dict)
    writes: Dict[str, Dict[Tuple[str, int], WriteRecord]] = field(default_factory=dict)
    entry_ids: Set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def reset(self) -> None:
        """Forgets everything (the session was deleted or re-created)."""
        self.exists = False
        self.root_id = None
        self.head = 0
        self.checkpoints.clear()
        self.values.clear()
        self.writes.clear()
        self.entry_ids.clear()

    def add(self, entries: Iterable[Entry]) -> bool:
        """Takes in entries read or appended (those at or below ``head`` are known and skipped).

        False, taking in nothing more, at a gap (entries read before a
        ``reset`` by another caller): read again from ``head``.
        """
        for entry in sorted(entries, key=lambda e: e.seq):
            if entry.seq <= self.head:
                continue
            if entry.seq != self.head + 1:
                return False
            self._apply(entry)
            self.head = entry.seq
            self.exists = True
        return True

    def _apply(self, entry: Entry) -> None:
        self.entry_ids.add(entry.id)
        kind = entry.WhichOneof("kind")
        if entry.seq == 1 or (kind == "session_info" and not entry.HasField("parent_id")):
            self.root_id = entry.id
            tags = entry.session_info.tags
            if tags.get(KIND_TAG) not in ("thread", "namespace"):
                raise ValueError(
                    f"session {self.session_id} exists and is not a LangGraph thread "
                    f"(no {KIND_TAG} tag): give the saver another workspace"
                )
            return
        if kind != "custom" or entry.custom.namespace not in (CHECKPOINT_NS, WRITES_NS):
            return
        data = json_format.MessageToDict(entry.custom.data)
        if entry.custom.namespace == CHECKPOINT_NS:
            cid = str(data["checkpoint_id"])
            parent = data.get("parent_checkpoint_id")
            self.checkpoints[cid] = CheckpointRecord(
                checkpoint_id=cid,
                entry_id=entry.id,
                seq=entry.seq,
                parent_checkpoint_id=str(parent) if parent else None,
                checkpoint=typed_from_json(data["checkpoint"]),
                metadata=typed_from_json(data["metadata"]),
            )
            for item in data.get("values", []):
                self.values[(str(item["channel"]), version_key(item["version"]))] = typed_from_json(
                    item
                )
            return
        cid = str(data["checkpoint_id"])
        held = self.writes.setdefault(cid, {})
        task_id = str(data["task_id"])
        task_path = str(data.get("task_path", ""))
        for item in data.get("writes", []):
            idx = int(item["idx"])
            key = (task_id, idx)
            if idx >= 0 and key in held:
                continue
            held[key] = WriteRecord(task_id, idx, str(item["channel"]), typed_from_json(item), task_path)

    # ---- reading

    def latest(self) -> Optional[CheckpointRecord]:
        """The checkpoint with the greatest id (LangGraph's "latest", as its own savers pick it)."""
        if not self.checkpoints:
            return None
        return self.checkpoints[max(self.checkpoints)]

    def value(self, channel: str, version: Any) -> Optional[Typed]:
        """The stored value of a channel at a version (None when none was stored)."""
        return self.values.get((channel, version_key(version)))

    def pending_writes(self, checkpoint_id: str) -> List[WriteRecord]:
        """The writes of a checkpoint in LangGraph's order: (task path, task id, index)."""
        held = self.writes.get(checkpoint_id, {})
        return sorted(held.values(), key=lambda w: (w.task_path, w.task_id, w.idx))

    # ---- planning

    def plan_checkpoint(
        self,
        *,
        checkpoint_id: str,
        parent_id: Optional[str],
        continues: bool,
        checkpoint: Typed,
        metadata: Typed,
        new_values: Sequence[Tuple[str, Any, Typed]],
        readable: Mapping[str, Any],
    ) -> Optional[Entry]:
        """The entry that stores a checkpoint, or None when it is stored already as it is.

        ``new_values``: (channel, version, value) of the channels whose
        version is new; one already stored with the same value is not
        stored again. ``continues``: the run read ``parent_id`` as the
        latest checkpoint, so a newer one means another writer
        (``CheckpointConflictError``).
        """
        known = self.checkpoints.get(checkpoint_id)
        if known is not None and known.checkpoint == checkpoint and known.metadata == metadata:
            return None
        latest = self.latest()
        if (
            continues
            and parent_id
            and latest is not None
            and latest.checkpoint_id not in (parent_id, checkpoint_id)
        ):
            raise CheckpointConflictError(
                self.thread_id, self.checkpoint_ns, parent_id, latest.checkpoint_id, checkpoint_id
            )
        parent = self.checkpoints.get(parent_id) if parent_id else None
        values = [
            {"channel": ch, "version": ver, **typed_to_json(val)}
            for ch, ver, val in new_values
            if self.value(ch, ver) != val
        ]
        data: Dict[str, Any] = {
            "checkpoint_id": checkpoint_id,
            "parent_checkpoint_id": parent_id,
            "thread_id": self.thread_id,
            "checkpoint_ns": self.checkpoint_ns,
            **readable,
            "checkpoint": typed_to_json(checkpoint),
            "metadata": typed_to_json(metadata),
            "values": values,
        }
        entry_id = checkpoint_entry_id(checkpoint_id)
        if known is not None or entry_id in self.entry_ids:
            # The same checkpoint id put again with other content (LangGraph's
            # savers overwrite): a new entry, which the index takes as the newer.
            entry_id = "cpr-" + _sha(json.dumps(data, sort_keys=True))[:40]
        return self._entry(entry_id, parent.entry_id if parent else self.root_id, CHECKPOINT_NS, data)

    def plan_writes(
        self,
        *,
        checkpoint_id: str,
        task_id: str,
        task_path: str,
        writes: Sequence[Tuple[int, str, Typed]],
    ) -> Optional[Entry]:
        """The entry that stores a task's writes (index, channel, value), or None when all are stored."""
        held = self.writes.get(checkpoint_id, {})
        fresh = []
        for idx, channel, value in writes:
            old = held.get((task_id, idx))
            if old is not None and (idx >= 0 or (old.channel, old.value) == (channel, value)):
                continue
            fresh.append({"idx": idx, "channel": channel, **typed_to_json(value)})
        if not fresh:
            return None
        data = {
            "checkpoint_id": checkpoint_id,
            "task_id": task_id,
            "task_path": task_path,
            "writes": fresh,
        }
        entry_id = "w-" + _sha(json.dumps(data, sort_keys=True))[:40]
        record = self.checkpoints.get(checkpoint_id)
        return self._entry(entry_id, record.entry_id if record else self.root_id, WRITES_NS, data)

    def _entry(
        self, entry_id: str, parent_id: Optional[str], namespace: str, data: Mapping[str, Any]
    ) -> Entry:
        if parent_id is None:
            raise ValueError(f"session {self.session_id} has not been read (no root entry)")
        return Entry(
            id=entry_id,
            parent_id=parent_id,
            custom=Custom(namespace=namespace, data=json_struct(data)),
        )
