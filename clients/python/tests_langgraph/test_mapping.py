"""Which session a thread is: ids that cannot be session ids, prefixes of other ids, sessions that are not threads."""

from __future__ import annotations

import asyncio
import unittest

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6

import lg_support as s

from sessiond.langgraph import SessiondSaver
from sessiond.langgraph_log import namespace_session_id, thread_session_id


def put(saver: SessiondSaver, thread_id: str, ns: str = "") -> str:
    cp = empty_checkpoint()
    cp["id"] = str(uuid6(clock_seq=-1))
    saver.put({"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}, cp, {"step": 0}, {})
    return str(cp["id"])


class Mapping(unittest.TestCase):
    def setUp(self) -> None:
        s.need_server()
        self.ws = s.workspace()
        self.c = s.client()
        self.saver = SessiondSaver(self.c, workspace=self.ws)

    def tearDown(self) -> None:
        self.c.close()

    def test_a_thread_id_that_is_no_session_id_is_hashed_and_found_again(self) -> None:
        """A thread id with a slash and spaces: a session ``lgt-<hash>``, listed under its own thread id."""
        thread = "user/42 — support ticket #7"
        cid = put(self.saver, thread)
        sid = thread_session_id(thread)
        self.assertRegex(sid, r"^lgt-[0-9a-f]{32}$")
        meta = self.c.store.get_session(workspace=self.ws, session=sid).session
        self.assertEqual(meta.tags["langgraph.thread"], thread)
        listed = [(t.config["configurable"]["thread_id"], t.checkpoint["id"]) for t in self.saver.list(None)]
        self.assertEqual(listed, [(thread, cid)])

    def test_a_prefix_of_another_thread_is_not_that_thread(self) -> None:
        """Thread "abcd" is absent even though the server resolves "abcd" to "abcdef-1" (a unique prefix)."""
        put(self.saver, "abcdef-1")
        self.assertIsNone(self.saver.get_tuple({"configurable": {"thread_id": "abcd"}}))
        self.assertEqual(list(self.saver.list({"configurable": {"thread_id": "abcd"}})), [])
        self.saver.delete_thread("abcd")
        self.assertIsNotNone(self.saver.get_tuple({"configurable": {"thread_id": "abcdef-1"}}))
        put(self.saver, "abcd")
        self.assertIsNotNone(self.saver.get_tuple({"configurable": {"thread_id": "abcd"}}))

    def test_a_namespace_is_a_subagent_session_deleted_with_its_thread(self) -> None:
        """Checkpoint namespace "tools:1": a subagent session of the thread's; delete_thread takes both."""
        put(self.saver, "t-ns", "tools:1")
        sub = self.c.store.get_session(workspace=self.ws, session=namespace_session_id("t-ns", "tools:1")).session
        self.assertEqual(sub.parent_session_id, "t-ns")
        self.assertEqual(sub.tags["langgraph.ns"], "tools:1")
        self.saver.delete_thread("t-ns")
        listed = self.c.store.list_sessions(workspace=self.ws).sessions
        self.assertEqual([m.id for m in listed], [])

    def test_a_session_that_is_no_thread_is_refused(self) -> None:
        """A session of another program under the thread's id: a clear error, nothing written to it."""
        self.c.store.create_session(workspace=self.ws, session_id="notes-1", title="someone's notes")
        with self.assertRaisesRegex(ValueError, "session notes-1 exists and is not a LangGraph thread"):
            put(self.saver, "notes-1")
        head = self.c.store.get_session(workspace=self.ws, session="notes-1").session.head_seq
        self.assertEqual(head, 1)

    def test_sync_methods_on_an_async_client_inside_its_loop_say_what_to_do(self) -> None:
        """Blocking calls from the loop an AsyncSessiondClient runs on would deadlock: refused with the way out."""

        async def main() -> None:
            async with s.aclient() as ac:
                saver = SessiondSaver(ac, workspace=self.ws)
                self.assertIsNone(await saver.aget_tuple({"configurable": {"thread_id": "x1"}}))
                with self.assertRaisesRegex(RuntimeError, "use the async methods"):
                    saver.get_tuple({"configurable": {"thread_id": "x1"}})
                # From another thread, the sync methods run on the client's loop.
                got = await asyncio.to_thread(saver.get_tuple, {"configurable": {"thread_id": "x1"}})
                self.assertIsNone(got)

        asyncio.run(main())
