"""``list_sessions``: the sessions ADK's own in-memory service lists, made the cheap way (adk_listing)."""

from __future__ import annotations

import gc
import unittest
from typing import Any, List
from unittest import mock

from google.adk.sessions import InMemorySessionService
from google.adk.sessions.session import Session

import support_adk as s
from sessiond import adk_listing
from sessiond.adk import SessiondSessionService
from sessiond.adk_state import USER_TAG
from sessiond.v1.session_pb2 import SessionMeta


def setUpModule() -> None:
    s.need_server()


def metas(n: int, user: str = "ana") -> List[SessionMeta]:
    out = []
    for i in range(n):
        m = SessionMeta(id=f"s-{i}")
        m.tags[USER_TAG] = user
        m.updated_at.seconds = 1_800_000_000 + i
        m.updated_at.nanos = 250_000_000
        out.append(m)
    return out


def shape(x: Any) -> Any:
    """What a listed session is: its fields and the attributes pydantic keeps beside them."""
    return (x.model_dump(), x.__pydantic_fields_set__, x.__pydantic_extra__, x.__pydantic_private__)


class SessionsOfAPage(unittest.TestCase):
    def test_they_are_what_model_construct_makes_each_with_its_own_state_and_events(self) -> None:
        made = adk_listing.sessions_of(metas(3), "app", None)
        expected = [
            Session.model_construct(id=f"s-{i}", app_name="app", user_id="ana", state={}, events=[],
                                    last_update_time=1_800_000_000 + i + 0.25)
            for i in range(3)
        ]
        self.assertIsNotNone(adk_listing._make, "the fast maker fell back on this pydantic / ADK")
        self.assertEqual([shape(x) for x in made], [shape(x) for x in expected])
        self.assertTrue(all(type(x) is Session for x in made))
        made[0].state["k"] = 1
        made[0].events.append("e")
        made[0]._storage_update_marker = "7"
        made[0].__pydantic_fields_set__.discard("id")
        self.assertEqual(shape(made[1]), shape(expected[1]))

    def test_a_given_user_is_taken_as_given_and_without_one_from_each_sessions_tag(self) -> None:
        self.assertEqual([x.user_id for x in adk_listing.sessions_of(metas(2, "bo"), "app", "bo")], ["bo", "bo"])
        mixed = metas(1, "ana") + metas(1, "bo")
        self.assertEqual([x.user_id for x in adk_listing.sessions_of(mixed, "app", None)], ["ana", "bo"])

    def test_without_the_fast_maker_model_construct_makes_the_same(self) -> None:
        fast = adk_listing.sessions_of(metas(2), "app", None)
        with mock.patch.object(adk_listing, "_make", None):
            slow = adk_listing.sessions_of(metas(2), "app", None)
        self.assertEqual([shape(x) for x in slow], [shape(x) for x in fast])

    def test_the_collector_is_left_as_it_was(self) -> None:
        self.assertTrue(gc.isenabled())
        adk_listing.sessions_of(metas(2), "app", None)
        self.assertTrue(gc.isenabled())
        gc.disable()
        try:
            adk_listing.sessions_of(metas(2), "app", None)
            self.assertFalse(gc.isenabled())
        finally:
            gc.enable()
        with self.assertRaises(AttributeError):
            adk_listing.sessions_of([object()], "app", None)
        self.assertTrue(gc.isenabled())


class ListSessions(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.client = s.client()
        self.service = SessiondSessionService(self.client, s.workspace())
        self.memory = InMemorySessionService()

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def test_lists_what_adks_in_memory_service_lists_by_app_and_user(self) -> None:
        made = [("app", "ana", "a1"), ("app", "ana", "a2"), ("app", "bo", "b1"), ("other", "ana", "o1")]
        for app, user, sid in made:
            for service in (self.service, self.memory):
                await service.create_session(app_name=app, user_id=user, session_id=sid, state={"x": 1})

        def listed(resp: Any) -> List[Any]:
            return sorted((x.id, x.app_name, x.user_id, x.state, x.events) for x in resp.sessions)

        for app, user in (("app", "ana"), ("app", None), ("other", "ana"), ("app", "nobody")):
            ours = await self.service.list_sessions(app_name=app, user_id=user)
            theirs = await self.memory.list_sessions(app_name=app, user_id=user)
            self.assertEqual(
                [(i, a, u, st, ev) for i, a, u, st, ev in listed(ours)],
                [(i, a, u, {}, []) for i, a, u, _, _ in listed(theirs)],
                f"app {app}, user {user}",
            )
            for x in ours.sessions:
                self.assertGreater(x.last_update_time, 1e9)


if __name__ == "__main__":
    unittest.main()
