"""A session id the adapter drew that another session holds: never attached to, drawn again.

``SessiondSession()`` without an id draws one as the client does (its second
plus 32 random bits): two sessions made in the same second draw the same id
once in 2^32 pairs. Here the drawer (``sessiond.ids.new_session_id``,
patched) hands out, first, the id of another user's session, on purpose.
The adapter must not read or write that session: it ends up on a new one,
and ``session_id`` says which. An id the user gives still resumes the
session under it, and a fork without an id is a new session too.
"""

from __future__ import annotations

import unittest
from typing import Any, Dict, List, Optional, Tuple
from unittest import mock

from oa_support import async_client, need_server, workspace

import sessiond.ids
from sessiond.openai_agents import SessiondSession

#: The real drawer (the tests replace the module's).
REAL_DRAW = sessiond.ids.new_session_id


def setUpModule() -> None:
    need_server()


def user(text: str) -> Dict[str, Any]:
    return {"role": "user", "content": text}


class Drawer:
    """A session id drawer: the ids it is given, then fresh ones; ``drawn``: every id handed out."""

    def __init__(self, *first: str) -> None:
        self._first = list(first)
        self.drawn: List[str] = []

    def __call__(self, now: Any = None) -> str:
        sid = self._first.pop(0) if self._first else REAL_DRAW(now)
        self.drawn.append(sid)
        return sid

    def patch(self) -> "mock._patch[Any]":
        return mock.patch.object(sessiond.ids, "new_session_id", self)


class DrawnSessionIdTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.ws = workspace()
        self.client = async_client()
        self.addAsyncCleanup(self.client.close)

    async def theirs(self, title: Optional[str] = None) -> str:
        """Another user's session, under an id of its own (given), holding an item."""
        sid = REAL_DRAW()
        other = SessiondSession(sid, client=self.client, workspace=self.ws, title=title)
        await other.add_items([user("their secret")])
        return sid

    async def snapshot(self, sid: str) -> Tuple[Any, ...]:
        meta = (await self.client.store.get_session(workspace=self.ws, session=sid)).session
        entries = (await self.client.session.get_entries(workspace=self.ws, session=sid)).entries
        return meta.title, meta.entry_count, tuple(e.SerializeToString(deterministic=True) for e in entries)

    async def session_ids(self) -> List[str]:
        return sorted(s.id for s in (await self.client.store.list_sessions(workspace=self.ws)).sessions)

    async def test_a_drawn_id_another_equal_session_holds_is_drawn_again_and_nothing_of_it_is_read(self) -> None:
        """Same title and tags as the other session (the server answers created=false): still not ours."""
        taken = await self.theirs()
        before = await self.snapshot(taken)
        drawer = Drawer(taken)
        with drawer.patch():
            s = SessiondSession(client=self.client, workspace=self.ws)
            self.assertEqual(s.session_id, taken, "the adapter drew through sessiond.ids")
            self.assertEqual(await s.get_items(), [])
        self.assertNotEqual(s.session_id, taken)
        self.assertEqual(drawer.drawn, [taken, s.session_id])
        await s.add_items([user("mine")])
        self.assertEqual(await s.get_items(), [user("mine")])
        self.assertEqual(await self.snapshot(taken), before)
        self.assertEqual(await self.session_ids(), sorted([taken, s.session_id]))

    async def test_a_drawn_id_another_session_holds_is_drawn_again_on_a_first_write(self) -> None:
        """Another title (the server answers ALREADY_EXISTS): the first call, a write, lands on a new session."""
        taken = await self.theirs(title="theirs")
        before = await self.snapshot(taken)
        drawer = Drawer(taken)
        with drawer.patch():
            s = SessiondSession(client=self.client, workspace=self.ws, title="mine", tags={"user": "bob"})
            await s.add_items([user("mine")])
        self.assertNotEqual(s.session_id, taken)
        self.assertEqual(drawer.drawn, [taken, s.session_id])
        self.assertEqual(await s.get_items(), [user("mine")])
        meta = (await self.client.store.get_session(workspace=self.ws, session=s.session_id)).session
        self.assertEqual((meta.title, dict(meta.tags)), ("mine", {"user": "bob"}))
        self.assertEqual(await self.snapshot(taken), before)
        self.assertEqual(await self.session_ids(), sorted([taken, s.session_id]))

    async def test_an_id_the_user_gave_resumes_the_session_under_it_and_never_changes(self) -> None:
        taken = await self.theirs(title="theirs")
        drawer = Drawer(REAL_DRAW())
        with drawer.patch():
            s = SessiondSession(taken, client=self.client, workspace=self.ws, title="other title")
            self.assertEqual(await s.get_items(), [user("their secret")])
            await s.add_items([user("more")])
        self.assertEqual(s.session_id, taken)
        self.assertEqual(drawer.drawn, [])
        self.assertEqual(await s.get_items(), [user("their secret"), user("more")])
        self.assertEqual(await self.session_ids(), [taken])

    async def test_a_fork_without_an_id_whose_first_draw_is_taken_is_a_new_session(self) -> None:
        taken = await self.theirs()
        before = await self.snapshot(taken)
        s = SessiondSession(client=self.client, workspace=self.ws)
        await s.add_items([user("a"), user("b")])
        drawer = Drawer(taken)
        with drawer.patch():
            fork = await s.fork(at=0)
        self.assertNotIn(fork.session_id, (taken, s.session_id))
        self.assertEqual(drawer.drawn, [taken, fork.session_id])
        self.assertEqual(await fork.get_items(), [user("a")])
        meta = (await self.client.store.get_session(workspace=self.ws, session=fork.session_id)).session
        self.assertEqual(meta.forked_from.session_id, s.session_id)
        self.assertEqual(await s.get_items(), [user("a"), user("b")])
        self.assertEqual(await self.snapshot(taken), before)
        self.assertEqual(await self.session_ids(), sorted([taken, s.session_id, fork.session_id]))


if __name__ == "__main__":
    unittest.main()
