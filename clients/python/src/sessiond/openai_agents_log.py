"""One sessiond session mirrored in this process, for planning writes against it.

The mirror is caught up with GetEntries before every decision: the adapter
plans its writes against the log as it is (which item is last, which tool
call an output answers) and writes with ``expected_seq``, so that a writer
that planned against an old log is refused (ABORTED), catches up and plans
again instead of losing another writer's entries. It reads only what it has
not seen: a long session costs one page per new batch.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Dict, List, Optional, Sequence, Set

import grpc

from .async_client import AsyncSessiondClient
from .errors import SessiondError
from .ids import new_entry_id
from .v1.entry_pb2 import Entry

__all__ = ["RemoteSession", "SessionLog"]

#: How many times a write that lost a race is planned again before the
#: conflict goes to the caller: every lost race means another writer made
#: progress, so this only ends a pathological livelock.
MAX_ATTEMPTS = 100


class SessionLog:
    """A session's entries by id, its head seq and its current leaf (the rules of the spec)."""

    def __init__(self) -> None:
        self.entries: Dict[str, Entry] = {}
        self.head_seq = 0
        self.leaf_id = ""

    def apply(self, entry: Entry) -> None:
        """Adds the next entry of the log: it becomes the leaf, or a Leaf entry moves the leaf."""
        self.entries[entry.id] = entry
        self.head_seq = entry.seq
        self.leaf_id = entry.leaf.leaf_id if entry.WhichOneof("kind") == "leaf" else entry.id

    def get(self, entry_id: str) -> Optional[Entry]:
        return self.entries.get(entry_id)

    def path(self, to: Optional[str] = None) -> List[Entry]:
        """The entries from the root to ``to`` (the leaf by default); stops at a cycle or a gap."""
        path: List[Entry] = []
        seen: Set[str] = set()
        at: Optional[str] = self.leaf_id if to is None else to
        while at and at not in seen:
            seen.add(at)
            entry = self.entries.get(at)
            if entry is None:
                break
            path.append(entry)
            at = entry.parent_id if entry.HasField("parent_id") else None
        return path[::-1]


def planned(entry: Entry, parent_id: str) -> Entry:
    """``entry`` under ``parent_id`` with its id chosen here, so later entries of a batch can name it."""
    entry.parent_id = parent_id
    if not entry.id:
        entry.id = new_entry_id()
    return entry


class RemoteSession:
    """A session on a server (``workspace``, ``session_id``) and its mirror."""

    def __init__(self, client: AsyncSessiondClient, workspace: str, session_id: str) -> None:
        self.client = client
        self.workspace = workspace
        self.session_id = session_id
        self._log = SessionLog()
        self._reading = asyncio.Lock()

    async def read(self) -> SessionLog:
        """The session's log as the server has it now."""
        async with self._reading:
            while True:
                page = await self.client.session.get_entries(
                    workspace=self.workspace, session=self.session_id, after_seq=self._log.head_seq
                )
                if page.head_seq < self._log.head_seq:
                    self._log = SessionLog()  # deleted and created again: read it afresh
                    continue
                for entry in page.entries:
                    if entry.seq > self._log.head_seq:
                        self._log.apply(entry)
                if not page.entries or self._log.head_seq >= page.head_seq:
                    return self._log

    async def append(self, plan: Callable[[SessionLog], Sequence[Entry]]) -> None:
        """Appends the entries ``plan`` makes of the current log (none: nothing to do)."""

        async def write(log: SessionLog) -> None:
            entries = list(plan(log))
            if entries:
                await self.client.session.append(
                    workspace=self.workspace,
                    session=self.session_id,
                    entries=entries,
                    expected_seq=log.head_seq,
                )

        await self._retried(write)

    async def rewind(self, plan: Callable[[SessionLog], Optional[str]]) -> None:
        """Moves the leaf to the entry ``plan`` picks of the current log (None: stay)."""

        async def write(log: SessionLog) -> None:
            target = plan(log)
            if target is not None:
                await self.client.session.rewind(
                    workspace=self.workspace,
                    session=self.session_id,
                    target=target,
                    allow_before_compaction=True,
                    expected_seq=log.head_seq,
                )

        await self._retried(write)

    async def reset(self) -> None:
        """Moves the leaf back to the root (history kept)."""

        async def write(log: SessionLog) -> None:
            await self.client.session.reset(
                workspace=self.workspace, session=self.session_id, expected_seq=log.head_seq
            )

        await self._retried(write)

    async def _retried(self, write: Callable[[SessionLog], Awaitable[None]]) -> None:
        attempt = 1
        while True:
            log = await self.read()
            try:
                return await write(log)
            except SessiondError as err:
                if err.code != grpc.StatusCode.ABORTED or attempt >= MAX_ATTEMPTS:
                    raise
            attempt += 1
