"""State follows ADK's scopes: session state per session, app: and user: state shared, temp: never stored."""

from __future__ import annotations

import asyncio
import unittest

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions

import support_adk as s
from sessiond.adk import SessiondSessionService


def setUpModule() -> None:
    s.need_server()


def delta(**state: object) -> Event:
    return Event(id=Event.new_id(), invocation_id="inv", author="agent",
                 actions=EventActions(state_delta={k.replace("__", ":"): v for k, v in state.items()}))


class StateScopes(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.client = s.client()
        self.ws = s.workspace()
        self.service = SessiondSessionService(self.client, self.ws)

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def get(self, user: str, sid: str) -> dict:  # type: ignore[type-arg]
        got = await self.service.get_session(app_name=s.APP, user_id=user, session_id=sid)
        assert got is not None
        return got.state

    async def test_app_state_is_shared_by_every_user_and_user_state_by_the_users_sessions(self) -> None:
        one = await self.service.create_session(app_name=s.APP, user_id="ana", session_id="ana-1")
        await self.service.create_session(app_name=s.APP, user_id="ana", session_id="ana-2")
        await self.service.create_session(app_name=s.APP, user_id="bo", session_id="bo-1")
        await self.service.append_event(one, delta(mine=1, user__lang="pt", app__motd="hi"))
        self.assertEqual(await self.get("ana", "ana-2"), {"user:lang": "pt", "app:motd": "hi"})
        self.assertEqual(await self.get("bo", "bo-1"), {"app:motd": "hi"})
        self.assertEqual(await self.get("ana", "ana-1"), {"mine": 1, "user:lang": "pt", "app:motd": "hi"})

    async def test_temp_state_is_never_stored(self) -> None:
        one = await self.service.create_session(app_name=s.APP, user_id="ana", session_id="t", state={"temp:a": 1})
        await self.service.append_event(one, delta(temp__b=2, kept=3))
        self.assertEqual(one.state["temp:b"], 2)  # the invocation still sees it
        self.assertEqual(await self.get("ana", "t"), {"kept": 3})
        listing = await self.client.store.list_sessions(workspace=self.ws)
        for meta in listing.sessions:
            page = await self.client.session.get_entries(workspace=self.ws, session=meta.id)
            self.assertNotIn("temp:", str(page.entries), meta.id)

    async def test_concurrent_app_state_writers_from_two_replicas_lose_no_update(self) -> None:
        async with s.client() as other:
            replicas = [self.service, SessiondSessionService(other, self.ws)]
            sessions = [
                await replicas[i % 2].create_session(app_name=s.APP, user_id=f"u{i}", session_id=f"s{i}")
                for i in range(12)
            ]
            await asyncio.gather(*(
                replicas[i % 2].append_event(sessions[i], delta(**{f"app__k{i}": i})) for i in range(12)
            ))
        self.assertEqual(await self.get("u0", "s0"), {f"app:k{i}": i for i in range(12)})
