# google-adk is an optional extra (no py.typed): typed as Any when absent or untyped.
# mypy: disable-error-code="import-untyped, import-not-found", allow-subclassing-any
"""Where ADK's state lives in sessiond, and the rule that keeps concurrent writers from losing updates.

- Session state (keys without a prefix): a ``Custom`` entry (namespace
  ``adk.state``) holding the whole session state as JSON, appended in the
  same atomic Append as the event that changed it, just before it. The
  server's fold gives the last one on the path, so state follows rewind and
  fork, and reading it costs one GetState, not a read of the events.
- ``app:`` and ``user:`` state: one sessiond session per app
  (``adk-app-<hash>``) and one per (app, user) (``adk-user-<hash>``), tagged
  ``adk.kind`` = ``app-state`` / ``user-state``, whose ``adk.state`` Custom
  entries each hold the whole scope's state. Durable, and shared by every
  replica and process that talks to the server.
- ``temp:`` keys are never written.

Concurrency rule for the shared scopes: read (state, head seq), merge the
delta, append with ``expected_seq`` = that head; on ABORTED (someone else
wrote in between) read again and retry. Each key ends with the value of the
last write that committed; no write is lost.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from typing import Any, Dict, Optional, Tuple

import grpc
from google.protobuf import struct_pb2

from .async_client import AsyncSessiondClient
from .errors import SessiondError
from .messages import json_struct
from .v1.entry_pb2 import Custom, Entry

#: Custom namespace of a state snapshot (the whole scope, as JSON text).
STATE_NAMESPACE = "adk.state"
#: Tag keys the adapter puts on its sessions.
KIND_TAG, APP_TAG, USER_TAG = "adk.kind", "adk.app", "adk.user"

_CAS_ATTEMPTS = 50


def state_entry(state: Dict[str, Any]) -> Entry:
    """A Custom entry holding ``state`` whole (JSON text: a Struct would turn ints into floats)."""
    data = json_struct({"state": json.dumps(state)})
    return Entry(custom=Custom(namespace=STATE_NAMESPACE, data=data))


def state_of(custom: "dict[str, struct_pb2.Struct] | Any") -> Dict[str, Any]:
    """The state a folded ``custom`` map holds (empty when none was written)."""
    if STATE_NAMESPACE not in custom:
        return {}
    loaded: Dict[str, Any] = json.loads(custom[STATE_NAMESPACE].fields["state"].string_value)
    return loaded


def app_state_session(app_name: str) -> str:
    """The id of the session holding ``app:`` state of an app (any app name fits an id this way)."""
    return "adk-app-" + hashlib.sha256(app_name.encode()).hexdigest()[:40]


def user_state_session(app_name: str, user_id: str) -> str:
    """The id of the session holding ``user:`` state of a user of an app."""
    key = app_name.encode() + b"\0" + user_id.encode()
    return "adk-user-" + hashlib.sha256(key).hexdigest()[:40]


class ScopedState:
    """Reads and updates the ``app:`` / ``user:`` state sessions of a workspace."""

    def __init__(self, client: AsyncSessiondClient, workspace: str) -> None:
        self._client = client
        self._ws = workspace

    async def app(self, app_name: str) -> Dict[str, Any]:
        return (await self._read(app_state_session(app_name)))[0]

    async def user(self, app_name: str, user_id: str) -> Dict[str, Any]:
        return (await self._read(user_state_session(app_name, user_id)))[0]

    async def update_app(self, app_name: str, delta: Dict[str, Any]) -> None:
        tags = {KIND_TAG: "app-state", APP_TAG: app_name}
        await self._update(app_state_session(app_name), tags, delta)

    async def update_user(self, app_name: str, user_id: str, delta: Dict[str, Any]) -> None:
        tags = {KIND_TAG: "user-state", APP_TAG: app_name, USER_TAG: user_id}
        await self._update(user_state_session(app_name, user_id), tags, delta)

    async def _read(self, sid: str) -> Tuple[Dict[str, Any], Optional[int]]:
        """The scope's state and its session's head seq (None: the session does not exist yet)."""
        try:
            resp = await self._client.session.get_state(workspace=self._ws, session=sid, page_size=1)
        except SessiondError as e:
            if e.code == grpc.StatusCode.NOT_FOUND:
                return {}, None
            raise
        return state_of(resp.state.custom), resp.state.head_seq

    async def _update(self, sid: str, tags: Dict[str, str], delta: Dict[str, Any]) -> None:
        """Merges ``delta`` into the scope with compare-and-swap on the head seq, retrying conflicts."""
        for attempt in range(_CAS_ATTEMPTS):
            state, head = await self._read(sid)
            if head is None:
                await self._client.store.create_session(
                    workspace=self._ws, session_id=sid, title=sid, tags=tags
                )
                continue
            try:
                await self._client.session.append(
                    workspace=self._ws,
                    session=sid,
                    entries=[state_entry({**state, **delta})],
                    expected_seq=head,
                )
                return
            except SessiondError as e:
                if e.code != grpc.StatusCode.ABORTED:
                    raise
            await asyncio.sleep(random.uniform(0, 0.002 * (attempt + 1)))
        raise SessiondError(
            grpc.StatusCode.ABORTED,
            f"state session {sid}: still contended after {_CAS_ATTEMPTS} attempts",
        )
