"""A session id the client drew that another session holds is drawn again, against a live server.

The client draws a session id (its second plus 32 random bits) for a
CreateSession, ForkSession or ImportSession that names none. Two sessions
made in the same second draw the same id once in 2^32 pairs; here a drawer
(``sessiond.ids.new_session_id``, patched) hands out an id that is taken on
purpose. The call must end with a session of its own, the other session
untouched; an id the caller gave, or one an attempt of the same call may
have created (an answer lost), is never drawn again; and there are at most
8 draws. Both clients, sync and asyncio.
"""

from __future__ import annotations

import unittest
from typing import Any, List, Tuple
from unittest import mock

import grpc
from support import (
    AsyncCounter,
    AsyncLoseResponses,
    Counter,
    LoseResponses,
    LostResponse,
    async_client,
    client,
    need_server,
    workspace,
)

import sessiond.ids
from sessiond import AsyncSessiondClient, RetryPolicy, SessiondClient, SessiondError, text_of, user_message
from sessiond.v1 import entry_pb2, store_service_pb2

#: The real drawer (the tests replace the module's).
REAL_DRAW = sessiond.ids.new_session_id

FAST = RetryPolicy(max_attempts=5, base_delay=0.01, max_delay=0.05)


def setUpModule() -> None:
    need_server()


class Drawer:
    """A session id drawer: the ids it is given, then fresh ones (``always``: the first one every time)."""

    def __init__(self, *first: str, always: bool = False) -> None:
        self._first = list(first)
        self._always = always
        #: Every id drawn, in order.
        self.drawn: List[str] = []

    def __call__(self, now: Any = None) -> str:
        if self._first:
            sid = self._first[0] if self._always else self._first.pop(0)
        else:
            sid = REAL_DRAW(now)
        self.drawn.append(sid)
        return sid

    def patch(self) -> "mock._patch[Any]":
        return mock.patch.object(sessiond.ids, "new_session_id", self)


class Refused(LostResponse):
    """UNAVAILABLE before the request left: no connection (the server never saw it)."""

    def details(self) -> str:
        return "failed to connect to all addresses; last error: test"


class RefuseFirst(grpc.UnaryUnaryClientInterceptor):
    """Fails the first ``n`` attempts of ``method`` as a refused connection, without sending them."""

    def __init__(self, method: str, n: int) -> None:
        self.method = method
        self.n = n

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        if details.method.endswith("/" + self.method) and self.n > 0:
            self.n -= 1
            return Refused()
        return continuation(details, request)


def exported(c: SessiondClient, ws: str) -> List[entry_pb2.Entry]:
    """A log to import: a session's entries, its root recording no session id (so the client draws one)."""
    sid = c.store.create_session(workspace=ws, title="exported").session.id
    c.session.append(workspace=ws, session=sid, entries=[user_message("q", id="u1")])
    log = list(c.session.get_entries(workspace=ws, session=sid).entries)
    log[0].session_info.ClearField("session_id")
    return log


class SessionIdDrawsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ws = workspace()
        self.counter = Counter()
        self.c = client(retry=FAST, interceptors=[self.counter])
        self.addCleanup(self.c.close)

    def taken(self, title: str = "theirs", **kw: Any) -> str:
        """Another caller's session, under an id of its own, with an entry."""
        sid = REAL_DRAW()
        self.c.store.create_session(workspace=self.ws, session_id=sid, title=title, **kw)
        self.c.session.append(workspace=self.ws, session=sid, entries=[user_message("theirs", id="t1")])
        return sid

    def snapshot(self, sid: str) -> Tuple[Any, ...]:
        meta = self.c.store.get_session(workspace=self.ws, session=sid).session
        entries = self.c.session.get_entries(workspace=self.ws, session=sid).entries
        return meta.title, meta.entry_count, tuple(e.SerializeToString(deterministic=True) for e in entries)

    def session_ids(self) -> List[str]:
        return sorted(s.id for s in self.c.store.list_sessions(workspace=self.ws).sessions)

    def test_create_drawing_a_taken_id_with_equal_parameters_gets_a_new_session(self) -> None:
        """The server answers created=false (an idempotent retry, it thinks): not ours, drawn again."""
        taken = self.taken(title="same")
        before = self.snapshot(taken)
        drawer = Drawer(taken)
        req = store_service_pb2.CreateSessionRequest(workspace=self.ws, title="same")
        with drawer.patch():
            res = self.c.store.create_session(req)
        self.assertTrue(res.created)
        self.assertNotEqual(res.session.id, taken)
        self.assertEqual(res.session.id, drawer.drawn[1])
        self.assertEqual(req.session_id, res.session.id, "the new id is in the caller's request")
        self.assertEqual(len(drawer.drawn), 2)
        self.assertEqual(self.snapshot(taken), before)
        self.assertEqual(self.session_ids(), sorted([taken, res.session.id]))

    def test_create_drawing_a_taken_id_with_other_parameters_gets_a_new_session(self) -> None:
        """The server answers ALREADY_EXISTS: drawn again."""
        taken = self.taken(title="theirs")
        before = self.snapshot(taken)
        drawer = Drawer(taken)
        with drawer.patch():
            res = self.c.store.create_session(workspace=self.ws, title="mine")
        self.assertTrue(res.created)
        self.assertNotEqual(res.session.id, taken)
        self.assertEqual(res.session.title, "mine")
        self.assertEqual(self.snapshot(taken), before)
        self.assertEqual(self.counter.calls.count("CreateSession"), 1 + 2)

    def test_fork_drawing_a_taken_id_gets_a_new_session(self) -> None:
        taken = self.taken()
        before = self.snapshot(taken)
        src = self.c.store.create_session(workspace=self.ws, title="src").session.id
        self.c.session.append(workspace=self.ws, session=src, entries=[user_message("q", id="u1")])
        drawer = Drawer(taken)
        with drawer.patch():
            fork = self.c.store.fork_session(workspace=self.ws, session=src, entry="u1").session
        self.assertNotEqual(fork.id, taken)
        self.assertEqual(fork.id, drawer.drawn[1])
        self.assertEqual(text_of(self.c.session.get_state(workspace=self.ws, session=fork.id)), "q")
        self.assertEqual(self.snapshot(taken), before)

    def test_import_drawing_the_id_of_an_equal_log_gets_a_new_session(self) -> None:
        """The same log already under the id: created=false from the server, not ours, drawn again."""
        log = exported(self.c, self.ws)
        taken = REAL_DRAW()
        self.assertTrue(self.c.store.import_session(workspace=self.ws, session_id=taken, entries=log).created)
        before = self.snapshot(taken)
        drawer = Drawer(taken)
        with drawer.patch():
            res = self.c.store.import_session(workspace=self.ws, entries=log)
        self.assertTrue(res.created)
        self.assertNotEqual(res.session.id, taken)
        self.assertEqual(self.snapshot(taken), before)
        mine = self.c.store.get_session(workspace=self.ws, session=res.session.id).session
        self.assertEqual(mine.entry_count, 2)

    def test_import_drawing_a_taken_id_gets_a_new_session(self) -> None:
        """Another session under the id: ALREADY_EXISTS, drawn again."""
        taken = self.taken()
        before = self.snapshot(taken)
        log = exported(self.c, self.ws)
        drawer = Drawer(taken)
        req = store_service_pb2.ImportSessionRequest(workspace=self.ws, entries=log)
        with drawer.patch():
            res = self.c.store.import_session(req)
        self.assertTrue(res.created)
        self.assertNotEqual(res.session.id, taken)
        self.assertEqual(req.session_id, res.session.id)
        self.assertEqual(self.snapshot(taken), before)

    def test_import_with_parts_uploaded_first_draws_into_the_copy_sent_and_the_callers_request(self) -> None:
        """Blob uploads send a copy of the request: the new id goes into both."""
        taken = self.taken()
        big = "x" * 1_500_000  # over half of the largest request (1 MiB): uploaded first
        log = exported(self.c, self.ws)
        log[1].message.content[0].text = big
        calls = Counter()
        small = client(
            retry=FAST,
            interceptors=[calls],
            upload_parts_over_bytes=1024,
            options=[("grpc.max_send_message_length", 2 * 1024 * 1024)],
        )
        self.addCleanup(small.close)
        drawer = Drawer(taken)
        req = store_service_pb2.ImportSessionRequest(workspace=self.ws, entries=log)
        with drawer.patch():
            res = small.store.import_session(req)
        self.assertTrue(res.created)
        self.assertNotEqual(res.session.id, taken)
        self.assertEqual(req.session_id, res.session.id)
        self.assertIn("PutBlob", calls.calls, "the part went up first: the request sent was a copy")
        self.assertEqual(calls.calls.count("ImportSession"), 2)
        self.assertEqual(req.entries[1].message.content[0].text, big, "the caller's parts stay inline")
        self.assertEqual(text_of(self.c.read_state(workspace=self.ws, session=res.session.id)), big)

    def test_a_create_whose_answer_was_lost_is_not_drawn_again(self) -> None:
        """created=false after an attempt of unknown outcome: that attempt made it; it is ours."""
        lossy = LoseResponses(CreateSession=1)
        c = client(retry=FAST, interceptors=[lossy])
        self.addCleanup(c.close)
        drawer = Drawer()
        with drawer.patch():
            res = c.store.create_session(workspace=self.ws, title="t")
        self.assertFalse(res.created)
        self.assertEqual(res.session.id, drawer.drawn[0])
        self.assertEqual(len(drawer.drawn), 1)
        self.assertEqual(lossy.attempts, [("CreateSession", "OK"), ("CreateSession", "OK")])
        self.assertEqual(self.session_ids(), [res.session.id])

    def test_created_false_after_attempts_that_never_reached_the_server_is_drawn_again(self) -> None:
        """A refused connection sends nothing: created=false on the retry is another session's."""
        taken = self.taken(title="same")
        before = self.snapshot(taken)
        refuse = RefuseFirst("CreateSession", 1)
        c = client(retry=FAST, interceptors=[refuse])
        self.addCleanup(c.close)
        drawer = Drawer(taken)
        with drawer.patch():
            res = c.store.create_session(workspace=self.ws, title="same")
        self.assertEqual(refuse.n, 0, "the first attempt was refused")
        self.assertTrue(res.created)
        self.assertNotEqual(res.session.id, taken)
        self.assertEqual(self.snapshot(taken), before)

    def test_an_id_the_caller_gave_is_never_drawn_again(self) -> None:
        taken = self.taken(title="t")
        drawer = Drawer()
        with drawer.patch():
            again = self.c.store.create_session(workspace=self.ws, session_id=taken, title="t")
            self.assertFalse(again.created)
            self.assertEqual(again.session.id, taken)
            with self.assertRaises(SessiondError) as cm:
                self.c.store.create_session(workspace=self.ws, session_id=taken, title="other")
            self.assertEqual(cm.exception.code_name, "ALREADY_EXISTS")
            with self.assertRaises(SessiondError) as cm:
                self.c.store.fork_session(workspace=self.ws, session=taken, entry="t1", session_id=taken)
            self.assertEqual(cm.exception.code_name, "ALREADY_EXISTS")
        self.assertEqual(drawer.drawn, [])
        self.assertEqual(self.session_ids(), [taken])

    def test_an_id_an_earlier_call_wrote_into_the_request_is_not_drawn_again(self) -> None:
        """The caller's own retry with the same request object is idempotent, as before."""
        req = store_service_pb2.CreateSessionRequest(workspace=self.ws, title="t")
        first = self.c.store.create_session(req)
        self.assertTrue(first.created)
        again = self.c.store.create_session(req)
        self.assertFalse(again.created)
        self.assertEqual(again.session.id, first.session.id)
        log = exported(self.c, self.ws)
        imp = store_service_pb2.ImportSessionRequest(workspace=self.ws, entries=log)
        sid = self.c.store.import_session(imp).session.id
        self.assertFalse(self.c.store.import_session(imp).created)
        self.assertEqual(imp.session_id, sid)
        self.assertEqual(len(self.session_ids()), 3)

    def test_an_id_the_imported_root_records_is_not_drawn_again(self) -> None:
        log = exported(self.c, self.ws)
        log[0].session_info.session_id = REAL_DRAW()
        drawer = Drawer()
        with drawer.patch():
            self.assertTrue(self.c.store.import_session(workspace=self.ws, entries=log).created)
            again = self.c.store.import_session(workspace=self.ws, entries=log)
        self.assertFalse(again.created)
        self.assertEqual(again.session.id, log[0].session_info.session_id)
        self.assertEqual(drawer.drawn, [])

    def test_at_most_8_draws_then_the_last_error_or_answer(self) -> None:
        taken = self.taken(title="same")
        before = self.snapshot(taken)
        drawer = Drawer(taken, always=True)
        with drawer.patch():
            with self.assertRaises(SessiondError) as cm:
                self.c.store.create_session(workspace=self.ws, title="other")
            self.assertEqual(cm.exception.code_name, "ALREADY_EXISTS")
            self.assertIn(taken, cm.exception.message)
            self.assertEqual(len(drawer.drawn), 8)
            self.assertEqual(self.counter.calls.count("CreateSession"), 1 + 8)
            same = self.c.store.create_session(workspace=self.ws, title="same")
            self.assertFalse(same.created, "the 8th answer, as it is")
            self.assertEqual(same.session.id, taken)
            self.assertEqual(len(drawer.drawn), 16)
        self.assertEqual(self.snapshot(taken), before)

    def test_without_retries_a_taken_id_is_still_drawn_again(self) -> None:
        taken = self.taken()
        c = client(retry=None)
        self.addCleanup(c.close)
        drawer = Drawer(taken, taken)
        with drawer.patch():
            res = c.store.create_session(workspace=self.ws, title="mine")
        self.assertTrue(res.created)
        self.assertEqual(res.session.id, drawer.drawn[2])
        self.assertEqual(self.session_ids(), sorted([taken, res.session.id]))


class AsyncSessionIdDrawsTest(unittest.IsolatedAsyncioTestCase):
    """The same rules in ``AsyncSessiondClient`` (the same code decides: ``retry.Attempts``)."""

    async def asyncSetUp(self) -> None:
        self.ws = workspace()
        self.counter = AsyncCounter()
        self.c: AsyncSessiondClient = async_client(retry=FAST, interceptors=[self.counter])
        self.addAsyncCleanup(self.c.close)

    async def taken(self, title: str = "theirs") -> str:
        sid = REAL_DRAW()
        await self.c.store.create_session(workspace=self.ws, session_id=sid, title=title)
        await self.c.session.append(workspace=self.ws, session=sid, entries=[user_message("theirs", id="t1")])
        return sid

    async def snapshot(self, sid: str) -> Tuple[Any, ...]:
        meta = (await self.c.store.get_session(workspace=self.ws, session=sid)).session
        entries = (await self.c.session.get_entries(workspace=self.ws, session=sid)).entries
        return meta.title, meta.entry_count, tuple(e.SerializeToString(deterministic=True) for e in entries)

    async def test_create_fork_and_import_drawing_a_taken_id_get_new_sessions(self) -> None:
        taken = await self.taken(title="same")
        before = await self.snapshot(taken)
        src = (await self.c.store.create_session(workspace=self.ws)).session.id
        await self.c.session.append(workspace=self.ws, session=src, entries=[user_message("q", id="u1")])
        log = list((await self.c.session.get_entries(workspace=self.ws, session=src)).entries)
        log[0].session_info.ClearField("session_id")
        made: List[str] = []
        with Drawer(taken).patch():
            res = await self.c.store.create_session(workspace=self.ws, title="same")  # created=false
            self.assertTrue(res.created)
            made.append(res.session.id)
        with Drawer(taken).patch():
            res = await self.c.store.create_session(workspace=self.ws, title="other")  # ALREADY_EXISTS
            self.assertTrue(res.created)
            made.append(res.session.id)
        with Drawer(taken).patch():
            fork = await self.c.store.fork_session(workspace=self.ws, session=src, entry="u1")
            made.append(fork.session.id)
        with Drawer(taken).patch():
            imp = await self.c.store.import_session(workspace=self.ws, entries=log)
            self.assertTrue(imp.created)
            made.append(imp.session.id)
        self.assertNotIn(taken, made)
        self.assertEqual(len(set(made)), 4)
        self.assertEqual(await self.snapshot(taken), before)

    async def test_import_with_parts_uploaded_first_draws_into_the_copy_sent_and_the_callers_request(self) -> None:
        taken = await self.taken()
        big = "x" * 1_500_000  # over half of the largest request (1 MiB): uploaded first
        src = (await self.c.store.create_session(workspace=self.ws)).session.id
        await self.c.session.append(workspace=self.ws, session=src, entries=[user_message(big, id="u1")])
        log = list((await self.c.session.get_entries(workspace=self.ws, session=src)).entries)
        log[0].session_info.ClearField("session_id")
        calls = AsyncCounter()
        small = async_client(
            retry=FAST,
            interceptors=[calls],
            upload_parts_over_bytes=1024,
            options=[("grpc.max_send_message_length", 2 * 1024 * 1024)],
        )
        self.addAsyncCleanup(small.close)
        req = store_service_pb2.ImportSessionRequest(workspace=self.ws, entries=log)
        with Drawer(taken).patch():
            res = await small.store.import_session(req)
        self.assertTrue(res.created)
        self.assertNotEqual(res.session.id, taken)
        self.assertEqual(req.session_id, res.session.id)
        self.assertIn("PutBlob", calls.calls, "the part went up first: the request sent was a copy")
        self.assertEqual(text_of(await self.c.read_state(workspace=self.ws, session=res.session.id)), big)

    async def test_a_create_whose_answer_was_lost_is_not_drawn_again(self) -> None:
        lossy = AsyncLoseResponses(CreateSession=1)
        c = async_client(retry=FAST, interceptors=[lossy])
        self.addAsyncCleanup(c.close)
        drawer = Drawer()
        with drawer.patch():
            res = await c.store.create_session(workspace=self.ws, title="t")
        self.assertFalse(res.created)
        self.assertEqual([res.session.id], drawer.drawn)
        self.assertEqual(lossy.attempts, [("CreateSession", "OK"), ("CreateSession", "OK")])
        listed = (await self.c.store.list_sessions(workspace=self.ws)).sessions
        self.assertEqual([s.id for s in listed], [res.session.id])

    async def test_an_id_the_caller_gave_is_never_drawn_again(self) -> None:
        taken = await self.taken(title="t")
        drawer = Drawer()
        with drawer.patch():
            again = await self.c.store.create_session(workspace=self.ws, session_id=taken, title="t")
            self.assertEqual((again.created, again.session.id), (False, taken))
            with self.assertRaises(SessiondError) as cm:
                await self.c.store.create_session(workspace=self.ws, session_id=taken, title="other")
            self.assertEqual(cm.exception.code_name, "ALREADY_EXISTS")
        self.assertEqual(drawer.drawn, [])

    async def test_at_most_8_draws_then_the_last_error(self) -> None:
        taken = await self.taken()
        drawer = Drawer(taken, always=True)
        with drawer.patch():
            with self.assertRaises(SessiondError) as cm:
                await self.c.store.create_session(workspace=self.ws, title="mine")
        self.assertEqual(cm.exception.code_name, "ALREADY_EXISTS")
        self.assertEqual(len(drawer.drawn), 8)
        self.assertEqual(self.counter.calls.count("CreateSession"), 1 + 8)

    async def test_without_retries_a_taken_id_is_still_drawn_again(self) -> None:
        taken = await self.taken()
        c = async_client(retry=None)
        self.addAsyncCleanup(c.close)
        with Drawer(taken).patch():
            res = await c.store.create_session(workspace=self.ws, title="mine")
        self.assertTrue(res.created)
        self.assertNotEqual(res.session.id, taken)


if __name__ == "__main__":
    unittest.main()
