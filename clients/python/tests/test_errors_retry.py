"""Errors with codes and ids, and retries that do not duplicate, against a live server."""

from __future__ import annotations

import threading
import time
import unittest
from typing import List, Optional

import grpc
from support import TOKEN, Counter, LoseResponses, client, need_server, workspace

from sessiond import RetryPolicy, SessiondError, new_entry_id, user_message
from sessiond.v1 import session_service_pb2, store_service_pb2


def setUpModule() -> None:
    need_server()


FAST = RetryPolicy(max_attempts=5, base_delay=0.01, max_delay=0.05)


class ErrorsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.counter = Counter()
        self.c = client(interceptors=[self.counter], retry=FAST)
        self.ws = workspace()

    def tearDown(self) -> None:
        self.c.close()

    def test_not_found_names_the_id(self) -> None:
        ghost = f"ghost-{new_entry_id()}"
        for call in (
            lambda: self.c.store.get_session(workspace=self.ws, session=ghost),
            lambda: self.c.session.get_state(workspace=self.ws, session=ghost),
            lambda: self.c.session.append(workspace=self.ws, session=ghost, entries=[user_message("x")]),
            lambda: self.c.store.delete_session(workspace=self.ws, session=ghost),
        ):
            with self.assertRaises(SessiondError) as cm:
                call()
            self.assertEqual(cm.exception.code, grpc.StatusCode.NOT_FOUND)
            self.assertIn(ghost, cm.exception.message)
            self.assertIn(ghost, str(cm.exception))
        self.assertEqual(len(self.counter.calls), 4, "NOT_FOUND is not retried")

    def test_cas_conflict_is_aborted_writes_nothing_and_is_not_retried(self) -> None:
        sid = self.c.store.create_session(workspace=self.ws).session.id
        r = self.c.session.append(workspace=self.ws, session=sid, entries=[user_message("a", id="a")])
        before = len(self.counter.calls)
        for kw in ({"expected_leaf_id": "not-the-leaf"}, {"expected_seq": r.head_seq + 5}):
            with self.assertRaises(SessiondError) as cm:
                self.c.session.append(
                    workspace=self.ws, session=sid, entries=[user_message("b", id="b")], **kw
                )
            self.assertEqual(cm.exception.code, grpc.StatusCode.ABORTED)
            self.assertIn(sid, cm.exception.message)
        with self.assertRaises(SessiondError) as cm:
            self.c.session.rewind(workspace=self.ws, session=sid, target="a", expected_seq=1)
        self.assertEqual(cm.exception.code_name, "ABORTED")
        self.assertEqual(len(self.counter.calls) - before, 3, "ABORTED is never retried")
        # The right expectations succeed.
        ok = self.c.session.append(
            workspace=self.ws,
            session=sid,
            entries=[user_message("b", id="b")],
            expected_leaf_id="a",
            expected_seq=r.head_seq,
        )
        self.assertEqual(ok.head_seq, r.head_seq + 1)

    def test_invalid_argument(self) -> None:
        sid = self.c.store.create_session(workspace=self.ws).session.id
        with self.assertRaises(SessiondError) as cm:
            self.c.session.append(
                workspace=self.ws, session=sid, entries=[user_message("x", id="bad id!")]
            )
        self.assertEqual(cm.exception.code_name, "INVALID_ARGUMENT")
        self.assertIn("bad id!", cm.exception.message)


class LostResponseRetryTest(unittest.TestCase):
    """The first attempt reaches the server and is applied; its answer is lost (UNAVAILABLE).

    The client retries with the ids it chose before the first attempt, and
    the server de-duplicates: nothing is written twice.
    """

    def setUp(self) -> None:
        self.ws = workspace()

    def lossy(self, **lose: int):  # type: ignore[no-untyped-def]
        lossy = LoseResponses(**lose)
        c = client(interceptors=[lossy], retry=FAST)
        self.addCleanup(c.close)
        return c, lossy

    def test_append_retried_after_a_lost_response_is_not_duplicated(self) -> None:
        c, lossy = self.lossy(Append=1)
        sid = c.store.create_session(workspace=self.ws).session.id
        req = session_service_pb2.AppendRequest(
            workspace=self.ws, session=sid, entries=[user_message("q"), user_message("q2")]
        )
        r = c.session.append(req)
        self.assertEqual(lossy.attempts[-2:], [("Append", "OK"), ("Append", "OK")])
        self.assertTrue(r.deduplicated, "the second attempt found the first one's entries")
        self.assertEqual(r.head_seq, 3)
        log = c.session.get_entries(workspace=self.ws, session=sid)
        self.assertEqual([e.seq for e in log.entries], [1, 2, 3])
        self.assertEqual([e.id for e in log.entries[1:]], [e.id for e in req.entries])

    def test_without_client_ids_the_same_loss_would_duplicate(self) -> None:
        """The negative control: the generated stub (no ids before send) retried by hand."""
        c, _ = self.lossy()
        sid = c.store.create_session(workspace=self.ws).session.id
        req = session_service_pb2.AppendRequest(workspace=self.ws, session=sid, entries=[user_message("q")])
        md = (("authorization", f"Bearer {TOKEN}"),) if TOKEN else None
        c.session.stub.Append(req, metadata=md)
        c.session.stub.Append(req, metadata=md)  # what a retry without fixed ids sends
        log = c.session.get_entries(workspace=self.ws, session=sid)
        self.assertEqual(len(log.entries), 3, "the server assigned two ids: a duplicate")

    def test_create_fork_rewind_reset_retried_after_lost_responses(self) -> None:
        c, lossy = self.lossy(CreateSession=1, ForkSession=1, Rewind=1, Reset=1, Append=0)
        created = c.store.create_session(workspace=self.ws, title="x")
        self.assertFalse(created.created, "the retry found the session the lost attempt made")
        sid = created.session.id
        c.session.append(workspace=self.ws, session=sid, entries=[user_message("q", id="u1")])
        fork = c.store.fork_session(workspace=self.ws, session=sid, entry="u1").session
        rw = c.session.rewind(workspace=self.ws, session=sid, target="u1")
        rs = c.session.reset(workspace=self.ws, session=sid)
        self.assertEqual(lossy.lose, {"CreateSession": 0, "ForkSession": 0, "Rewind": 0, "Reset": 0, "Append": 0})
        for m in ("CreateSession", "ForkSession", "Rewind", "Reset"):
            self.assertEqual(lossy.count(m), 2, m)
        sessions = c.store.list_sessions(workspace=self.ws).sessions
        self.assertEqual(sorted(s.id for s in sessions), sorted([sid, fork.id]))
        log = c.session.get_entries(workspace=self.ws, session=sid).entries
        kinds = [e.WhichOneof("kind") for e in log]
        self.assertEqual(kinds, ["session_info", "message", "leaf", "leaf"], "one Leaf entry each")
        self.assertEqual([log[2].id, log[3].id], [rw.leaf_entry_id, rs.leaf_entry_id])

    def test_delete_whose_response_was_lost_succeeds(self) -> None:
        c, lossy = self.lossy(DeleteSession=1)
        sid = c.store.create_session(workspace=self.ws).session.id
        r = c.store.delete_session(workspace=self.ws, session=sid)
        self.assertEqual(lossy.attempts[-2:], [("DeleteSession", "OK"), ("DeleteSession", "NOT_FOUND")])
        self.assertEqual(r, store_service_pb2.DeleteSessionResponse())
        self.assertEqual(list(c.store.list_sessions(workspace=self.ws).sessions), [])
        # A first attempt that meets NOT_FOUND still fails.
        with self.assertRaises(SessiondError) as cm:
            c.store.delete_session(workspace=self.ws, session=sid)
        self.assertEqual(cm.exception.code_name, "NOT_FOUND")

    def test_retry_off_surfaces_the_unavailable(self) -> None:
        lossy = LoseResponses(Append=1)
        c = client(interceptors=[lossy], retry=None)
        self.addCleanup(c.close)
        sid = c.store.create_session(workspace=self.ws).session.id
        with self.assertRaises(SessiondError) as cm:
            c.session.append(workspace=self.ws, session=sid, entries=[user_message("q")])
        self.assertEqual(cm.exception.code_name, "UNAVAILABLE")
        self.assertEqual(lossy.count("Append"), 1)

    def test_close_right_after_retries_leaves_grpcio_threads_quiet(self) -> None:
        """grpcio's connectivity poller is done with the channel before it closes.

        The waits between attempts watch the channel on a grpcio thread; a
        channel closed while that thread still polls makes it raise
        "Cannot invoke RPC: Channel closed!" (printed on stderr).
        """
        errors: List[Optional[BaseException]] = []
        previous = threading.excepthook
        threading.excepthook = lambda args: errors.append(args.exc_value)
        try:
            for _ in range(3):
                c = client(interceptors=[LoseResponses(ListSessions=10)], retry=FAST)
                with self.assertRaises(SessiondError):
                    c.store.list_sessions(workspace=self.ws)
                c.close()
            time.sleep(1.0)  # the pollers' last rounds
        finally:
            threading.excepthook = previous
        self.assertEqual([repr(e) for e in errors], [])

    def test_gives_up_after_max_attempts(self) -> None:
        c, lossy = self.lossy(ListSessions=10)
        with self.assertRaises(SessiondError) as cm:
            c.store.list_sessions(workspace=self.ws)
        self.assertEqual(cm.exception.code_name, "UNAVAILABLE")
        self.assertEqual(lossy.count("ListSessions"), FAST.max_attempts)


if __name__ == "__main__":
    unittest.main()
