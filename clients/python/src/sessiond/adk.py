# google-adk is an optional extra (no py.typed): typed as Any when absent or untyped.
# mypy: disable-error-code="import-untyped, import-not-found", allow-subclassing-any
"""Google ADK's ``BaseSessionService`` over sessiond: durable, shared, inspectable ADK sessions.

An ADK session is a sessiond session with the same id, tagged ``adk.kind`` =
``session``, ``adk.app`` and ``adk.user``, so that ``list_sessions`` is one
ListSessions per page. Events are entries (``adk_codec``), state lives as
``adk_state`` says, and ``get_session`` reads only the recent path it is
asked for (``adk_history``). ``append_event`` appends with ``expected_seq``
= the head seq the caller's copy of the session was read at, so a writer
holding a stale copy gets ``StaleSessionError`` instead of interleaving its
events with another writer's. Beyond ADK: ``fork_session``,
``rewind_session`` and ``watch_events``.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Dict, List, Optional

import grpc
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.platform import time as platform_time
from google.adk.platform import uuid as platform_uuid
from google.adk.sessions import _session_util
from google.adk.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
)
from google.adk.sessions.session import Session
from google.adk.sessions.state import State

from .adk_codec import decode_entry, encode_event, entry_id_of
from .adk_history import path_events
from .adk_listing import sessions_of
from .adk_state import APP_TAG, KIND_TAG, USER_TAG, ScopedState, state_entry, state_of
from .async_client import AsyncSessiondClient
from .errors import SessiondError
from .v1.session_pb2 import SessionMeta
from .v1.store_service_pb2 import SessionFilter, SortBy, SortOrder

__all__ = ["SessiondSessionService", "StaleSessionError"]

_LIST_PAGE = 1000


class SessiondSessionService(BaseSessionService):
    """ADK sessions in a sessiond workspace, through an ``AsyncSessiondClient`` the caller owns.

    ``compare_and_swap=False`` drops ``expected_seq`` from ``append_event``;
    it exists so that a test can show what the check prevents. Leave it on.
    """

    def __init__(
        self,
        client: AsyncSessiondClient,
        workspace: str = "",
        *,
        compare_and_swap: bool = True,
    ) -> None:
        self.client = client
        self.workspace = workspace
        self._cas = compare_and_swap
        self._scoped = ScopedState(client, workspace)

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: Optional[Dict[str, Any]] = None,
        session_id: Optional[str] = None,
    ) -> Session:
        session_id = (session_id.strip() if session_id else None) or platform_uuid.new_uuid()
        deltas = _session_util.extract_state_delta(state or {})
        try:
            resp = await self.client.store.create_session(
                workspace=self.workspace,
                session_id=session_id,
                title=f"{app_name} / {user_id}",
                tags=_tags(app_name, user_id),
            )
        except SessiondError as e:
            if e.code == grpc.StatusCode.INVALID_ARGUMENT:
                raise ValueError(f"session id {session_id!r}: {e.message}") from e
            if e.code == grpc.StatusCode.ALREADY_EXISTS:
                raise AlreadyExistsError(f"Session with id {session_id} already exists.") from e
            raise
        if not resp.created:
            raise AlreadyExistsError(f"Session with id {session_id} already exists.")
        head = resp.session.head_seq
        if deltas["session"]:
            appended = await self.client.session.append(
                workspace=self.workspace,
                session=session_id,
                entries=[state_entry(deltas["session"])],
                expected_seq=head,
            )
            head = appended.head_seq
        await self._update_scopes(app_name, user_id, deltas)
        session = Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=deltas["session"],
            last_update_time=platform_time.get_time(),
        )
        session._storage_update_marker = str(head)
        return await self._merge_scopes(session)

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: Optional[GetSessionConfig] = None,
    ) -> Optional[Session]:
        session_id = session_id.strip() if session_id else session_id
        try:
            meta, folded = await asyncio.gather(
                self.client.store.get_session(workspace=self.workspace, session=session_id),
                self.client.session.get_state(
                    workspace=self.workspace, session=session_id, page_size=1
                ),
            )
        except SessiondError as e:
            if e.code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
                return None
            raise
        if not _owned(meta.session, app_name, user_id) or meta.session.id != session_id:
            return None
        state = folded.state
        events = await path_events(
            self.client,
            self.workspace,
            session_id,
            leaf_id=state.current_leaf_id,
            head_seq=state.head_seq,
            num_recent=config.num_recent_events if config else None,
            after_timestamp=config.after_timestamp if config else None,
        )
        session = Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=state_of(state.custom),
            events=events,
            last_update_time=meta.session.updated_at.ToNanoseconds() / 1e9,
        )
        session._storage_update_marker = str(state.head_seq)
        return await self._merge_scopes(session)

    async def list_sessions(
        self, *, app_name: str, user_id: Optional[str] = None
    ) -> ListSessionsResponse:
        """Sessions of the app (and user), least recently updated first; without events or state.

        One ListSessions call per page of 1,000: no session is read. As
        ADK's ``ListSessionsResponse`` says, events and state are not set.
        """
        tags = {KIND_TAG: "session", APP_TAG: app_name}
        if user_id is not None:
            tags[USER_TAG] = user_id
        found: List[Session] = []
        token = ""
        while True:
            page = await self.client.store.list_sessions(
                workspace=self.workspace,
                filter=SessionFilter(tags=tags),
                sort_by=SortBy.SORT_BY_UPDATED,
                order=SortOrder.SORT_ORDER_OLDEST_FIRST,
                page_size=_LIST_PAGE,
                page_token=token,
            )
            found.extend(sessions_of(page.sessions, app_name, user_id))
            token = page.next_page_token
            if not token:
                return ListSessionsResponse.model_construct(sessions=found)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        try:
            meta = await self.client.store.get_session(workspace=self.workspace, session=session_id)
            if _owned(meta.session, app_name, user_id) and meta.session.id == session_id:
                await self.client.store.delete_session(workspace=self.workspace, session=session_id)
        except SessiondError as e:
            if e.code not in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
                raise

    async def get_user_state(self, *, app_name: str, user_id: str) -> Dict[str, Any]:
        return await self._scoped.user(app_name, user_id)

    async def append_event(self, session: Session, event: Event) -> Event:
        """Stores the event and its state delta, unless another writer appended since ``session`` was read.

        Raises ``StaleSessionError`` then (nothing written); reload the
        session with ``get_session`` and run again. The session's own state
        and the event go in one atomic Append; ``app:`` / ``user:`` deltas
        follow, each merged into its shared scope (see ``adk_state``).
        """
        if event.partial:
            return event
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)
        deltas = _session_util.extract_state_delta(event.actions.state_delta)
        entries = [encode_event(event)]
        if deltas["session"]:
            entries.insert(0, state_entry({**_own_state(session), **deltas["session"]}))
        marker = session._storage_update_marker
        expected = int(marker) if self._cas and marker is not None else None
        try:
            resp = await self.client.session.append(
                workspace=self.workspace,
                session=session.id,
                entries=entries,
                expected_seq=expected,
            )
        except SessiondError as e:
            if e.code == grpc.StatusCode.ABORTED:
                raise StaleSessionError(
                    f"session {session.id} was appended to since this copy was read "
                    f"(at seq {expected}): {e.message}. Reload it with get_session."
                ) from e
            if e.code == grpc.StatusCode.NOT_FOUND:
                raise SessionNotFoundError(f"Session {session.id} not found.") from e
            raise
        session._storage_update_marker = str(resp.head_seq)
        await self._update_scopes(session.app_name, session.user_id, deltas)
        session.last_update_time = event.timestamp
        return self._commit_event_to_session(session, event)

    async def fork_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        event_id: str,
        new_session_id: Optional[str] = None,
    ) -> Session:
        """A new session holding the path up to and including ``event_id`` (state as it was then).

        The source is untouched; the fork keeps the events' ids and the
        source's app and user.
        """
        await self._require(app_name, user_id, session_id)
        new_id = new_session_id or platform_uuid.new_uuid()
        await self.client.store.fork_session(
            workspace=self.workspace,
            session=session_id,
            entry=entry_id_of(event_id),
            session_id=new_id,
        )
        return await self._get(app_name, user_id, new_id)

    async def rewind_session(
        self, *, app_name: str, user_id: str, session_id: str, event_id: str
    ) -> Session:
        """Moves the session back to ``event_id``: later events leave the path (kept in the log), state as it was.

        The next ``append_event`` grows a new branch from there.
        """
        await self._require(app_name, user_id, session_id)
        await self.client.session.rewind(
            workspace=self.workspace, session=session_id, target=entry_id_of(event_id)
        )
        return await self._get(app_name, user_id, session_id)

    async def watch_events(
        self, *, app_name: str, user_id: str, session_id: str, after_seq: int = 0
    ) -> AsyncIterator[Event]:
        """Every event appended to the session (all branches, in log order), then live ones as they come.

        Resumes across disconnects and server restarts without gaps or
        repeats (the client's resumable watch). Break out of the loop to stop.
        """
        await self._require(app_name, user_id, session_id)
        watch = self.client.watch_entries(session_id, after_seq, self.workspace)
        try:
            async for ev in watch:
                if ev.WhichOneof("event") != "entry":
                    continue
                event = decode_entry(ev.entry)
                if event is not None:
                    yield event
        finally:
            watch.close()

    async def _get(self, app_name: str, user_id: str, session_id: str) -> Session:
        session = await self.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
        if session is None:
            raise SessionNotFoundError(f"Session {session_id} not found.")
        return session

    async def _require(self, app_name: str, user_id: str, session_id: str) -> None:
        try:
            meta = await self.client.store.get_session(workspace=self.workspace, session=session_id)
        except SessiondError as e:
            if e.code == grpc.StatusCode.NOT_FOUND:
                raise SessionNotFoundError(f"Session {session_id} not found.") from e
            raise
        if not _owned(meta.session, app_name, user_id) or meta.session.id != session_id:
            raise SessionNotFoundError(f"Session {session_id} not found.")

    async def _update_scopes(
        self, app_name: str, user_id: str, deltas: Dict[str, Dict[str, Any]]
    ) -> None:
        if deltas["app"]:
            await self._scoped.update_app(app_name, deltas["app"])
        if deltas["user"]:
            await self._scoped.update_user(app_name, user_id, deltas["user"])

    async def _merge_scopes(self, session: Session) -> Session:
        """Adds the app's and the user's state to a session's own, with their prefixes (as ADK's services do)."""
        app, user = await asyncio.gather(
            self._scoped.app(session.app_name),
            self._scoped.user(session.app_name, session.user_id),
        )
        session.state.update({State.APP_PREFIX + k: v for k, v in app.items()})
        session.state.update({State.USER_PREFIX + k: v for k, v in user.items()})
        return session


def _tags(app_name: str, user_id: str) -> Dict[str, str]:
    return {KIND_TAG: "session", APP_TAG: app_name, USER_TAG: user_id}


def _owned(meta: SessionMeta, app_name: str, user_id: str) -> bool:
    """Whether a sessiond session is this app's and user's ADK session."""
    tags = meta.tags
    return all(tags.get(k) == v for k, v in _tags(app_name, user_id).items())


def _own_state(session: Session) -> Dict[str, Any]:
    """The session-scoped part of an in-memory session's state (what its state entry holds)."""
    own: Dict[str, Any] = _session_util.extract_state_delta(session.state)["session"]
    return own
