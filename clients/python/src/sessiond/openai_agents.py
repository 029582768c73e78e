"""``SessiondSession``: a sessiond session as the memory of an OpenAI Agents SDK ``Runner``.

The SDK's ``Session`` protocol (``get_items``, ``add_items``, ``pop_item``,
``clear_session``) mapped onto the session's tree rather than around it:
items are typed entries appended at the leaf (``openai_agents_items``),
``pop_item`` rewinds the leaf past the newest item (the item stays in the
history and the tree), ``clear_session`` resets the leaf to the root (the
history kept) and ``erase_session`` deletes the content. Every
change is planned against the session as the server has it and written
with ``expected_seq``, planned again when another runner wrote first, so
runners sharing a session never lose each other's items; entry ids are
chosen before sending, so a retried Append is not written twice.

Beyond the protocol, what the SDK's own stores lack: ``fork`` a session at
an item, ``rewind_to`` an item, and ``watch`` a session live.

The SDK (``pip install 'sessiond[openai-agents]'``) is not imported here:
the protocol is structural, and items are plain JSON dicts.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, AsyncIterator, Dict, List, Mapping, Optional, cast

import grpc

from . import ids
from .async_client import AsyncSessiondClient
from .errors import SessiondError
from .openai_agents_items import NAMESPACE, Item, entry_items
from .openai_agents_log import RemoteSession, SessionLog
from .openai_agents_plan import items_on_path, plan_items

if TYPE_CHECKING:
    from agents import TResponseInputItem  # type: ignore[import-not-found, unused-ignore]
    from agents.memory import SessionSettings  # type: ignore[import-not-found, unused-ignore]

__all__ = ["NAMESPACE", "SessionEvent", "SessiondSession"]


@dataclass(frozen=True)
class SessionEvent:
    """One entry of a watched session, as items.

    ``items``: what the entry added (an ``add_items`` writes one entry per
    item). ``moved_to``: for a leaf move (``pop_item``, ``rewind_to``,
    ``clear_session``), the entry the leaf moved to, and no items.
    """

    seq: int
    entry_id: str
    items: List[Item]
    moved_to: Optional[str] = None


def _entry_at(log: SessionLog, index: int) -> str:
    """The id of the entry holding item ``index`` of the current path (negative: from the end)."""
    flat = [entry.id for entry, items in items_on_path(log) for _ in items]
    try:
        return flat[index]
    except IndexError:
        raise IndexError(f"item index {index} out of range ({len(flat)} items)") from None


class SessiondSession:
    """The SDK's ``Session`` kept in a sessiond session.

    ``SessiondSession(session_id, client=AsyncSessiondClient(...))``: the
    session ``session_id`` (created at first use when it does not exist;
    left out, a new id is chosen: keep ``session_id`` to resume after a
    restart) in ``workspace`` (default: the server's default). ``title`` and
    ``tags`` are those of a session created here. Make it, like its client,
    inside the running event loop.

    An id you give never changes: the session under it, if there is one,
    is resumed. An id chosen here is drawn as the client draws one (its
    second plus 32 random bits), and a new session is made under it at
    first use; should another session already hold it (two sessions made
    in the same second draw the same id once in 2^32 pairs), a new id is
    drawn and ``session_id`` becomes it: a drawn id is never another
    session's. So read ``session_id`` after the first call (any of them)
    to hand it on: another ``SessiondSession`` given the id, making the
    session first, makes this one draw another.
    """

    def __init__(
        self,
        session_id: Optional[str] = None,
        *,
        client: AsyncSessiondClient,
        workspace: str = "",
        title: Optional[str] = None,
        tags: Optional[Mapping[str, str]] = None,
        session_settings: Optional["SessionSettings"] = None,
    ) -> None:
        #: The session's id; one drawn here (none given) may change at first use (see above).
        self.session_id = session_id or ids.new_session_id()
        # The id was drawn here and no session is made under it yet: it is drawn again if taken.
        self._drawn = not session_id
        self.session_settings = session_settings
        self.client = client
        self.workspace = workspace
        self._title = title
        self._tags = dict(tags or {})
        self._remote: Optional[RemoteSession] = None
        self._opening = asyncio.Lock()

    async def get_items(self, limit: Optional[int] = None) -> List["TResponseInputItem"]:
        """The items on the current path, oldest first; the newest ``limit`` with a limit."""
        log = await (await self._session()).read()
        items = [item for _, held in items_on_path(log) for item in held]
        if limit is not None:
            items = items[-limit:] if limit > 0 else []
        return cast(List["TResponseInputItem"], items)

    async def add_items(self, items: List["TResponseInputItem"]) -> None:
        """Appends the items at the leaf, one entry each, in one atomic Append."""
        if not items:
            return
        plain = cast(List[Item], items)
        await (await self._session()).append(lambda log: plan_items(log, plain))

    async def pop_item(self) -> Optional["TResponseInputItem"]:
        """Rewinds the leaf past the newest item and returns it (None when there is none).

        The item stays in the session's history and tree, off the current path.
        """
        popped: List[Item] = []

        def target(log: SessionLog) -> Optional[str]:
            popped.clear()
            on_path = items_on_path(log)
            if not on_path:
                return None
            entry, items = on_path[-1]
            popped.append(items[-1])
            return entry.parent_id

        await (await self._session()).rewind(target)
        return cast("TResponseInputItem", popped[0]) if popped else None

    async def clear_session(self) -> None:
        """The SDK's clear, as a rewind: the leaf goes back to the root, so the model sees no items.

        The history stays readable (GetState's HISTORY view, the tree,
        search). For a clear that leaves nothing readable, ``erase_session``.
        """
        await (await self._session()).reset()

    async def erase_session(self) -> None:
        """A clear that erases: the session is deleted and created again, empty, under the same id.

        DeleteSession takes its entries out of every read; the new session
        has this object's title and tags, so ``session_id`` and a resume by
        id keep working. A runner writing meanwhile lands before the delete
        (erased with it) or after the new creation (kept).
        """
        await self._session()
        try:
            await self.client.store.delete_session(workspace=self.workspace, session=self.session_id)
        except SessiondError as err:
            if err.code != grpc.StatusCode.NOT_FOUND:
                raise
        async with self._opening:
            self._remote = RemoteSession(self.client, self.workspace, self.session_id)
            await self._create()

    async def rewind_to(self, index: int) -> None:
        """Makes item ``index`` of ``get_items()`` the newest (negative counts from the end).

        The items after it stay in the history, on an abandoned branch; the
        next ``add_items`` starts a new one. Items of one entry (a message
        written by another client with text and tool calls) move together.
        """
        await (await self._session()).rewind(lambda log: _entry_at(log, index))

    async def fork(
        self, at: Optional[int] = None, *, title: Optional[str] = None, session_id: Optional[str] = None
    ) -> "SessiondSession":
        """A new session holding the items up to item ``at`` (all of them by default).

        This session is left as it is. The fork records where it came from
        (``forked_from`` of its SessionInfo). ``session_id``: the fork's id
        (ALREADY_EXISTS when taken); left out, the client draws one (drawn
        again if taken).
        """
        remote = await self._session()
        log = await remote.read()
        entry = log.leaf_id if at is None else _entry_at(log, at)
        kw: Dict[str, Any] = {"title": title} if title is not None else {}
        if session_id:
            kw["session_id"] = session_id
        res = await self.client.store.fork_session(
            workspace=self.workspace, session=self.session_id, entry=entry, **kw
        )
        return SessiondSession(
            res.session.id, client=self.client, workspace=self.workspace, session_settings=self.session_settings
        )

    async def watch(self, after_seq: int = 0) -> AsyncIterator[SessionEvent]:
        """Every entry after ``after_seq`` that adds items or moves the leaf, then live ones.

        ``async for event in session.watch(): ...``; resumes across
        disconnects and server restarts (each entry once, in order), and
        ends with ``SessiondError`` NOT_FOUND when the session is deleted.
        """
        await self._session()
        watch = self.client.watch_entries(self.session_id, after_seq, self.workspace)
        try:
            async for ev in watch:
                if ev.WhichOneof("event") != "entry":
                    continue
                entry = ev.entry
                if entry.WhichOneof("kind") == "leaf":
                    yield SessionEvent(entry.seq, entry.id, [], entry.leaf.leaf_id)
                    continue
                items = entry_items(entry)
                if items:
                    yield SessionEvent(entry.seq, entry.id, items)
        finally:
            watch.close()

    async def _session(self) -> RemoteSession:
        """The session on the server, created at first use (once, however many calls race)."""
        async with self._opening:
            if self._remote is None:
                await self._create()
                self._remote = RemoteSession(self.client, self.workspace, self.session_id)
            return self._remote

    async def _create(self) -> None:
        """Creates the session; under an id given (or made before), one that exists is this one.

        Under an id drawn here and not yet made, by the client's rules of
        drawn ids: another session that holds it is never attached to, a
        new id is drawn instead (``session_id`` becomes it).
        """
        kw: Dict[str, Any] = {"title": self._title} if self._title is not None else {}
        if self._drawn:
            res = await self.client.store._create_session_drawn(
                self.session_id, workspace=self.workspace, tags=self._tags, **kw
            )
            self.session_id = res.session.id
            self._drawn = False
            return
        try:
            await self.client.store.create_session(
                workspace=self.workspace, session_id=self.session_id, tags=self._tags, **kw
            )
        except SessiondError as err:
            if err.code != grpc.StatusCode.ALREADY_EXISTS:
                raise
