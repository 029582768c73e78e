"""AsyncSessiondClient and a server that goes away and comes back: retried calls, a watch that resumes.

Needs SESSIOND_CONTROL=stdio: the process that runs these tests stops and
starts the server (same address, same data) when asked (support.control,
run in a thread by support.acontrol so that the event loop, and the watch
on it, go on meanwhile).
"""

from __future__ import annotations

import asyncio
import unittest
from typing import List

from support import (
    PATIENT,
    AsyncCounter,
    AsyncLoseResponses,
    AsyncWatchCollector,
    acontrol,
    async_client,
    need_control,
    need_server,
    workspace,
)

from sessiond import user_message
from sessiond.v1 import session_service_pb2


def setUpModule() -> None:
    need_server()
    need_control()


class AsyncRestartTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self) -> None:
        self.ws = workspace()

    async def test_append_while_the_server_is_down_is_retried_until_it_is_back(self) -> None:
        counter = AsyncCounter()
        c = async_client(interceptors=[counter], retry=PATIENT)
        self.addAsyncCleanup(c.close)
        sid = (await c.store.create_session(workspace=self.ws)).session.id
        req = session_service_pb2.AppendRequest(
            workspace=self.ws, session=sid, entries=[user_message("during the outage")]
        )
        await acontrol("stop")
        try:
            task = asyncio.ensure_future(c.session.append(req))
            await asyncio.sleep(1.0)  # attempts fail meanwhile: nothing listens
            self.assertFalse(task.done(), "the append did not wait for the server")
        finally:
            await acontrol("start")
        r = await asyncio.wait_for(task, 60)
        self.assertEqual(r.head_seq, 2)
        self.assertGreater(counter.calls.count("Append"), 1, "it was retried")
        log = (await c.session.get_entries(workspace=self.ws, session=sid)).entries
        self.assertEqual([e.id for e in log[1:]], [req.entries[0].id])

    async def test_the_first_call_after_a_long_outage_succeeds_with_the_default_retry(self) -> None:
        """As test_restart's: the reconnect backoff stays within what the default retry waits."""
        c = async_client(timeout=5.0)
        self.addAsyncCleanup(c.close)
        sid = (await c.store.create_session(workspace=self.ws)).session.id
        w = c.watch_entries(sid, workspace=self.ws)
        self.addCleanup(w.close)
        watch = AsyncWatchCollector(w)
        self.assertTrue(await watch.wait_for(lambda es: len(es) == 1, timeout=20))
        await acontrol("stop")
        try:
            await asyncio.sleep(2.5)  # the watch keeps the channel reconnecting, backing off
        finally:
            await acontrol("start")
        r = await c.session.append(workspace=self.ws, session=sid, entries=[user_message("back")])
        self.assertEqual(r.head_seq, 2)
        self.assertTrue(await watch.wait_for(lambda es: len(es) == 2, timeout=20))
        await watch.close()

    async def test_watch_resumes_across_a_restart_without_loss_or_duplicates(self) -> None:
        """The server restarts under an open watch, and an Append's answer is lost on the way back.

        The watch reopens with the last seq it delivered; the lost Append is
        retried with the ids chosen before its first attempt; each entry
        arrives once, in order.
        """
        lossy = AsyncLoseResponses()
        c = async_client(interceptors=[lossy], retry=PATIENT)
        self.addAsyncCleanup(c.close)
        sid = (await c.store.create_session(workspace=self.ws)).session.id
        await c.session.append(
            workspace=self.ws, session=sid, entries=[user_message(f"before {i}") for i in range(3)]
        )
        reconnects: List[str] = []
        w = c.watch_entries(
            sid,
            workspace=self.ws,
            on_reconnect=lambda e, last: reconnects.append(f"{e.code_name}@{last}"),
        )
        self.addCleanup(w.close)
        watch = AsyncWatchCollector(w)

        async def wait_for(n: int) -> None:
            ok = await watch.wait_for(lambda es: len(es) >= n, timeout=45)
            self.assertTrue(ok, f"saw {[e.seq for e in watch.entries]}, reconnects {reconnects}")
            self.assertEqual(watch.failure, [])

        await wait_for(4)
        await acontrol("restart")
        # Appended at once (retried until the server is back): the watch is
        # still backing off, so these come from the replay after its last seq.
        lossy.lose["Append"] = 1
        after = session_service_pb2.AppendRequest(
            workspace=self.ws, session=sid, entries=[user_message(f"after {i}") for i in range(2)]
        )
        r = await c.session.append(after)
        self.assertTrue(r.deduplicated, "the retry found what the lost attempt wrote")
        # Through to the server: before, after (answer lost), after (retried).
        self.assertEqual(lossy.attempts.count(("Append", "OK")), 3, lossy.attempts)
        await wait_for(6)
        await c.session.append(workspace=self.ws, session=sid, entries=[user_message("live")])
        await wait_for(7)
        await watch.close()
        seen = [e.seq for e in watch.entries]
        texts = [e.message.content[0].text for e in watch.entries if e.WhichOneof("kind") == "message"]
        self.assertEqual(seen, [1, 2, 3, 4, 5, 6, 7], "each entry once, in order")
        self.assertEqual(texts, ["before 0", "before 1", "before 2", "after 0", "after 1", "live"])
        self.assertGreaterEqual(w.reconnects, 1)
        self.assertTrue(reconnects and reconnects[0].endswith("@4"), reconnects)
        log = (await c.session.get_entries(workspace=self.ws, session=sid)).entries
        self.assertEqual(len(log), 7, "nothing stored twice")


if __name__ == "__main__":
    unittest.main()
