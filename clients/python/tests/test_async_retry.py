"""AsyncSessiondClient's retries after lost responses do not duplicate, against a live server.

The first attempt reaches the server and is applied; its answer is lost
(UNAVAILABLE, support.AsyncLoseResponses). The client retries with the ids
it chose before the first attempt, and the server de-duplicates.
"""

from __future__ import annotations

import unittest
from typing import Tuple

import grpc
from support import AsyncLoseResponses, async_client, need_server, workspace

from sessiond import AsyncSessiondClient, RetryPolicy, SessiondError, user_message
from sessiond.v1 import session_service_pb2, store_service_pb2


def setUpModule() -> None:
    need_server()


FAST = RetryPolicy(max_attempts=5, base_delay=0.01, max_delay=0.05)


class AsyncLostResponseRetryTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self) -> None:
        self.ws = workspace()

    def lossy(self, **lose: int) -> Tuple[AsyncSessiondClient, AsyncLoseResponses]:
        lossy = AsyncLoseResponses(**lose)
        c = async_client(interceptors=[lossy], retry=FAST)
        self.addAsyncCleanup(c.close)
        return c, lossy

    async def test_append_retried_after_a_lost_response_is_not_duplicated(self) -> None:
        c, lossy = self.lossy(Append=1)
        sid = (await c.store.create_session(workspace=self.ws)).session.id
        req = session_service_pb2.AppendRequest(
            workspace=self.ws, session=sid, entries=[user_message("q"), user_message("q2")]
        )
        r = await c.session.append(req)
        self.assertEqual(lossy.attempts[-2:], [("Append", "OK"), ("Append", "OK")])
        self.assertTrue(r.deduplicated, "the second attempt found the first one's entries")
        self.assertEqual(r.head_seq, 3)
        log = await c.session.get_entries(workspace=self.ws, session=sid)
        self.assertEqual([e.seq for e in log.entries], [1, 2, 3])
        self.assertEqual([e.id for e in log.entries[1:]], [e.id for e in req.entries])

    async def test_without_client_ids_the_same_loss_would_duplicate(self) -> None:
        """The negative control: the generated stub (no ids before send) retried by hand."""
        c, _ = self.lossy()
        sid = (await c.store.create_session(workspace=self.ws)).session.id
        req = session_service_pb2.AppendRequest(workspace=self.ws, session=sid, entries=[user_message("q")])
        md = c.session._inv.defaults.metadata_for(None)
        await c.session.stub.Append(req, metadata=md)
        await c.session.stub.Append(req, metadata=md)  # what a retry without fixed ids sends
        log = await c.session.get_entries(workspace=self.ws, session=sid)
        self.assertEqual(len(log.entries), 3, "the server assigned two ids: a duplicate")

    async def test_create_fork_rewind_reset_retried_after_lost_responses(self) -> None:
        c, lossy = self.lossy(CreateSession=1, ForkSession=1, Rewind=1, Reset=1)
        created = await c.store.create_session(workspace=self.ws, title="x")
        self.assertFalse(created.created, "the retry found the session the lost attempt made")
        sid = created.session.id
        await c.session.append(workspace=self.ws, session=sid, entries=[user_message("q", id="u1")])
        fork = (await c.store.fork_session(workspace=self.ws, session=sid, entry="u1")).session
        rw = await c.session.rewind(workspace=self.ws, session=sid, target="u1")
        rs = await c.session.reset(workspace=self.ws, session=sid)
        for m in ("CreateSession", "ForkSession", "Rewind", "Reset"):
            self.assertEqual(lossy.count(m), 2, m)
        sessions = (await c.store.list_sessions(workspace=self.ws)).sessions
        self.assertEqual(sorted(s.id for s in sessions), sorted([sid, fork.id]))
        log = (await c.session.get_entries(workspace=self.ws, session=sid)).entries
        kinds = [e.WhichOneof("kind") for e in log]
        self.assertEqual(kinds, ["session_info", "message", "leaf", "leaf"], "one Leaf entry each")
        self.assertEqual([log[2].id, log[3].id], [rw.leaf_entry_id, rs.leaf_entry_id])

    async def test_delete_whose_response_was_lost_succeeds(self) -> None:
        c, lossy = self.lossy(DeleteSession=1)
        sid = (await c.store.create_session(workspace=self.ws)).session.id
        r = await c.store.delete_session(workspace=self.ws, session=sid)
        self.assertEqual(lossy.attempts[-2:], [("DeleteSession", "OK"), ("DeleteSession", "NOT_FOUND")])
        self.assertEqual(r, store_service_pb2.DeleteSessionResponse())
        self.assertEqual(list((await c.store.list_sessions(workspace=self.ws)).sessions), [])
        # A first attempt that meets NOT_FOUND still fails.
        with self.assertRaises(SessiondError) as cm:
            await c.store.delete_session(workspace=self.ws, session=sid)
        self.assertEqual(cm.exception.code_name, "NOT_FOUND")

    async def test_retry_off_surfaces_the_unavailable(self) -> None:
        lossy = AsyncLoseResponses(Append=1)
        c = async_client(interceptors=[lossy], retry=None)
        self.addAsyncCleanup(c.close)
        sid = (await c.store.create_session(workspace=self.ws)).session.id
        with self.assertRaises(SessiondError) as cm:
            await c.session.append(workspace=self.ws, session=sid, entries=[user_message("q")])
        self.assertEqual(cm.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(lossy.count("Append"), 1)

    async def test_gives_up_after_max_attempts(self) -> None:
        c, lossy = self.lossy(ListSessions=10)
        with self.assertRaises(SessiondError) as cm:
            await c.store.list_sessions(workspace=self.ws)
        self.assertEqual(cm.exception.code_name, "UNAVAILABLE")
        self.assertEqual(lossy.count("ListSessions"), FAST.max_attempts)

    async def test_refused_connection_is_unavailable_after_the_retries(self) -> None:
        async with AsyncSessiondClient("127.0.0.1:1", retry=RetryPolicy(max_attempts=3, base_delay=0.01)) as c:
            with self.assertRaises(SessiondError) as cm:
                await c.store.list_sessions()
        self.assertEqual(cm.exception.code_name, "UNAVAILABLE")
        self.assertIn("failed to connect", cm.exception.message)


if __name__ == "__main__":
    unittest.main()
