"""A server that goes away and comes back: retried calls and a watch that resumes.

Needs SESSIOND_CONTROL=stdio: the process that runs these tests stops and
starts the server (same address, same data) when asked (support.control).
"""

from __future__ import annotations

import threading
import time
import unittest
from typing import Callable, List

from support import (
    PATIENT,
    Counter,
    WatchCollector,
    client,
    control,
    need_control,
    need_server,
    workspace,
)

from sessiond import SessiondError, user_message
from sessiond.v1 import session_service_pb2


def setUpModule() -> None:
    need_server()
    need_control()


class RestartTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ws = workspace()

    def test_append_while_the_server_is_down_is_retried_until_it_is_back(self) -> None:
        counter = Counter()
        c = client(interceptors=[counter], retry=PATIENT)
        self.addCleanup(c.close)
        sid = c.store.create_session(workspace=self.ws).session.id
        req = session_service_pb2.AppendRequest(
            workspace=self.ws, session=sid, entries=[user_message("during the outage")]
        )
        result: List[object] = []
        control("stop")
        try:
            t = threading.Thread(
                target=lambda: result.append(self._call(lambda: c.session.append(req))), daemon=True
            )
            t.start()
            time.sleep(1.0)  # attempts fail meanwhile: nothing listens
            self.assertTrue(t.is_alive(), f"the append did not wait for the server: {result}")
        finally:
            control("start")
        t.join(60)
        self.assertFalse(t.is_alive())
        r = result[0]
        assert isinstance(r, session_service_pb2.AppendResponse), r
        self.assertEqual(r.head_seq, 2)
        self.assertGreater(counter.calls.count("Append"), 1, "it was retried")
        log = c.session.get_entries(workspace=self.ws, session=sid).entries
        self.assertEqual([e.id for e in log[1:]], [req.entries[0].id])

    def test_the_first_call_after_a_long_outage_succeeds_with_the_default_retry(self) -> None:
        """The channel's reconnect backoff stays within what the default retry waits (about 0.4 s).

        While the server is down, an open watch keeps the channel trying to
        connect, and grpc backs off between attempts. With a long backoff
        (grpc's own grows to 120 s; 2 s was tried here) the channel was still
        waiting for its next attempt when the five attempts of a call made
        right after the server came back had all failed.
        """
        c = client(timeout=5.0)
        self.addCleanup(c.close)
        sid = c.store.create_session(workspace=self.ws).session.id
        w = c.watch_entries(sid, workspace=self.ws)
        self.addCleanup(w.close)
        watch = WatchCollector(w)
        self.assertTrue(watch.wait_for(lambda es: len(es) == 1, timeout=20))
        control("stop")
        try:
            time.sleep(2.5)
        finally:
            control("start")
        r = c.session.append(workspace=self.ws, session=sid, entries=[user_message("back")])
        self.assertEqual(r.head_seq, 2)
        self.assertTrue(watch.wait_for(lambda es: len(es) == 2, timeout=20))
        watch.close()

    def test_watch_resumes_across_a_restart_without_loss_or_duplicates(self) -> None:
        self._watch_across("restart")

    def test_watch_resumes_across_a_crash_without_loss_or_duplicates(self) -> None:
        self._watch_across("crash")

    def _watch_across(self, outage: str) -> None:
        """``outage``: "restart" (SIGTERM: the server ends its streams) or "crash" (SIGKILL)."""
        c = client(retry=PATIENT)
        self.addCleanup(c.close)
        sid = c.store.create_session(workspace=self.ws).session.id
        c.session.append(
            workspace=self.ws, session=sid, entries=[user_message(f"before {i}") for i in range(3)]
        )
        reconnects: List[str] = []
        w = c.watch_entries(
            sid, workspace=self.ws, on_reconnect=lambda e, last: reconnects.append(f"{e.code_name}@{last}")
        )
        self.addCleanup(w.close)
        c_watch = WatchCollector(w)

        def wait_for(n: int) -> None:
            ok = c_watch.wait_for(lambda es: len(es) >= n, timeout=45)
            self.assertTrue(ok, f"saw {[e.seq for e in c_watch.entries]}, reconnects {reconnects}")
            self.assertEqual(c_watch.failure, [])

        wait_for(4)
        control(outage)
        # Appended at once: the watch is still backing off, so these come from
        # the replay after its last seq, then live ones.
        c.session.append(
            workspace=self.ws, session=sid, entries=[user_message(f"after {i}") for i in range(2)]
        )
        wait_for(6)
        c.session.append(workspace=self.ws, session=sid, entries=[user_message("live")])
        wait_for(7)
        c_watch.close()
        self.assertFalse(c_watch.thread.is_alive())
        seen = [e.seq for e in c_watch.entries]
        texts = [
            e.message.content[0].text for e in c_watch.entries if e.WhichOneof("kind") == "message"
        ]
        self.assertEqual(seen, [1, 2, 3, 4, 5, 6, 7], "each entry once, in order")
        self.assertEqual(
            texts, ["before 0", "before 1", "before 2", "after 0", "after 1", "live"]
        )
        self.assertGreaterEqual(w.reconnects, 1)
        self.assertTrue(reconnects and reconnects[0].endswith("@4"), reconnects)

    @staticmethod
    def _call(fn: Callable[[], object]) -> object:
        try:
            return fn()
        except SessiondError as e:
            return e


if __name__ == "__main__":
    unittest.main()
