"""Parts of the client that need no server: ids, builders, text, retry, paging, resume, blobs, addresses."""

from __future__ import annotations

import asyncio
import inspect
import re
import unittest
from datetime import datetime, timezone
from typing import Any, List, Tuple, cast
from unittest import mock

import grpc
import grpc.aio
from google.protobuf import struct_pb2

import sessiond
from sessiond import (
    AsyncSessiondClient,
    RetryPolicy,
    SessiondClient,
    SessiondError,
    assistant_message,
    new_entry_id,
    new_session_id,
    text_of,
    tool_call,
    tool_result,
    user_message,
)
from sessiond.blobs import (
    DEFAULT_MAX_REQUEST_BYTES,
    TEXT_MEDIA_TYPE,
    UPLOAD_MOVES,
    BlobAssembly,
    BlobCache,
    BlobSettings,
    ask_upload_held,
    blob_parts,
    max_request_bytes,
    next_upload_offset,
    resolved_part,
    sha256_hex,
    uploads_in,
    with_references,
)
from sessiond.ids import MAX_SESSION_ID_DRAWS, SessionIdDraws, fill_ids
from sessiond.paging import aread_all, read_all, state_pages, tree_pages
from sessiond.resume import ResumePoint
from sessiond.retry import Attempts
from sessiond.v1 import entry_pb2, session_pb2, session_service_pb2, store_service_pb2


class IdsTest(unittest.TestCase):
    def test_entry_id_is_16_lowercase_hex(self) -> None:
        ids = {new_entry_id() for _ in range(200)}
        self.assertEqual(len(ids), 200)
        for i in ids:
            self.assertRegex(i, r"^[0-9a-f]{16}$")

    def test_session_id_is_utc_time_then_8_hex(self) -> None:
        t = datetime(2026, 3, 4, 5, 6, 7, tzinfo=timezone.utc)
        self.assertRegex(new_session_id(t), r"^20260304-050607-[0-9a-f]{8}$")
        self.assertRegex(new_session_id(), r"^\d{8}-\d{6}-[0-9a-f]{8}$")

    def test_fill_ids_sets_only_what_is_missing_and_is_stable(self) -> None:
        req = session_service_pb2.AppendRequest(
            entries=[user_message("a"), user_message("b", id="mine")]
        )
        fill_ids(req)
        first = [e.id for e in req.entries]
        self.assertRegex(first[0], r"^[0-9a-f]{16}$")
        self.assertEqual(first[1], "mine")
        fill_ids(req)  # a retry sends the same ids
        self.assertEqual([e.id for e in req.entries], first)
        for leaf_cls in (session_service_pb2.RewindRequest, session_service_pb2.ResetRequest):
            r = leaf_cls()
            fill_ids(r)
            self.assertRegex(r.entry_id, r"^[0-9a-f]{16}$")
            kept = leaf_cls(entry_id="keep")
            fill_ids(kept)
            self.assertEqual(kept.entry_id, "keep")
        for session_cls in (store_service_pb2.CreateSessionRequest, store_service_pb2.ForkSessionRequest):
            s = session_cls()
            fill_ids(s)
            self.assertRegex(s.session_id, r"^\d{8}-\d{6}-[0-9a-f]{8}$")

    def test_fill_ids_of_an_import_takes_the_session_id_its_root_records(self) -> None:
        root = entry_pb2.Entry(session_info=entry_pb2.SessionInfo(session_id="recorded"))
        req = store_service_pb2.ImportSessionRequest(entries=[root, user_message("q")])
        fill_ids(req)
        self.assertEqual(req.session_id, "recorded")
        self.assertTrue(all(e.id and e.HasField("timestamp") for e in req.entries))
        bare = store_service_pb2.ImportSessionRequest()
        fill_ids(bare)
        self.assertRegex(bare.session_id, r"^\d{8}-\d{6}-[0-9a-f]{8}$")
        other = session_service_pb2.GetStateRequest(session="s")
        fill_ids(other)  # no id to choose: left alone
        self.assertEqual(other, session_service_pb2.GetStateRequest(session="s"))


class BuildersTest(unittest.TestCase):
    def test_user_message(self) -> None:
        e = user_message("hi", id="u1", parent_id="p")
        self.assertEqual(e.id, "u1")
        self.assertEqual(e.parent_id, "p")
        self.assertEqual(e.message.role, entry_pb2.ROLE_USER)
        self.assertEqual([p.text for p in e.message.content], ["hi"])
        self.assertFalse(user_message("x").HasField("parent_id"))

    def test_assistant_message_with_thinking_and_tool_calls(self) -> None:
        call = tool_call("search", {"q": "sessiond", "n": 3, "tags": ["a", None]}, id="c1")
        e = assistant_message(
            "looking", tool_calls=[call], thinking="hmm", model="m", provider="p", stop_reason="tool_use"
        )
        m = e.message
        self.assertEqual(m.role, entry_pb2.ROLE_ASSISTANT)
        self.assertEqual([p.WhichOneof("part") for p in m.content], ["thinking", "text", "tool_call"])
        tc = m.content[2].tool_call
        self.assertEqual((tc.id, tc.name), ("c1", "search"))
        args = tc.arguments.struct_value
        self.assertEqual(args["q"], "sessiond")
        self.assertEqual(args["n"], 3)
        tags = args["tags"]
        assert isinstance(tags, struct_pb2.ListValue)
        self.assertEqual(list(tags), ["a", None])
        self.assertEqual((m.model, m.provider, m.stop_reason), ("m", "p", "tool_use"))
        self.assertEqual(
            [p.WhichOneof("part") for p in assistant_message(tool_calls=[call]).message.content],
            ["tool_call"],
        )
        self.assertRegex(tool_call("t").id, r"^call_[0-9a-f]{16}$")

    def test_tool_result(self) -> None:
        e = tool_result("c1", "42", tool_name="calc", is_error=True)
        m = e.message
        self.assertEqual(m.role, entry_pb2.ROLE_TOOL)
        self.assertEqual((m.tool_call_id, m.tool_name, m.is_error), ("c1", "calc", True))
        self.assertEqual(text_of(e), "42")

    def test_text_of(self) -> None:
        state = session_pb2.SessionState(
            messages=[
                session_pb2.StateMessage(entry_id="u", message=user_message("q").message),
                session_pb2.StateMessage(
                    entry_id="a", message=assistant_message(tool_calls=[tool_call("t")]).message
                ),
                session_pb2.StateMessage(entry_id="b", message=assistant_message("a1", thinking="x").message),
            ]
        )
        self.assertEqual(text_of(state), "q\na1")
        self.assertEqual(text_of(session_service_pb2.GetStateResponse(state=state), sep=" | "), "q | a1")
        self.assertEqual(text_of(state.messages[2]), "a1")
        self.assertEqual(text_of(entry_pb2.Entry(label=entry_pb2.Label(label="l"))), "")
        two = entry_pb2.Message(content=[entry_pb2.ContentPart(text="a"), entry_pb2.ContentPart(text="b")])
        self.assertEqual(text_of(two), "ab")


class RetryPolicyTest(unittest.TestCase):
    def test_backoff_doubles_with_jitter_up_to_the_cap(self) -> None:
        p = RetryPolicy()
        for attempt, full in ((1, 0.05), (2, 0.1), (3, 0.2), (7, 2.0), (20, 2.0)):
            for _ in range(50):
                d = p.delay(attempt)
                self.assertGreaterEqual(d, full / 2)
                self.assertLessEqual(d, full)


def _rpc_error(code: grpc.StatusCode, details: str = "x") -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details=details)


UNAVAILABLE_MID_CALL = _rpc_error(grpc.StatusCode.UNAVAILABLE, "Socket closed")
REFUSED = _rpc_error(
    grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses; last error: Connection refused"
)


class AttemptsTest(unittest.TestCase):
    """The retry decisions both clients share (sessiond.retry), without a server."""

    def test_unavailable_is_retried_until_max_attempts(self) -> None:
        a = Attempts(session_service_pb2.AppendRequest(), RetryPolicy(max_attempts=3, base_delay=0.01))
        first = a.failed(UNAVAILABLE_MID_CALL)
        self.assertIsNotNone(first)
        self.assertLessEqual(first or 0, 0.01)
        self.assertIsNotNone(a.failed(UNAVAILABLE_MID_CALL))
        with self.assertRaises(SessiondError) as cm:
            a.failed(UNAVAILABLE_MID_CALL)
        self.assertEqual(cm.exception.code_name, "UNAVAILABLE")
        self.assertEqual(cm.exception.message, "Socket closed")

    def test_aborted_and_other_codes_end_the_call_at_once(self) -> None:
        for code in (grpc.StatusCode.ABORTED, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INTERNAL):
            a = Attempts(session_service_pb2.AppendRequest(), RetryPolicy())
            with self.assertRaises(SessiondError) as cm:
                a.failed(_rpc_error(code))
            self.assertEqual(cm.exception.code, code)

    def test_no_policy_no_retry(self) -> None:
        with self.assertRaises(SessiondError):
            Attempts(session_service_pb2.AppendRequest(), None).failed(UNAVAILABLE_MID_CALL)

    def test_delete_not_found_after_an_unknown_outcome_succeeded(self) -> None:
        a = Attempts(store_service_pb2.DeleteSessionRequest(), RetryPolicy())
        a.failed(UNAVAILABLE_MID_CALL)  # may have been applied
        self.assertTrue(a.outcome_unknown)
        self.assertIsNone(a.failed(_rpc_error(grpc.StatusCode.NOT_FOUND)))
        self.assertEqual(Attempts.succeeded_response(), store_service_pb2.DeleteSessionResponse())

    def test_delete_not_found_after_attempts_never_sent_is_not_found(self) -> None:
        a = Attempts(store_service_pb2.DeleteSessionRequest(), RetryPolicy())
        a.failed(REFUSED)  # no connection: the server never saw it
        self.assertFalse(a.outcome_unknown)
        with self.assertRaises(SessiondError) as cm:
            a.failed(_rpc_error(grpc.StatusCode.NOT_FOUND))
        self.assertEqual(cm.exception.code_name, "NOT_FOUND")

    def test_not_found_of_other_rpcs_after_an_unknown_outcome_is_not_found(self) -> None:
        a = Attempts(session_service_pb2.GetStateRequest(), RetryPolicy())
        a.failed(UNAVAILABLE_MID_CALL)
        with self.assertRaises(SessiondError):
            a.failed(_rpc_error(grpc.StatusCode.NOT_FOUND))


class SessionIdDrawRulesTest(unittest.TestCase):
    """Drawing a session id again (ids.SessionIdDraws, the rules in retry.Attempts), without a server."""

    TAKEN = "20260304-050607-0000beef"

    def drawn_create(self) -> Tuple[store_service_pb2.CreateSessionRequest, SessionIdDraws]:
        req = store_service_pb2.CreateSessionRequest()
        with mock.patch("sessiond.ids.new_session_id", lambda: self.TAKEN):
            draws = SessionIdDraws.fill(req)
        self.assertEqual(req.session_id, self.TAKEN)
        return req, draws

    def test_fill_ids_says_whether_it_drew_the_session_id(self) -> None:
        for drawn in (
            store_service_pb2.CreateSessionRequest(),
            store_service_pb2.ForkSessionRequest(),
            store_service_pb2.ImportSessionRequest(
                entries=[entry_pb2.Entry(session_info=entry_pb2.SessionInfo())]
            ),
        ):
            self.assertTrue(fill_ids(drawn), type(drawn).__name__)
            self.assertFalse(fill_ids(drawn), "filled by an earlier call: not this one's")
        root = entry_pb2.Entry(session_info=entry_pb2.SessionInfo(session_id="recorded"))
        for not_drawn in (
            store_service_pb2.CreateSessionRequest(session_id="mine"),
            store_service_pb2.ForkSessionRequest(session_id="mine"),
            store_service_pb2.ImportSessionRequest(entries=[root]),
            session_service_pb2.AppendRequest(entries=[user_message("a")]),
        ):
            self.assertFalse(fill_ids(not_drawn), type(not_drawn).__name__)
            self.assertFalse(SessionIdDraws.fill(not_drawn).again())

    def test_a_first_id_the_caller_drew_is_the_first_draw_and_drawn_again(self) -> None:
        """In-package code (the OpenAI Agents adapter) that drew an id itself: its id, drawn again if taken."""
        for drawn in (store_service_pb2.CreateSessionRequest(), store_service_pb2.ForkSessionRequest()):
            draws = SessionIdDraws.fill(drawn, first=self.TAKEN)
            self.assertEqual((drawn.session_id, draws.count), (self.TAKEN, 1))
            self.assertTrue(draws.again())
            self.assertNotEqual(drawn.session_id, self.TAKEN)
        given = store_service_pb2.CreateSessionRequest(session_id="mine")
        self.assertFalse(SessionIdDraws.fill(given, first=self.TAKEN).again(), "an id in the request: kept")
        self.assertEqual(given.session_id, "mine")
        with self.assertRaises(TypeError):
            SessionIdDraws.fill(store_service_pb2.ImportSessionRequest(), first=self.TAKEN)

    def test_again_writes_a_new_id_into_every_request_at_most_8_draws_in_all(self) -> None:
        req, draws = self.drawn_create()
        copy = store_service_pb2.CreateSessionRequest()
        copy.CopyFrom(req)
        self.assertIs(draws.sending(copy), draws)
        draws.sending(req)  # (the request itself: held once)
        self.assertEqual(draws.requests, [req, copy])
        seen = {req.session_id}
        for n in range(2, MAX_SESSION_ID_DRAWS + 1):
            self.assertTrue(draws.again())
            self.assertEqual(draws.count, n)
            self.assertEqual(copy.session_id, req.session_id)
            self.assertRegex(req.session_id, r"^\d{8}-\d{6}-[0-9a-f]{8}$")
            seen.add(req.session_id)
        self.assertEqual(len(seen), MAX_SESSION_ID_DRAWS)
        last = req.session_id
        self.assertFalse(draws.again())
        self.assertEqual(req.session_id, last)

    def test_already_exists_draws_again_after_attempts_that_never_arrived_and_restarts_them(self) -> None:
        req, draws = self.drawn_create()
        a = Attempts(req, RetryPolicy(max_attempts=3, base_delay=0.01), draws)
        a.failed(REFUSED)  # never reached the server
        self.assertEqual((a.attempt, a.outcome_unknown), (2, False))
        self.assertEqual(a.failed(_rpc_error(grpc.StatusCode.ALREADY_EXISTS)), 0.0)
        self.assertNotEqual(req.session_id, self.TAKEN)
        self.assertEqual(a.attempt, 1, "no attempt with the new id was sent")

    def test_already_exists_after_an_attempt_that_may_have_arrived_ends_the_call(self) -> None:
        # Our own lost attempt most likely holds the id: a fork of the current
        # leaf, retried after the leaf moved, is refused by that very fork.
        req, draws = self.drawn_create()
        a = Attempts(req, RetryPolicy(max_attempts=3, base_delay=0.01), draws)
        a.failed(UNAVAILABLE_MID_CALL)
        self.assertEqual((a.attempt, a.outcome_unknown), (2, True))
        with self.assertRaises(SessiondError) as cm:
            a.failed(_rpc_error(grpc.StatusCode.ALREADY_EXISTS))
        self.assertEqual(cm.exception.code_name, "ALREADY_EXISTS")
        self.assertEqual((req.session_id, draws.count), (self.TAKEN, 1))

    def test_already_exists_draws_again_with_retries_off_too(self) -> None:
        req, draws = self.drawn_create()
        a = Attempts(req, None, draws)
        self.assertEqual(a.failed(_rpc_error(grpc.StatusCode.ALREADY_EXISTS)), 0.0)
        with self.assertRaises(SessiondError):
            a.failed(UNAVAILABLE_MID_CALL)

    def test_already_exists_of_an_id_not_drawn_or_after_8_draws_ends_the_call(self) -> None:
        mine = store_service_pb2.CreateSessionRequest(session_id="mine")
        with self.assertRaises(SessiondError) as cm:
            Attempts(mine, RetryPolicy(), SessionIdDraws.fill(mine)).failed(
                _rpc_error(grpc.StatusCode.ALREADY_EXISTS)
            )
        self.assertEqual(cm.exception.code_name, "ALREADY_EXISTS")
        req, draws = self.drawn_create()
        a = Attempts(req, RetryPolicy(), draws)
        for _ in range(MAX_SESSION_ID_DRAWS - 1):
            self.assertEqual(a.failed(_rpc_error(grpc.StatusCode.ALREADY_EXISTS)), 0.0)
        with self.assertRaises(SessiondError):
            a.failed(_rpc_error(grpc.StatusCode.ALREADY_EXISTS))

    def test_created_false_is_another_sessions_unless_an_attempt_may_have_made_it(self) -> None:
        not_created = store_service_pb2.CreateSessionResponse(created=False)
        req, draws = self.drawn_create()
        self.assertTrue(Attempts(req, RetryPolicy(), draws).answered(not_created))
        self.assertNotEqual(req.session_id, self.TAKEN)
        refused = Attempts(req, RetryPolicy(), draws)
        refused.failed(REFUSED)  # never reached the server
        self.assertTrue(refused.answered(store_service_pb2.ImportSessionResponse(created=False)))
        lost = Attempts(req, RetryPolicy(), draws)
        lost.failed(UNAVAILABLE_MID_CALL)  # may have made it: the answer is ours
        before = req.session_id
        self.assertFalse(lost.answered(not_created))
        self.assertEqual(req.session_id, before)
        fresh = Attempts(req, RetryPolicy(), draws)
        self.assertFalse(fresh.answered(store_service_pb2.CreateSessionResponse(created=True)))
        self.assertFalse(fresh.answered(store_service_pb2.ForkSessionResponse()))
        mine = store_service_pb2.CreateSessionRequest(session_id="mine")
        self.assertFalse(Attempts(mine, RetryPolicy(), SessionIdDraws.fill(mine)).answered(not_created))


class PagingTest(unittest.TestCase):
    """The paging merge both clients share (sessiond.paging), against scripted pages."""

    @staticmethod
    def _page(ids: List[str], token: str) -> session_service_pb2.GetStateResponse:
        res = session_service_pb2.GetStateResponse(next_page_token=token)
        res.state.messages.extend(session_pb2.StateMessage(entry_id=i) for i in ids)
        res.state.head_seq = 9
        return res

    def test_every_page_is_merged_and_the_request_is_left_alone(self) -> None:
        pages = {"": self._page(["a", "b"], "t1"), "t1": self._page(["c"], "t2"), "t2": self._page(["d"], "")}
        sent: List[str] = []

        def call(req: session_service_pb2.GetStateRequest) -> session_service_pb2.GetStateResponse:
            sent.append(req.page_token)
            return pages[req.page_token]

        req = session_service_pb2.GetStateRequest(session="s", page_size=2, page_token="stale")
        res = read_all(state_pages(req), call)
        self.assertEqual([m.entry_id for m in res.state.messages], ["a", "b", "c", "d"])
        self.assertEqual((res.next_page_token, res.state.head_seq), ("", 9))
        self.assertEqual(sent, ["", "t1", "t2"])
        self.assertEqual(req.page_token, "stale")

        async def acall(req: session_service_pb2.GetStateRequest) -> session_service_pb2.GetStateResponse:
            return pages[req.page_token]

        again = asyncio.run(aread_all(state_pages(req), acall))
        self.assertEqual(again, res)

    def test_an_empty_page_that_promises_more_is_an_error(self) -> None:
        def call(req: session_service_pb2.GetTreeRequest) -> session_service_pb2.GetTreeResponse:
            return session_service_pb2.GetTreeResponse(next_page_token="again")

        with self.assertRaises(SessiondError) as cm:
            read_all(tree_pages(session_service_pb2.GetTreeRequest()), call)
        self.assertEqual(cm.exception.code_name, "INTERNAL")


class ResumePointTest(unittest.TestCase):
    """The resumable watch's bookkeeping both clients share (sessiond.resume)."""

    @staticmethod
    def _entry(seq: int) -> session_service_pb2.WatchEntriesResponse:
        return session_service_pb2.WatchEntriesResponse(entry=entry_pb2.Entry(seq=seq))

    def test_entries_already_delivered_are_dropped_heartbeats_pass(self) -> None:
        r = ResumePoint(2, 0.1, 5.0, None)
        delivered = [r.deliver(self._entry(s)) for s in (1, 2, 3, 3, 4)]
        self.assertEqual(delivered, [False, False, True, False, True])
        self.assertEqual(r.last_seq, 4)
        heartbeat = session_service_pb2.WatchEntriesResponse(heartbeat=session_service_pb2.Heartbeat())
        self.assertTrue(r.deliver(heartbeat))

    def test_breaks_back_off_doubling_and_report_the_last_seq(self) -> None:
        seen: List[Any] = []
        r = ResumePoint(7, 0.1, 0.3, lambda e, last: seen.append((e.code_name, last)))
        broken = SessiondError(grpc.StatusCode.UNAVAILABLE, "down")
        pauses = [r.broke(broken) for _ in range(4)]
        for p, full in zip(pauses, (0.1, 0.2, 0.3, 0.3)):
            self.assertTrue(full / 2 <= p <= full, (p, full))
        self.assertEqual(r.reconnects, 4)
        self.assertEqual(seen, [("UNAVAILABLE", 7)] * 4)
        r.deliver(self._entry(8))  # the stream works again: the backoff starts over
        self.assertLessEqual(r.broke(broken), 0.1)

    def test_errors_that_are_not_a_broken_stream_end_the_watch(self) -> None:
        r = ResumePoint(0, 0.1, 5.0, None)
        for code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.PERMISSION_DENIED):
            with self.assertRaises(SessiondError):
                r.broke(SessiondError(code, "x"))
        self.assertEqual(r.reconnects, 0)


class BlobRulesTest(unittest.TestCase):
    """blobs.py: what is uploaded, how a reference becomes its part again, reads checked, the cache."""

    def test_large_parts_are_uploaded_as_references_in_a_copy(self) -> None:
        big = "ü" * 700  # 700 characters, 1400 bytes of UTF-8
        image = entry_pb2.ImagePart(mime_type="image/png", data=b"\x89PNG" * 400)
        req = session_service_pb2.AppendRequest(
            workspace="w",
            entries=[
                entry_pb2.Entry(
                    id="u1",
                    message=entry_pb2.Message(
                        role=entry_pb2.ROLE_USER,
                        content=[
                            entry_pb2.ContentPart(text="small"),
                            entry_pb2.ContentPart(text=big),
                            entry_pb2.ContentPart(image=image),
                        ],
                    ),
                ),
                entry_pb2.Entry(id="l1", label=entry_pb2.Label(label="x" * 2000)),
                assistant_message("a" * 1001, thinking=big, tool_calls=[tool_call("t", {"k": "v" * 2000})]),
            ],
        )
        req.entries[2].message.content[0].thinking.signature = "sig"
        before = req.SerializeToString()
        # Budget 0: every part over the threshold, largest first (equal sizes in request order).
        ups = uploads_in(req.entries, 1000, 0)  # bytes, not characters: 1400 > 1000
        self.assertEqual([(u.entry, u.part) for u in ups], [(0, 2), (0, 1), (2, 0), (2, 1)])
        self.assertEqual([len(u.content.data) for u in ups], [1600, 1400, 1400, 1001])
        self.assertEqual(uploads_in(req.entries, 0, 0), [])  # 0: never
        self.assertEqual(len(uploads_in(req.entries, 1400, 0)), 1)  # only the 1600-byte image is over

        # The candidates add up to 5401 bytes (the small text, the label and the tool call
        # are not counted): inline while that fits the budget, else the largest go, one at
        # a time, until the rest fit.
        def taken(budget: int) -> List[Tuple[int, int]]:
            return [(u.entry, u.part) for u in uploads_in(req.entries, 1000, budget)]

        self.assertEqual(taken(5401), [])
        self.assertEqual(taken(10**9), [])
        self.assertEqual(taken(5400), [(0, 2)])  # 3801 left
        self.assertEqual(taken(3801), [(0, 2)])
        self.assertEqual(taken(3800), [(0, 2), (0, 1)])  # 2401 left
        self.assertEqual(taken(1001), [(0, 2), (0, 1), (2, 0)])  # 1001 left
        self.assertEqual(taken(1000), [(0, 2), (0, 1), (2, 0), (2, 1)])
        self.assertEqual([(u.entry, u.part) for u in uploads_in(req.entries, 1400, 1599)], [(0, 2)])
        self.assertEqual(uploads_in(req.entries, 1400, 1600), [])
        sent = with_references(req, ups)
        self.assertEqual(req.SerializeToString(), before)  # the caller's request is left alone
        parts = sent.entries[0].message.content
        self.assertEqual(parts[0].text, "small")
        text_ref, image_ref = parts[1].blob, parts[2].blob
        self.assertEqual(
            (text_ref.sha256, text_ref.size, text_ref.part, text_ref.media_type, text_ref.HasField("signature")),
            (sha256_hex(big.encode()), 1400, entry_pb2.BLOB_PART_TEXT, TEXT_MEDIA_TYPE, False),
        )
        self.assertEqual(
            (image_ref.sha256, image_ref.size, image_ref.part, image_ref.media_type),
            (sha256_hex(image.data), 1600, entry_pb2.BLOB_PART_IMAGE, "image/png"),
        )
        think_ref = sent.entries[2].message.content[0].blob
        self.assertEqual((think_ref.part, think_ref.signature), (entry_pb2.BLOB_PART_THINKING, "sig"))
        self.assertEqual(sent.entries[2].message.content[2].WhichOneof("part"), "tool_call")
        self.assertIs(with_references(req, []), req)

        # Each reference with its bytes is the part that was appended, field for field.
        for u in ups:
            ref = sent.entries[u.entry].message.content[u.part].blob
            original = req.entries[u.entry].message.content[u.part]
            self.assertEqual(resolved_part(ref, u.content.data), original)
        no_sig = entry_pb2.BlobRef(sha256="0" * 64, size=2, part=entry_pb2.BLOB_PART_THINKING)
        self.assertFalse(resolved_part(no_sig, b"hm").thinking.HasField("signature"))

    def test_references_in_answers_and_bad_bytes(self) -> None:
        ref = entry_pb2.ContentPart(blob=entry_pb2.BlobRef(sha256="a" * 64, size=1, part=entry_pb2.BLOB_PART_TEXT))
        msg = entry_pb2.Message(role=entry_pb2.ROLE_USER, content=[entry_pb2.ContentPart(text="t"), ref])
        state = session_service_pb2.GetStateResponse()
        state.state.messages.add(entry_id="e", message=msg)
        entries = session_service_pb2.GetEntriesResponse(
            entries=[entry_pb2.Entry(id="e", message=msg), entry_pb2.Entry(id="l", label=entry_pb2.Label(label="x"))]
        )
        watch = session_service_pb2.WatchEntriesResponse(entry=entry_pb2.Entry(id="e", message=msg))
        for answer in (state, entries, watch):
            found = blob_parts(answer)
            self.assertEqual([p.blob.sha256 for p in found], ["a" * 64])
            found[0].CopyFrom(resolved_part(found[0].blob, b"x"))  # in place, in the answer
            self.assertEqual(blob_parts(answer), [])
        self.assertEqual((text_of(state), text_of(entries.entries[0]), text_of(watch.entry)), ("tx",) * 3)
        self.assertEqual(blob_parts(session_service_pb2.WatchEntriesResponse()), [])

        with self.assertRaises(SessiondError) as cm:
            resolved_part(entry_pb2.BlobRef(sha256="b" * 64, part=entry_pb2.BLOB_PART_TEXT), b"\xff\xfe")
        self.assertEqual(cm.exception.code, grpc.StatusCode.DATA_LOSS)
        self.assertIn("b" * 64, cm.exception.message)
        with self.assertRaises(SessiondError) as cm:
            resolved_part(entry_pb2.BlobRef(sha256="c" * 64), b"")
        self.assertEqual(cm.exception.code, grpc.StatusCode.DATA_LOSS)

    def test_a_read_is_put_together_from_its_chunks_and_checked(self) -> None:
        chunk = store_service_pb2.GetBlobResponse
        whole = BlobAssembly("s", expected_size=5)
        whole.add(chunk(data=b"abc", offset=0, size=5))
        whole.add(chunk(data=b"de", offset=3, size=5))
        self.assertEqual(whole.result(), b"abcde")
        part = BlobAssembly("s", offset=2, length=2)
        part.add(chunk(data=b"cd", offset=2, size=5))
        self.assertEqual(part.result(), b"cd")
        self.assertEqual(BlobAssembly("s", expected_size=0).result(), b"")

        def fails(a: BlobAssembly, *chunks: store_service_pb2.GetBlobResponse) -> str:
            with self.assertRaises(SessiondError) as cm:
                for c in chunks:
                    a.add(c)
                a.result()
            self.assertEqual(cm.exception.code, grpc.StatusCode.DATA_LOSS)
            return cm.exception.message

        self.assertIn("read 3 bytes of 5", fails(BlobAssembly("s", expected_size=5), chunk(data=b"abc", size=5)))
        self.assertIn("the reference says 4", fails(BlobAssembly("s", expected_size=4), chunk(data=b"abc", size=5)))
        self.assertIn("outside", fails(BlobAssembly("s"), chunk(data=b"abcdef", size=5)))
        self.assertIn("s: read no bytes", fails(BlobAssembly("s", expected_size=3)))

    def test_upload_offsets_and_the_cache(self) -> None:
        put = store_service_pb2.PutBlobResponse
        self.assertIsNone(next_upload_offset(put(received=10, stored=True), 8, 10))
        self.assertEqual(next_upload_offset(put(received=4), 0, 10), 4)
        self.assertEqual(next_upload_offset(put(received=2), 4, 10), 2)  # it lost some: go on from there
        for stuck in (put(received=4), put(received=11)):
            with self.assertRaises(SessiondError) as cm:
                next_upload_offset(stuck, 4, 10)
            self.assertEqual(cm.exception.code, grpc.StatusCode.INTERNAL)
        # The answer to an empty chunk at 0 (where does the upload stand?) may say 0; never past size.
        self.assertEqual(next_upload_offset(put(received=0), 0, 10, asked=True), 0)
        self.assertEqual(next_upload_offset(put(received=6), 0, 10, asked=True), 6)
        with self.assertRaises(SessiondError):
            next_upload_offset(put(received=11), 0, 10, asked=True)
        moved = SessiondError(grpc.StatusCode.FAILED_PRECONDITION, "holds 6 bytes")
        self.assertTrue(ask_upload_held(moved, 0))
        self.assertTrue(ask_upload_held(moved, UPLOAD_MOVES - 1))
        self.assertFalse(ask_upload_held(moved, UPLOAD_MOVES))
        self.assertFalse(ask_upload_held(SessiondError(grpc.StatusCode.INVALID_ARGUMENT, "x"), 0))

        cache = BlobCache(10)
        cache.put("", "a", b"1234")
        cache.put("w", "a", b"5678")
        self.assertEqual(cache.get("default", "a"), b"1234")  # "" is the default workspace
        self.assertEqual(cache.get("w", "a"), b"5678")
        cache.put("w", "b", b"90")  # 10 bytes: all kept
        self.assertEqual((len(cache), cache.size), (3, 10))
        self.assertIsNotNone(cache.get("", "a"))  # now the most recently used
        cache.put("w", "c", b"x")  # over: the least recently used goes
        self.assertIsNone(cache.get("w", "a"))
        self.assertEqual((len(cache), cache.size), (3, 7))
        cache.put("w", "huge", b"y" * 11)  # larger than the cache: not kept
        self.assertIsNone(cache.get("w", "huge"))
        self.assertEqual(cache.size, 7)

        for bad in ({"blobs": cast(Any, "inline")}, {"upload_parts_over_bytes": -1}):
            with self.assertRaises(ValueError):
                SessiondClient("127.0.0.1:1", **bad)

    def test_the_inline_budget_is_half_the_largest_request(self) -> None:
        send = "grpc.max_send_message_length"
        self.assertEqual(DEFAULT_MAX_REQUEST_BYTES, 4 * 1024 * 1024)
        self.assertEqual(max_request_bytes([]), DEFAULT_MAX_REQUEST_BYTES)
        self.assertEqual(max_request_bytes([(send, 1000)]), 1000)
        self.assertEqual(max_request_bytes([(send, 1000), (send, 3000)]), 3000)  # the last one, as grpc's options
        for unset in (-1, 0, "8"):  # -1: grpc's "no limit"
            self.assertEqual(max_request_bytes([(send, unset)]), DEFAULT_MAX_REQUEST_BYTES)
        self.assertEqual(max_request_bytes([("grpc.max_receive_message_length", 1000)]), DEFAULT_MAX_REQUEST_BYTES)
        self.assertEqual(BlobSettings().inline_budget, 2 * 1024 * 1024)
        self.assertEqual(BlobSettings(max_request_bytes=1001).inline_budget, 500)
        with self.assertRaises(ValueError):
            BlobSettings(max_request_bytes=0)

        # Each client takes it from its channel options.
        with SessiondClient("127.0.0.1:1") as c:
            self.assertEqual(c._blobs.settings.inline_budget, 2 * 1024 * 1024)
        with SessiondClient("127.0.0.1:1", options=[(send, 16 * 1024 * 1024)]) as c:
            self.assertEqual(c._blobs.settings.inline_budget, 8 * 1024 * 1024)

        async def in_loop() -> None:
            async with AsyncSessiondClient("127.0.0.1:1", options=[(send, 1024 * 1024)]) as a:
                self.assertEqual(a._blobs.settings.inline_budget, 512 * 1024)

        asyncio.run(in_loop())


class ClientShapeTest(unittest.TestCase):
    def test_every_rpc_of_both_services_is_a_method(self) -> None:
        def snake(name: str) -> str:
            return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()

        with SessiondClient("127.0.0.1:1") as c:
            for service, wrapper in (
                (store_service_pb2.DESCRIPTOR.services_by_name["StoreService"], c.store),
                (session_service_pb2.DESCRIPTOR.services_by_name["SessionService"], c.session),
            ):
                for m in service.methods:
                    self.assertTrue(callable(getattr(wrapper, snake(m.name), None)), m.name)

    def test_the_async_client_has_the_same_methods_awaitable(self) -> None:
        async def shapes() -> None:
            sync = SessiondClient("127.0.0.1:1")
            async with AsyncSessiondClient("127.0.0.1:1") as c:
                for name in ("store", "session"):
                    s_wrap, a_wrap = getattr(sync, name), getattr(c, name)
                    public = [m for m in dir(s_wrap) if not m.startswith("_") and m != "stub"]
                    for m in public:
                        fn = getattr(a_wrap, m)
                        streaming = m.startswith("watch_") or m == "get_blob"
                        self.assertEqual(inspect.iscoroutinefunction(fn), not streaming, m)
                        self.assertEqual(
                            list(inspect.signature(fn).parameters),
                            list(inspect.signature(getattr(s_wrap, m)).parameters),
                            m,
                        )
                for m in ("read_state", "read_tree", "get_blob", "put_blob"):
                    self.assertTrue(inspect.iscoroutinefunction(getattr(c, m)), m)
                    self.assertEqual(
                        list(inspect.signature(getattr(c, m)).parameters),
                        list(inspect.signature(getattr(sync, m)).parameters),
                        m,
                    )
                self.assertEqual(
                    inspect.signature(AsyncSessiondClient.__init__).parameters.keys(),
                    inspect.signature(SessiondClient.__init__).parameters.keys(),
                )
                self.assertEqual(
                    inspect.signature(c.watch_entries).parameters.keys(),
                    inspect.signature(sync.watch_entries).parameters.keys(),
                )
            sync.close()

        asyncio.run(shapes())

    def test_targets(self) -> None:
        self.assertEqual(SessiondClient("http://127.0.0.1:5/").target, "127.0.0.1:5")
        self.assertEqual(SessiondClient("127.0.0.1:5").target, "127.0.0.1:5")
        with self.assertRaises(ValueError):
            SessiondClient("http://127.0.0.1:5", tls=True)

    def test_refused_connection_is_unavailable_after_the_retries(self) -> None:
        with SessiondClient("127.0.0.1:1", retry=RetryPolicy(max_attempts=3, base_delay=0.01)) as c:
            with self.assertRaises(SessiondError) as cm:
                c.store.list_sessions()
        self.assertEqual(cm.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(cm.exception.code_name, "UNAVAILABLE")

    def test_request_or_fields_not_both(self) -> None:
        with SessiondClient("127.0.0.1:1") as c, self.assertRaises(TypeError):
            c.store.get_session(store_service_pb2.GetSessionRequest(), session="x")

    def test_exports(self) -> None:
        for name in sessiond.__all__:
            self.assertTrue(hasattr(sessiond, name), name)


if __name__ == "__main__":
    unittest.main()
